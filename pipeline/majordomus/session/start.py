"""The one open path: close what was orphaned, open (or resume) an episode, drain the outbox on a
branch, write the opening snapshot and compose the briefing. The start hook and `majordomus
session start` both come here.

Opening an episode that is closed (a `--resume`, `--continue` or `/resume` of it) opens a new
span of it: a new `session.opened` line; its session record keeps every earlier span and gains
this one at its close (docs/EPISODES.md).
"""
from __future__ import annotations

import gc
import time

from majordomus.base import git
from majordomus.base.errors import FatalError
from majordomus.base.ids import check_id
from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.output import escape
from majordomus.context import prebuilt, snapshot
from majordomus.context.blocks import CEILING, client_chars
from majordomus.evidence import episodes
from majordomus.outbox import staging as outbox
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:  # imported where they run: a start with nothing to drain or close loads neither
    from typing import Any, NamedTuple

    from majordomus.session.end import Closed
    from majordomus.tasks.drain import Drained
else:
    from majordomus.base.lean import NamedTuple


class Opened(NamedTuple):
    episode: str
    resumed: bool  # it was open already: the same span goes on
    record: dict[str, Any]
    others_open: tuple[str, ...]
    reopened: bool = False  # it was closed: this opened a new span of it


@episodes.serialised()
def open_episode(ws: Workspace, episode: str, source: str = "startup", by: str = "cli",
                 agent: str | None = None, forked_from: str | None = None,
                 errors: list[str] | None = None, head: git.Head | None = None) -> Opened:
    """Open `episode` (or resume it when it is open already), recording it in the ledger, with
    the agent whose hook opened it. Without git (not on PATH, a broken repository) the episode
    still opens, with no branch or head, and why goes to `errors`. `head`: HEAD as the caller
    asked git for it (the start's one status), else asked here.

    `forked_from`: the episode this one was forked from, when the caller knows it.
    """
    check_id(episode, "episode id", written=True)
    existing = episodes.open_record(ws, episode)
    if existing is not None:
        ws.ledger.append("session.resumed", episode, episode=episode, source=source)
        episodes.write_current(ws, episode)
        return Opened(episode, True, existing, ())
    try:
        head = head or git.head(ws.root)
    except (OSError, git.GitError) as exc:
        head = git.Head(None, None)
        _note(errors, "git", exc)
    others = tuple(e for e in episodes.open_episodes(ws) if e != episode)
    extra: dict[str, Any] = {"others_open": list(others)} if others else {}
    if agent:
        extra["agent"] = agent
    if forked_from and forked_from != episode:
        extra["forked_from"] = check_id(forked_from, "episode id")
    published = episodes.record_file(ws, episode)
    if published is not None:  # closed before: this opens a new span after those its record lists
        from majordomus.store import (
            sessionrecord,  # (and its template) only for a resume
        )

        extra["span"] = sessionrecord.span_count(published[1]) + 1
    line = ws.ledger.append("session.opened", episode, episode=episode, source=source,
                            branch=head.branch, head=head.sha, reflog=head.reflog, by=by, **extra)
    record = {"episode": episode, "opened": line["ts"], "source": source, "by": by,
              "branch": head.branch, "head": head.sha, "reflog": head.reflog}
    if agent:
        record["agent"] = agent
        episodes.note_agent(ws, agent, episode)
    if "forked_from" in extra:
        record["forked_from"] = extra["forked_from"]
    if "span" in extra:
        record["span"] = extra["span"]
    episodes.write_open(ws, record)
    return Opened(episode, False, record, others, reopened=published is not None)


class Started(NamedTuple):
    opened: Opened
    briefing: str
    drained: Drained | None
    drain_error: str | None  # why the drain failed; the episode opened and the briefing stands
    errors: tuple[str, ...] = ()  # every step that failed alone (the drain's, an orphan's among them)
    orphans: tuple[Closed, ...] = ()  # episodes this start closed as orphaned


def _note(errors: list[str] | None, step: str, exc: BaseException) -> str:
    why = exc.message if isinstance(exc, FatalError) else f"{step}: {type(exc).__name__}: {exc}"
    why = why.splitlines()[0][:300] if why else step
    if errors is not None:
        errors.append(why)
    return why


def start(ws: Workspace, episode: str, source: str = "startup", by: str = "cli",
          agent: str | None = None, forked_from: str | None = None,
          asked: git.Running | None = None) -> Started:
    """Sweep orphans, open, drain, snapshot, brief: what every session start does, whoever calls
    it. Each step after the open fails alone (git missing, a full disk, a broken record): the
    others still run, and `Started.errors` says what failed.

    Git is asked once, before the open: HEAD for the ledger and the paths changed for the
    briefing. `asked`: that question, started by the hook before it imported this module (git
    answers while Python imports); when the sweep closed an episode (it writes records), git's
    answer is out of date and it is asked again. The briefing prebuilt at the last boundary is
    printed when its inputs are unchanged (`context/prebuilt.py`); else it is composed, and kept
    for the next start."""
    errors: list[str] = []
    try:
        orphans, orphan_errors = sweep_orphans(ws, episode, by)
    except Exception as exc:  # noqa: BLE001 - the sweep fails alone
        orphans, orphan_errors = (), ()
        _note(errors, "orphan sweep", exc)
    errors.extend(orphan_errors)
    if asked is not None and orphans:  # its answer predates the sweep's writes: asked again
        try:
            asked.wait(0)  # ended (killed if still running: it only reads)
        except (OSError, git.GitError):
            pass
        asked = None
    try:
        facts: git.Status | None = git.status_of(ws.root, asked or git.ask_status(ws.root))
    except (OSError, git.GitError):
        facts = None  # the open asks again, and says why it could not
    if facts is not None and facts.head.sha is not None:
        known = git.refs_of(ws.root, facts)  # the drain's trunk question, answered from the refs' files
        if known is not None:
            ws.know_refs(known)
    opened = open_episode(ws, episode, source=source, by=by, agent=agent, forked_from=forked_from,
                          errors=errors, head=facts.head if facts is not None else None)
    drained, drain_error = None, None
    try:  # a branch episode carries what trunk episodes left in the outbox; never at the briefing's cost
        drained = drain_at_boundary(ws)
    except Exception as exc:  # noqa: BLE001 - the drain fails alone
        drain_error = _note(errors, "drain", exc)
    if not opened.resumed:
        try:
            snapshot.write_opening(ws, opened.episode, opened.record, opened.others_open)
        except Exception as exc:  # noqa: BLE001 - the snapshot fails alone
            _note(errors, "opening snapshot", exc)
    if drained is not None:
        facts = None  # the drain moved records into the tree: git's answer is out of date
    text = None
    try:
        text = prebuilt.reuse(ws, episode, source, facts) if facts is not None else None
    except Exception as exc:  # noqa: BLE001 - a prebuilt text that cannot be checked is composed
        _note(errors, "prebuilt briefing", exc)
    if text is not None and client_chars(text := escape(text)) <= CEILING:
        return Started(opened, text, drained, drain_error, tuple(errors), orphans)
    gc.enable()  # a composition's work (see `sweep_orphans`)
    return Started(opened, _composed(ws, episode, source, facts, errors), drained, drain_error,
                   tuple(errors), orphans)


def _composed(ws: Workspace, episode: str, source: str, facts: git.Status | None, errors: list[str]) -> str:
    """The briefing composed now, as the client reads it (control characters escaped, then
    capped), and kept for the next start when it can serve one."""
    from majordomus.context import (
        briefing,  # the records' readers: only a start that composes loads them
    )

    try:
        prepared = prebuilt.prepare(ws, facts) if source != "compact" else None
    except Exception as exc:  # noqa: BLE001 - the briefing is composed all the same
        prepared = None
        _note(errors, "prebuilt briefing", exc)
    seen = briefing.Seen()
    try:
        if prepared is not None:
            text = briefing.compose(ws, episode, source, branch=prepared.status.head.branch,
                                    changed=prepared.changed, seen=seen, status=prepared.checked())
            try:
                prebuilt.save(ws, prepared, text, seen, episode)
            except Exception as exc:  # noqa: BLE001 - kept or not, the text stands
                _note(errors, "prebuilt briefing", exc)
        else:
            text = briefing.compose(ws, episode, source, branch=facts.head.branch if facts is not None else None,
                                    status=facts)
    except Exception as exc:  # noqa: BLE001 - the episode is open; say so even without a briefing
        why = _note(errors, "briefing", exc)
        text = (f"# Majordomus briefing: episode {episode} ({source})\n\nThe briefing could not be "
                f"composed ({why}); `majordomus context` shows the repository context.\n")
    return briefing.capped(escape(text))


def drain_at_boundary(ws: Workspace) -> Drained | None:
    """The boundary's drain; with an empty outbox (the usual start), or on the trunk where the
    outbox waits, it is not even loaded."""
    if not outbox.listing(ws) or outbox.refusal(ws) is not None:
        return None
    gc.enable()  # a drain's work (see `sweep_orphans`)
    from majordomus.tasks import drain

    return drain.drain_at_boundary(ws)


def sweep_orphans(ws: Workspace, starting: str, by: str,
                  now: float | None = None) -> tuple[tuple[Closed, ...], tuple[str, ...]]:
    """Close, through the one close path with reason `orphaned`, every open episode (but the one
    starting) with no ledger line for `session.orphan_after_minutes`: its end never came."""
    minutes = int(ws.policy["session.orphan_after_minutes"])
    if minutes <= 0:
        return (), ()
    quiet = episodes.quiet_open(ws, minutes, time.time() if now is None else now,
                                exclude=frozenset({starting}))
    if not quiet:
        return (), ()
    gc.enable()  # the close path's work (the hook turned it off for its usual run, `majordomus/__init__.py`)
    from majordomus.session import (
        end,  # the close path, loaded only when there is one to close
    )

    closed: list[Closed] = []
    errors: list[str] = []
    for orphan in quiet:
        try:
            closed.append(end.close_episode(ws, orphan, reason=end.ORPHANED, by=by, sweep=True,
                                            detail={"orphan_after_minutes": minutes, "swept_by": starting}))
        except end.NotOpen:
            continue  # closed by another process since it was found
        except Exception as exc:  # noqa: BLE001 - the start goes on; the caller reports it
            why = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
            errors.append(f"closing orphaned episode {orphan} failed: {why}")
            continue
        if closed[-1].error:
            errors.append(f"derivation failed for orphaned episode {orphan}: {closed[-1].error}")
        if closed[-1].drain_error:
            errors.append(str(closed[-1].drain_error))
    return tuple(closed), tuple(errors)
