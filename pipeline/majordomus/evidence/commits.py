"""What the derivation table reads beyond a ledger line: the task note and the episode's commits.

Both are read once per derivation: the note of a task that finished with a lesson outcome, and
one `git log` over the episode's span for the commits that touched a rule or a decision record,
kept only when this checkout's HEAD reflog says the episode made them.
"""
from __future__ import annotations

from dataclasses import dataclass

from majordomus.base import fsio, git
from majordomus.base.ids import ID_PATTERN
from majordomus.evidence.episodes import open_record
from majordomus.evidence.work import note_path, read_note_reason
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace

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


@dataclass(frozen=True)
class Commits:
    """The episode's commits that touched a watched path, and the paths they leave behind."""

    shas: tuple[str, ...]
    paths: tuple[str, ...]  # touched and not deleted by the episode's last change to them
    note: str | None = None  # why commits that may be the episode's are not cited (said, not silent)


def episode_commits(ws: Workspace, window: list[Line]) -> Commits:
    """The commits the episode made that touch rules or decision records, oldest first.

    A commit is the episode's when all of these hold (docs/KNOWLEDGE.md, "Commit provenance"):
    it is reachable from the head the episode closed on (HEAD while it is open) and not from the
    head it opened on; and this checkout made it after the open: HEAD's reflog, which is per
    checkout, has an entry past the position recorded at the open (`reflog` on `session.opened`)
    that made it (a commit, an amend, a cherry-pick, a rebase's pick). So commits pulled, merged or
    fast-forwarded in from another clone are never cited. When that cannot be told (the head it
    opened on is gone, the reflog was rewritten, the opening predates the position), nothing is
    cited and `note` says why. A path the episode deleted is not a relation target.
    """

    opened = next((l for l in window if l.event == "session.opened"), None)
    closed = next((l for l in reversed(window) if l.event == "session.closed"), None)
    if opened is not None:
        start, mark = opened.get("head"), opened.get("reflog")  # head None: no commit yet at the open
    else:  # the opening line is gone (retention): the open record knows the head, else no span

        record = open_record(ws, window[0].session or "") if window else None
        if record is None:
            return Commits((), ())
        start, mark = record.get("head"), record.get("reflog")
    end = (closed.get("head") if closed else None) or "HEAD"
    if not _sha(end) and end != "HEAD":
        end = "HEAD"
    since = start if _sha(start) else None
    if since is not None and (end if end != "HEAD" else ws.refs().head.sha) == since:
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


def _sha(value: object) -> bool:
    return isinstance(value, str) and len(value) >= 7 and all(c in "0123456789abcdef" for c in value)
