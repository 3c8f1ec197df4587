"""How each agent registers majordomus's hooks: its event names, the command it runs (finding the
repository the way that agent allows) and the timeouts, in its own units (hooks/install.py merges
them into the agent's file; benchmarks/inventory.py measures each registered command)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from majordomus.hooks.providers import BOUNDARIES, COMPACT, END, START, STOP
from majordomus.store.agents import AGENTS, Agent

SCRIPT = "majordomus-hook"  # the one script of every agent but Claude Code

# Claude Code event -> hook script name (its three scripts predate the other agents).
HOOKS = {
    "SessionStart": "majordomus-session-start",
    "SessionEnd": "majordomus-session-end",
    "PreCompact": "majordomus-pre-compact",
    "Stop": "majordomus-stop",
}
@dataclass(frozen=True)
class Registration:
    """How one agent registers our three boundaries."""

    agent: Agent
    events: dict[str, str]  # boundary -> the agent's event name
    root: str  # shell text naming the repository in the agent's hook environment
    timeouts: dict[str, int] = field(default_factory=dict)  # boundary -> timeout, in `timeout_key`'s unit
    timeout_key: str = "timeout"
    command_key: str = "command"
    flat: bool = False  # hooks.event[] holds the handlers themselves, not groups of them
    version: bool = False  # the file carries "version": 1
    named: bool = False  # each handler carries a "name"
    template: str | None = None  # the registration is this template, written whole (a plugin)
    legacy_roots: tuple[str, ...] = ()  # root texts older installs wrote: their handlers are ours too

    def command(self, boundary: str, root: str | None = None) -> str:
        if self.agent.name == "claude":
            return f'{root or self.root}/.claude/hooks/majordomus-{boundary}'
        return f"{root or self.root}/{self.agent.folder}/{SCRIPT} {self.agent.name} {boundary}"

    def commands(self, boundary: str) -> tuple[str, ...]:
        """This boundary's command, then those older installs wrote (replaced on install)."""
        return (self.command(boundary), *(self.command(boundary, old) for old in self.legacy_roots))

    def handler(self, boundary: str) -> dict[str, Any]:
        entry: dict[str, Any] = {}
        if self.named:
            entry["name"] = f"majordomus-{boundary}"
        entry["type"] = "command"
        entry[self.command_key] = self.command(boundary)
        if boundary in self.timeouts:
            entry[self.timeout_key] = self.timeouts[boundary]
        return entry

    def scripts(self) -> dict[str, str]:
        """Repository path -> template name of each hook script."""
        if self.agent.name == "claude":
            return {f".claude/hooks/{name}": name for name in HOOKS.values()}
        return {f"{self.agent.folder}/{SCRIPT}": SCRIPT}


GIT_ROOT = '"$(git rev-parse --show-toplevel)"'  # what older installs wrote: no hook at all without git


def walk_up(script: str) -> str:
    """Shell text naming the nearest folder at or above the agent's working directory that holds
    `script`: the repository whose hook it is, found with the shell alone (no git, no other tool),
    so a PATH without git (a minimal container, a tool that resets PATH) still runs the hook."""
    return ('"$(d=$PWD; while [ -n "$d" ] && [ ! -x "$d/' + script + '" ]; do d=${d%/*}; done; '
            'printf %s "${d:-/}")"')


REGISTRATIONS: dict[str, Registration] = {r.agent.name: r for r in (
    # no "matcher": Claude Code matches every source and trigger without one, and Copilot CLI,
    # which also reads this file, refuses the whole file over an empty one. SessionEnd: all hooks
    # share 1.5 s unless one registers a larger timeout (seconds; the budget then rises to the
    # largest, capped at 60 s): the end and compaction hooks derive, so 30 s
    Registration(AGENTS["claude"], {START: "SessionStart", END: "SessionEnd", COMPACT: "PreCompact", STOP: "Stop"},
                 '"$CLAUDE_PROJECT_DIR"', {END: 30, COMPACT: 30}),
    # SessionEnd: 1 s unless set, at most 3 s (more is clamped, with a warning)
    Registration(AGENTS["codex"], {START: "SessionStart", END: "SessionEnd", COMPACT: "PreCompact"},
                 walk_up(f"{AGENTS['codex'].folder}/{SCRIPT}"), {START: 30, END: 3, COMPACT: 30},
                 legacy_roots=(GIT_ROOT,)),
    Registration(AGENTS["gemini"], {START: "SessionStart", END: "SessionEnd", COMPACT: "PreCompress"},
                 '"$GEMINI_PROJECT_DIR"', {START: 30_000, END: 30_000, COMPACT: 30_000}, named=True),
    Registration(AGENTS["copilot"], {START: "sessionStart", END: "sessionEnd", COMPACT: "preCompact"},
                 '"${COPILOT_PROJECT_DIR:-' + walk_up(f"{AGENTS['copilot'].folder}/{SCRIPT}")[1:-1] + '}"',
                 {b: 30 for b in BOUNDARIES}, timeout_key="timeoutSec", command_key="bash", flat=True,
                 version=True, legacy_roots=('"${COPILOT_PROJECT_DIR:-$(git rev-parse --show-toplevel)}"',)),
    Registration(AGENTS["cursor"], {START: "sessionStart", END: "sessionEnd", COMPACT: "preCompact"},
                 '"${CURSOR_PROJECT_DIR:-' + walk_up(f"{AGENTS['cursor'].folder}/{SCRIPT}")[1:-1] + '}"',
                 {b: 30 for b in BOUNDARIES}, flat=True, version=True,
                 legacy_roots=('"${CURSOR_PROJECT_DIR:-$(git rev-parse --show-toplevel)}"',)),
    # no hook file: a plugin module maps OpenCode's events onto the hook script beside it
    Registration(AGENTS["opencode"], {START: "experimental.chat.system.transform", END: "session.idle",
                                      COMPACT: "experimental.session.compacting"},
                 GIT_ROOT, template="majordomus-opencode.js"),
)}


def command_for(script: str) -> str:
    """Claude Code's command for one of its scripts (kept for its callers)."""
    return f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{script}'


