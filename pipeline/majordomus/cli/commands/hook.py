"""majordomus hook NAME: what the .claude/hooks scripts call (always exits 0)."""
from __future__ import annotations

from majordomus.cli.commands import Subparsers
from majordomus.hooks import run as hooks

NAMES = ("hook",)  # the command names this module declares


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("hook", help="run a provider hook (called by .claude/hooks/*; always exits 0)",
                       description="Read the provider's JSON on stdin and act on the repository it "
                       "names. Never blocks the provider: exits 0 and records a failure.")
    p.add_argument("name", choices=("session-start", "session-end", "pre-compact"))
    p.add_argument("--hook-root", default=None, help="the repository the hook script lives in")
    p.set_defaults(handler=lambda a: run(a.name, a.hook_root))


def run(name: str, hook_root: str | None) -> int:
    return hooks.run(name, hook_root)
