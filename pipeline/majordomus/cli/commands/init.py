"""majordomus init."""
from __future__ import annotations

from pathlib import Path

from majordomus.base.errors import NOT_INITIALISED, OK, FatalError
from majordomus.base.git import toplevel
from majordomus.base.output import say
from majordomus.cli.commands import Subparsers
from majordomus.store import scaffold
from majordomus.store.workspace import Workspace

NAMES = ("init",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("init", help="lay .ai/ from the skeleton (idempotent)",
                       description="Lay .ai/ into this git repository from the shipped skeleton: the "
                       "policy, the knowledge source classes and the candidates contract, the empty "
                       "sections, and .ai/local/ in .gitignore. A file you edited is left alone.")
    p.set_defaults(handler=lambda a: init())


def init() -> int:
    """Lay `.ai/` from the skeleton; says what it wrote and what it left alone."""

    root = toplevel(Path.cwd())
    if root is None:
        raise FatalError("not inside a git repository: run `git init` first", NOT_INITIALISED)
    ws = Workspace(root)
    laid = scaffold.init(ws)
    for rel in laid.written:
        say(f"wrote      {rel}")
    for rel in laid.left_alone:
        say(f"left alone {rel} (it differs from the skeleton: yours is kept)")
    say(f"majordomus initialised in {root}: {len(laid.written)} written, {len(laid.unchanged)} unchanged, "
        f"{len(laid.left_alone)} left alone. Next: `majordomus capture install`.")
    return OK
