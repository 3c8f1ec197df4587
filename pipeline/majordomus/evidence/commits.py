"""What the derivation table reads beyond a ledger line: the task note and the episode's commits.

Both are read once per derivation: the note of a task that finished with a lesson outcome, and
one `git log` over each span that has evidence for the commits that touched a rule or a decision
record, kept only when this checkout's HEAD reflog says the episode made them.
"""
from __future__ import annotations


from majordomus.base.lean import TYPE_CHECKING
from majordomus.base import fsio, git
from majordomus.base.ids import ID_PATTERN
from majordomus.evidence.episodes import open_record, spans
from majordomus.evidence.work import note_path, read_note_reason
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

WATCHED_PATHS = (".ai/repo/rules", ".ai/repo/adrs")


def first_line(text: str) -> str:
    """The first line of `text` that holds anything but blanks, stripped."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def task_reason(ws: Workspace, task: str, fallback: str) -> str:
    """The reason in the task note (under `## Reason`), else the one the ledger line carries."""

    if not ID_PATTERN.match(task) or ".." in task:
        return fallback
    try:
        reason = read_note_reason(fsio.read_text(note_path(ws, task)))
    except (OSError, ValueError):
        reason = None
    return reason if reason is not None else fallback


class Commits(NamedTuple):
    """The episode's commits that touched a watched path, and the paths they leave behind."""

    shas: tuple[str, ...]
    paths: tuple[str, ...]  # touched and not deleted by the episode's last change to them
    note: str | None = None  # why commits that may be the episode's are not cited (said, not silent)


class Bounds(NamedTuple):
    """Where a span's commits are looked for: from the head it opened on (with HEAD's reflog
    position then) to the head it closed on (HEAD while it is open)."""

    start: str | None  # None: no commit yet at the open
    mark: Any  # HEAD's reflog position at the open (an int, or missing on older lines)
    end: str


def span_bounds(ws: Workspace, window: list[Line], record: dict[str, Any] | None = None) -> list[Bounds | None]:
    """The bounds of each span of the episode (`episodes.spans`), first to last; None for a span
    whose opening is unknown (the ledger trimmed it and no open record says): no commits. `record`:
    the episode's open record as the caller read it (the close path), else it is read when needed.

    Each span has its own bounds, so a record derived from one span cites that span's commits
    only, and a later span's commits never change what an earlier span's records cite.
    """

    found = spans(window)
    bounds: list[Bounds | None] = []
    for index, span in enumerate(found):
        last = index == len(found) - 1
        if span.opened is not None:
            start, mark = span.opened.get("head"), span.opened.get("reflog")
        else:  # the opening line is gone (retention): the open record knows the current span's

            if record is None and last and window:
                record = open_record(ws, window[0].session or "")
            if record is None or not last:
                bounds.append(None)
                continue
            start, mark = record.get("head"), record.get("reflog")
        end = span.closed.get("head") if span.closed is not None else None
        if not _sha(end) and not last and span.closed is None:  # its close never came: up to the next opening
            following = found[index + 1].opened
            end = following.get("head") if following is not None else None
        bounds.append(Bounds(start, mark, end if isinstance(end, str) and _sha(end) else "HEAD"))
    return bounds


def span_commits(ws: Workspace, bounds: Bounds | None) -> Commits:
    """The commits a span made that touch rules or decision records, oldest first.

    A commit is the span's when all of these hold (docs/KNOWLEDGE.md, "Commit provenance"):
    it is reachable from the head the span closed on (HEAD while it is open) and not from the
    head it opened on; and this checkout made it after the open: HEAD's reflog, which is per
    checkout, has an entry past the position recorded at the open (`reflog` on `session.opened`)
    that made it (a commit, an amend, a cherry-pick, a rebase's pick). So commits pulled, merged or
    fast-forwarded in from another clone are never cited. When that cannot be told (the head it
    opened on is gone, the reflog was rewritten, the opening predates the position), nothing is
    cited and `note` says why. A path the span deleted is not a relation target.
    """

    if bounds is None:  # said, never silent: a record derived again would drop its commits unseen
        return Commits((), (), "the head a span of the episode opened on is no longer in the ledger "
                               "(no session.opened line: ledger.retention_lines trimmed it, or it never "
                               "opened in this checkout): its commits cannot be told, none is cited")
    start, mark, end = bounds.start, bounds.mark, bounds.end
    since = start if _sha(start) else None
    refs, why = ws.refs_or_unknown()
    if why is not None:
        return Commits((), (), f"{why}: the episode's commits cannot be told, none is cited")
    if since is not None and (end if end != "HEAD" else refs.head.sha) == since:
        return Commits((), ())  # the head has not moved since the open: no commit, no git log
    span = git.touching(ws.root, end, since, WATCHED_PATHS)
    if span is None:
        which = f"opened on ({str(start)[:12]})" if end == "HEAD" else f"opened or closed on ({str(start)[:12]}, {end[:12]})"
        return Commits((), (), f"the head the episode {which} is no longer in this repository "
                               "(amended, reset or collected): its commits cannot be told, none is cited")
    if not span:
        return Commits((), ())
    if not isinstance(mark, int) or isinstance(mark, bool) or mark < 0:
        return Commits((), (), f"{len(span)} commit(s) since the open touch a watched path, but the "
                               "opening records no reflog position (it predates it): none is cited")
    made = git.made_since(ws.root, mark, since)
    if made.problem:
        return Commits((), (), f"{len(span)} commit(s) since the open touch a watched path, but "
                               f"{made.problem}: none is cited")
    shas: list[str] = []
    last: dict[str, str] = {}
    for touch in span:
        if touch.sha not in made.shas:
            continue
        shas.append(touch.sha)
        for status, path in touch.changes:
            last[path] = status
    others = len(span) - len(shas)
    note = (f"{others} commit(s) since the open not made in this checkout (pulled or merged in): "
            "not cited") if others else None
    return Commits(tuple(shas), tuple(sorted(p for p, s in last.items() if s != "D")), note)


def episode_commits(ws: Workspace, window: list[Line]) -> Commits:
    """The commits of every span of the episode, oldest span first (`span_commits` of each)."""

    shas: list[str] = []
    paths: set[str] = set()
    notes: list[str] = []
    for bounds in span_bounds(ws, window):
        found = span_commits(ws, bounds)
        shas += [s for s in found.shas if s not in shas]
        paths.update(found.paths)
        if found.note and found.note not in notes:
            notes.append(found.note)
    return Commits(tuple(shas), tuple(sorted(paths)), "; ".join(notes) or None)


class TaskSpan(NamedTuple):
    """Where a task ran in git: the head and HEAD's reflog position it started at, the head it
    finished at (None while it is active: HEAD)."""

    task: str
    start: str | None
    mark: Any
    end: str | None


def task_commits(ws: Workspace, spans: list[TaskSpan]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Task -> the commits it made, oldest first, as (sha, subject): reachable from the head it
    finished at and not from the one it started at, and made by this checkout after the start
    (HEAD's reflog, as `span_commits` tells it), so a merge or pull during the task is not its
    work. One batch of `git log` for every task, one reflog read each; a task whose start is not
    known (it started before the ledger recorded heads) cites nothing."""
    known = [s for s in spans if _sha(s.start) and isinstance(s.mark, int) and not isinstance(s.mark, bool)]
    if not known:
        return {}
    logs = git.logs(ws.root, [(str(s.end) if _sha(s.end) else "HEAD", str(s.start)) for s in known])
    found: dict[str, tuple[tuple[str, str], ...]] = {}
    made_by: dict[tuple[int, str], frozenset[str] | None] = {}
    for span, log in zip(known, logs):
        if not log:
            continue
        key = (span.mark, str(span.start))
        if key not in made_by:
            made = git.made_since(ws.root, span.mark, span.start)
            made_by[key] = None if made.problem else made.shas
        shas = made_by[key]
        if shas is None:
            continue
        mine = tuple((sha, subject) for sha, subject in log if sha in shas)
        if mine:
            found[span.task] = mine
    return found


def _sha(value: object) -> bool:
    return isinstance(value, str) and len(value) >= 7 and all(c in "0123456789abcdef" for c in value)
