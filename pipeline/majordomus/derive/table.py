"""The deriver: an episode's ledger window and commits, mapped to candidate records by a fixed
table (seed 001, "What is derivable without a model is exactly this list").

The rows are `derive/rows.py`'s (each evidence line's record, and what its task adds: scope,
commits, a passing verification as evidence); the episode's commits that touched a rule or a
decision record add commit:<sha> to every record of the span that made them and relates_to each
path they touched.

Beyond the ledger line, the table reads the task note and the episode's commits
(pipeline/majordomus/evidence/commits.py). Nothing else is read: no conversation, no handover,
no checkpoint. Every text that reaches a record is screened for transcript markers, and every
reference is checked (pipeline/majordomus/store/records.py `reference_problem`) before it is
written. Same ledger and git give the same bytes: the date is the evidence line's day and no
clock or random value enters.
"""
from __future__ import annotations

from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.base import fsio, git
from majordomus.base.credentials import credential_in
from majordomus.base.ids import sha256_hex
from majordomus.base.transcript import marker_in
from majordomus.derive import handedit
from majordomus.derive import rows as table_rows
from majordomus.derive.rows import LESSON_OUTCOMES, Row, Task
from majordomus.derive.text import relative_path, roots
from majordomus.evidence.commits import TaskSpan, span_bounds, span_commits, task_commits
from majordomus.evidence.episodes import spans
from majordomus.store import anchors as anchoring
from majordomus.store import records
from majordomus.store.ledger import Line
from majordomus.store.records import KIND, quick_status, reference_problem
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

__all__ = ["LESSON_OUTCOMES", "Draft", "Plan", "Row", "plan", "record_id"]


class Draft(NamedTuple):
    """One record the table asks for, before it is rendered. (NamedTuple and plain classes here:
    the close path, a hook's, pays no `dataclasses` import.)"""

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
    anchors: tuple[str, ...] = ()  # the files it is about: --about, a tracked scope, file: relations
    commits: tuple[tuple[str, str, str], ...] = ()  # (sha, subject, author time) of each cited commit

    def meta(self) -> dict[str, Any]:
        """The record's front matter (knowledge/v1): a candidate, extracted by the table."""
        provenance: dict[str, Any] = {"origin": "extracted", "derived_from": list(self.derived_from)}
        if self.commits:
            provenance["commits"] = [{"sha": sha, "subject": subject, "authored": authored}
                                     for sha, subject, authored in self.commits]
        meta: dict[str, Any] = {
            "id": self.id, "kind": KIND, "class": self.cls, "status": "candidate",
            "epistemics": self.epistemics, "title": self.title, "date": self.date, "provenance": provenance}
        if self.relations:
            meta["relations"] = [{"type": kind, "target": target} for kind, target in self.relations]
        if self.anchors:
            meta["anchors"] = list(self.anchors)
        return meta


class Plan:
    """What the table derives from one episode."""

    __slots__ = ("episode", "drafts", "skipped", "kept", "evidence", "provenance", "inputs", "commits",
                 "relations", "tasks")

    def __init__(self, episode: str) -> None:
        self.episode = episode
        self.drafts: list[Draft] = []
        self.skipped: list[tuple[int, str]] = []  # (ledger line, why)
        self.kept: list[str] = []  # ids promoted or superseded: left alone
        self.evidence = 0
        self.provenance: str | None = None  # why commits that may be the episode's are not cited
        self.inputs: list[dict[str, Any]] = []  # the lines drafted from, as read
        self.commits: tuple[str, ...] = ()  # the commits every draft cites
        self.relations: tuple[str, ...] = ()  # the paths they relate to
        self.tasks: dict[str, Any] = {}  # what each task adds (scope, commits, verification)

    def with_drafts(self, drafts: list[Draft]) -> Plan:
        """This plan with `drafts` instead of its own."""
        other = Plan(self.episode)
        for name in self.__slots__:
            setattr(other, name, getattr(self, name))
        other.drafts = drafts
        return other

    def evidence_json(self) -> bytes:
        """The episode's evidence as the table read it: the ledger lines it drafted from (with
        the task notes' reasons it read), the commits it cites and the paths they touched. The
        render tasks depend on this file; same evidence, same bytes."""
        blob = {"episode": self.episode, "lines": self.inputs, "commits": list(self.commits),
                "relations": list(self.relations), "tasks": self.tasks}
        return (json.dumps(blob, ensure_ascii=False, sort_keys=True, indent=1) + "\n").encode("utf-8")


EVIDENCE = "Evidence:"  # the body's last line: `Evidence: <event> at <ts>.`


def record_id(episode: str, *source: str) -> str:
    """`<episode>-<digest>`: the digest is over the source object as a person wrote it."""
    blob = json.dumps(list(source), ensure_ascii=False, separators=(",", ":"))
    return f"{episode}-{sha256_hex(blob.encode('utf-8'))[:12]}"


def plan(ws: Workspace, episode: str, target: Path, window: list[Line] | None = None,
         record: dict[str, Any] | None = None) -> Plan:
    """What the table derives from `episode` into the folder `target` (the tracked candidates,
    or the outbox on the trunk: the caller routes); one pass over the ledger, one git call per
    span that has evidence. `window` and `record` (the episode's open record): as the caller
    read them, so a boundary reads each once."""

    if window is None:
        window = ws.ledger.window(episode)
    result = Plan(episode)
    names = {l.get("task"): l.get("title", "") for l in window if l.event == "task.started"}
    about = {f"task:{l.get('task')}": l.get("about") for l in window if l.event == "task.started"}
    about.update({f"question:{l.get('question')}": l.get("about") for l in window if l.event == "question.opened"})
    spellings = roots(ws.root)
    rows: list[tuple[Line, Row]] = []
    for line in window:
        row = table_rows.row(ws, episode, line, names, spellings)
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
    tasks = _tasks(ws, window, {r.task for _, r in rows if r.task}, spellings)
    span_of = {l.number: i for i, span in enumerate(spans(window)) for l in span.lines}
    bounds = span_bounds(ws, window, record)
    rows = _shaped_by_span(rows, tasks, spellings, span_of, bounds)
    result.tasks = {t: {"scope": i.scope, "tracked": i.tracked_scope, "commits": [list(c) for c in i.commits],
                        "verify": i.verify, "head": i.head} for t, i in sorted(tasks.items())}
    # A record carries the commits of its own span: a later span (a resume) never changes what an
    # earlier span's records cite, so they are not rewritten (docs/EPISODES.md).
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
        refs = row.refs + tuple(r for r in commit_refs if r not in row.refs)
        relations = row.relations + tuple(r for r in relations if r not in row.relations)
        # the evidence's time, to the second: what the queue and the briefing order by
        body = f"{row.body}\n\n{EVIDENCE} {line.event} at {line.ts}."
        result.drafts.append(Draft(rid, episode, row.cls, row.epistemics, row.title, line.ts[:10],
                                   refs, relations, body, target / f"{rid}.md",
                                   anchors=_anchors(line, row, relations, about, tasks)))
    result.provenance = "; ".join(notes) or None
    result.drafts = _in_words(ws, result.drafts)
    return result


def _anchors(line: Line, row: Row, relations: tuple[tuple[str, str], ...], about: dict[str, Any],
             tasks: dict[str, Task]) -> tuple[str, ...]:
    """The files a record is about: what its line, its task's start and its question's opening
    said with --about, its task's tracked scope, and its file: relations."""
    found: set[str] = set()
    for said in (line.get("about"), about.get(f"task:{row.task}"), about.get(f"question:{line.get('question')}")):
        if isinstance(said, list):
            found.update(p for p in said if anchoring.admissible(p))
    info = tasks.get(row.task) if row.task else None
    if info is not None and info.scope and info.tracked_scope and anchoring.admissible(info.scope):
        found.add(info.scope)
    found.update(t[len("file:"):] for _, t in relations if t.startswith("file:") and anchoring.admissible(t[5:]))
    return tuple(sorted(found))


def _in_words(ws: Workspace, drafts: list[Draft]) -> list[Draft]:
    """Each draft with its cited commits in words (subject, author time): one git call for all."""
    shas = sorted({r[len("commit:"):] for d in drafts for r in d.derived_from if r.startswith("commit:")})
    if not shas:
        return drafts
    try:
        words = git.commit_words(ws.root, shas)
    except (OSError, git.GitError):
        return drafts
    return [d._replace(commits=tuple((s, *words[s]) for r in d.derived_from if r.startswith("commit:")
                                     and (s := r[len("commit:"):]) in words)) for d in drafts]


def _shaped_by_span(rows: list[tuple[Line, Row]], tasks: dict[str, Task], spellings: tuple[str, ...],
                    span_of: dict[int, int], bounds: list[Any]) -> list[tuple[Line, Row]]:
    """`table_rows.shaped` for the rows of each span, with each task's commits as far as that span
    reached: a record cites the commits its own span had seen, so a later span (a resume) never
    rewrites what an earlier span wrote and a person may have committed (docs/EPISODES.md)."""
    groups: dict[int, list[tuple[Line, Row]]] = {}
    for line, row in rows:
        groups.setdefault(span_of.get(line.number, len(bounds) - 1), []).append((line, row))
    out: list[tuple[Line, Row]] = []
    for index in sorted(groups):
        last = index >= len(bounds) - 1
        end = bounds[index].end if 0 <= index < len(bounds) and bounds[index] is not None else None
        seen = {t: _up_to(info, end) for t, info in tasks.items()} if not last and end else tasks
        out += table_rows.shaped(groups[index], seen, spellings)
    out.sort(key=lambda pair: pair[0].number)
    return out


def _up_to(info: Task, end: str) -> Task:
    """`info` with the commits made up to `end` (a span's closing head): those up to it when it is
    one of them, none when the task made its commits only after it (a later span)."""
    shas = [sha for sha, _ in info.commits]
    if end in shas:
        return info._replace(commits=info.commits[:shas.index(end) + 1])
    if end == info.head or not info.commits:
        return info
    return info._replace(commits=())


def acted_on(ws: Workspace, rid: str, target: Path) -> bool:
    """A person promoted or rejected this id: the deriver never undoes either act."""

    if (ws.curated / f"{rid}.md").exists():
        return True
    return any(quick_status(folder / f"{rid}.md") in ("superseded", "verified")
               for folder in {ws.candidates, target})


def _tasks(ws: Workspace, window: list[Line], wanted: set[str], spellings: tuple[str, ...]) -> dict[str, Task]:
    """What the window says of each task in `wanted`: title, scope, verification, and the commits
    it made (one batch of git for all of them; one `git ls-files` for their scopes)."""
    started: dict[str, Line] = {}
    finished: dict[str, Line] = {}
    for line in window:
        task = line.get("task")
        if task in wanted and line.event == "task.started":
            started[task] = line
        elif task in wanted and line.event == "task.finished":
            finished[task] = line
    spans = []
    for task in sorted(wanted):
        s, f = started.get(task), finished.get(task)
        if s is not None:
            spans.append(TaskSpan(task, s.get("head"), s.get("reflog"), f.get("head") if f is not None else None))
    commits = task_commits(ws, spans)
    found: dict[str, Task] = {}
    for task in sorted(wanted):
        s, f = started.get(task), finished.get(task)
        said = [l for l in (f, s) if l is not None]
        title = next((v for l in said if isinstance(v := l.get("title"), str) and v), task)
        scope = next((v for l in said if isinstance(v := l.get("scope"), str) and v), None)
        verify = f.get("verify") if f is not None and f.get("outcome") == "completed" else None
        head = f.get("head") if f is not None else None
        rel = relative_path(scope, spellings) if scope else None
        if rel is not None and reference_problem(f"file:{rel}"):
            rel = None
        found[task] = Task(title, rel, verify if isinstance(verify, str) and verify.strip() else None,
                           head if isinstance(head, str) else None, commits.get(task, ()))
    scopes = sorted({t.scope for t in found.values() if t.scope})
    known = git.tracked_scopes(ws.root, scopes) if scopes else set()
    return {t: i._replace(tracked_scope=i.scope in known) for t, i in found.items()}


class Outcome:
    """What a derivation of one episode did (or, dry, would do)."""

    __slots__ = ("episode", "written", "unchanged", "skipped", "kept", "dry_run", "drafts", "edited", "provenance")

    def __init__(self, episode: str, skipped: list[tuple[int, str]] | None = None, kept: list[str] | None = None,
                 dry_run: bool = False, drafts: list[Draft] | None = None, provenance: str | None = None) -> None:
        self.episode = episode
        self.written: list[Path] = []
        self.unchanged: list[Path] = []
        self.skipped = skipped if skipped is not None else []
        self.kept = kept if kept is not None else []
        self.dry_run = dry_run
        self.drafts = drafts if drafts is not None else []
        self.edited: list[Path] = []  # edited by hand: left alone
        self.provenance = provenance  # why commits that may be the episode's are not cited

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
