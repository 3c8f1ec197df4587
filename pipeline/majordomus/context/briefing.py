"""The start briefing: what the session-start hook prints for the agent to read.

Sections, most important first, so that whatever a client cuts is the least of it: what the
repository knows (its verified records, constraints first); the active task; open questions;
candidates awaiting review on this branch, newest first; the last handover. For a `compact` start
the episode's own working context comes first, because the conversation that held it has just
been cut. The lists share `session.briefing_budget_lines` (an unattributed candidate is never cut
by it); absence is printed, never omitted; and the whole stays under Claude Code's
10,000-character cut of hook output, saying what it cut and the command that shows it all. It
says what the repository records and which command records each kind, as statements: the client
warns that imperative text in hook output can read as an injected instruction.

This is the hook path, so it stays cheap: no jinja2, jsonschema or doit; the ledger read through
its index (the last handover, the branch of an episode no session record places, a compacted
episode's window: a few lines each, whatever the ledger's length); records read without a YAML
parse; git asked for changed paths only when a verified record relates to a path, and for the
branch only when the caller does not already know it.
"""
from __future__ import annotations

from typing import Any

from majordomus.base import git
from majordomus.context import working as session_context
from majordomus.context.blocks import Block, clip, fit
from majordomus.context.working import last_handover
from majordomus.evidence import work
from majordomus.knowledge import known
from majordomus.knowledge import queue as candidates
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace

CEILING = 10_000  # Claude Code cuts hook context above this to a short preview
ALL_OF_IT = "majordomus context"
TITLE_CHARS = 160  # one record's title in a list line, at most
ALL_VERIFIED = "majordomus knowledge search --status verified"
RECORDING = ("What an episode records becomes a candidate for review when it ends: a decision "
             "(`majordomus decision add \"TEXT\" --why \"…\"`), a question and its answer "
             "(`majordomus question add \"TEXT\"`, `majordomus question resolve ID \"ANSWER\"`), a task's "
             "finish (`majordomus finish --verify CMD`, or `--outcome blocked --reason \"…\"`).")


class Scan:
    """What the briefing needs from the ledger."""

    __slots__ = ("handover", "opened_branches", "window")

    def __init__(self, handover: dict[str, Any] | None = None,
                 opened_branches: dict[str, str | None] | None = None,
                 window: list[Line] | None = None) -> None:
        self.handover = handover
        # each episode's branch at its open, when the caller has them (else the queue asks the index)
        self.opened_branches = opened_branches
        self.window = window if window is not None else []


def scan(ws: Workspace, episode: str | None = None) -> Scan:
    """The last handover and (when `episode` is given) that episode's window, through the
    ledger's index: the lines read are those, not the ledger."""
    handover = ws.ledger.last_handover()
    return Scan(last_handover([handover]) if handover is not None else None,
                window=ws.ledger.window(episode) if episode else [])


def _title(text: str) -> str:
    return clip(text or "(untitled)", TITLE_CHARS)


def _knows(ws: Workspace) -> list[Block]:
    """The verified records, one line each, in the order an agent should meet them."""
    records = known.verified(ws.curated, ws)
    changed = git.changed_paths(ws.root) if any(r.paths for r in records) else frozenset()
    items = [f"- {r.cls}: {_title(r.title)} ({r.id})" for r in known.ordered(records, changed)]
    count = f"{len(records)} verified record{'s' if len(records) != 1 else ''}"
    return [Block(f"What this repository knows ({count})", 2, [], items,
                  "none verified yet: a person promotes a reviewed candidate with "
                  "`majordomus knowledge promote ID`", "verified records", ALL_VERIFIED,
                  whole="majordomus knowledge record ID")]


def _candidates(ws: Workspace, branch: str | None, opened: dict[str, str | None] | None) -> list[Block]:
    """The review queue on this branch, newest first; an unattributed candidate is named on its own
    line, outside the line budget, because somebody still has to review it."""
    queue = [c for c in candidates.waiting(ws, ledger_branches=opened) if c.branch is None or c.branch == branch]
    queue.sort(key=lambda c: c.id)
    queue.sort(key=lambda c: c.date, reverse=True)
    placed = [c for c in queue if c.branch is not None]
    unplaced = [c for c in queue if c.branch is None]
    where = branch or "this detached head"
    if not queue:
        count = f"none await review on {where}"
    else:
        count = (f"{len(queue)} candidate{'s' if len(queue) != 1 else ''} await{'s' if len(queue) == 1 else ''}"
                 f" review on {where}" + (f" ({len(unplaced)} unattributed)" if unplaced else "")
                 + ", newest first; a person promotes or rejects each (`majordomus knowledge candidates` "
                 "lists them)")
    more = "majordomus knowledge candidates"
    return [Block("Candidates awaiting review on this branch", 2, [count],
                  [f"- {_title(c.title)} ({c.id})" for c in placed], what="candidates", more=more),
            Block(None, 2, [], [f"- {_title(c.title)} ({c.id}; unattributed: "
                                + (f"this checkout cannot place its episode {c.episode})" if c.episode
                                   else "it names no episode)") for c in unplaced],
                  what="unattributed candidates", more=more, budgeted=False)]


def sections(ws: Workspace, episode: str, source: str, branch: str | None = None,
             found: Scan | None = None) -> list[Block]:
    """The briefing's blocks, unbounded."""

    found = found or scan(ws, episode if source == "compact" else None)
    out = [Block(f"Majordomus briefing: episode {episode} ({source})", 1,
                 [f"The repository context is `{ALL_OF_IT}`; this episode's working context is "
                  "`majordomus session context`. " + RECORDING])]
    if source == "compact":
        ctx = session_context.compose(ws, episode, window=found.window)
        branch = ctx.git.get("branch")
        out += session_context.blocks(ctx, level=2)
    elif branch is None:
        branch = git.branch(ws.root)
    out += _knows(ws)
    task = work.active_task(ws)
    out.append(Block("Active task", 2, [f"{task['task']}: {task['title']}"
                                        + (f" (scope {task['scope']})" if task.get("scope") else "")
                                        if task else "none: `majordomus start \"TITLE\"` starts one"],
                     whole=ALL_OF_IT))
    questions = work.open_questions(ws)
    out.append(Block(f"Open questions ({len(questions)})", 2, [],
                     [f"- {q['question']}: {q['text']}" for q in questions],
                     "none: `majordomus question add \"TEXT\"` asks one", "open questions",
                     "majordomus question list"))
    out += _candidates(ws, branch, found.opened_branches)
    hand = found.handover
    out.append(Block("Last handover", 2, [
        f"Next Action: {hand['next']} ({hand['ts']}, episode {hand['episode'] or '-'})" if hand else
        "none: `majordomus handover --next \"…\"` records one"], whole=ALL_OF_IT))
    return out


TRIMMED = ("\n(trimmed to stay under 10,000 characters, the most Claude Code passes on from a hook: "
           f"each cut list above names the command that shows it all; `{ALL_OF_IT}` shows the "
           "repository context whole)\n")


def compose(ws: Workspace, episode: str, source: str = "startup", branch: str | None = None) -> str:
    """The briefing text: never over CEILING characters, whatever the budget."""
    budget = int(ws.policy["session.briefing_budget_lines"])
    text, ceiling_cut = fit(sections(ws, episode, source, branch), budget, CEILING)
    return capped(text + TRIMMED if ceiling_cut else text)


def client_chars(text: str) -> int:
    """`text`'s length as Claude Code counts it: a JavaScript string's, in UTF-16 code units (a
    character outside the Basic Multilingual Plane, an emoji, counts twice)."""
    return len(text) + sum(1 for char in text if ord(char) > 0xFFFF)


def capped(text: str, ceiling: int = CEILING) -> str:
    """The final briefing (what the hook prints, or wraps as JSON context), at most `ceiling`
    characters as the client counts them, the closing note included: whole lines are dropped from
    the end until the text and the note fit. Applied last, to exactly the text the client reads."""
    if client_chars(text) <= ceiling:
        return text
    body = text[: -len(TRIMMED)] if text.endswith(TRIMMED) else text
    room = ceiling - client_chars(TRIMMED)
    lines = body.splitlines(keepends=True)
    used = 0
    kept: list[str] = []
    for line in lines:
        size = client_chars(line)
        if used + size > room:
            break
        kept.append(line)
        used += size
    return "".join(kept) + TRIMMED
