"""The deriver: an episode's ledger window and commits, mapped to candidate records by a fixed
table (seed 001, "What is derivable without a model is exactly this list").

| ledger line                                   | record                                           |
|-----------------------------------------------|--------------------------------------------------|
| decision.recorded                             | convention, decided; decision:<task> + session   |
| question.resolved                             | fact stating question and answer; task:<id>      |
| task.finished blocked / failed / no_match     | lesson carrying the first line of the reason     |
| task.finished completed with a verify command | fact naming the command that passed              |
| commits touching .ai/repo/rules|adrs/**       | commit:<sha> on every record, relates_to a path  |

Nothing else is read: no conversation, no handover, no checkpoint. Same ledger and git give
the same bytes: the date is the evidence line's day and no clock or random value enters.
"""
from __future__ import annotations

import hashlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.ledger import Line
from pipeline.transcript import marker_in
from pipeline.workspace import Workspace

TEMPLATE = "knowledge-record.md.j2"
LESSON_OUTCOMES = ("blocked", "failed", "no_match")
WATCHED_PATHS = (".ai/repo/rules", ".ai/repo/adrs")


@dataclass(frozen=True)
class Draft:
    """One record the table asks for, before it is rendered."""

    id: str
    episode: str
    cls: str
    epistemics: str
    title: str
    date: str
    derived_from: tuple[str, ...]
    relations: tuple[tuple[str, str], ...]
    body: str
    source_line: int
    path: Path

    def context(self) -> dict[str, Any]:
        return {"id": self.id, "cls": self.cls, "epistemics": self.epistemics, "title": self.title,
                "date": self.date, "derived_from": list(self.derived_from),
                "relations": list(self.relations), "body": self.body}

    def digest(self) -> str:
        """What the rendering depends on: the draft and the template (never the clock)."""
        from pipeline.render import template_digest

        blob = json.dumps([self.context(), str(self.path), template_digest(TEMPLATE)],
                          ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class Plan:
    episode: str
    drafts: list[Draft] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (ledger line, why)
    kept: list[str] = field(default_factory=list)  # ids promoted or superseded: left alone
    evidence: int = 0


def record_id(episode: str, *source: str) -> str:
    """`<episode>-<digest>`: the digest is over the source object as a person wrote it."""
    blob = json.dumps(list(source), ensure_ascii=False, separators=(",", ":"))
    return f"{episode}-{hashlib.sha256(blob.encode('utf-8')).hexdigest()[:12]}"


def _first_line(text: str) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def task_reason(ws: Workspace, task: str, fallback: str) -> str:
    """The reason in the task note (`## Reason`), else the one the ledger line carries."""
    from pipeline.work import note_path, read_note_reason

    try:
        reason = read_note_reason(note_path(ws, task).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        reason = None
    return reason if reason is not None else fallback


def episode_commits(ws: Workspace, window: list[Line]) -> list[tuple[str, list[str]]]:
    """Commits of the episode touching rules or decision records, oldest first: one git call."""
    from pipeline import git

    opened = next((l for l in window if l.event == "session.opened"), None)
    closed = next((l for l in reversed(window) if l.event == "session.closed"), None)
    start = opened.get("head") if opened else None
    end = (closed.get("head") if closed else None) or "HEAD"
    rev = f"{start}..{end}" if start else end
    out = git.run(ws.root, "log", "--reverse", "--format=%x1e%H", "--name-only", rev, "--",
                  *WATCHED_PATHS, check=False)
    commits = []
    for chunk in out.split("\x1e")[1:]:
        lines = [l for l in chunk.splitlines() if l.strip()]
        if lines:
            commits.append((lines[0], sorted(set(lines[1:]))))
    return commits


def plan(ws: Workspace, episode: str, window: list[Line] | None = None) -> Plan:
    """What the table derives from `episode`; one pass over the ledger, one git call."""
    from pipeline import outbox

    if window is None:
        window = ws.ledger.window(episode)
    result = Plan(episode)
    tasks = {l.get("task"): l.get("title", "") for l in window if l.event == "task.started"}
    rows: list[tuple[Line, str, str, str, str, tuple[str, ...], tuple[str, ...]]] = []
    for line in window:
        row = _row(ws, episode, line, tasks)
        if row is None:
            continue
        result.evidence += 1
        texts, cls, epistemics, title, body, refs, source = row
        marker = next((m for m in map(marker_in, texts) if m), None)
        if marker:
            result.skipped.append((line.number, f"{line.event} carries the transcript marker {marker!r}"))
            continue
        rows.append((line, cls, epistemics, title, body, refs, source))
    if not rows:
        return result
    commits = episode_commits(ws, window)
    commit_refs = tuple(f"commit:{sha}" for sha, _ in commits)
    relations = tuple(("relates_to", f"file:{p}") for p in sorted({p for _, ps in commits for p in ps}))
    target = outbox.candidates_dir(ws)
    seen: set[str] = set()
    for line, cls, epistemics, title, body, refs, source in rows:
        rid = record_id(episode, *source)
        if rid in seen:
            continue
        seen.add(rid)
        if _acted_on(ws, rid):
            result.kept.append(rid)
            continue
        result.drafts.append(Draft(rid, episode, cls, epistemics, title, line.ts[:10],
                                   refs + commit_refs, relations, body, line.number,
                                   target / f"{rid}.md"))
    return result


def _acted_on(ws: Workspace, rid: str) -> bool:
    """A person promoted or rejected this id: the deriver never undoes either act."""
    from pipeline.records import quick_status

    if (ws.curated / f"{rid}.md").exists():
        return True
    return quick_status(ws.candidates / f"{rid}.md") in ("superseded", "verified")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _row(ws: Workspace, episode: str, line: Line, tasks: dict[Any, Any]) -> Any:
    """One table row: (texts to screen, class, epistemics, title, body, refs, digest source)."""
    session = f"session:{episode}"
    task = line.get("task")
    task = task if isinstance(task, str) and task and task != "none" else None
    if line.event == "decision.recorded":
        text, why = _text(line.get("text")), _text(line.get("why"))
        if not text.strip():
            return None
        body = text + (f"\n\nWhy: {why}" if why else "")
        refs = (session, f"decision:{task}") if task else (session,)
        return [text, why], "convention", "decided", text, body, refs, (line.event, text)
    if line.event == "question.resolved":
        question, answer = _text(line.get("text")), _text(line.get("answer"))
        if not answer.strip():
            return None
        refs = (session, f"task:{task}") if task else (session,)
        body = f"Question: {question}\n\nAnswer: {answer}"
        title = f"{question} {answer}" if question else answer
        return [question, answer], "fact", "observed", title, body, refs, (line.event, question, answer)
    if line.event == "task.finished" and task:
        outcome = line.get("outcome")
        name = _text(tasks.get(task)) or _text(line.get("title")) or task
        refs = (session, f"task:{task}")
        if outcome in LESSON_OUTCOMES:
            reason = _first_line(task_reason(ws, task, _text(line.get("reason"))))
            if not reason:
                return None
            body = f"Task {name!s} finished {outcome}: {reason}"
            return [reason, name], "lesson", "observed", reason, body, refs, (line.event, task, outcome, reason)
        verify = _text(line.get("verify"))
        if outcome == "completed" and verify:
            title = f"`{verify}` passes"
            body = f"The verification command `{verify}` exited 0 when task {name} completed."
            return [verify], "fact", "observed", title, body, refs, (line.event, task, verify)
    return None


@dataclass
class Outcome:
    episode: str
    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    dry_run: bool = False

    def summary(self, ws: Workspace) -> str:
        if self.dry_run:
            head = f"derive {self.episode} (dry run): would write {len(self.written)}"
            lines = [head] + [f"  {ws.rel(p)}" for p in self.written]
            return "\n".join(lines)
        if not self.written:
            total = len(self.unchanged)
            what = f"{total} record{'s' if total != 1 else ''} up to date" if total else "no evidence to derive"
            return f"derive {self.episode}: nothing changed ({what})"
        lines = [f"derive {self.episode}: wrote {len(self.written)}, unchanged {len(self.unchanged)}"]
        lines += [f"  {ws.rel(p)}" for p in self.written]
        return "\n".join(lines)


def derive(ws: Workspace, episode: str, dry_run: bool = False) -> Outcome:
    """Derive `episode` through doit, then append `knowledge.derived` (even when nothing changed)."""
    started = time.perf_counter()
    the_plan = plan(ws, episode)
    planned = time.perf_counter()
    for number, why in the_plan.skipped:
        print(f"majordomus: skipped ledger line {number}: {why}", file=sys.stderr)
    if dry_run:
        outcome = Outcome(episode, [d.path for d in the_plan.drafts], [], the_plan.skipped,
                          the_plan.kept, dry_run=True)
    else:
        from pipeline.tasks import derive as derive_tasks

        outcome = derive_tasks.run(ws, [the_plan])[episode]
    if _timing():
        total = time.perf_counter() - started
        print(f"MJ_TIMING derive {episode}: {total * 1000:.1f} ms (plan {(planned - started) * 1000:.1f} ms); "
              f"evidence {the_plan.evidence}, drafts {len(the_plan.drafts)}, written {len(outcome.written)}, "
              f"unchanged {len(outcome.unchanged)}, skipped {len(outcome.skipped)}, kept {len(outcome.kept)}",
              file=sys.stderr)
    return outcome


def _timing() -> bool:
    import os

    return os.environ.get("MJ_TIMING") == "1"
