"""The table's rows: what one evidence line asks for, and what the task it belongs to adds.

| ledger line                                   | record                                            |
|-----------------------------------------------|---------------------------------------------------|
| decision.recorded                             | convention, decided, titled by its first line     |
| question.resolved                             | fact titled by the answer, the question in the body |
| task.finished blocked / failed / no_match     | lesson titled by its task and the reason's first line, the whole reason in the body |
| task.finished completed with a verify command | evidence on the task's other records (`test:`, a body line); a record of its own only for a task with pointers (a scope or commits) that no other record carries, one per command |
| verification.failed                           | nothing: the working context and the briefing show it |

Every record of a task also cites what a reviewer can open: the task's scope (`relates_to
file:<path>`, when tracked) and the commits the task made (`commit:<sha>`, their subjects in the
body). A decision and a lesson of the same task that say the same thing are one record: the
decision, with the lesson's reason in its body. docs/KNOWLEDGE.md says why this departs from
seed 001's table.
"""
from __future__ import annotations


from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.ids import ID_PATTERN
from majordomus.derive.text import same_finding, scrub
from majordomus.evidence.commits import first_line, task_reason
from majordomus.store.ledger import Line
from majordomus.store.records import reference_problem
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

LESSON_OUTCOMES = ("blocked", "failed", "no_match")


class Row(NamedTuple):
    """What one evidence line asks of the table, before the episode's commits are added."""

    texts: tuple[str, ...]  # everything of the line that reaches the record: screened for markers
    cls: str
    epistemics: str
    title: str
    body: str
    refs: tuple[str, ...]
    source: tuple[str, ...]  # the digest's input: the event and the text as a person wrote it
    task: str | None = None
    kind: str = ""  # decision | answer | lesson | verified
    finding: str = ""  # a lesson's reason, a decision's first line: what sameness compares
    relations: tuple[tuple[str, str], ...] = ()


class Task(NamedTuple):
    """What the window says of one task: its title, scope, where it ran and how it ended."""

    title: str
    scope: str | None  # repository-relative, or None
    verify: str | None  # the command that passed when it completed
    head: str | None  # the commit it finished at
    commits: tuple[tuple[str, str], ...] = ()  # (sha, subject) it made
    tracked_scope: bool = False  # the scope names a tracked path (a relation can resolve)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _after_first_line(text: str) -> str:
    """`text` after its first line that holds anything (which a title carries), stripped."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    return "\n".join(lines[first + 1:]).strip("\n")


def row(ws: Workspace, episode: str, line: Line, names: dict[Any, Any],
        roots: tuple[str, ...]) -> Row | str | None:
    """The table's row for `line`: a Row, None when the line is not evidence, or why it is refused.
    The class comes from the event, never from the wording: every decision is a convention."""
    session = f"session:{episode}"
    task = line.get("task")
    task = task if isinstance(task, str) and task and task != "none" else None
    if task is not None and (not ID_PATTERN.match(task) or ".." in task):
        return f"names the task {task[:40]!r}, which is not a task id"
    if line.event == "decision.recorded":
        text, why = _text(line.get("text")), _text(line.get("why"))
        if not text.strip():
            return None
        body = scrub(text, roots) + (f"\n\nWhy: {scrub(why, roots)}" if why else "")
        refs = (session, f"decision:{task}") if task else (session,)
        # one assertion in one line: the title is the first line, the whole text stays in the body
        title = scrub(first_line(text), roots)
        return Row((text, why), "convention", "decided", title, body, refs, (line.event, text),
                   task, "decision", first_line(text))
    if line.event == "question.resolved":
        question, answer = _text(line.get("text")), _text(line.get("answer"))
        if not answer.strip():
            return None
        refs = (session, f"task:{task}") if task else (session,)
        body = f"{scrub(answer, roots)}\n\nQuestion: {scrub(question, roots)}" if question.strip() \
            else scrub(answer, roots)
        # titled by the answer alone: it is what a reader needs; the question is in the body
        return Row((question, answer), "fact", "observed", scrub(first_line(answer), roots), body, refs,
                   (line.event, question, answer), task, "answer", first_line(answer))
    if line.event == "task.finished" and task:
        outcome = line.get("outcome")
        name = scrub(_text(names.get(task)) or _text(line.get("title")) or task, roots)
        refs = (session, f"task:{task}")
        if outcome in LESSON_OUTCOMES:
            written = _text(line.get("reason"))
            full = task_reason(ws, task, written)
            reason = first_line(full)
            if not reason:
                return None
            # titled with its subject (the task) and the reason's first line; the whole reason kept
            title = f"{first_line(name)}: {scrub(reason, roots)}"
            rest = scrub(_after_first_line(full), roots)
            body = f"{title}\n\nTask {name} finished {outcome}." + (f"\n\n{rest}" if rest else "")
            return Row((full, written, name), "lesson", "observed", title, body, refs,
                       (line.event, task, str(outcome), reason), task, "lesson", reason)
        verify = _text(line.get("verify"))
        if outcome == "completed" and verify.strip():
            return Row((verify, name), "fact", "observed", first_line(name), "", refs,
                       (line.event, task, verify), task, "verified")
    return None


def shaped(rows: list[tuple[Line, Row]], tasks: dict[str, Task],
           roots: tuple[str, ...]) -> list[tuple[Line, Row]]:
    """The rows after what their tasks add: one record for a decision and the same lesson, a
    verification as evidence on its task's records (or one record where it is the only one), and
    each task's scope and commits on every record of the task."""
    by_task: dict[str, list[Row]] = {}
    for _, r in rows:
        if r.task:
            by_task.setdefault(r.task, []).append(r)
    dropped: set[int] = set()
    extra: dict[int, list[str]] = {}
    carried: set[str] = set()  # commands a record already carries (as evidence, or its own)
    alone: list[tuple[str, Row]] = []
    for task, group in by_task.items():
        decisions = [r for r in group if r.kind == "decision"]
        for lesson in (r for r in group if r.kind == "lesson"):
            twin = next((d for d in decisions if same_finding(d.finding, lesson.finding)), None)
            if twin is not None:  # one finding: the decision, with the lesson's reason in its body
                dropped.add(id(lesson))
                extra.setdefault(id(twin), []).append(lesson.body)
        others = any(r.kind != "verified" and id(r) not in dropped for r in group)
        for verified in (r for r in group if r.kind == "verified"):
            if others:  # evidence on the task's records, not a record of its own
                dropped.add(id(verified))
                carried.add(verified.source[2])
            else:
                alone.append((task, verified))
    for task, verified in alone:  # a record of its own: pointers to check, one per command
        info = tasks.get(task)
        command = verified.source[2]
        if info is None or not (info.commits or info.tracked_scope) or command in carried:
            dropped.add(id(verified))
        else:
            carried.add(command)
    out: list[tuple[Line, Row]] = []
    for line, r in rows:
        if id(r) in dropped:
            continue
        info = tasks.get(r.task or "")
        body, refs, relations = r.body, r.refs, r.relations
        for more in extra.get(id(r), []):
            body += f"\n\n{more}"
        if info is not None:
            body, refs, relations = _pointers(r, info, body, refs, roots)
        out.append((line, r._replace(body=body, refs=refs, relations=relations)))
    return out


def _pointers(r: Row, info: Task, body: str, refs: tuple[str, ...],
              roots: tuple[str, ...]) -> tuple[str, tuple[str, ...], tuple[tuple[str, str], ...]]:
    """The task's verification, commits and scope on one of its records."""
    lines: list[str] = []
    if info.verify:
        at = f" at commit {info.head[:12]}" if info.head else ""
        cmd = scrub(info.verify, roots)
        lines.append(f"Verified: `{cmd}` passed{at} when task {first_line(info.title)} completed.")
        test = f"test:{first_line(cmd)}"
        if reference_problem(test) is None:  # a command with a control character is named in words only
            refs += (test,)
    if info.commits:
        lines.append("Commits of the task:")
        lines += [f"- {sha[:12]} {scrub(subject, roots)}" for sha, subject in info.commits]
        refs += tuple(f"commit:{sha}" for sha, _ in info.commits)
    if info.scope:
        lines.append(f"Scope: `{info.scope}`")
    if r.kind == "verified" and not body:
        body = f"`{scrub(info.verify or '', roots)}` checks this task's work."
    if lines:
        body += ("\n\n" if body else "") + "\n".join(lines)
    relations = (("relates_to", f"file:{info.scope}"),) if info.scope and info.tracked_scope else ()
    return body, refs, relations
