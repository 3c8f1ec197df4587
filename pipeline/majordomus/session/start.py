"""The one open path: open (or resume) an episode, drain the outbox on a branch, write the opening
snapshot and compose the briefing. The start hook and `majordomus session start` both come here."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from majordomus.base import git
from majordomus.base.errors import FatalError
from majordomus.base.fsio import atomic_write
from majordomus.base.ids import check_id
from majordomus.context import briefing, snapshot
from majordomus.evidence import episodes
from majordomus.store.workspace import Workspace
from majordomus.tasks import drain
from majordomus.tasks.drain import Drained


@dataclass(frozen=True)
class Opened:
    episode: str
    resumed: bool
    record: dict[str, Any]
    others_open: tuple[str, ...]


@episodes.serialised()
def open_episode(ws: Workspace, episode: str, source: str = "startup", by: str = "cli",
                 agent: str | None = None, errors: list[str] | None = None) -> Opened:
    """Open `episode` (or resume it when it is open already), recording it in the ledger, with
    the agent whose hook opened it. Without git (not on PATH, a broken repository) the episode
    still opens, with no branch or head, and why goes to `errors`."""
    check_id(episode, "episode id", written=True)
    existing = episodes.open_record(ws, episode)
    if existing is not None:
        ws.ledger.append("session.resumed", episode, episode=episode, source=source)
        atomic_write(ws.state / "current", episode + "\n", root=ws.root)
        return Opened(episode, True, existing, ())
    try:
        head = git.head(ws.root)
    except (OSError, git.GitError) as exc:
        head = git.Head(None, None)
        _note(errors, "git", exc)
    others = tuple(e for e in episodes.open_episodes(ws) if e != episode)
    extra: dict[str, Any] = {"others_open": list(others)} if others else {}
    if agent:
        extra["agent"] = agent
    line = ws.ledger.append("session.opened", episode, episode=episode, source=source,
                            branch=head.branch, head=head.sha, reflog=head.reflog, by=by, **extra)
    record = {"episode": episode, "opened": line["ts"], "source": source, "by": by,
              "branch": head.branch, "head": head.sha, "reflog": head.reflog}
    if agent:
        record["agent"] = agent
        episodes.note_agent(ws, agent, episode)
    atomic_write(episodes.open_dir(ws) / f"{episode}.json", json.dumps(record, indent=2) + "\n",
                 root=ws.root)
    atomic_write(ws.state / "current", episode + "\n", root=ws.root)
    return Opened(episode, False, record, others)


@dataclass(frozen=True)
class Started:
    opened: Opened
    briefing: str
    drained: Drained | None
    drain_error: str | None  # why the drain failed; the episode opened and the briefing stands
    errors: tuple[str, ...] = ()  # every step that failed alone (the drain's among them)


def _note(errors: list[str] | None, step: str, exc: BaseException) -> str:
    why = exc.message if isinstance(exc, FatalError) else f"{step}: {type(exc).__name__}: {exc}"
    why = why.splitlines()[0][:300] if why else step
    if errors is not None:
        errors.append(why)
    return why


def start(ws: Workspace, episode: str, source: str = "startup", by: str = "cli",
          agent: str | None = None) -> Started:
    """Open, drain, snapshot, brief: what every session start does, whoever calls it. Each step
    after the open fails alone (git missing, a full disk, a broken record): the others still run,
    and `Started.errors` says what failed."""
    errors: list[str] = []
    opened = open_episode(ws, episode, source=source, by=by, agent=agent, errors=errors)
    drained, drain_error = None, None
    try:  # a branch episode carries what trunk episodes left in the outbox; never at the briefing's cost
        drained = drain.drain_at_boundary(ws)
    except Exception as exc:  # noqa: BLE001 - the drain fails alone
        drain_error = _note(errors, "drain", exc)
    if not opened.resumed:
        try:
            snapshot.write_opening(ws, opened.episode, opened.record, opened.others_open)
        except Exception as exc:  # noqa: BLE001 - the snapshot fails alone
            _note(errors, "opening snapshot", exc)
    # A fresh open has just asked git for the branch: the briefing does not ask again.
    try:
        text = briefing.compose(ws, episode, source,
                                branch=None if opened.resumed else opened.record.get("branch"))
    except Exception as exc:  # noqa: BLE001 - the episode is open; say so even without a briefing
        why = _note(errors, "briefing", exc)
        text = (f"# Majordomus briefing: episode {episode} ({source})\n\nThe briefing could not be "
                f"composed ({why}); `majordomus context` shows the repository context.\n")
    return Started(opened, text, drained, drain_error, tuple(errors))
