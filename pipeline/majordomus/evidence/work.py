"""The evidence writers: tasks, decisions, questions, checkpoints and handovers.

Each writes one registered ledger event stamped with the open episode. The active task and the
open questions are small state files under `.ai/local/state/`; the ledger stays the record.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.base import credentials, fsio, git, transcript
from majordomus.base.credentials import credential_in
from majordomus.base.transcript import marker_in
from majordomus.base.errors import REFUSED, UNKNOWN, FatalError, refused
from majordomus.base.fsio import atomic_write
from majordomus.base.ids import check_id
from majordomus.evidence import episodes
from majordomus.store.ledger import utc_now
from majordomus.store import anchors
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any

OUTCOMES = ("completed", "blocked", "failed", "no_match")
REASON_HEADING = "## Reason"


def _short_id(prefix: str, *parts: str) -> str:
    blob = json.dumps(parts, ensure_ascii=False).encode("utf-8")
    import hashlib  # OpenSSL's load is a few ms of every start hook, which never makes an id

    return f"{prefix}-{hashlib.sha256(blob).hexdigest()[:8]}"


def _read_json(path: Path) -> Any:
    try:
        return json.loads(fsio.read_text(path))
    except (FileNotFoundError, ValueError):
        return None


def _utf8(**texts: str | None) -> None:
    """Refuse free text that is not Unicode (a lone surrogate from undecodable argv bytes), that
    carries a transcript marker (the deriver would drop it: refused here, not lost later), or a
    credential: what is written here is derived into tracked, pushed records."""
    for name, text in texts.items():
        if text is None:
            continue
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise refused(f"the {name} is not valid UTF-8 text: retype it (the shell passed bytes "
                          "that are not UTF-8)") from None
        marker = marker_in(text)
        if marker is not None:
            raise refused(transcript.refusal(f"the {name.replace('_', ' ')}", marker))
        kind = credential_in(text)
        if kind is not None:
            raise refused(credentials.refusal(f"the {name.replace('_', ' ')}", kind))


# --- tasks -------------------------------------------------------------------------------------

def active_task(ws: Workspace) -> dict[str, Any] | None:
    """The active task, each field the type its readers print (a hand-edited or foreign state
    file with a missing or null title reads as untitled, never as `None`)."""
    data = _read_json(ws.state / "task.json")
    if not isinstance(data, dict) or not isinstance(data.get("task"), str) or not data["task"]:
        return None
    task = dict(data)
    task["title"] = _said(data.get("title"), "(untitled)")
    task["scope"] = data.get("scope") if isinstance(data.get("scope"), str) and data.get("scope") else None
    task["started"] = _said(data.get("started"), "(unknown)")
    return task


def _said(value: Any, absent: str) -> str:
    return value if isinstance(value, str) and value else absent


def task_lock(ws: Workspace) -> Path:
    """The lock a start and a finish hold from reading the active task to writing it: with it,
    "one task at a time" holds for any number of processes at once."""
    return ws.state / "task.lock"


def _about(ws: Workspace, about: list[str] | None) -> dict[str, Any]:
    """`about` as a ledger field: the files the line is about, repository-relative (refused, exit
    4, outside the repository); nothing when none was given, so older lines' bytes stay."""
    return {"about": anchors.anchors(ws.root, about)} if about else {}


def start(ws: Workspace, title: str, scope: str | None = None, about: list[str] | None = None) -> dict[str, Any]:
    """Start a task; one is active at a time in a checkout. `about`: the files it is about."""
    _utf8(title=title, scope=scope)
    if not title.strip():
        raise refused("a task needs a title: majordomus start \"what the task is\"")
    with ws.lock(task_lock(ws)):
        current = active_task(ws)
        if current is not None:
            raise FatalError(f"task {current['task']} ({current['title']}) is active: finish it first "
                             "with `majordomus finish`", REFUSED)
        episode = episodes.current(ws)
        ts = utc_now()
        task = _short_id("t", episode or "", ts, title)
        # where the task starts in git: the commits it makes are those past this head that this
        # checkout's HEAD reflog made after this position (the derivation cites them)
        at = _head(ws)
        ws.ledger.append("task.started", episode, ts=ts, task=task, title=title, scope=scope,
                         head=at.sha, reflog=at.reflog, **_about(ws, about))
        record = {"task": task, "title": title, "scope": scope, "started": ts, "episode": episode,
                  "head": at.sha, "reflog": at.reflog}
        atomic_write(ws.state / "task.json", json.dumps(record, indent=2, ensure_ascii=False) + "\n",
                     root=ws.root)
    return record


def _head(ws: Workspace) -> git.Head:
    """HEAD now, or an unknown one without git (the evidence is still recorded)."""
    try:
        return git.head(ws.root)
    except (OSError, git.GitError):
        return git.Head(None, None)


def note_path(ws: Workspace, task: str) -> Path:
    return ws.state / "completed" / f"{check_id(task, 'task id', written=True)}.md"


def read_note_reason(text: str) -> str | None:
    """The text under the note's `## Reason` heading, or None when it has none.

    The reason is the note's last section and runs to its end, so a reason that itself holds a
    `## ` line is read whole rather than cut at it.
    """
    match = re.search(r"^## Reason[ \t]*\n(.*)\Z", text, re.M | re.S)
    return match.group(1).strip("\n") if match else None


VERIFY_TIMEOUT_S = 600.0  # `finish --verify`: a test suite may take minutes; ten is a hung command
TAIL_BYTES = 64 * 1024  # of the command's output, only the end is kept (its last lines are shown)


class VerifyFailed(Exception):
    """`finish --verify`'s command failed: its exit code and the tail of its output."""

    def __init__(self, command: str, code: int, tail: str, timed_out: float | None = None) -> None:
        super().__init__(command, code)
        self.command, self.code, self.tail = command, code, tail
        self.timed_out = timed_out  # the timeout it ran into, when it did


def verify(ws: Workspace, command: str, timeout_s: float = VERIFY_TIMEOUT_S) -> None:
    """Run `command` in the repository root; raise VerifyFailed unless it exits 0 within
    `timeout_s`. Its standard input is /dev/null (it never reads, nor waits on, the caller's);
    of its output only the last `TAIL_BYTES` are kept, however much it writes. A command out of
    time, or this process interrupted, stops the command's whole process group."""
    # imported by the one command that runs one (`majordomus done --verify`): `majordomus context`
    # and the briefing read this module's tasks and questions, never run a command
    import signal
    import subprocess
    import threading

    proc = subprocess.Popen(command, shell=True, cwd=ws.root, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    assert proc.stdout is not None
    fd, tail = proc.stdout.fileno(), bytearray()

    def read() -> None:  # one stream, in the order the command wrote it: the last lines are last
        while chunk := os.read(fd, 65536):
            tail.extend(chunk)
            del tail[:-TAIL_BYTES]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    timed_out = None
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = timeout_s
    finally:
        if proc.poll() is None:  # out of time, or this process interrupted: stop it, children too
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            code = proc.wait()
        reader.join(timeout=5)  # a child that left the group may hold the pipe: not for ever
        if not reader.is_alive():
            proc.stdout.close()
    if code != 0 or timed_out is not None:
        lines = bytes(tail).decode("utf-8", "replace").rstrip().splitlines()
        raise VerifyFailed(command, code, "\n".join(line[:500] for line in lines[-10:]), timed_out)


def finish(ws: Workspace, outcome: str = "completed", reason: str | None = None,
           verify_command: str | None = None, verify_timeout_s: float = VERIFY_TIMEOUT_S) -> dict[str, Any]:
    """Finish the active task; the note goes to `.ai/local/state/completed/<task>.md`."""
    _utf8(reason=reason, command=verify_command)
    task = active_task(ws)
    if task is None:
        raise FatalError("no active task: start one with `majordomus start \"TITLE\"`", UNKNOWN)
    if outcome not in OUTCOMES:
        raise refused(f"outcome {outcome!r} refused: use one of {', '.join(OUTCOMES)}")
    if outcome != "completed" and not (reason or "").strip():
        raise refused(f"a task that finished {outcome} needs its reason: add --reason \"why\"")
    if verify_command is not None:
        if outcome != "completed":
            raise refused("--verify proves a completed task: drop it, or finish --outcome completed")
        try:
            verify(ws, verify_command, verify_timeout_s)  # outside the lock: a command may run for minutes
        except VerifyFailed as failed:
            # the interesting event: the task stays active, and the ledger says what failed
            line = ws.ledger.append("verification.failed", episodes.current(ws), task=task["task"],
                                    title=task["title"], command=failed.command, code=failed.code,
                                    timed_out=failed.timed_out, head=_head(ws).sha)
            _note_failure(ws, task["task"], {"command": failed.command, "code": failed.code, "ts": line["ts"]})
            raise
    with ws.lock(task_lock(ws)):
        now = active_task(ws)
        if now is None or now["task"] != task["task"]:
            raise FatalError(f"task {task['task']} was finished meanwhile by another process: nothing "
                             "recorded (`majordomus history --event task.finished` shows it)", UNKNOWN)
        return _finished(ws, task, outcome, reason, verify_command)


def _note_failure(ws: Workspace, task: str, failure: dict[str, Any]) -> None:
    """Keep the last failed verification on the active task's state, for the briefing to say."""
    with ws.lock(task_lock(ws)):
        data = _read_json(ws.state / "task.json")
        if isinstance(data, dict) and data.get("task") == task:
            data["verify_failed"] = failure
            atomic_write(ws.state / "task.json", json.dumps(data, indent=2, ensure_ascii=False) + "\n",
                         root=ws.root)


def _finished(ws: Workspace, task: dict[str, Any], outcome: str, reason: str | None,
              verify_command: str | None) -> dict[str, Any]:
    """Write the note, append `task.finished`, clear the active task (under the task lock)."""
    episode = episodes.current(ws)
    ts = utc_now()
    note = note_path(ws, task["task"])
    lines = [f"# {task['title']}", "", f"- task: {task['task']}", f"- outcome: {outcome}",
             f"- started: {task['started']}", f"- finished: {ts}"]
    if task.get("scope"):
        lines.append(f"- scope: {task['scope']}")
    if verify_command:
        lines.append(f"- verified by: `{verify_command}` (exit 0)")
    lines += ["", REASON_HEADING, "", (reason or "").rstrip() or "(none given)", ""]
    atomic_write(note, "\n".join(lines), root=ws.root)
    data = {"task": task["task"], "title": task["title"], "outcome": outcome,
            "note": ws.rel(note)}
    if task.get("scope"):
        data["scope"] = task["scope"]
    if verify_command:
        data["verify"] = verify_command
    at = _head(ws)
    if at.sha:
        data["head"] = at.sha  # the commit the task finished at (a verification passed at it)
    if reason:
        data["reason"] = reason
    ws.ledger.append("task.finished", episode, ts=ts, **data)
    fsio.remove(ws.state / "task.json", root=ws.root)
    return data


# --- decisions ---------------------------------------------------------------------------------

def decision_add(ws: Workspace, text: str, why: str | None = None, about: list[str] | None = None) -> dict[str, Any]:
    """Record a decision under the active task, or under the episode alone; `about`: the files it
    is about (the anchors a promotion keeps)."""
    _utf8(decision=text, why=why)
    if not text.strip():
        raise refused("a decision needs its text: majordomus decision add \"what was decided\"")
    task = active_task(ws)
    return ws.ledger.append("decision.recorded", episodes.current(ws),
                            task=task["task"] if task else None, text=text, why=why, **_about(ws, about))


# --- questions ---------------------------------------------------------------------------------

def _questions_path(ws: Workspace) -> Path:
    return ws.state / "questions.json"


def open_questions(ws: Workspace) -> list[dict[str, Any]]:
    """The open questions: each an id and its text (an entry without both is no question)."""
    data = _read_json(_questions_path(ws))
    return [q for q in data if isinstance(q, dict) and isinstance(q.get("question"), str) and q["question"]
            and isinstance(q.get("text"), str)] if isinstance(data, list) else []


def question_add(ws: Workspace, text: str, about: list[str] | None = None) -> dict[str, Any]:
    _utf8(question=text)
    if not text.strip():
        raise refused("a question needs its text: majordomus question add \"what is unknown\"")
    task = active_task(ws)
    episode = episodes.current(ws)
    ts = utc_now()
    qid = _short_id("q", episode or "", ts, text)
    with ws.lock(ws.state / "questions.lock"):
        ws.ledger.append("question.opened", episode, ts=ts, question=qid,
                         task=task["task"] if task else None, text=text, **_about(ws, about))
        questions = open_questions(ws)
        questions.append({"question": qid, "text": text, "task": task["task"] if task else None,
                          "opened": ts, "episode": episode})
        atomic_write(_questions_path(ws), json.dumps(questions, indent=2, ensure_ascii=False) + "\n",
                     root=ws.root)
    return questions[-1]


def question_resolve(ws: Workspace, qid: str, answer: str) -> dict[str, Any]:
    check_id(qid, "question id")
    _utf8(answer=answer)
    if not answer.strip():
        raise refused("a resolution needs its answer: majordomus question resolve ID \"the answer\"")
    with ws.lock(ws.state / "questions.lock"):
        questions = open_questions(ws)
        found = next((q for q in questions if q["question"] == qid), None)
        if found is None:
            raise FatalError(f"no open question {qid}: `majordomus question list` shows the open ones",
                             UNKNOWN)
        kind = credential_in(credentials.joined(found["text"], answer))
        if kind is not None:  # the record joins the question and its answer: screen them so
            raise refused(credentials.refusal("the answer, with its question", kind))
        task = active_task(ws)
        owner = found.get("task") or (task["task"] if task else None)
        line = ws.ledger.append("question.resolved", episodes.current(ws), question=qid,
                                task=owner, text=found["text"], answer=answer)
        atomic_write(_questions_path(ws), json.dumps([q for q in questions if q is not found],
                                                     indent=2, ensure_ascii=False) + "\n", root=ws.root)
    return line


# --- checkpoints and handovers (recorded, never derived from) ----------------------------------

CHANGED_FILES_MAX = 500  # a checkpoint is one ledger line: past this, the count and the first paths


def checkpoint(ws: Workspace, note: str | None = None, episode: str | None = None) -> dict[str, Any]:
    """Record where the work stands: the task, the note, the head, and `changed_files` — what git
    says changed since the episode opened (commits, the working tree, untracked files: the
    candidates and the session record included), seed 001's Consequences. With no episode open
    there is no opening to compare with, and `changed_files` is null."""

    _utf8(note=note)
    task = active_task(ws)
    episode = episode or episodes.current(ws)
    opened = episodes.open_record(ws, episode) if episode else None
    changed: list[str] | None = None
    extra: dict[str, Any] = {}
    if opened is not None:
        at_open = opened.get("head")
        try:
            changed = git.changed_since(ws.root, at_open if isinstance(at_open, str) and at_open else None)
        except git.GitError:  # history rewritten since the open: say so, still record the checkpoint
            extra["changed_error"] = f"the head at the open, {at_open}, is not in this repository any more"
    if changed is not None and len(changed) > CHANGED_FILES_MAX:
        extra["changed_total"] = len(changed)
        changed = changed[:CHANGED_FILES_MAX]
    return ws.ledger.append("checkpoint.recorded", episode, task=task["task"] if task else None,
                            note=note, head=git.head(ws.root).sha, changed_files=changed, **extra)


def handover(ws: Workspace, next_action: str) -> dict[str, Any]:
    _utf8(next_action=next_action)
    if not next_action.strip():
        raise refused("a handover names the next action: majordomus handover --next \"what to do next\"")
    task = active_task(ws)
    return ws.ledger.append("handover.recorded", episodes.current(ws),
                            task=task["task"] if task else None, next=next_action)
