"""The Python side of the Claude Code hooks: read the provider's JSON on stdin, act on the
repository it names, and never block the provider.

Every hook returns 0. A failure is recorded as `provider.event.failed` (when the repository is
initialised) and reported as one line on stderr; no traceback reaches the provider.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from majordomus.base.errors import OK, FatalError
from majordomus.base.ids import check_id
from majordomus.base.output import say, show
from majordomus.evidence import episodes
from majordomus.session import compact, end, start
from majordomus.store.workspace import Workspace, find_root

MAX_INPUT = 1 << 20  # a hook payload is a few hundred bytes; a megabyte is not one


class HookInputError(ValueError):
    pass


def read_payload(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_INPUT:
        raise HookInputError(f"stdin holds {len(raw)} bytes, more than a hook payload's {MAX_INPUT}")
    if not raw.strip():
        raise HookInputError("stdin is empty; the provider sends a JSON object")
    try:
        payload = json.loads(raw.decode("utf-8", errors="strict"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise HookInputError(f"stdin is not JSON ({str(exc).splitlines()[0][:80]})") from None
    if not isinstance(payload, dict):
        raise HookInputError(f"stdin is JSON {type(payload).__name__}, not an object")
    return payload


def _root(payload: dict[str, Any], hook_root: str | None) -> Path | None:
    for candidate in (payload.get("cwd"), os.environ.get("CLAUDE_PROJECT_DIR"), hook_root, os.getcwd()):
        if isinstance(candidate, str) and candidate and "\x00" not in candidate and Path(candidate).is_dir():
            return find_root(Path(candidate))
    return None


def run(name: str, hook_root: str | None = None) -> int:
    """Run hook `name`; always 0."""
    ws = None
    try:
        raw = sys.stdin.buffer.read(MAX_INPUT + 1)
        payload: dict[str, Any] = {}
        problem = None
        try:
            payload = read_payload(raw)
        except HookInputError as exc:
            problem = str(exc)
        root = _root(payload, hook_root)
        if root is None or not (root / ".ai" / "repo").is_dir():
            where = root or hook_root or os.getcwd()
            say(f"majordomus: {name}: {where} is not initialised, nothing recorded: run `majordomus init`")
            return OK
        ws = Workspace(root)
        if problem is not None:
            _failed(ws, name, problem)
            return OK
        _dispatch(ws, name, payload)
    except Exception as exc:  # the provider is never blocked, and no failure is silent
        _failed(ws, name, _describe(exc))
    return OK


def _describe(exc: BaseException) -> str:
    if isinstance(exc, FatalError):
        return exc.message
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def _failed(ws: Workspace | None, name: str, error: str) -> None:
    say(f"majordomus: {name} failed: {error}")
    if ws is None:
        return
    try:
        ws.ledger.append("provider.event.failed", episodes.current(ws), hook=name, error=error)
    except Exception as exc:  # the ledger itself is unwritable: say so, still exit 0
        say(f"majordomus: {name}: could not record the failure either: {exc}")


def _session_id(payload: dict[str, Any]) -> str:
    sid = payload.get("session_id")
    if not isinstance(sid, str) or not sid:
        raise HookInputError("the payload has no session_id string")
    return check_id(sid, "session_id")


def _text(payload: dict[str, Any], key: str, default: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) and value and len(value) < 200 else default


def _dispatch(ws: Workspace, name: str, payload: dict[str, Any]) -> None:
    sid = _session_id(payload)
    if name == "session-start":
        session_start(ws, sid, _text(payload, "source", "startup"))
    elif name == "session-end":
        session_end(ws, sid, _text(payload, "reason", "other"))
    elif name == "pre-compact":
        pre_compact(ws, sid, _text(payload, "trigger", "auto"))
    else:
        raise HookInputError(f"unknown hook {name!r}")


def session_start(ws: Workspace, episode: str, source: str) -> None:
    started = start.start(ws, episode, source=source, by="hook")
    if started.drain_error:
        _failed(ws, "session-start", started.drain_error)
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if env_file:
        with open(env_file, "a", encoding="utf-8") as handle:
            handle.write(f"export MAJORDOMUS_EPISODE={episode}\n")
    show(started.briefing)


def session_end(ws: Workspace, episode: str, reason: str) -> None:
    closed = end.close_episode(ws, episode, reason=reason, by="hook")
    if closed.error:
        _failed(ws, "session-end", f"derivation failed for {episode}: {closed.error}")
    if closed.drain_error:
        _failed(ws, "session-end", closed.drain_error)


def pre_compact(ws: Workspace, episode: str, trigger: str) -> None:
    compact.compact(ws, episode, trigger)
