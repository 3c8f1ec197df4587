"""Episodes: one agent session's span in the ledger, opened and closed at its boundaries.

The open-episode state lives under `.ai/local/state/episodes/<id>.json`; `state/current` names
the most recently opened one, which is the open episode for a command that does not carry
`$MAJORDOMUS_EPISODE` (written to `$CLAUDE_ENV_FILE` by the start hook where Claude Code gives one).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import UNKNOWN, FatalError
from pipeline.fsio import atomic_write
from pipeline.ledger import utc_now
from pipeline.workspace import Workspace, check_id

RESUMING_SOURCES = ("resume", "compact")


def _open_dir(ws: Workspace) -> Path:
    return ws.state / "episodes"


def open_record(ws: Workspace, episode: str) -> dict[str, Any] | None:
    try:
        data = json.loads((_open_dir(ws) / f"{episode}.json").read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def current(ws: Workspace) -> str | None:
    """The open episode of this command: $MAJORDOMUS_EPISODE when open, else the newest opened."""
    named = os.environ.get("MAJORDOMUS_EPISODE")
    if named and (_open_dir(ws) / f"{named}.json").is_file():
        return named
    try:
        newest = (ws.state / "current").read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if newest and (_open_dir(ws) / f"{newest}.json").is_file():
        return newest
    return None


def require_current(ws: Workspace) -> str:
    episode = current(ws)
    if episode is None:
        raise FatalError("no open episode: run `majordomus session start` or start Claude Code", UNKNOWN)
    return episode


def open_episodes(ws: Workspace) -> list[str]:
    folder = _open_dir(ws)
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


@dataclass(frozen=True)
class Opened:
    episode: str
    resumed: bool
    record: dict[str, Any]
    others_open: tuple[str, ...]


def open_episode(ws: Workspace, episode: str, source: str = "startup", by: str = "cli") -> Opened:
    """Open `episode` (or resume it when it is open already), recording it in the ledger."""
    from pipeline import git

    check_id(episode, "episode id")
    existing = open_record(ws, episode)
    if existing is not None:
        ws.ledger.append("session.resumed", episode, episode=episode, source=source)
        atomic_write(ws.state / "current", episode + "\n")
        return Opened(episode, True, existing, ())
    head = git.head(ws.root)
    others = tuple(e for e in open_episodes(ws) if e != episode)
    extra: dict[str, Any] = {"others_open": list(others)} if others else {}
    line = ws.ledger.append("session.opened", episode, episode=episode, source=source,
                            branch=head.branch, head=head.sha, by=by, **extra)
    record = {"episode": episode, "opened": line["ts"], "source": source, "by": by,
              "branch": head.branch, "head": head.sha}
    atomic_write(_open_dir(ws) / f"{episode}.json", json.dumps(record, indent=2) + "\n")
    atomic_write(ws.state / "current", episode + "\n")
    return Opened(episode, False, record, others)


@dataclass(frozen=True)
class Closed:
    episode: str
    session_record: Path
    derivation: Any  # pipeline.derive.Outcome | None
    error: str | None = None  # why the derivation failed; the close still happened
    drained: Any = None  # pipeline.tasks.drain.Drained | None: the outbox, moved at this boundary
    drain_error: str | None = None  # why the drain failed; the close still happened


def close_episode(ws: Workspace, episode: str, reason: str = "other", by: str = "cli") -> Closed:
    """The one close path: publish the session record, derive, then append `session.closed`.

    Every close (the end hook, `majordomus session close`, any later caller) comes through here,
    so every close is preceded by its `knowledge.derived` line when `session.knowledge_on_end`
    is on.
    """
    from pipeline import git

    check_id(episode, "episode id")
    record = open_record(ws, episode)
    if record is None:
        ws.ledger.append("session.refused", current(ws), episode=episode,
                         why="close for an episode that is not open")
        raise FatalError(f"episode {episode!r} is not open: nothing to close "
                         "(`majordomus history --event session.opened` lists episodes)", UNKNOWN)
    head = git.head(ws.root)
    closed_ts = utc_now()
    path = publish_session_record(ws, record, closed_ts, reason, head.sha, head.branch)
    outcome, error = None, None
    if ws.policy.on("session.knowledge_on_end"):
        try:
            outcome = derive_on_close(ws, episode)
        except Exception as exc:  # noqa: BLE001 - reported by the caller; the close goes on
            error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    drained, drain_error = None, None
    try:  # on a branch, what trunk episodes left in the outbox rides along with this close
        drained = drain_on_close(ws)
    except Exception as exc:  # noqa: BLE001 - reported by the caller; the close goes on
        drain_error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    ws.ledger.append("session.closed", episode, ts=closed_ts, episode=episode, reason=reason,
                     branch=head.branch, head=head.sha, by=by)
    (_open_dir(ws) / f"{episode}.json").unlink(missing_ok=True)
    _forget_current(ws, episode)
    limit = ws.policy["ledger.retention_lines"]
    if limit:
        removed = ws.ledger.trim(limit)
        if removed:
            ws.ledger.append("ledger.trimmed", None, removed=removed, kept=limit)
    return Closed(episode, path, outcome, error, drained, drain_error)


def derive_on_close(ws: Workspace, episode: str) -> Any:
    """The deriver, as the close path calls it (named so the wiring can be checked)."""
    from pipeline import derive

    return derive.derive(ws, episode)


def drain_on_close(ws: Workspace) -> Any:
    """The outbox drain, as the close path calls it: None on the trunk or with nothing waiting."""
    from pipeline import outbox

    return outbox.drain_at_boundary(ws)


def _forget_current(ws: Workspace, episode: str) -> None:
    path = ws.state / "current"
    try:
        if path.read_text(encoding="utf-8").strip() == episode:
            rest = [e for e in open_episodes(ws) if e != episode]
            if rest:
                newest = max(rest, key=lambda e: (open_record(ws, e) or {}).get("opened", ""))
                atomic_write(path, newest + "\n")
            else:
                path.unlink()
    except FileNotFoundError:
        pass


def session_record_dir(ws: Workspace) -> Path:
    """Where a closed session record goes: the tracked sessions, or the outbox on the trunk."""
    from pipeline import outbox

    return outbox.sessions_dir(ws)


def publish_session_record(ws: Workspace, record: dict[str, Any], closed: str, reason: str,
                           head_close: str | None, branch_close: str | None) -> Path:
    from pipeline import render

    text = render.render("session-record.md.j2", {
        "episode": record["episode"], "branch": record.get("branch"),
        "branch_close": branch_close, "opened": record.get("opened"), "closed": closed,
        "source": record.get("source"), "reason": reason, "head_open": record.get("head"),
        "head_close": head_close,
    })
    path = session_record_dir(ws) / f"{record['episode']}.md"
    atomic_write(path, text)
    return path
