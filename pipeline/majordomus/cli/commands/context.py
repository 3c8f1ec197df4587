"""majordomus context: the repository context."""
from __future__ import annotations

from majordomus.base.errors import OK
from majordomus.base.output import emit_json, show
from majordomus.cli.commands import Subparsers
from majordomus.context import repository
from majordomus.store.workspace import open_workspace

NAMES = ("context",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("context", help="the repository context",
                       description="The repository context, resolved now: policy in force, rules in effect, "
                       "knowledge counts by status, active task, open questions, the last handover's Next "
                       "Action and the outbox. An episode's own context is `majordomus session context`.")
    p.add_argument("--json", action="store_true", help="the same content as JSON")
    p.set_defaults(handler=lambda a: context(a.json))


def context(as_json: bool) -> int:
    """Print the repository context."""

    data = repository.resolve(open_workspace())
    if as_json:
        emit_json(data)
    else:
        show(repository.render(data))
    return OK
