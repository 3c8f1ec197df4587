"""majordomus hook NAME: what the agents' hook scripts call (always exits 0)."""
from __future__ import annotations

from majordomus.cli.commands import Subparsers
from majordomus.hooks import run as hooks
from majordomus.hooks.providers import HOOK_NAMES, PROVIDERS

NAMES = ("hook",)  # the command names this module declares


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("hook", help="run an agent's hook (called by the hook scripts; always exits 0)",
                       description="Read the agent's JSON on stdin and act on the repository it "
                       "names. Never blocks the agent: exits 0 and records a failure.")
    p.add_argument("name", choices=HOOK_NAMES)
    p.add_argument("--agent", choices=tuple(PROVIDERS), default="claude",
                   help="the agent whose registration runs the hook (default: claude)")
    p.add_argument("--hook-root", default=None, help="the repository the hook script lives in")
    p.set_defaults(handler=lambda a: run(a.name, a.hook_root, a.agent))


def run(name: str, hook_root: str | None, agent: str = "claude") -> int:
    return hooks.run(name, hook_root, agent)
