"""majordomus capture install [--agent A ...]."""
from __future__ import annotations

import os
from pathlib import Path

from majordomus.base.errors import OK
from majordomus.base.output import say
from majordomus.cli.commands import Subparsers
from majordomus.hooks import install as capture
from majordomus.hooks import mcp_register
from majordomus.store import scaffold
from majordomus.store.agents import AGENTS, installed, seen
from majordomus.store.workspace import open_workspace

NAMES = ("capture",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("capture", help="install the agents' hooks (Claude Code unless --agent)",
                       description="Agent capture: the hooks that open and close episodes.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    install_p = verbs.add_parser(
        "install", help="write the hook scripts and merge their registration",
        description="Write the session-start, session-end and compaction hooks of each agent named "
        "(Claude Code when none is) and merge their registration into that agent's own file, keeping "
        "what is there: .claude/settings.json, .codex/hooks.json, .gemini/settings.json, "
        ".github/hooks/majordomus.json, .cursor/hooks.json; and register the MCP server (`majordomus mcp`) "
        "in that agent's MCP file (.mcp.json, .codex/config.toml, .gemini/settings.json, .github/mcp.json, "
        ".cursor/mcp.json), keeping a `majordomus` entry already there. Idempotent. Without --agent it also names "
        "the other agents it sees here, with the command that adds them. For Claude Code it also writes "
        "the skill .claude/skills/majordomus/SKILL.md (when and how to record), registers the Stop hook's "
        "reminder, and merges the permission rules (allow the commands an agent records and reads with; ask for promote, reject, "
        "export and --verify).")
    install_p.add_argument("--agent", action="append", choices=tuple(AGENTS), default=None,
                           help="the agent whose hooks to install; repeat for several")
    install_p.set_defaults(handler=lambda a: install(a.agent))
    p.set_defaults(help_parser=p)


def install(agents: list[str] | None = None) -> int:
    """Install each agent's hooks (Claude Code's when none is named), then say what is left to the
    user: committing them, each agent's trust step, and the agents seen but not installed. A
    repository never initialised is initialised first, and says so."""
    ws = open_workspace(require_init=False)
    if not ws.initialised:  # seed 000's "How to see it" starts with `capture install`
        say(f"{ws.root} is not initialised for majordomus: running `majordomus init` first")
        laid = scaffold.init(ws)
        for rel in laid.written:
            say(f"wrote     {rel}")
        say(f"majordomus initialised: {len(laid.written)} written. Commit .ai/repo beside the hooks.")
    named = list(dict.fromkeys(agents or ["claude"]))
    for agent in named:
        done = capture.install(ws, agent)
        for rel in done.written:
            say(f"wrote     {rel}")
        for rel in done.unchanged:
            say(f"unchanged {rel}")
    for agent in named:
        spec = AGENTS[agent]
        folder = spec.registration.split("/")[0] + "/"
        if spec.registration.startswith(".github/"):
            folder = ".github/hooks/"
        skill = " and its agent knows how to record (the skill)" if agent == "claude" else ""
        server = mcp_register.FILES[agent].path
        also = "" if server.startswith(folder) else f" and {server} (the MCP server)"
        say(f"hooks installed: {spec.title} opens and closes episodes in this repository{skill}. "
            f"Commit {folder}{also} so every clone shares them.")
        if spec.trust:
            say(f"trust: {spec.trust}")
    if agents:
        return OK
    home = Path(os.environ["HOME"]) if os.environ.get("HOME") else None
    for spec in AGENTS.values():
        if spec.name in named or installed(ws.root, spec):
            continue
        where = seen(ws.root, home, spec)
        if where:
            say(f"also seen: {spec.title} ({', '.join(where)}): add its hooks with "
                f"`majordomus capture install --agent {spec.name}`")
    return OK
