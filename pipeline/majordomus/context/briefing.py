"""The start briefing: what the session-start hook prints for the agent to read.

Sections, most important first, so that whatever a client cuts is the least of it: what the
repository knows (its verified records, constraints first); the active task; open questions;
candidates awaiting review on this branch, newest first; the last handover. A policy file with a
bad key or that cannot be read adds one line under the heading (defaults stand in). For a `compact` start
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

import os
import time
from collections import Counter
from collections.abc import Callable
from itertools import islice
from operator import attrgetter
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base import git
from majordomus.context import working as session_context
from majordomus.context.blocks import CEILING, Block, Lines, clip, client_chars, fit, heading, single
from majordomus.context.working import last_handover
from majordomus.derive.text import same_finding
from majordomus.evidence import work
from majordomus.knowledge import known
from majordomus.knowledge import queue as candidates
from majordomus.store import filecache
from majordomus.store import index as store_index
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any

if TYPE_CHECKING:
    from majordomus.knowledge.verdict import Currency

ALL_OF_IT = "majordomus context"
TITLE_CHARS = 160  # one record's title in a list line, at most
REASON_CHARS = 140  # a verified record's reason beside its title, at most
ALL_VERIFIED = "majordomus knowledge search --status verified"
# what the agent needs the first time, in one line: where more is, and how work is recorded
RECORDING = ("Recorded as the work goes: `majordomus decision add \"TEXT\" --why \"…\"`, `majordomus question "
             "add|resolve`, `majordomus finish --verify CMD` (or `--outcome blocked|failed|no_match --reason "
             "\"…\"`); `majordomus session context` is this episode so far.")
STALE = "majordomus knowledge stale"


Changed = Callable[[], frozenset[str]]  # the paths changed, asked of git when a record relates to one


class Seen:
    """What a composition read that a prebuilt text's check must know (`context/prebuilt.py`): the
    paths the verified records relate to (a changed path among them reorders them), the episodes
    the candidates name (the episode at work places its own), whether a record's currency was
    unknown to this clone (a fetch may make it known), whether `.ai/local/` was foreign, whether
    the character ceiling cut the text."""

    __slots__ = ("targets", "episodes", "volatile", "foreign", "cut")

    def __init__(self) -> None:
        self.targets: set[str] = set()
        self.episodes: set[str] = set()
        self.volatile = False
        self.foreign = False
        self.cut = False


class Scan:
    """What the briefing needs from the ledger."""

    __slots__ = ("handover", "opened_branches", "window", "done")

    def __init__(self, handover: dict[str, Any] | None = None,
                 opened_branches: dict[str, str | None] | None = None,
                 window: list[Line] | None = None, done: list[Line] | None = None) -> None:
        self.handover = handover
        # each episode's branch at its open, when the caller has them (else the queue asks the index)
        self.opened_branches = opened_branches
        self.window = window if window is not None else []
        self.done = done if done is not None else []  # tasks finished after the handover


def scan(ws: Workspace, episode: str | None = None) -> Scan:
    """The last handover, the tasks finished since it, and (when `episode` is given) that
    episode's window, through the ledger's index: the lines read are those, not the ledger."""
    handover = ws.ledger.last_handover()
    return Scan(last_handover([handover]) if handover is not None else None,
                window=ws.ledger.window(episode) if episode else [],
                done=ws.ledger.since_handover('"task.finished"') if handover is not None else [])


def _title(text: str) -> str:
    return clip(text or "(untitled)", TITLE_CHARS)


def _knows(ws: Workspace, changed: Changed | None = None, seen: Seen | None = None) -> list[Block]:
    """The verified records, one line each with the reason they hold, in the order an agent should
    meet them: the current ones (and those whose currency this clone cannot tell, marked) first,
    then those that may be stale or are disputed, each marked with what changed and the command that
    re-verifies it. No id on a current record: no act of the agent's needs one (search finds a
    record whole); a stale one names its id in the command that re-verifies it."""
    records = known.verified(ws.curated, ws)
    paths = frozenset() if not any(r.paths for r in records) else \
        git.changed_paths(ws.root) if changed is None else changed()
    states: dict[str, Currency] = {}
    problem = ""
    try:
        if records:  # git is asked only when one has anchors; a dispute may name any of them
            from majordomus.knowledge import currency

            states = currency.of(ws, records)
    except Exception as exc:  # noqa: BLE001 - the records are still worth reading; say why unmarked
        states, problem = {}, f"(whether they are current could not be judged: {single(str(exc))})"
    if seen is not None:
        seen.targets.update(p for r in records for p in r.paths)
        seen.volatile = seen.volatile or bool(problem) or any(
            states[r.id].state == "unknown" for r in records if r.verified_at and r.id in states)
    fresh: list[tuple[known.Known, Currency | None]] = []
    stale: list[str] = []
    # No list shows more lines than the budget: the records past it are counted by its cut line,
    # so their lines (a few string operations each, thousands in a large store) are not made: the
    # stale ones past it are kept as their ids, the current ones are made as they are read (`Lines`).
    said = int(ws.policy["session.briefing_budget_lines"]) + 1
    for r in known.ordered(records, paths):
        state = states.get(r.id)
        if state is not None and (state.stale or state.dispute is not None):
            stale.append(f"- {r.cls}: {_title(r.title)}{_because(r)} — {state.reason}; re-verify: "
                         f"`majordomus knowledge reverify {r.id} < evidence`" if len(stale) < said else r.id)
        else:
            fresh.append((r, state))
    count = f"{len(records)} verified record{'s' if len(records) != 1 else ''}"
    lines = [problem] if problem else []
    if stale:
        count += f", {len(stale)} of them may be stale or disputed, listed last"
        lines.append("An unmarked record is current: none of the files it is about changed since a person "
                     "verified it. Those marked \"may be stale\" or \"disputed\" follow, each with what changed "
                     "and the command that re-verifies it.")
    return [Block(f"What this repository knows ({count})", 2, lines, Lines(fresh, _current), None, "verified records",
                  ALL_VERIFIED, whole="majordomus knowledge search \"TITLE\""),
            Block(None, 2, [], stale, what="records that may be stale or are disputed", more=STALE,
                  whole="majordomus knowledge record ID")]


def _because(r: known.Known) -> str:
    return f" (because {clip(r.reason, REASON_CHARS)})" if r.reason else ""


def _current(row: tuple[known.Known, Currency | None]) -> str:
    """A record's line among the current ones (and those whose currency this clone cannot tell)."""
    r, state = row
    if state is not None and state.state == "unknown":
        return f"- {r.cls}: {_title(r.title)}{_because(r)} (currency {state.reason})"
    return f"- {r.cls}: {_title(r.title)}{_because(r)}"


def _where(branch: str | None, here: str | None) -> str:
    if branch is None:
        return "unattributed"
    return "this branch" if branch == here else f"branch {branch}"


def _candidates(ws: Workspace, branch: str | None, opened: dict[str, str | None] | None,
                episode: str | None = None, compacted: bool = False, seen: Seen | None = None) -> list[Block]:
    """The review queue as it is in this tree (the candidates folder and the outbox), newest
    evidence first, counted by where each one's work was; an unattributed candidate is named on
    its own line, outside the line budget, because somebody still has to review it. `episode`:
    the episode at work (its work is on this branch); `compacted`: its own records are in the
    working context above, so they are counted, not listed again."""
    at_work = (episode, branch) if episode is not None else None
    # counted, placed and ordered from the index's columns; the lines shown read their records
    briefed = candidates.briefed(ws, ledger_branches=opened, current=at_work)
    queue: list[Any] = briefed if briefed is not None else \
        candidates.waiting(ws, ledger_branches=opened, current=at_work)
    # an empty outbox (a branch's, or a trunk's once drained) is not read: the queue's read loads
    # its branch cache, which costs more than the listing that tells it holds nothing
    staged = candidates.waiting(ws, folder=ws.outbox / "candidates", ledger_branches=opened, current=at_work) \
        if _holds_any(ws.outbox / "candidates") else []
    outboxed = {c.id for c in staged}
    if seen is not None:
        seen.episodes.update(c.episode for c in queue + staged if c.episode)
    if staged:  # the queue's ids gathered once, not again for each staged candidate (8,000 of them at 1M)
        listed = {q.id for q in queue}
        queue = queue + [c for c in staged if c.id not in listed]
    queue = candidates.by_time(queue, newest_first=True)
    own = [c for c in queue if compacted and c.episode == episode]
    shown = [c for c in queue if not (compacted and c.episode == episode)] if own else queue
    placed = [c for c in shown if c.branch is not None]
    unplaced = [c for c in shown if c.branch is None]
    where = branch or "this detached head"
    if not queue:
        return []
    groups: dict[str, int] = {}
    for placed_on, n in Counter(map(_BRANCH, queue)).items():  # counted in C, then named
        groups[_where(placed_on, branch)] = groups.get(_where(placed_on, branch), 0) + n
    parts = [f"{n} from {w}" if w != "unattributed" else f"{n} unattributed"
             for w, n in sorted(groups.items(), key=lambda kv: (kv[0] != "this branch", kv[0] == "unattributed", kv[0]))]
    detail = "" if list(groups) == ["this branch"] else f" ({', '.join(parts)})"
    count = (f"{len(queue)} candidate{'s' if len(queue) != 1 else ''} await{'s' if len(queue) == 1 else ''}"
             f" review on {where}{detail}, newest first; a person promotes or rejects each "
             "(`majordomus knowledge candidates` lists them)")
    if own:
        count += f"; {len(own)} of them this episode's own, recorded above"
    more = "majordomus knowledge candidates"

    def line(c: Any, made: Any = None) -> str:
        return f"- {_title((made or candidates.whole(ws, c)).title)} ({c.id}{suffix(c)})"

    def lines(shown: Any) -> list[str]:  # the shown entries' front matter from the index at once
        return [line(c, made) for c, made in zip(shown, candidates.wholes(ws, shown))]

    def suffix(c: Any) -> str:
        notes = [] if c.branch == branch else [f"from {_where(c.branch, branch)}"]
        if c.id in outboxed:
            notes.append("in the outbox")
        return f"; {', '.join(notes)}" if notes else ""

    return [Block("Candidates awaiting review", 2, [count],
                  Lines(placed, line, lines), what="candidates",
                  more=more),
            Block(None, 2, [], [f"- {_title(candidates.whole(ws, c).title)} ({c.id}; unattributed: "
                                + (f"this checkout cannot place its episode {c.episode})" if c.episode
                                   else "it names no episode)") for c in unplaced],
                  what="unattributed candidates", more=more, budgeted=False)]


_BRANCH = attrgetter("branch")


def _holds_any(folder: Path) -> bool:
    """Whether `folder` is a folder with any entry in it."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is not None
    except OSError:  # not there, or not a folder
        return False


def folders(ws: Workspace) -> tuple[Path, ...]:
    """The record folders a composition reads through the knowledge index."""
    return ws.curated, ws.candidates, ws.outbox / "candidates"


def warm(ws: Workspace, running: Callable[[float], bool] | None = None) -> None:
    """Bring the knowledge index up to date with the record folders a composition reads (a
    boundary's own writes make it scan a folder again), while git answers the boundary's status:
    the composition then finds each folder's rows current by one `lstat`, and scans again only
    what changed since. The index is a cache checked by each reader: warming it reads nothing the
    briefing shows. A folder changed too recently to vouch for itself, or one small enough that
    the index checks its files at every read (`SCAN_BELOW`), is left to the composition (a scan
    of it now would be repeated then). `running` (git's `Running.running_after`): a folder that
    settles within the sub-second window (the derivation has just written to it) is waited for
    while git still works, then scanned, rather than scanned by the composition after git."""
    index = store_index.of(ws)
    for folder in folders(ws):
        if not filecache.stamp(folder) and running is not None:
            left = filecache.settles_in(folder)
            if left and _at_least(folder, store_index.SCAN_BELOW) and running(left):
                time.sleep(max(0.0, filecache.settles_in(folder) or 0.0))  # the clock's last tick
        if filecache.stamp(folder) and _at_least(folder, store_index.SCAN_BELOW):
            index.check(folder)


def _at_least(folder: Path, count: int) -> bool:
    """Whether `folder` has `count` entries or more (counted up to `count`, not all listed)."""
    try:
        with os.scandir(folder) as entries:
            return sum(1 for _ in islice(entries, count)) >= count
    except OSError:  # gone meanwhile: nothing to warm
        return False


def current_handover(found: Scan) -> dict[str, Any] | None:
    """The last handover, unless later work did what it asked: a task finished completed after
    it whose title says what its Next Action says."""
    hand = found.handover
    if hand is None:
        return None
    for line in found.done:
        title = line.get("title")
        if line.event == "task.finished" and line.get("outcome") == "completed" and isinstance(title, str) \
                and line.ts >= hand["ts"] and same_finding(title, hand["next"]):
            return None
    return hand


def _task_line(task: dict[str, Any]) -> str:
    line = str(task["title"]) + (f" (scope {task['scope']})" if task.get("scope") else "")
    failed = task.get("verify_failed")
    if isinstance(failed, dict) and isinstance(failed.get("command"), str):
        line += (f"; its last verification failed: `{failed['command']}` exited {failed.get('code')}"
                 f" at {failed.get('ts')}")
    return line


def sections(ws: Workspace, episode: str, source: str, branch: str | None = None,
             found: Scan | None = None, changed: Changed | None = None,
             seen: Seen | None = None) -> list[Block]:
    """The briefing's blocks, unbounded. A section with nothing in it is one word of the closing
    "Nothing yet" line, not a heading of its own. `changed`: the paths this branch and the working
    tree changed, as the caller asks git for them (else asked here), called only when a record
    relates to a path;
    `seen` collects what a prebuilt text's check needs."""

    foreign = ws.foreign_local()  # .ai/local tracked by git: its task, questions, handover are not ours
    if seen is not None:
        seen.foreign = bool(foreign)
    found = found or scan(ws, episode if source == "compact" and not foreign else None)
    head = [RECORDING]
    broken = ws.policy.summary(ws.rel(ws.policy_path))
    if broken:  # one line; the rest of the briefing stands, on defaults
        head.append(f"Policy: {broken}.")
    out = [Block(heading(episode, source), 1, head)]
    if foreign:
        out.append(Block("Local state not read", 2, [foreign]))
    task = None if foreign else work.active_task(ws)
    questions = [] if foreign else work.open_questions(ws)
    if source == "compact" and not foreign:
        ctx = session_context.compose(ws, episode, window=found.window)
        branch = ctx.git.get("branch")
        # what the sections below show is not repeated: the active task, the open questions
        ctx.sections["tasks"] = [t for t in ctx.sections["tasks"] if not (task and t.get("task") == task["task"]
                                                                           and t.get("state") == "active")]
        open_ids = {q["question"] for q in questions}
        ctx.sections["questions"] = [q for q in ctx.sections["questions"]
                                     if not (q.get("state") == "open" and q.get("question") in open_ids)]
        out += session_context.blocks(ctx, level=2)
    elif branch is None:
        branch = git.branch(ws.root)
    empty: list[str] = []
    knows = _knows(ws, changed, seen)
    if any(b.items for b in knows):
        out += knows
    else:
        empty.append("no verified record (a person promotes a reviewed candidate)")
    if task:
        out.append(Block("Active task", 2, [_task_line(task)], whole=ALL_OF_IT))
    else:
        empty.append("no active task (`majordomus start \"TITLE\" --scope PATH`)")
    if questions:
        out.append(Block(f"Open questions ({len(questions)})", 2, [],
                         [f"- {q['question']}: {q['text']}" for q in questions],
                         None, "open questions", "majordomus question list"))
    else:
        empty.append("no open question")
    queue = _candidates(ws, branch, found.opened_branches, episode, source == "compact", seen)
    if queue:
        out += queue
    else:
        empty.append(f"no candidate awaits review on {branch or 'this detached head'}")
    hand = None if foreign else current_handover(found)
    if hand:
        out.append(Block("Last handover", 2, [f"Next Action: {hand['next']} ({hand['ts']})"], whole=ALL_OF_IT))
    else:
        empty.append("no handover to act on")
    if empty:  # right under the header: what is absent, in one line
        out.insert(1, Block(None, 2, ["", "Nothing yet: " + "; ".join(empty) + "."]))
    return out


TRIMMED = ("\n(trimmed to stay under 10,000 characters, the most Claude Code passes on from a hook: "
           f"each cut list above names the command that shows it all; `{ALL_OF_IT}` shows the "
           "repository context whole)\n")


def compose(ws: Workspace, episode: str, source: str = "startup", branch: str | None = None,
            changed: Changed | None = None, seen: Seen | None = None, status: git.Status | None = None) -> str:
    """The briefing text: never over CEILING characters, whatever the budget. `status`: git's, when
    the caller has it: the record files it names or the commits since the last one changed are
    checked by their own stamps before any is read (`Index.recheck`: an edit in place leaves a
    big folder's stamp as it was)."""
    if status is not None:
        store_index.of(ws).recheck(status.paths, status.head.sha)
    budget = int(ws.policy["session.briefing_budget_lines"])
    text, ceiling_cut = fit(sections(ws, episode, source, branch, changed=changed, seen=seen), budget, CEILING)
    if seen is not None:
        seen.cut = ceiling_cut
    return capped(text + TRIMMED if ceiling_cut else text)


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
