"""The Stop reminder: when git shows work and the ledger shows none, tell the agent once what it
could record, and how.

Claude Code runs the Stop hook each time the agent finishes a turn. The reminder is due when the
episode is open here, has at least `session.remind_after_commits` more commits than at its last
reminder (git's word: commits since the head it opened at, one `git rev-list --count`), and its
ledger window holds no decision, question or task since that reminder (or since the open). It is
never due while `stop_hook_active` is true (the agent is already continuing because of a Stop
hook), nor when the key is 0.

It is given the way Claude Code documents for a Stop hook that has something to tell the model:
`{"decision": "block", "reason": …}` on stdout with exit 0. The client then does not stop: the
reason goes to the model and the turn goes on, once; the next Stop carries `stop_hook_active`,
and the reminder's own ledger line (`session.reminded`, with the commit count) keeps it from
coming back before another N commits.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from majordomus.base import git
from majordomus.evidence import episodes
from majordomus.store.workspace import Workspace

POLICY_KEY = "session.remind_after_commits"
REMINDED = "session.reminded"
# Evidence that the agent is recording: any of these since the last reminder keeps it quiet.
RECORDS = frozenset(("decision.recorded", "question.opened", "question.resolved", "task.started",
                     "task.finished"))


@dataclass(frozen=True)
class Reminder:
    commits: int
    text: str


def text_for(commits: int) -> str:
    """The reminder itself: one or two lines, statements rather than orders."""
    return (f"Majordomus: this episode has {commits} commit{'s' if commits != 1 else ''} since it opened and no "
            "decision, question or task recorded in its ledger; nothing of it will reach a later session "
            "unless it is recorded. A choice worth keeping is recorded with `majordomus decision add \"TEXT\" "
            "--why \"…\"`, finished work with `majordomus finish --verify CMD` (after `majordomus start "
            "\"TITLE\"`), an open question with `majordomus question add \"TEXT\"`; if none of the work holds "
            "one, nothing needs recording.")


def due(ws: Workspace, episode: str, stop_hook_active: bool = False) -> Reminder | None:
    """The reminder owed to `episode` now, or None."""
    if stop_hook_active:
        return None
    every = int(ws.policy[POLICY_KEY])
    if every <= 0:
        return None
    record = episodes.open_record(ws, episode)
    if record is None:
        return None
    window = ws.ledger.window(episode)
    last = max((i for i, line in enumerate(window) if line.event == REMINDED), default=None)
    since = window if last is None else window[last + 1:]
    if any(line.event in RECORDS for line in since):
        return None
    head = record.get("head")
    commits = git.commits_since(ws.root, head if isinstance(head, str) and head else None)
    if commits is None:
        return None
    before = window[last].get("commits", 0) if last is not None else 0
    if commits - (before if isinstance(before, int) else 0) < every:
        return None
    return Reminder(commits, text_for(commits))


def remind(ws: Workspace, episode: str, stop_hook_active: bool = False) -> str | None:
    """The Stop hook's stdout when a reminder is due (its ledger line appended first), else None."""
    reminder = due(ws, episode, stop_hook_active)
    if reminder is None:
        return None
    ws.ledger.append(REMINDED, episode, episode=episode, commits=reminder.commits)
    return json.dumps({"decision": "block", "reason": reminder.text})  # ASCII: no control character raw
