"""`majordomus capture install [--agent A]`: each agent's hook scripts and registration.

The scripts go beside the registration (`.claude/hooks/`, `.codex/hooks/`, ...); the
registration is merged into the agent's own file without disturbing what is there, and names no
path of one machine: each command finds the repository the way its agent allows (a variable the
agent sets, else git). A second run changes no byte.

| agent   | registration                    | shape                                          | timeout unit |
|---------|---------------------------------|------------------------------------------------|--------------|
| claude  | .claude/settings.json           | hooks.Event[] = {hooks: [handler]}             | seconds      |
| codex   | .codex/hooks.json               | hooks.Event[] = {hooks: [handler]}             | seconds      |
| gemini  | .gemini/settings.json           | hooks.Event[] = {hooks: [handler with a name]} | milliseconds |
| copilot | .github/hooks/majordomus.json   | version 1, hooks.event[] = handler (`bash`)    | seconds      |
| cursor  | .cursor/hooks.json              | version 1, hooks.event[] = handler             | seconds      |

For Claude Code three things more. Its Stop hook (`.claude/hooks/majordomus-stop`) reminds an
episode that committed and recorded nothing (`session/remind.py`). The skill
`.claude/skills/majordomus/SKILL.md` says when a record is worth it and how. And the permission
rules: `Bash(majordomus *)` is allowed, so recording never waits on a prompt (Claude Code's docs
call the `Bash(majordomus:*)` form legacy and deprecated, the same rule: either one present
counts); a person's acts (promote, reject, export) and `--verify` (which runs the command it is
given) are `ask` rules, which Claude Code evaluates before `allow`: the allow rule alone would let
any command through as a verification, and let an agent promote its own candidates.
"""
from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majordomus.base.errors import REFUSED, FatalError
from majordomus.base.fsio import atomic_write, read_bytes, remove
from majordomus.base.resources import data_dir
from majordomus.hooks.providers import BOUNDARIES, COMPACT, END, START, STOP
from majordomus.store.agents import AGENTS, Agent
from majordomus.store.workspace import Workspace

SETTINGS_LIMIT = 1 << 20
SCRIPT = "majordomus-hook"  # the one script of every agent but Claude Code

# Claude Code event -> hook script name (its three scripts predate the other agents).
HOOKS = {
    "SessionStart": "majordomus-session-start",
    "SessionEnd": "majordomus-session-end",
    "PreCompact": "majordomus-pre-compact",
    "Stop": "majordomus-stop",
}
SKILL = ".claude/skills/majordomus/SKILL.md"
ALLOW = "Bash(majordomus *)"
ALLOWED_ALREADY = (ALLOW, "Bash(majordomus:*)")  # the deprecated prefix form is the same rule
ASK = (
    "Bash(majordomus knowledge promote *)",
    "Bash(majordomus knowledge reject *)",
    "Bash(majordomus knowledge export *)",
    "Bash(majordomus *--verify*)",
)


def _held(path: Path) -> bytes | None:
    """The bytes of an installed hook script, None when missing or not a regular file of ours."""
    try:
        return read_bytes(path)
    except OSError:
        return None


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
)}


def command_for(script: str) -> str:
    """Claude Code's command for one of its scripts (kept for its callers)."""
    return f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{script}'


@dataclass
class Installed:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def rerun(agent: str) -> str:
    """The command that installs `agent`'s hooks."""
    return "majordomus capture install" + ("" if agent == "claude" else f" --agent {agent}")


def _refuse(reg: Registration, what: str) -> FatalError:
    return FatalError(f"{reg.agent.registration}: {what}: fix it by hand, then rerun "
                      f"`{rerun(reg.agent.name)}`", REFUSED)


def _ours(reg: Registration, handler: Any, boundary: str) -> bool:
    return isinstance(handler, dict) and handler.get(reg.command_key) in reg.commands(boundary)


def _rules(reg: Registration, permissions: dict[str, Any], kind: str) -> list[Any]:
    rules = permissions.setdefault(kind, [])
    if not isinstance(rules, list):
        raise _refuse(reg, f"permissions.{kind} is not a list")
    return rules


def merge_permissions(reg: Registration, settings: dict[str, Any]) -> None:
    """Allow `majordomus`, ask for a person's acts and for `--verify`; each rule added once."""
    permissions = settings.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise _refuse(reg, '"permissions" is not an object')
    allow = _rules(reg, permissions, "allow")
    if not any(rule in allow for rule in ALLOWED_ALREADY):
        allow.append(ALLOW)
    ask = _rules(reg, permissions, "ask")
    ask.extend(rule for rule in ASK if rule not in ask)


def merge(reg: Registration, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with our hooks registered once each (and, for Claude Code, our permission rules
    present); everything else kept as it was. A handler of ours from an older install gets a
    timeout it lacks, or one larger than its own, and its group loses the empty "matcher" older
    installs wrote."""
    if reg.agent.name == "claude":
        merge_permissions(reg, settings)
    if reg.version:
        settings.setdefault("version", 1)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _refuse(reg, '"hooks" is not an object')
    for boundary, event in reg.events.items():
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise _refuse(reg, f"hooks.{event} is not a list")
        if reg.flat:
            handlers = [h for h in entries if _ours(reg, h, boundary)]
        else:
            groups = [g for g in entries if isinstance(g, dict) and isinstance(g.get("hooks"), list)
                      and any(_ours(reg, h, boundary) for h in g["hooks"])]
            handlers = [h for g in groups for h in g["hooks"] if _ours(reg, h, boundary)]
            for group in groups:
                if group.get("matcher") == "":
                    del group["matcher"]
        if not handlers:
            handler = reg.handler(boundary)
            entries.append(handler if reg.flat else {"hooks": [handler]})
            continue
        timeout = reg.timeouts.get(boundary)
        for handler in handlers:
            handler[reg.command_key] = reg.command(boundary)  # an older install's command, replaced
            current = handler.get(reg.timeout_key)
            if timeout is not None and (not isinstance(current, (int, float)) or isinstance(current, bool)
                                        or current < timeout):
                handler[reg.timeout_key] = timeout
    return settings


def merge_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """Claude Code's settings with our hooks merged (kept for its callers)."""
    return merge(REGISTRATIONS["claude"], settings)


def _read(ws: Workspace, reg: Registration) -> str:
    path = ws.root / reg.agent.registration
    if path.is_symlink():
        raise _refuse(reg, "it is a symbolic link, and capture install never writes through one")
    try:
        with open(path, "rb") as handle:
            data = handle.read(SETTINGS_LIMIT + 1)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise _refuse(reg, f"it cannot be read ({exc.strerror or exc})") from None
    if len(data) > SETTINGS_LIMIT:
        raise _refuse(reg, f"it is larger than {SETTINGS_LIMIT} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(reg, "it is not UTF-8 text") from None


def _skill(ws: Workspace, done: Installed) -> None:
    """Write Claude Code's skill unless its bytes are there already (a hand edit is restored)."""
    target = ws.root / SKILL
    data = (data_dir("templates") / "skills" / "majordomus" / "SKILL.md").read_bytes()
    if _held(target) == data:
        done.unchanged.append(SKILL)
        return
    if target.is_symlink():  # the link itself goes; what it points to is never written
        remove(target, root=ws.root)
    atomic_write(target, data, root=ws.root, mode=0o644)
    done.written.append(SKILL)


def install(ws: Workspace, agent: str = "claude") -> Installed:
    """Write `agent`'s hook scripts and merge its registration. Idempotent."""
    reg = REGISTRATIONS[agent]
    done = Installed()
    for rel, template in reg.scripts().items():
        target = ws.root / rel
        data = (data_dir("templates") / "hooks" / template).read_bytes()
        if _held(target) == data and os.access(target, os.X_OK):
            done.unchanged.append(rel)
            continue
        if target.is_symlink():  # the link itself goes; what it points to is never written
            remove(target, root=ws.root)
        atomic_write(target, data, root=ws.root, mode=0o755)
        done.written.append(rel)
    if agent == "claude":
        _skill(ws, done)
    rel = reg.agent.registration
    original = _read(ws, reg)
    try:
        settings = json.loads(original) if original.strip() else {}
    except ValueError as exc:
        raise FatalError(f"{rel} is not JSON ({str(exc).splitlines()[0][:80]}): fix it, then rerun "
                         f"`{rerun(agent)}`", REFUSED) from None
    if not isinstance(settings, dict):
        raise FatalError(f"{rel} is not a JSON object: fix it, then rerun `{rerun(agent)}`", REFUSED)
    merged = merge(reg, copy.deepcopy(settings))
    if original.strip() and merged == settings:
        done.unchanged.append(rel)  # kept byte for byte, formatting and all
    else:
        atomic_write(ws.root / rel, json.dumps(merged, indent=2, ensure_ascii=False) + "\n", root=ws.root)
        done.written.append(rel)
    return done
