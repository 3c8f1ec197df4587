"""The terminal review's second queue: verified records that may be stale or are disputed.

After the candidates, `majordomus knowledge review` walks the verified records whose anchored files
changed since a person verified them, or that an agent disputed (docs/CURRENCY.md), each with what
changed and who said what, and asks: [v]erify again (new evidence, anchored at HEAD), [r]etire
(superseded, for a reason), [s]kip, [q]uit. The acts are `knowledge reverify` and `knowledge
retire`: the same refusals, the same ledger lines.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from majordomus.base.errors import FatalError
from majordomus.base.output import line as one_line
from majordomus.cli.commands.terminal import ask, key, wrap
from majordomus.cli.commands.terminal import say as _say
from majordomus.knowledge import currency
from majordomus.knowledge import review as acts
from majordomus.store.workspace import Workspace

ACTIONS = "[v]erify again  [r]etire  [s]kip  [q]uit"


def queue(ws: Workspace) -> list[tuple[Any, Any]]:
    """(record, currency) of each verified record that may be stale or is disputed."""
    return currency.attention(ws)


def walk(ws: Workspace, found: list[tuple[Any, Any]], evidence: Callable[[str], str | None],
         done: dict[str, list[str]]) -> bool:
    """Walk the second queue; False when the person quits. `done`: "reverified" and "retired" ids."""
    _say("\n".join(wrap(f"{len(found)} verified record(s) may no longer be true: their files changed "
                        "since a person verified them, or an agent disputed them.")))
    _say("\n".join(wrap(f"For each: {ACTIONS}.")))
    for number, (rec, state) in enumerate(found, 1):
        _say("\n" + "─" * 64)
        _say("\n".join(wrap(f"{number}/{len(found)}  {one_line(rec.cls)}: {one_line(rec.title)}", "", "     ")))
        _say("\n".join(wrap(f"id {rec.id}; {one_line(state.reason)}", "  ", "  ")))
        while True:
            choice = key(f"{ACTIONS} ? ")
            if choice == "q":
                return False
            if choice == "s":
                break
            if choice == "v":
                said = evidence(rec.id)
                if said is None:
                    _say("Cancelled: nothing re-verified.")
                    continue
                if _act(lambda: acts.reverify(ws, rec.id, said), "Re-verified", ws):
                    done["reverified"].append(rec.id)
                    break
            elif choice == "r":
                reason = ask("Why it no longer holds, in one line (Enter cancels): ")
                if not reason.strip():
                    _say("Cancelled: nothing retired.")
                    continue
                if _act(lambda: acts.retire(ws, rec.id, reason), "Retired", ws):
                    done["retired"].append(rec.id)
                    break
            else:
                _say(f"One of {ACTIONS}.")
    return True


def _act(do: Callable[[], acts.Act], what: str, ws: Workspace) -> bool:
    try:
        act = do()
    except FatalError as exc:
        _say(f"Refused: {exc.message}")
        return False
    staged = "staged" if act.staged is None else f"not staged: {act.staged}"
    _say(f"{what} {act.id}: {ws.rel(act.path)}, {act.status}, by {act.by} ({staged}).")
    return True
