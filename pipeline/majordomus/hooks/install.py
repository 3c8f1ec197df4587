"""`majordomus capture install`: the Claude Code hooks and their registration.

The hook scripts go to `.claude/hooks/`; their registration is merged into
`.claude/settings.json` without disturbing what is there. A second run changes no byte.
"""
from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import Any

from majordomus.base.errors import FatalError
from majordomus.base.fsio import atomic_write
from majordomus.base.resources import data_dir
from majordomus.store.workspace import Workspace

# Claude Code event -> hook script name.
HOOKS = {
    "SessionStart": "majordomus-session-start",
    "SessionEnd": "majordomus-session-end",
    "PreCompact": "majordomus-pre-compact",
}


def command_for(script: str) -> str:
    return f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{script}'


@dataclass
class Installed:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)


def merge_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """`settings` with our three hooks registered once each; everything else kept as it was."""
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise FatalError(".claude/settings.json: \"hooks\" is not an object: fix it by hand, then rerun "
                         "`majordomus capture install`", 4)
    for event, script in HOOKS.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise FatalError(f".claude/settings.json: hooks.{event} is not a list: fix it by hand, then "
                             "rerun `majordomus capture install`", 4)
        command = command_for(script)
        present = any(isinstance(g, dict) and any(isinstance(h, dict) and h.get("command") == command
                                                  for h in g.get("hooks", []) or [])
                      for g in groups)
        if not present:
            groups.append({"matcher": "", "hooks": [{"type": "command", "command": command}]})
    return settings


def install(ws: Workspace) -> Installed:
    done = Installed()
    hooks_dir = ws.root / ".claude" / "hooks"
    for script in HOOKS.values():
        source = data_dir("templates") / "hooks" / script
        target = hooks_dir / script
        data = source.read_bytes()
        rel = ws.rel(target)
        if target.exists() and target.read_bytes() == data and os.access(target, os.X_OK):
            done.unchanged.append(rel)
            continue
        atomic_write(target, data, root=ws.root)
        target.chmod(0o755)
        done.written.append(rel)
    path = ws.root / ".claude" / "settings.json"
    original = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        settings = json.loads(original) if original.strip() else {}
    except ValueError as exc:
        raise FatalError(f".claude/settings.json is not JSON ({exc}): fix it, then rerun "
                         "`majordomus capture install`", 4) from None
    if not isinstance(settings, dict):
        raise FatalError(".claude/settings.json is not a JSON object: fix it, then rerun "
                         "`majordomus capture install`", 4)
    merged = merge_settings(copy.deepcopy(settings))
    if original.strip() and merged == settings:
        done.unchanged.append(".claude/settings.json")  # kept byte for byte, formatting and all
    else:
        atomic_write(path, json.dumps(merged, indent=2, ensure_ascii=False) + "\n", root=ws.root)
        done.written.append(".claude/settings.json")
    return done
