"""majordomus knowledge stale [--json]: the verified records whose anchored files changed since a
person verified them (or that an agent disputed), each with what changed and the command that
re-verifies it (docs/CURRENCY.md)."""
from __future__ import annotations

from majordomus.base.errors import OK
from majordomus.base.output import emit_json, line, say, show
from majordomus.cli.commands import Subparsers
from majordomus.knowledge import currency
from majordomus.knowledge.verdict import fix
from majordomus.store.workspace import open_workspace


def stale_verbs(verbs: Subparsers) -> None:
    """Add `stale` to `majordomus knowledge`'s verbs."""

    p = verbs.add_parser("stale", help="the verified records that may be stale, and the fix for each",
                         description="The verified records one of whose anchored files was modified, "
                         "deleted or renamed in a commit after the one they were verified at (and those an "
                         "agent disputed since their last review): which paths, in how many commits, the "
                         "newest of them, and `majordomus knowledge reverify ID < evidence`. Exit 0 either way.")
    p.add_argument("--json", action="store_true", help="a list of objects: id, changed (the paths), "
                   "commits_since, newest, anchor_commit, state, reason, fix")
    p.set_defaults(handler=lambda a: stale(a.json))


def stale(as_json: bool = False) -> int:
    """`knowledge stale [--json]`."""

    ws = open_workspace()
    found = currency.attention(ws)
    if as_json:
        emit_json([currency.listed(rec, state) for rec, state in found])
        return OK
    for rec, state in found:
        show(line(f"{rec.id}: {state.reason}; fix: {fix(rec.id)}") + "\n")
    if not found:
        say("no verified record may be stale: none of their anchored files changed since they were verified")
    else:
        say(f"{len(found)} verified record{'s' if len(found) != 1 else ''} may be stale or disputed")
    return OK
