"""`majordomus capture install`: the Claude Code hooks and their registration.

The hook scripts go to `.claude/hooks/`; their registration is merged into
`.claude/settings.json` without disturbing what is there. A second run changes no byte.
"""
from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majordomus.base.errors import FatalError
from majordomus.base.fsio import atomic_write, read_bytes, read_text
from majordomus.base.resources import data_dir
from majordomus.store.workspace import Workspace

# Claude Code event -> hook script name.
HOOKS = {
    "SessionStart": "majordomus-session-start",
    "SessionEnd": "majordomus-session-end",
    "PreCompact": "majordomus-pre-compact",
}


SETTINGS_LIMIT = 1 << 20


def _held(path: Path) -> bytes | None:
    """The bytes of an installed hook script, None when missing or not a regular file of ours."""
    try:
        return read_bytes(path)
    except OSError:
        return None


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
        if _held(target) == data and os.access(target, os.X_OK):
            done.unchanged.append(rel)
            continue
        atomic_write(target, data, root=ws.root, mode=0o755)
        done.written.append(rel)
    path = ws.root / ".claude" / "settings.json"
    try:
        original = read_text(path, SETTINGS_LIMIT)
    except FileNotFoundError:
        original = ""
    except UnicodeDecodeError:
        raise FatalError(".claude/settings.json is not UTF-8 text: fix it, then rerun "
                         "`majordomus capture install`", 4) from None
    except OSError as exc:
        kind = "a symbolic link" if path.is_symlink() else f"not a regular file ({exc.strerror or exc})"
        raise FatalError(f".claude/settings.json is {kind}: capture install never reads or copies "
                         "what a link points to (it may be your own settings, tokens and all); put "
                         "a regular file there (or none), then rerun `majordomus capture install`",
                         4) from None
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
