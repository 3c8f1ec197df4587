"""majordomus drain: the trunk outbox, moved into the tracked sections (the doit task `drain`)."""
from __future__ import annotations

from majordomus.base.errors import OK, refused
from majordomus.base.output import emit_json, show
from majordomus.cli.commands import Subparsers
from majordomus.outbox import staging as outbox
from majordomus.store.workspace import open_workspace
from majordomus.tasks import drain as drain_tasks

NAMES = ("drain",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("drain", help="move the trunk outbox into the tracked sections (doit drain)",
                       description="On a branch that is not the trunk, move the session records and "
                       "candidates a trunk episode left in .ai/local/state/outbox/ into .ai/repo/sessions/ "
                       "and .ai/repo/knowledge/candidates/, byte for byte. A record tracked already with "
                       "the same bytes is removed from the outbox; one tracked with other bytes is kept "
                       "and reported. Episode boundaries on a branch run this by themselves.")
    p.add_argument("--json", action="store_true", help="print what moved, was removed or kept as JSON")
    p.set_defaults(handler=lambda a: drain(a.json))


def drain(as_json: bool) -> int:
    """Drain the outbox here; refused (exit 4) on the trunk or a detached HEAD while it holds records."""

    ws = open_workspace()
    if outbox.listing(ws):
        why = outbox.refusal(ws)
        if why is not None:
            raise refused(f"drain refused: {why}")
    drained = drain_tasks.run(ws)
    if as_json:
        emit_json(drained.as_json())
    else:
        show(drained.summary() + "\n")
    return OK
