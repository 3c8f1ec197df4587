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

MAX_INPUT = 1 << 20  # a hook payload is a few hundred bytes; a megabyte is not one
NAMES = ("session-start", "session-end", "pre-compact")


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
    from pipeline.workspace import find_root

    for candidate in (payload.get("cwd"), os.environ.get("CLAUDE_PROJECT_DIR"), hook_root, os.getcwd()):
        if isinstance(candidate, str) and candidate and "\x00" not in candidate and Path(candidate).is_dir():
            return find_root(Path(candidate))
    return None


def run(name: str, hook_root: str | None = None) -> int:
    """Run hook `name`; always 0."""
    from pipeline.workspace import Workspace

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
            print(f"majordomus: {name}: {where} is not initialised, nothing recorded: run `majordomus init`",
                  file=sys.stderr)
            return 0
        ws = Workspace(root)
        if problem is not None:
            _failed(ws, name, problem)
            return 0
        _dispatch(ws, name, payload)
    except Exception as exc:  # the provider is never blocked, and no failure is silent
        _failed(ws, name, _describe(exc))
    return 0


def _describe(exc: BaseException) -> str:
    from pipeline.errors import FatalError

    if isinstance(exc, FatalError):
        return exc.message
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def _failed(ws: Any, name: str, error: str) -> None:
    print(f"majordomus: {name} failed: {error}", file=sys.stderr)
    if ws is None:
        return
    try:
        from pipeline import episodes

        ws.ledger.append("provider.event.failed", episodes.current(ws), hook=name, error=error)
    except Exception as exc:  # the ledger itself is unwritable: say so, still exit 0
        print(f"majordomus: {name}: could not record the failure either: {exc}", file=sys.stderr)


def _session_id(payload: dict[str, Any]) -> str:
    from pipeline.workspace import check_id

    sid = payload.get("session_id")
    if not isinstance(sid, str) or not sid:
        raise HookInputError("the payload has no session_id string")
    return check_id(sid, "session_id")


def _text(payload: dict[str, Any], key: str, default: str) -> str:
    value = payload.get(key)
    return value if isinstance(value, str) and value and len(value) < 200 else default


def _dispatch(ws: Any, name: str, payload: dict[str, Any]) -> None:
    sid = _session_id(payload)
    if name == "session-start":
        session_start(ws, sid, _text(payload, "source", "startup"))
    elif name == "session-end":
        session_end(ws, sid, _text(payload, "reason", "other"))
    elif name == "pre-compact":
        pre_compact(ws, sid, _text(payload, "trigger", "auto"))
    else:
        raise HookInputError(f"unknown hook {name!r}")


def session_start(ws: Any, episode: str, source: str) -> None:
    from pipeline import briefing, episodes, outbox, snapshot

    opened = episodes.open_episode(ws, episode, source=source, by="hook")
    try:  # a branch episode carries what trunk episodes left in the outbox; never at the briefing's cost
        outbox.drain_at_boundary(ws)
    except Exception as exc:  # noqa: BLE001
        _failed(ws, "session-start", _describe(exc))
    env_file = os.environ.get("CLAUDE_ENV_FILE")
    if env_file:
        with open(env_file, "a", encoding="utf-8") as handle:
            handle.write(f"export MAJORDOMUS_EPISODE={episode}\n")
    if not opened.resumed:
        snapshot.write_opening(ws, opened)
    # A fresh open has just asked git for the branch: the briefing does not ask again.
    sys.stdout.write(briefing.compose(ws, episode, source,
                                      branch=None if opened.resumed else opened.record.get("branch")))


def session_end(ws: Any, episode: str, reason: str) -> None:
    from pipeline import episodes

    closed = episodes.close_episode(ws, episode, reason=reason, by="hook")
    if closed.error:
        _failed(ws, "session-end", f"derivation failed for {episode}: {closed.error}")
    if closed.drain_error:
        _failed(ws, "session-end", closed.drain_error)


def pre_compact(ws: Any, episode: str, trigger: str) -> None:
    """Compaction has no close to ride on: it checkpoints and derives on its own switches."""
    from pipeline import derive, episodes, work

    if episodes.open_record(ws, episode) is None:
        from pipeline import snapshot

        snapshot.write_opening(ws, episodes.open_episode(ws, episode, source="compact", by="hook"))
    failure: Exception | None = None
    if ws.policy.on("session.checkpoint_on_compact"):
        try:
            work.checkpoint(ws, note=f"compaction ({trigger})", episode=episode)
        except Exception as exc:  # noqa: BLE001 - a failed checkpoint must not stop the derivation
            failure = exc
    if ws.policy.on("session.knowledge_on_compact"):
        derive.derive(ws, episode)
    if failure is not None:
        raise failure
