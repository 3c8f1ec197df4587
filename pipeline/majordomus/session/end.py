"""The one close path: publish the session record, derive, drain, then append `session.closed`.

Every close (the end hook, `majordomus session close`, any later caller) comes through
`close_episode`, so every close is preceded by its `knowledge.derived` line when
`session.knowledge_on_end` is on (the rule knowledge-observed reads this module's source).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majordomus.base.errors import UNKNOWN, FatalError
from majordomus.base.fsio import atomic_write, remove
from majordomus.base.ids import check_id
from majordomus.derive.table import Outcome
from majordomus.evidence import episodes
from majordomus.outbox import staging as outbox
from majordomus.session import pending
from majordomus.store import templates
from majordomus.store.ledger import utc_now
from majordomus.store.workspace import Workspace
from majordomus.tasks import derive, drain
from majordomus.tasks.drain import Drained


@dataclass(frozen=True)
class Closed:
    episode: str
    session_record: Path
    derivation: Outcome | None
    error: str | None = None  # why the derivation failed; the close still happened
    drained: Drained | None = None  # the outbox, moved at this boundary
    drain_error: str | None = None  # why the drain failed; the close still happened


@episodes.serialised(remove=True)
def close_episode(ws: Workspace, episode: str, reason: str = "other", by: str = "cli") -> Closed:
    """The one close path: publish the session record, derive, then append `session.closed`.

    Every close (the end hook, `majordomus session close`, any later caller) comes through here,
    so every close is preceded by its `knowledge.derived` line when `session.knowledge_on_end`
    is on.
    """
    check_id(episode, "episode id", written=True)
    record = episodes.open_record(ws, episode)
    if record is None:
        ws.ledger.append("session.refused", episodes.current(ws), episode=episode,
                         why="close for an episode that is not open")
        raise FatalError(f"episode {episode!r} is not open: nothing to close "
                         "(`majordomus history --event session.opened` lists episodes)", UNKNOWN)
    head = ws.refs().head  # one git process routes the record, the derivation and the drain
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
    remove(episodes.open_dir(ws) / f"{episode}.json", root=ws.root)
    episodes.forget_current(ws, episode)
    limit = ws.policy["ledger.retention_lines"]
    if limit:
        # an episode still open has not been derived: its window is never trimmed
        removed = ws.ledger.trim(limit, open_episodes=episodes.open_episodes(ws))
        if removed:
            ws.ledger.append("ledger.trimmed", None, removed=removed, kept=limit)
    return Closed(episode, path, outcome, error, drained, drain_error)


def derive_on_close(ws: Workspace, episode: str) -> Outcome:
    """The deriver, as the close path calls it (named so the wiring can be checked). A lock held
    past the wait leaves the derivation to the next boundary."""
    with pending.kept_on_busy(ws, episode):
        return derive.derive(ws, episode)


def drain_on_close(ws: Workspace) -> Drained | None:
    """The outbox drain, as the close path calls it: None on the trunk or with nothing waiting."""
    return drain.drain_at_boundary(ws)


def session_record_dir(ws: Workspace) -> Path:
    """Where a closed session record goes: the tracked sessions, or the outbox on the trunk."""
    return outbox.sessions_dir(ws)


def publish_session_record(ws: Workspace, record: dict[str, Any], closed: str, reason: str,
                           head_close: str | None, branch_close: str | None) -> Path:
    text = templates.render("session-record.md.j2", {
        "episode": record["episode"], "branch": record.get("branch"),
        "branch_close": branch_close, "opened": record.get("opened"), "closed": closed,
        "source": record.get("source"), "reason": reason, "head_open": record.get("head"),
        "head_close": head_close,
    })
    path = session_record_dir(ws) / f"{record['episode']}.md"
    atomic_write(path, text, root=ws.root)
    return path
