"""majordomus capture install."""
from __future__ import annotations

from majordomus.base.errors import OK
from majordomus.base.output import say
from majordomus.cli.commands import Subparsers
from majordomus.hooks import install as capture
from majordomus.store.workspace import open_workspace

NAMES = ("capture",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("capture", help="install the Claude Code hooks",
                       description="Provider capture: the hooks that open and close episodes.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    install_p = verbs.add_parser("install", help="write .claude/hooks/majordomus-* and register them",
                                 description="Write the session-start, session-end and pre-compact hooks "
                                 "to .claude/hooks/ and merge their registration into "
                                 ".claude/settings.json, keeping what is there. Idempotent.")
    install_p.set_defaults(handler=lambda a: install())
    p.set_defaults(help_parser=p)


def install() -> int:
    ws = open_workspace()
    done = capture.install(ws)
    for rel in done.written:
        say(f"wrote     {rel}")
    for rel in done.unchanged:
        say(f"unchanged {rel}")
    say("hooks installed: Claude Code opens and closes episodes in this repository. "
        "Commit .claude/ so every clone shares them.")
    return OK
