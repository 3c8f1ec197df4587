"""The deriver: an episode's ledger window and commits, mapped to candidate records by a fixed
table (seed 001, "What is derivable without a model is exactly this list").

| ledger line                                   | record                                           |
|-----------------------------------------------|--------------------------------------------------|
| decision.recorded                             | convention, decided; decision:<task> + session   |
| question.resolved                             | fact stating question and answer; task:<id>      |
| task.finished blocked / failed / no_match     | lesson carrying the first line of the reason     |
| task.finished completed with a verify command | fact naming the command that passed              |
| commits touching .ai/repo/rules|adrs/**       | commit:<sha> on every record of the span that    |
|   (the span the evidence line belongs to)     |   made them, relates_to each path they touched   |

Beyond the ledger line, the table reads the task note and the episode's commits
(pipeline/evidence.py). Nothing else is read: no conversation, no handover, no checkpoint.
Every text that reaches a record is screened for transcript markers, and every reference is
checked (pipeline/records.py `reference_problem`) before it is written. Same ledger and git give
the same bytes: the date is the evidence line's day and no clock or random value enters.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from majordomus.base import fsio
from majordomus.base.ids import ID_PATTERN
from majordomus.base.credentials import credential_in
from majordomus.base.transcript import marker_in
from majordomus.derive import handedit
from majordomus.evidence.commits import first_line, span_bounds, span_commits, task_reason
from majordomus.evidence.episodes import spans
from majordomus.store import records
from majordomus.store.ledger import Line
from majordomus.store.records import KIND, quick_status, reference_problem
from majordomus.store.workspace import Workspace

LESSON_OUTCOMES = ("blocked", "failed", "no_match")


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
    path: Path

    def meta(self) -> dict[str, Any]:
        """The record's front matter (knowledge/v1): a candidate, extracted by the table."""
        meta: dict[str, Any] = {
            "id": self.id, "kind": KIND, "class": self.cls, "status": "candidate",
            "epistemics": self.epistemics, "title": self.title, "date": self.date,
            "provenance": {"origin": "extracted", "derived_from": list(self.derived_from)}}
        if self.relations:
            meta["relations"] = [{"type": kind, "target": target} for kind, target in self.relations]
        return meta


@dataclass
class Plan:
    episode: str
    drafts: list[Draft] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)  # (ledger line, why)
    kept: list[str] = field(default_factory=list)  # ids promoted or superseded: left alone
    evidence: int = 0
    provenance: str | None = None  # why commits that may be the episode's are not cited
    inputs: list[dict[str, Any]] = field(default_factory=list)  # the lines drafted from, as read
    commits: tuple[str, ...] = ()  # the commits every draft cites
    relations: tuple[str, ...] = ()  # the paths they relate to

    def evidence_json(self) -> bytes:
        """The episode's evidence as the table read it: the ledger lines it drafted from (with
        the task notes' reasons it read), the commits it cites and the paths they touched. The
        render tasks depend on this file; same evidence, same bytes."""
        blob = {"episode": self.episode, "lines": self.inputs, "commits": list(self.commits),
                "relations": list(self.relations)}
        return (json.dumps(blob, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")


def record_id(episode: str, *source: str) -> str:
    """`<episode>-<digest>`: the digest is over the source object as a person wrote it."""
    blob = json.dumps(list(source), ensure_ascii=False, separators=(",", ":"))
    return f"{episode}-{hashlib.sha256(blob.encode('utf-8')).hexdigest()[:12]}"


class Row(NamedTuple):
    """What one evidence line asks of the table, before the episode's commits are added."""

    texts: tuple[str, ...]  # everything of the line that reaches the record: screened for markers
    cls: str
    epistemics: str
    title: str
    body: str
    refs: tuple[str, ...]
    source: tuple[str, ...]  # the digest's input: the event and the text as a person wrote it


def plan(ws: Workspace, episode: str, target: Path, window: list[Line] | None = None) -> Plan:
    """What the table derives from `episode` into the folder `target` (the tracked candidates,
    or the outbox on the trunk: the caller routes); one pass over the ledger, one git call per
    span that has evidence."""

    if window is None:
        window = ws.ledger.window(episode)
    result = Plan(episode)
    tasks = {l.get("task"): l.get("title", "") for l in window if l.event == "task.started"}
    rows: list[tuple[Line, Row]] = []
    for line in window:
        row = _row(ws, episode, line, tasks)
        if row is None:
            continue
        result.evidence += 1
        if isinstance(row, str):
            result.skipped.append((line.number, f"{line.event} {row}"))
            continue
        marker = next((m for m in map(marker_in, row.texts) if m), None)
        if marker:
            result.skipped.append((line.number, f"{line.event} carries the transcript marker {marker!r}"))
            continue
        problem = next((p for p in map(reference_problem, row.refs) if p), None)
        if problem:
            result.skipped.append((line.number, f"{line.event} would write a refused reference: {problem}"))
            continue
        rows.append((line, row))
        result.inputs.append({"ts": line.ts, "event": line.event, "line": line.data, "read": list(row.texts)})
    if not rows:
        return result
    # A record carries the commits of its own span: a later span (a resume) never changes what an
    # earlier span's records cite, so they are not rewritten (docs/EPISODES.md).
    span_of = {l.number: i for i, span in enumerate(spans(window)) for l in span.lines}
    bounds = span_bounds(ws, window)
    by_span: dict[int, tuple[tuple[str, ...], tuple[tuple[str, str], ...]]] = {}
    notes: list[str] = []
    seen: set[str] = set()
    for line, row in rows:
        rid = record_id(episode, *row.source)
        if rid in seen:
            continue
        seen.add(rid)
        index = span_of.get(line.number, len(bounds) - 1)
        if index not in by_span:
            commits = span_commits(ws, bounds[index] if 0 <= index < len(bounds) else None)
            if commits.note and commits.note not in notes:
                notes.append(commits.note)
            # a path no reference can name (a control character in it), or one that carries a
            # credential (a file named after a token), is not a relation target
            by_span[index] = (tuple(f"commit:{sha}" for sha in commits.shas),
                              tuple(("relates_to", f"file:{p}") for p in commits.paths
                                    if not reference_problem(f"file:{p}") and not credential_in(p)))
            result.commits += tuple(s for s in commits.shas if s not in result.commits)
            result.relations = tuple(sorted({*result.relations, *(t[len("file:"):] for _, t in by_span[index][1])}))
        if acted_on(ws, rid, target):
            result.kept.append(rid)
            continue
        commit_refs, relations = by_span[index]
        result.drafts.append(Draft(rid, episode, row.cls, row.epistemics, row.title, line.ts[:10],
                                   row.refs + commit_refs, relations, row.body,
                                   target / f"{rid}.md"))
    result.provenance = "; ".join(notes) or None
    return result


def acted_on(ws: Workspace, rid: str, target: Path) -> bool:
    """A person promoted or rejected this id: the deriver never undoes either act."""

    if (ws.curated / f"{rid}.md").exists():
        return True
    return any(quick_status(folder / f"{rid}.md") in ("superseded", "verified")
               for folder in {ws.candidates, target})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _row(ws: Workspace, episode: str, line: Line, tasks: dict[Any, Any]) -> Row | str | None:
    """The table's row for `line`: a Row, None when the line is not evidence, or why it is refused.

    The class comes from the event, never from the wording: every decision is a convention.
    """

    session = f"session:{episode}"
    task = line.get("task")
    task = task if isinstance(task, str) and task and task != "none" else None
    if task is not None and (not ID_PATTERN.match(task) or ".." in task):
        return f"names the task {task[:40]!r}, which is not a task id"
    if line.event == "decision.recorded":
        text, why = _text(line.get("text")), _text(line.get("why"))
        if not text.strip():
            return None
        body = text + (f"\n\nWhy: {why}" if why else "")
        refs = (session, f"decision:{task}") if task else (session,)
        # one assertion in one line: the title is the first line, the whole text stays in the body
        return Row((text, why), "convention", "decided", first_line(text), body, refs, (line.event, text))
    if line.event == "question.resolved":
        question, answer = _text(line.get("text")), _text(line.get("answer"))
        if not answer.strip():
            return None
        refs = (session, f"task:{task}") if task else (session,)
        body = f"Question: {question}\n\nAnswer: {answer}"
        title = f"{first_line(question)} {first_line(answer)}" if question.strip() else first_line(answer)
        return Row((question, answer), "fact", "observed", title, body, refs,
                   (line.event, question, answer))
    if line.event == "task.finished" and task:
        outcome = line.get("outcome")
        name = _text(tasks.get(task)) or _text(line.get("title")) or task
        refs = (session, f"task:{task}")
        if outcome in LESSON_OUTCOMES:
            written = _text(line.get("reason"))
            full = task_reason(ws, task, written)
            reason = first_line(full)
            if not reason:
                return None
            body = f"Task {name} finished {outcome}: {reason}"
            return Row((full, written, name), "lesson", "observed", reason, body, refs,
                       (line.event, task, str(outcome), reason))
        verify = _text(line.get("verify"))
        if outcome == "completed" and verify.strip():
            title = f"`{first_line(verify)}` passes"
            body = f"The verification command `{verify}` exited 0 when task {name} completed."
            return Row((verify, name), "fact", "observed", title, body, refs, (line.event, task, verify))
    return None


@dataclass
class Outcome:
    episode: str
    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    skipped: list[tuple[int, str]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    dry_run: bool = False
    drafts: list[Draft] = field(default_factory=list)
    edited: list[Path] = field(default_factory=list)  # edited by hand: left alone
    provenance: str | None = None  # why commits that may be the episode's are not cited

    def summary(self, ws: Workspace) -> str:
        text = self._summary(ws)
        return text + (f"\n  commit provenance: {self.provenance}" if self.provenance else "")

    def _summary(self, ws: Workspace) -> str:
        tail = "".join(f", {n} {what}" for n, what in ((len(self.skipped), "skipped"),
                                                       (len(self.kept), "kept (promoted or rejected)"),
                                                       (len(self.edited), "edited by hand, left alone")) if n)
        if self.dry_run:
            by_path = {d.path: d for d in self.drafts}
            lines = [f"derive {self.episode} (dry run, nothing written): would write {len(self.written)}, "
                     f"unchanged {len(self.unchanged)}{tail}"]
            lines += [f"  {ws.rel(p)}  {by_path[p].cls}  {first_title_line(by_path[p].title)}"
                      for p in self.written]
            return "\n".join(lines)
        if not self.written:
            total = len(self.unchanged)
            what = f"{total} record{'s' if total != 1 else ''} up to date" if total else "no evidence to derive"
            return f"derive {self.episode}: nothing changed ({what}{tail})"
        lines = [f"derive {self.episode}: wrote {len(self.written)}, unchanged {len(self.unchanged)}{tail}"]
        lines += [f"  {ws.rel(p)}" for p in self.written]
        return "\n".join(lines)


def first_title_line(title: str) -> str:
    line = title.splitlines()[0] if title.splitlines() else ""
    return line if len(line) <= 72 else line[:71] + "…"


def edited(ws: Workspace, draft: Draft) -> bool:

    return handedit.edited_by_hand(ws, draft.id, fsio.read_bytes(draft.path))


def render(draft: Draft) -> bytes:
    """The record's bytes, through the one record writer (`records.compose`)."""
    return records.compose(draft.meta(), draft.body + "\n").encode("utf-8")
