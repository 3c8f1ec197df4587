"""move:<section>/<name> and drain: the trunk outbox, carried into the tracked sections.

`move:<section>/<name>` copies one outbox record to its tracked file, byte for byte: the outbox
file is its file_dep and the tracked file its target. A record to move, or one tracked already
(same bytes, or settled by a person), always runs; one whose name is tracked with other bytes is
up to date while neither file changes, so a re-run reports it without re-examining it.
`drain` depends on every move and always runs: it removes from the outbox what is now tracked
(doit wants a task's file_dep to outlive its action, so the removal is not the move's), appends
`outbox.drained` when a move ran, and says what the run did, or that nothing changed.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base import fsio
from majordomus.base.errors import FatalError
from majordomus.derive.table import Plan
from majordomus.evidence import episodes
from majordomus.outbox import staging as outbox
from majordomus.outbox.staging import Staged
from majordomus.store.workspace import Workspace
from majordomus.tasks import engine as doitrun
from majordomus.tasks.derive import seed_contract

if TYPE_CHECKING:
    from typing import Any


class Drained:
    """What one drain did; paths relative to the root. (A plain class: the close path, a hook's,
    pays no `dataclasses` import.)"""

    __slots__ = ("moved", "same", "settled", "kept", "refused", "examined", "where")

    def __init__(self, refused: str | None = None) -> None:
        self.moved: list[str] = []  # tracked paths written this run
        self.same: list[str] = []  # outbox paths dropped: tracked with these bytes
        self.settled: list[str] = []  # outbox paths dropped: promoted or rejected
        self.kept: list[tuple[str, str]] = []  # (outbox, tracked) differing
        self.refused = refused  # why nothing was drained here (the trunk, a detached HEAD)
        self.examined = 0  # move tasks that ran (the rest were up to date)
        self.where = ".ai/local/state/outbox"

    @property
    def nothing_changed(self) -> bool:
        return not (self.moved or self.same or self.settled)

    def as_json(self) -> dict[str, Any]:
        return {"moved": self.moved, "same": self.same, "settled": self.settled,
                "kept": [{"outbox": s, "tracked": d} for s, d in self.kept],
                "refused": self.refused, "nothing_changed": self.nothing_changed}

    def summary(self) -> str:
        if self.refused:
            return f"drain: nothing moved: {self.refused}"
        lines = []
        if self.moved:
            lines.append(f"drain: moved {_n(self.moved)} from {self.where} into the tracked sections "
                         "(commit them on this branch; its pull request carries them to the trunk):")
            lines += [f"  {p}" for p in self.moved]
        if self.same:
            lines.append(f"drain: removed {_n(self.same)} from the outbox, tracked already with the same bytes:")
            lines += [f"  {p}" for p in self.same]
        if self.settled:
            lines.append(f"drain: removed {_n(self.settled)} from the outbox, promoted or rejected already:")
            lines += [f"  {p}" for p in self.settled]
        if self.nothing_changed:
            lines.append("drain: nothing changed" + ("" if self.kept else f" ({self.where} is empty)"))
        if self.kept:
            lines.append(f"drain: kept {_n(self.kept)} in the outbox, tracked under the same name with "
                         "other bytes: compare the two, delete the copy that is wrong, then rerun "
                         "`majordomus drain`:")
            lines += [f"  {s} (tracked: {d})" for s, d in self.kept]
        return "\n".join(lines)


def _n(items: list[Any]) -> str:
    return f"{len(items)} record{'s' if len(items) != 1 else ''}"


def copy(ws: Workspace, item: Staged, state: Drained) -> None:
    """The action of `move:`: write the tracked file when nothing is tracked under its name."""

    state.examined += 1
    if outbox.classify(ws, item) == outbox.MOVE:
        seed_contract(ws, item.dst.parent)
        outbox.move_bytes(ws, item)
        state.moved.append(ws.rel(item.dst))


def finish(ws: Workspace, staged: list[Staged], state: Drained, report: doitrun.RunReport | None) -> None:
    """The action of `drain`: empty the outbox of what is tracked, record and say the run."""
    moved = set(state.moved)
    for item in staged:
        if not item.src.exists():
            continue
        what = outbox.classify(ws, item)
        if what == outbox.DIFFERS:
            state.kept.append((ws.rel(item.src), ws.rel(item.dst)))
            continue
        if what == outbox.MOVE:  # its move did not run (a failed run): it waits for the next
            continue
        fsio.remove(item.src, root=ws.root)
        if ws.rel(item.dst) not in moved:
            (state.settled if what == outbox.SETTLED else state.same).append(ws.rel(item.src))
    if state.examined or not state.nothing_changed:
        ws.ledger.append("outbox.drained", episodes.current(ws), moved=len(state.moved),
                         same=len(state.same), settled=len(state.settled), kept=len(state.kept),
                         paths=state.moved, kept_paths=[s for s, _ in state.kept])
    if report is not None:
        report.messages.append(state.summary())


def creators(ws: Workspace, state: Drained, report: doitrun.RunReport | None = None) -> dict[str, Callable[[], Any]]:
    """`task_move` and `task_drain`; the outbox is listed when doit loads them (inside the run's lock)."""
    listed: list[list[Staged]] = []

    def staged() -> list[Staged]:
        if not listed:
            items = outbox.listing(ws)
            state.where = ws.rel(ws.outbox)
            state.refused = outbox.refusal(ws) if items else None
            listed.append([] if state.refused else items)
        return listed[0]

    def task_move() -> Iterator[dict[str, Any]]:
        """Copy one outbox record into its tracked section, byte for byte."""
        for item in staged():  # doit decides from the outbox file and the tracked target
            yield {"name": f"{item.section}/{item.name}", "actions": [(copy, (ws, item, state))],
                   "file_dep": [str(item.src)], "targets": [str(item.dst)],
                   "doc": f"move {ws.rel(item.src)} to {ws.rel(item.dst)}"}

    def task_drain() -> dict[str, Any]:
        """Drain the trunk outbox into the tracked sections (on a branch that is not the trunk)."""
        items = staged()
        return {"actions": [(finish, (ws, items, state, report))],
                "task_dep": [f"move:{i.section}/{i.name}" for i in items],
                "uptodate": [False], "meta": {"bookkeeping": True}}

    return {"task_move": task_move, "task_drain": task_drain}


def unclaimed(ws: Workspace, plans: list[Plan]) -> list[Plan]:
    """`plans` without the drafts whose file a `move:` task writes (doit allows one task a target):
    run by hand on a branch, `doit derive` leaves a staged record's tracked copy to the drain."""

    items = outbox.listing(ws)
    if not items or outbox.refusal(ws) is not None:
        return list(plans)
    claimed = {i.dst for i in items}
    return [p.with_drafts([d for d in p.drafts if d.path not in claimed]) for p in plans]


def run(ws: Workspace) -> Drained:
    """Run `drain` through doit under the dep file's lock; what it did (`Drained.summary` says it).

    doit's own output is captured: at session start stdout is the briefing, and no traceback
    reaches a person. A failure is one FatalError naming its cause (MJ_DEBUG=1 shows doit's text).
    """

    state = Drained()
    if not outbox.listing(ws):  # nothing staged: no task to run, and doit is not even imported
        state.where = ws.rel(ws.outbox)
        return state
    report = doitrun.RunReport()
    code, report, text = doitrun.run_quietly(creators(ws, state, report), ["drain"], ws.dep_file, ws.root,
                                             report=report, wait_s=ws.wait_s())
    if code != 0:
        raise FatalError(f"drain failed ({doitrun.cause(text) or f'doit exit {code}'}): what moved before it stays; "
                         "fix that, then rerun `majordomus drain` (MJ_DEBUG=1 shows doit's report)")
    return state


def drain_at_boundary(ws: Workspace) -> Drained | None:
    """The boundary's drain, or None when there is nothing it would do: an empty outbox, no
    branch to drain into, or only records a person must settle (`pending` and `majordomus
    drain` name those). Two directory scans always; git for a non-empty outbox; doit only when
    a record will move or leave the outbox."""
    try:
        items = outbox.listing(ws)
        if not items or outbox.refusal(ws) is not None or not any(outbox.actionable(ws, i) for i in items):
            return None
        return run(ws)
    except FatalError:
        raise
    except Exception as exc:  # one message that says it was the drain, whatever broke
        raise FatalError(f"drain failed ({type(exc).__name__}: {exc}): nothing was moved; fix that, "
                         "then rerun `majordomus drain`") from exc
