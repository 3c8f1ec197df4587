"""The evidence writers: start, finish, decision, question, checkpoint, handover."""
from __future__ import annotations

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
    p.set_defaults(handler=lambda a: start(a.title, a.scope))

    p = sub.add_parser("finish", help="finish the active task",
                       description="Finish the active task. Its note goes to "
                       ".ai/local/state/completed/<task>.md with the reason under '## Reason'. "
                       "--verify CMD runs CMD in the repository root (stdin /dev/null, stopped after "
                       "--verify-timeout) and records the task completed only when it exits 0.")
    p.add_argument("--outcome", choices=("completed", "blocked", "failed", "no_match"), default="completed")
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
    add.set_defaults(handler=lambda a: decision_add(a.text, a.why))
    p.set_defaults(help_parser=p)

    p = sub.add_parser("question", help="ask, resolve and list questions",
                       description="Questions belong to the active task, which is what resolves them.")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    q = verbs.add_parser("add", help="ask a question; prints its id")
    q.add_argument("text")
    q.set_defaults(handler=lambda a: question_add(a.text))
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


def start(title: str, scope: str | None) -> int:

    task = work.start(_ws(), title, scope)
    print(task["task"])
    say(f"task {task['task']} started: {title}")
    return OK


def finish(outcome: str, reason: str | None, verify: str | None, timeout_s: float | None = None) -> int:

    if timeout_s is not None and verify is None:
        raise FatalError("--verify-timeout bounds --verify CMD: give the command too, or drop it", USAGE)
    try:
        data = work.finish(_ws(), outcome, reason, verify, timeout_s or work.VERIFY_TIMEOUT_S)
    except work.VerifyFailed as failed:
        what = (f"did not finish within {failed.timed_out:g} s (--verify-timeout) and was stopped"
                if failed.timed_out is not None else f"exited {failed.code}")
        say(f"`{failed.command}` {what}; nothing was recorded. Its last lines:")
        for line in failed.tail.splitlines():
            say(f"  | {line}")
        say("fix it and rerun, or record the task as failed: "
            "majordomus finish --outcome failed --reason \"why\"")
        return REFUSED
    say(f"task {data['task']} finished {data['outcome']}: note at {data['note']}")
    return OK


def decision_add(text: str, why: str | None) -> int:

    line = work.decision_add(_ws(), text, why)
    say(f"decision recorded{' under task ' + line['task'] if line.get('task') else ' (no active task: it derives from the session alone)'}")
    return OK


def question_add(text: str) -> int:

    q = work.question_add(_ws(), text)
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
