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
| opencode| .opencode/plugins/majordomus.js | a plugin module (our template, written whole)  | -            |

For Claude Code three things more. Its Stop hook (`.claude/hooks/majordomus-stop`) reminds an
episode that committed and recorded nothing (`session/remind.py`). The skill
`.claude/skills/majordomus/SKILL.md` says when a record is worth it and how. And the permission
rules: the commands an agent records and reads with are allowed (`AGENT_COMMANDS`, each bare and
with arguments), so recording never waits on a prompt, and nothing else is: `Bash(majordomus *)`,
which older installs wrote and this one removes, let an agent run `majordomus doit run -o FILE`,
`generate --out DIR` and their kin, which write wherever the user can, with no prompt. A person's
acts (promote, reject, export) and `--verify` (which runs the command it is given) are `ask`
rules, which Claude Code evaluates before `allow`: an allow rule alone would let any command
through as a verification, and let an agent promote its own candidates.
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
from majordomus.hooks import mcp_register
from majordomus.hooks.registrations import GIT_ROOT as GIT_ROOT
from majordomus.hooks.registrations import HOOKS as HOOKS
from majordomus.hooks.registrations import REGISTRATIONS as REGISTRATIONS
from majordomus.hooks.registrations import SCRIPT as SCRIPT
from majordomus.hooks.registrations import Registration as Registration
from majordomus.hooks.registrations import command_for as command_for
from majordomus.store.workspace import Workspace

SETTINGS_LIMIT = 1 << 20

SKILL = ".claude/skills/majordomus/SKILL.md"
# what an agent runs without asking: the evidence writers and the readers, each writing only
# under the repository's .ai/local (tests/robustness/test_guard.py runs every one of them)
AGENT_COMMANDS = (
    "start", "finish", "decision add", "question add", "question resolve", "question list",
    "checkpoint", "handover", "history", "context", "session context", "doctor", "check",
    "knowledge candidates", "knowledge record", "knowledge status", "knowledge search",
    "knowledge edges", "knowledge stale", "knowledge check", "knowledge dispute",
)
ALLOW = tuple(rule for command in AGENT_COMMANDS
              for rule in (f"Bash(majordomus {command})", f"Bash(majordomus {command} *)"))
BROAD = "Bash(majordomus *)"  # what older installs allowed: removed
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
    """Allow the agent's commands, ask for a person's acts and for `--verify`; each rule added
    once, and the broad rule older installs wrote removed."""
    permissions = settings.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise _refuse(reg, '"permissions" is not an object')
    allow = _rules(reg, permissions, "allow")
    while BROAD in allow:
        allow.remove(BROAD)
    allow.extend(rule for rule in ALLOW if rule not in allow)
    ask = _rules(reg, permissions, "ask")
    ask.extend(rule for rule in ASK if rule not in ask)


def merge(reg: Registration, settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with our hooks registered once each (and, for Claude Code, our permission rules
    present); everything else kept as it was. A handler of ours from an older install gets a
    timeout it lacks, or one larger than its own, and its group loses the empty "matcher" older
    installs wrote."""
    if reg.agent.name == "claude":
        merge_permissions(reg, settings)
        approved = settings.setdefault("enabledMcpjsonServers", [])  # our .mcp.json server
        if not isinstance(approved, list):
            raise _refuse(reg, '"enabledMcpjsonServers" is not a list')
        if mcp_register.NAME not in approved:
            approved.append(mcp_register.NAME)
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


def _whole(ws: Workspace, rel: str, source: Path, done: Installed) -> None:
    """Write a file of ours whole (Claude Code's skill, OpenCode's plugin) unless its bytes are
    there already (a hand edit is restored)."""
    data = source.read_bytes()
    target = ws.root / rel
    if _held(target) == data:
        done.unchanged.append(rel)
        return
    if target.is_symlink():  # the link itself goes; what it points to is never written
        remove(target, root=ws.root)
    atomic_write(target, data, root=ws.root, mode=0o644)
    done.written.append(rel)


def _merge_registration(ws: Workspace, reg: Registration, done: Installed) -> None:
    """Merge our hooks into the agent's own JSON file, keeping everything else in it."""
    rel, agent = reg.agent.registration, reg.agent.name
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
        _whole(ws, SKILL, data_dir("templates") / "skills" / "majordomus" / "SKILL.md", done)
    if reg.template is not None:
        _whole(ws, reg.agent.registration, data_dir("templates") / "hooks" / reg.template, done)
    else:
        _merge_registration(ws, reg, done)
    registered = mcp_register.register(ws.root, agent)
    if registered is not None:
        path, wrote = registered
        if wrote and path not in done.written:
            done.written.append(path)
            if path in done.unchanged:
                done.unchanged.remove(path)
        elif not wrote and path not in done.written and path not in done.unchanged:
            done.unchanged.append(path)
    return done
