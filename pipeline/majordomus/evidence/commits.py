"""What the derivation table reads beyond a ledger line: the task note and the episode's commits.

Both are read once per derivation: the note of a task that finished with a lesson outcome, and
one `git log` over the episode's span for the commits that touched a rule or a decision record.
"""
from __future__ import annotations

from dataclasses import dataclass

from majordomus.base import git
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
        reason = read_note_reason(note_path(ws, task).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        reason = None
    return reason if reason is not None else fallback


@dataclass(frozen=True)
class Commits:
    """The episode's commits that touched a watched path, and the paths they leave behind."""

    shas: tuple[str, ...]
    paths: tuple[str, ...]  # touched and not deleted by the episode's last change to them


def episode_commits(ws: Workspace, window: list[Line]) -> Commits:
    """Commits of the episode touching rules or decision records, oldest first: one git call.

    The span runs from the head the episode opened on to the head it closed on (HEAD while it
    is open). A path the episode deleted is not a relation target: it would resolve to nothing.
    """

    opened = next((l for l in window if l.event == "session.opened"), None)
    closed = next((l for l in reversed(window) if l.event == "session.closed"), None)
    if opened is not None:
        start = opened.get("head")  # None: the repository had no commit yet, so all are the episode's
    else:  # the opening line is gone (retention): the open record knows the head, else no span

        record = open_record(ws, window[0].session or "") if window else None
        if record is None:
            return Commits((), ())
        start = record.get("head")
    end = (closed.get("head") if closed else None) or "HEAD"
    if not _sha(end) and end != "HEAD":
        end = "HEAD"
    rev = f"{start}..{end}" if _sha(start) else end
    out = git.run(ws.root, "log", "--reverse", "--no-renames", "--format=%x1e%H", "--name-status",
                  rev, "--", *WATCHED_PATHS, check=False)
    shas: list[str] = []
    last: dict[str, str] = {}
    for chunk in out.split("\x1e")[1:]:
        lines = [l for l in chunk.splitlines() if l.strip()]
        if not lines:
            continue
        shas.append(lines[0].strip())
        for entry in lines[1:]:
            status, _, path = entry.partition("\t")
            if path:
                last[path] = status[:1]
    return Commits(tuple(shas), tuple(sorted(p for p, s in last.items() if s != "D")))


def _sha(value: object) -> bool:
    return isinstance(value, str) and len(value) >= 7 and all(c in "0123456789abcdef" for c in value)
