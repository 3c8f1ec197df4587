"""The one close path: derive, drain, append `session.closed`, then publish the session record.

Every close (the end hook, `majordomus session close`, the orphan sweep of a later start, any
later caller) comes through `close_episode`, so every close is preceded by its
`knowledge.derived` line when `session.knowledge_on_end` is on (the rule knowledge-observed reads
this module's source).

A close ends the episode's current span: the session record gains that span after the ones it
already lists (docs/EPISODES.md). An end that arrives for an episode the orphan sweep already
closed is a span of its own, opened and closed by that late end, never an error.
"""
from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base import git
from majordomus.base.errors import UNKNOWN, FatalError
from majordomus.base.fsio import atomic_write, remove
from majordomus.base.ids import check_id
from majordomus.context import prebuilt
from majordomus.derive.table import Outcome
from majordomus.evidence import episodes
from majordomus.outbox import staging as outbox
from majordomus.session import pending
from majordomus.store import gitmerge, sessionrecord
from majordomus.store.ledger import Line, utc_now
from majordomus.store.workspace import Workspace
from majordomus.tasks import derive, drain, noop
from majordomus.tasks.drain import Drained

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

ORPHANED = "orphaned"
LATE_END = "late-end"  # the source of a span a late end opens and closes at once


class NotOpen(FatalError):
    """The episode is not open (the sweep's race with another close: nothing to do)."""


class Closed(NamedTuple):
    episode: str
    session_record: Path
    derivation: Outcome | None
    error: str | None = None  # why the derivation failed; the close still happened
    drained: Drained | None = None  # the outbox, moved at this boundary
    drain_error: str | None = None  # why the drain failed; the close still happened
    late: bool = False  # a late end: the span was opened and closed by this close
    errors: tuple[str, ...] = ()  # steps that failed alone (git not on PATH); the close still happened


@episodes.serialised(remove=True)
def close_episode(ws: Workspace, episode: str, reason: str = "other", by: str = "cli",
                  detail: dict[str, Any] | None = None, sweep: bool = False,
                  end_first: bool = False) -> Closed:
    """The one close path: derive, append `session.closed`, then publish the session record.

    Every close (the end hook, `majordomus session close`, the orphan sweep, any later caller)
    comes through here, so every close is preceded by its `knowledge.derived` line when
    `session.knowledge_on_end` is on. `detail` goes into the `session.closed` line; `sweep`:
    an episode no longer open raises `NotOpen` and records nothing (another close won the race).

    The session record (tracked) is written after the ledger's `session.closed`, so a process
    killed at any point never leaves a record that says closed while the ledger says open. The
    derivation is marked pending before it starts and unmarked when it ran, so one a kill cut
    short is run by the next boundary. `end_first` (an agent that kills a slow end hook, Codex's
    3 s): the end is recorded first, the derivation follows it.
    """
    check_id(episode, "episode id", written=True)
    record = episodes.open_record(ws, episode)
    late = False
    if record is None and not sweep:
        record = open_late_span(ws, episode, by)
        late = record is not None
    if record is None:
        if sweep:
            raise NotOpen(f"episode {episode!r} is no longer open", UNKNOWN)
        ws.ledger.append("session.refused", episodes.current(ws), episode=episode,
                         why="close for an episode that is not open")
        raise FatalError(f"episode {episode!r} is not open: nothing to close "
                         "(`majordomus history --event session.opened` lists episodes)", UNKNOWN)
    # one git process routes the record, the derivation and the drain; without git the close
    # goes on with no branch or head, and what it writes waits in the outbox
    refs, git_error = ws.refs_or_unknown()
    head = refs.head
    began = utc_now()  # the record's close time: when the close began, before the derivation
    # one read of the episode's ledger window, handed to every step that needs it: the interrupted
    # close, the derivation's plan and span bounds, the session record's earlier spans
    window = ws.ledger.window(episode)
    recorded = None if late else interrupted_close(window)
    if recorded is not None:  # a close killed after its ledger line: finish that one, add no other
        reason = str(recorded.get("reason") or reason)
        head = git.Head(recorded.get("branch"), recorded.get("head"))
    deriving = ws.policy.on("session.knowledge_on_end")
    path = None
    outcome, error = None, None
    # marked before it starts, the mark held (locked) while it runs: a kill -9 leaves it to the next
    # boundary, and no other boundary runs it meanwhile
    with pending.held(ws, episode) if deriving else nullcontext():
        if recorded is not None:
            path = _publish_closed(ws, record, episode, reason, head, recorded.ts, window)
        elif end_first:
            path = _record_close(ws, record, episode, reason, head, by, detail, began, window)
            window = ws.ledger.window(episode)  # the derivation reads the close it follows
        if deriving:
            try:
                outcome = derive_on_close(ws, episode, window, record)
            except Exception as exc:  # noqa: BLE001 - reported by the caller; the close goes on
                error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    drained, drain_error = None, None
    try:  # on a branch, what trunk episodes left in the outbox rides along with this close
        drained = drain_on_close(ws)
    except Exception as exc:  # noqa: BLE001 - reported by the caller; the close goes on
        drain_error = getattr(exc, "message", None) or f"{type(exc).__name__}: {exc}"
    if path is None:
        # stamped now, after the derivation it follows: its ts is never earlier than knowledge.derived's
        ws.ledger.append("session.closed", episode, episode=episode, reason=reason,
                         branch=head.branch, head=head.sha, by=by, **(detail or {}))
        path = _publish_closed(ws, record, episode, reason, head, began, window)
    if git_error is None:
        try:  # a clone whose first act is an agent's session: the merge driver, before any pull
            gitmerge.ensure(ws.root)
        except (OSError, git.GitError):
            pass  # a merge of records falls back to git's text merge, as before
    retain(ws)
    if not sweep:  # the next start's briefing, composed now (a sweep's start composes its own)
        prebuilt.refresh(ws)
    if outcome is not None and not error:  # a re-derivation's stamps, as the close left things
        # (last: the composition above let the writes settle, so the stamps are stats, not digests)
        noop.after_close(ws, episode, derive.stamped_as(ws, episode),
                         [episodes.open_dir(ws) / f"{episode}.json", *episodes.current_sources(ws)])
    return Closed(episode, path, outcome, error, drained, drain_error, late,
                  (git_error,) if git_error else ())


def retain(ws: Workspace) -> None:
    """The ledger's retention cap, as a boundary enforces it: a trim only when one is due (over the
    cap by a margin, `Ledger.trim_due`: nothing read), never a rewrite on each close."""
    limit = ws.policy["ledger.retention_lines"]
    if limit and ws.ledger.trim_due(limit):
        # an episode still open has not been derived: its window is never trimmed
        removed = ws.ledger.trim(limit, open_episodes=episodes.open_episodes(ws))
        if removed:
            ws.ledger.append("ledger.trimmed", None, removed=removed, kept=limit)


def interrupted_close(window: list[Line]) -> Line | None:
    """The `session.closed` line of the current span of the episode whose ledger window is
    `window` when the ledger has one while the episode is still open: a close killed between its
    ledger line and its session record."""
    spans = episodes.spans(window)
    return spans[-1].closed if spans and spans[-1].opened is not None else None


def _record_close(ws: Workspace, record: dict[str, Any], episode: str, reason: str, head: Any,
                  by: str, detail: dict[str, Any] | None, began: str, window: list[Line]) -> Path:
    """The end, recorded before the derivation (an agent that kills a slow end hook): the ledger's
    `session.closed` first, then the session record; the derivation follows it."""
    ws.ledger.append("session.closed", episode, episode=episode, reason=reason,
                     branch=head.branch, head=head.sha, by=by, end_first=True, **(detail or {}))
    return _publish_closed(ws, record, episode, reason, head, began, window)


def _publish_closed(ws: Workspace, record: dict[str, Any], episode: str, reason: str, head: Any,
                    closed: str, window: list[Line]) -> Path:
    """After the ledger says closed (the close began at `closed`): the session record gains the span, then the
    episode stops being open (a kill between the two leaves it open: the orphan sweep or a retried
    end closes it again, and the record gains the span then)."""
    path = publish_session_record(ws, record, closed, reason, head.sha, head.branch, window)
    remove(episodes.open_dir(ws) / f"{episode}.json", root=ws.root)
    episodes.forget_current(ws, episode)
    return path


def derive_on_close(ws: Workspace, episode: str, window: list[Line], record: dict[str, Any]) -> Outcome:
    """The deriver, as the close path calls it (named so the wiring can be checked), on the window
    and open record the close read. A lock held past the wait leaves the derivation to the next
    boundary."""
    with pending.kept_on_busy(ws, episode):
        return derive.derive(ws, episode, window=window, record=record)


def drain_on_close(ws: Workspace) -> Drained | None:
    """The outbox drain, as the close path calls it: None on the trunk or with nothing waiting."""
    return drain.drain_at_boundary(ws)


def open_late_span(ws: Workspace, episode: str, by: str) -> dict[str, Any] | None:
    """For an end that arrives after the orphan sweep closed `episode`: open the span this end
    closes (source `late-end`) and return its open record; None for any other closed episode."""
    if last_close_reason(ws, episode) != ORPHANED:
        return None
    head = git.head(ws.root)
    published = episodes.record_file(ws, episode)
    span: dict[str, Any] = {"span": sessionrecord.span_count(published[1]) + 1} if published is not None else {}
    line = ws.ledger.append("session.opened", episode, episode=episode, source=LATE_END,
                            branch=head.branch, head=head.sha, reflog=head.reflog, by=by, **span)
    record = {"episode": episode, "opened": line["ts"], "source": LATE_END, "by": by,
              "branch": head.branch, "head": head.sha, "reflog": head.reflog, **span}
    episodes.write_open(ws, record)
    return record


def last_close_reason(ws: Workspace, episode: str) -> str | None:
    """Why `episode` last closed: its published record's newest span, else its ledger window."""
    found = episodes.record_file(ws, episode)
    if found is not None:
        reason = sessionrecord.last_reason(found[1])
        if reason is not None:
            return reason
    closes = [l for l in ws.ledger.window(episode) if l.event == "session.closed"]
    reason = closes[-1].get("reason") if closes else None
    return reason if isinstance(reason, str) else None


def session_record_dir(ws: Workspace) -> Path:
    """Where a closed session record goes: the tracked sessions, or the outbox on the trunk."""
    return outbox.sessions_dir(ws)


def publish_session_record(ws: Workspace, record: dict[str, Any], closed: str, reason: str,
                           head_close: str | None, branch_close: str | None,
                           window: list[Line] | None = None) -> Path:
    """Write the session record with the span `record` opened, closed now, after the spans it
    already lists. With no published record, the earlier spans come from the ledger window (the
    close's, or read here)."""
    episode = record["episode"]
    span = sessionrecord.Span(record.get("opened"), record.get("source"), record.get("branch"),
                              record.get("head"), closed, reason, head_close, branch_close)
    folder = session_record_dir(ws)
    found = episodes.record_file(ws, episode)
    if found is not None:
        number = record.get("span")  # this span's number, when the record listed earlier ones at its open
        text = sessionrecord.add_span(found[1], episode, span, record.get("forked_from"),
                                      number - 1 if isinstance(number, int) and number > 1 else None)
    else:
        earlier, forked_from = spans_from_ledger(ws.ledger.window(episode) if window is None else window)
        forked_from = forked_from or record.get("forked_from")
        text = sessionrecord.render(episode, [*earlier, span], forked_from)
    path = folder / f"{episode}.md"
    atomic_write(path, text, root=ws.root)
    if found is not None and found[0] != path and found[0].parent != ws.sessions:
        remove(found[0], root=ws.root)  # the outbox copy, now tracked whole (a tracked one stays)
    return path


def spans_from_ledger(window: list[Line]) -> tuple[list[sessionrecord.Span], str | None]:
    """The closed spans an episode's ledger window holds before the current (newest) one, and the
    episode it forked from: for a record that was never published in this checkout."""
    earlier = []
    forked_from = None
    # the newest span is the one closing now (its session.closed, when the ledger has it already,
    # belongs to it: the window read before the close holds the same spans)
    for span in episodes.spans(window)[:-1]:
        o, c = span.opened, span.closed
        if o is not None and forked_from is None and isinstance(o.get("forked_from"), str):
            forked_from = o.get("forked_from")
        if c is None:  # the current span (still open), or one whose close never came
            continue
        earlier.append(sessionrecord.Span(
            o.ts if o else None, o.get("source") if o else None, o.get("branch") if o else None,
            o.get("head") if o else None, c.ts, c.get("reason"), c.get("head"),
            c.get("branch") if isinstance(c.get("branch"), str) else None))
    return earlier, forked_from
