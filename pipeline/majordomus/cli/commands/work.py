"""The evidence writers: start, finish, decision, question, checkpoint, handover."""
from __future__ import annotations

import sys
from typing import Any

from majordomus.base.errors import OK, REFUSED, USAGE, FatalError
from majordomus.base.output import emit_json, line, say, show
from majordomus.cli.commands import Subparsers
from majordomus.cli.options import seconds
from majordomus.evidence import work
from majordomus.store.workspace import open_workspace

NAMES = ("start", "finish", "decision", "question", "checkpoint", "handover")


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("start", help="start a task", description="Start a task; one is active at a time.")
    p.add_argument("title")
    p.add_argument("--scope", help="the path the task is about")
    p.add_argument("--about", action="append", default=[], metavar="PATH",
                   help="a file the task is about (repeatable): its records' anchors")
    p.set_defaults(handler=lambda a: start(a.title, a.scope, a.about))

    p = sub.add_parser("finish", help="finish the active task",
                       description="Finish the active task with the outcome you state. Its note goes to "
                       ".ai/local/state/completed/<task>.md with the reason under '## Reason'. "
                       "Outcomes: completed (done); blocked (cannot go on: something outside the task "
                       "stops it); failed (tried, and it does not work); no_match (the premise did not "
                       "hold: nothing matched what the task looked for, so there was nothing to do). "
                       "Each but completed needs --reason and becomes a candidate lesson. "
                       "--verify CMD runs CMD in the repository root (stdin /dev/null, stopped after "
                       "--verify-timeout) and records the task completed only when it exits 0; a "
                       "failing CMD leaves the task active and records verification.failed. With neither "
                       "--outcome nor --verify, finish asks at a terminal and is refused elsewhere (exit 2): "
                       "an outcome nobody stated is not evidence.")
    p.add_argument("--outcome", choices=work.OUTCOMES, default=None,
                   help="completed | blocked | failed | no_match (the premise did not hold: nothing "
                   "matched, nothing to do); --verify CMD implies completed")
    p.add_argument("--reason", help="why it ended so (required unless completed)")
    p.add_argument("--verify", metavar="CMD", help="a command that proves the task is done")
    p.add_argument("--verify-timeout", metavar="SECONDS", type=seconds, default=None,
                   help=f"stop CMD after this long; the task is then not finished (default "
                   f"{work.VERIFY_TIMEOUT_S:g})")
    p.set_defaults(handler=lambda a: finish(a.outcome, a.reason, a.verify, a.verify_timeout))

    p = sub.add_parser("decision", help="record a decision", description="Record decisions.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    add = verbs.add_parser("add", help="record a decision under the active task (or the episode)")
    add.add_argument("text")
    add.add_argument("--why", help="the reason for it")
    add.add_argument("--about", action="append", default=[], metavar="PATH",
                     help="a file the decision is about (repeatable): the record's anchor, so a reader "
                     "can tell when that file changed after a person verified it")
    add.set_defaults(handler=lambda a: decision_add(a.text, a.why, a.about))
    p.set_defaults(help_parser=p)

    p = sub.add_parser("question", help="ask, resolve and list questions",
                       description="Questions belong to the active task, which is what resolves them.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    q = verbs.add_parser("add", help="ask a question; prints its id")
    q.add_argument("text")
    q.add_argument("--about", action="append", default=[], metavar="PATH",
                   help="a file the question is about (repeatable)")
    q.set_defaults(handler=lambda a: question_add(a.text, a.about))
    q = verbs.add_parser("resolve", help="resolve a question with its answer")
    q.add_argument("id")
    q.add_argument("answer")
    q.set_defaults(handler=lambda a: question_resolve(a.id, a.answer))
    q = verbs.add_parser("list", help="the open questions")
    q.add_argument("--json", action="store_true")
    q.set_defaults(handler=lambda a: question_list(a.json))
    p.set_defaults(help_parser=p)

    p = sub.add_parser("checkpoint", help="record a checkpoint (never derived from)")
    p.add_argument("--note")
    p.set_defaults(handler=lambda a: checkpoint(a.note))

    p = sub.add_parser("handover", help="record the next action (never derived from)")
    p.add_argument("--next", dest="next_action", required=True, help="what the next worker should do")
    p.set_defaults(handler=lambda a: handover(a.next_action))


def _ws() -> Any:

    return open_workspace()


def start(title: str, scope: str | None, about: list[str] | None = None) -> int:

    task = work.start(_ws(), title, scope, about)
    print(task["task"])
    say(f"task {task['task']} started: {title}")
    return OK


def _stated(ws: Any, outcome: str | None, reason: str | None, verify: str | None) -> tuple[str, str | None]:
    """The outcome (and reason) someone stated: given, implied by --verify, or asked for at a
    terminal. Anywhere else a bare finish is refused: an outcome nobody stated is not evidence."""
    if outcome is not None:
        return outcome, reason
    if verify is not None:
        return "completed", reason
    if work.active_task(ws) is None:
        return "completed", reason  # work.finish says there is no task to finish (exit 3)
    if not (sys.stdin.isatty() and sys.stderr.isatty()):
        raise FatalError("finish without an outcome refused: nobody stated one; add --outcome "
                         "completed|blocked|failed|no_match (no_match: nothing matched what the task "
                         "looked for), or --verify CMD", USAGE)
    choices = "/".join(work.OUTCOMES)
    while True:
        sys.stderr.write(f"outcome of the task ({choices}): ")
        sys.stderr.flush()
        answer = sys.stdin.readline()
        if not answer:
            raise FatalError("finish: no outcome given: nothing recorded", USAGE)
        if answer.strip() in work.OUTCOMES:
            outcome = answer.strip()
            break
    while outcome != "completed" and not (reason or "").strip():
        sys.stderr.write(f"why it finished {outcome} (one line): ")
        sys.stderr.flush()
        line_read = sys.stdin.readline()
        if not line_read:
            raise FatalError(f"finish: a task that finished {outcome} needs its reason: nothing recorded",
                             USAGE)
        reason = line_read.strip() or None
    return outcome, reason


def finish(outcome: str | None, reason: str | None, verify: str | None, timeout_s: float | None = None) -> int:

    if timeout_s is not None and verify is None:
        raise FatalError("--verify-timeout bounds --verify CMD: give the command too, or drop it", USAGE)
    ws = _ws()
    outcome, reason = _stated(ws, outcome, reason, verify)
    try:
        data = work.finish(ws, outcome, reason, verify, timeout_s or work.VERIFY_TIMEOUT_S)
    except work.VerifyFailed as failed:
        what = (f"did not finish within {failed.timed_out:g} s (--verify-timeout) and was stopped"
                if failed.timed_out is not None else f"exited {failed.code}")
        say(f"`{failed.command}` {what}; the task is not finished (the failure is in the ledger). Its last lines:")
        for line in failed.tail.splitlines():
            say(f"  | {line}")
        say("fix it and rerun, or record the task as failed: "
            "majordomus finish --outcome failed --reason \"why\"")
        return REFUSED
    say(f"task {data['task']} finished {data['outcome']}: note at {data['note']}")
    return OK


def decision_add(text: str, why: str | None, about: list[str] | None = None) -> int:

    line = work.decision_add(_ws(), text, why, about)
    say(f"decision recorded{' under task ' + line['task'] if line.get('task') else ' (no active task: it derives from the session alone)'}")
    return OK


def question_add(text: str, about: list[str] | None = None) -> int:

    q = work.question_add(_ws(), text, about)
    print(q["question"])
    return OK


def question_resolve(qid: str, answer: str) -> int:

    work.question_resolve(_ws(), qid, answer)
    say(f"question {qid} resolved")
    return OK


def question_list(as_json: bool) -> int:

    questions = work.open_questions(_ws().own_local())
    if as_json:
        emit_json(questions)
        return OK
    if not questions:
        say("no open questions (majordomus question add \"…\" asks one)")
    for q in questions:
        show(line(f"{q.get('question')}  {q.get('text')}" + (f"  (task {q['task']})" if q.get("task") else "")) + "\n")
    return OK


def checkpoint(note: str | None) -> int:

    work.checkpoint(_ws(), note)
    say("checkpoint recorded")
    return OK


def handover(next_action: str) -> int:

    work.handover(_ws(), next_action)
    say("handover recorded")
    return OK
