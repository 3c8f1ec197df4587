"""The working context of an episode, composed when it is read (seed 004).

Three sources, each of which can be checked: the episode's open record (or, once it closed, its
`session.opened` and `session.closed` lines); git now against git at the open; and the episode's
ledger window. It covers the whole episode: every span (a resumed episode has several), git since
its first open, and everything the window holds. Nothing is cached and nothing is fabricated: a section with no record says so and
names the command that fills it. The repository's context is `majordomus context`'s to resolve;
this refers to it and does not re-resolve it.
"""
from __future__ import annotations


from majordomus.base.lean import TYPE_CHECKING
from majordomus.base import git
from majordomus.base.errors import UNKNOWN, FatalError
from majordomus.context import snapshot
from majordomus.context.blocks import Block
from majordomus.context.blocks import render as render_blocks
from majordomus.evidence import episodes
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any

REPOSITORY_CONTEXT = "majordomus context"
# section -> (the command that fills it, what the empty line says)
FILLED_BY = {
    "checkpoints": ("majordomus checkpoint", "no checkpoint recorded in this episode: "
                    "`majordomus checkpoint --note \"…\"` records one"),
    "decisions": ("majordomus decision add", "no decision recorded in this episode: "
                  "`majordomus decision add \"TEXT\" --why \"…\"` records one"),
    "questions": ("majordomus question add", "no question asked or resolved in this episode: "
                  "`majordomus question add \"TEXT\"` asks one"),
    "tasks": ("majordomus start", "no task started or finished in this episode: "
              "`majordomus start \"TITLE\"` starts one"),
}


class SessionContext:
    """One episode's working context, composed when read."""

    __slots__ = ("episode", "state", "opened", "closed", "git", "window_lines", "sections", "spans")

    def __init__(self, episode: str, state: str, opened: dict[str, Any], closed: dict[str, Any] | None,
                 git: dict[str, Any], window_lines: int,
                 sections: dict[str, list[dict[str, Any]]] | None = None,
                 spans: list[dict[str, Any]] | None = None) -> None:
        self.episode, self.state = episode, state  # state: open | closed
        self.opened, self.closed, self.git, self.window_lines = opened, closed, git, window_lines
        self.sections = sections if sections is not None else {}
        self.spans = spans if spans is not None else []

    def as_json(self) -> dict[str, Any]:
        return {"episode": self.episode, "state": self.state, "opened": self.opened,
                "closed": self.closed, "spans": self.spans, "git": self.git,
                "window_lines": self.window_lines,
                **self.sections,
                "empty": {name: FILLED_BY[name][0] for name in FILLED_BY if not self.sections[name]},
                "repository_context": REPOSITORY_CONTEXT}


def no_open_episode() -> FatalError:
    return FatalError("no open episode: `majordomus session start` opens one (Claude Code's start hook "
                      "does it for you); `majordomus session context --episode ID` reads a closed one",
                      UNKNOWN)


def _span(window: list[Line]) -> list[Line]:
    """The window from the episode's last opening: an id opened twice reads its newest span."""
    starts = [i for i, line in enumerate(window) if line.event == "session.opened"]
    return window[starts[-1]:] if starts else window


def opening(ws: Workspace, episode: str, window: list[Line]) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
    """(state, opened, closed) of the span `window` holds: from the open record while it is
    open, else from the window."""

    record = episodes.open_record(ws, episode)
    if record is not None:
        return "open", {k: record.get(k) for k in ("opened", "source", "by", "branch", "head")}, None
    opened_line = next((l for l in window if l.event == "session.opened"), None)
    closed_line = next((l for l in reversed(window) if l.event == "session.closed"), None)
    if opened_line is None and closed_line is None:
        raise FatalError(f"episode {episode!r} is neither open nor in the ledger: "
                         "`majordomus history --event session.opened` lists the episodes", UNKNOWN)
    opened = ({"opened": opened_line.ts, **{k: opened_line.get(k) for k in ("source", "by", "branch", "head")}}
              if opened_line else {"opened": None, "source": None, "by": None, "branch": None, "head": None})
    closed = ({"closed": closed_line.ts, **{k: closed_line.get(k) for k in ("reason", "by", "branch", "head")}}
              if closed_line else None)
    return ("closed" if closed else "open"), opened, closed


def snapshot_path(ws: Workspace, episode: str) -> Any:
    """The opening snapshot of `episode`: written once at its open, never changed."""

    window = _span(ws.ledger.window(episode))
    _, opened, _ = opening(ws, episode, window)
    record = episodes.open_record(ws, episode)
    span = (record or {}).get("span") if record else next(
        (l.get("span") for l in window if l.event == "session.opened"), None)
    path = snapshot.path_for(ws, episode, opened["opened"], span) if opened.get("opened") else None
    if path is None or not path.is_file():
        raise FatalError(f"episode {episode} has no opening snapshot"
                         + (f" ({ws.rel(path)} is missing)" if path else "")
                         + ": it is written when an episode opens; `majordomus session context` "
                         "composes the working context without it", UNKNOWN)
    return path


def git_since(ws: Workspace, head_at_open: str | None, head_at_close: str | None = None,
              closed: bool = False) -> dict[str, Any]:
    """Branch, head, commits, files and dirtiness now (or at the close) against the open."""

    until = head_at_close if closed else "HEAD"
    log = ("log", "-z", "--format=%x1e%H%x09%s", "--name-only")
    commands: list[tuple[str, ...]] = []
    if until:
        commands.append((*log, f"{head_at_open}..{until}" if head_at_open else until, "--"))
    if not closed:
        commands.append(("status", "--porcelain=v2", "--branch", "--untracked-files=normal"))
    results = git.run_many(ws.root, *commands)
    info: dict[str, Any] = {"branch": None, "head": head_at_close if closed else None, "commits": [],
                            "files": [], "dirty": None, "dirty_paths": [], "error": None}
    if not closed:
        code, out = results[-1]
        for row in out.splitlines():
            if row.startswith("# branch.oid "):
                oid = row.split()[-1]
                info["head"] = None if oid == "(initial)" else oid
            elif row.startswith("# branch.head "):
                name = row[len("# branch.head "):]
                info["branch"] = None if name == "(detached)" else name
            elif row and not row.startswith("#"):
                info["dirty_paths"].append(_status_entry(row))
        info["dirty"] = bool(info["dirty_paths"]) if code == 0 else None
    if until and results:
        code, out = results[0]
        if code != 0:
            info["error"] = (f"head at the open {head_at_open} is not in this repository any more"
                             if head_at_open else None)
        files: set[str] = set()
        for chunk in out.split("\x1e")[1:]:
            first, _, rest = chunk.partition("\0")
            sha, _, subject = first.partition("\t")
            touched = [p for p in rest.removeprefix("\n").split("\0") if p]
            files.update(touched)
            info["commits"].append({"sha": sha, "subject": subject, "files": touched})
        info["files"] = sorted(files)
    return info


def _status_entry(row: str) -> str:
    """`XY path` from one porcelain v2 row."""
    kind = row[0]
    if kind in "?!":
        return f"{kind * 2} {row[2:]}"
    parts = row.split(" ", {"1": 8, "2": 9, "u": 10}.get(kind, 1))
    path = parts[-1].split("\t")[0]
    return f"{parts[1].replace('.', ' ')} {path}"


def authored(window: list[Line]) -> dict[str, list[dict[str, Any]]]:
    """Checkpoints, decisions, questions and tasks, read back out of the window."""
    checkpoints, decisions = [], []
    questions: dict[str, dict[str, Any]] = {}
    tasks: dict[str, dict[str, Any]] = {}
    for l in window:
        if l.event == "checkpoint.recorded":
            checkpoints.append({"ts": l.ts, "note": l.get("note"), "task": l.get("task"), "head": l.get("head")})
        elif l.event == "decision.recorded":
            decisions.append({"ts": l.ts, "task": l.get("task"), "text": l.get("text"), "why": l.get("why")})
        elif l.event in ("question.opened", "question.resolved"):
            qid = l.get("question") if isinstance(l.get("question"), str) and l.get("question") else None
            entry = questions.setdefault(qid or f"#{l.number}", {"question": qid, "text": l.get("text"), "task": l.get("task"),
                                               "asked": None, "state": "open", "answer": None})
            if l.event == "question.opened":
                entry["asked"] = l.ts
            else:
                entry.update(state="resolved", answer=l.get("answer"), resolved=l.ts)
        elif l.event in ("task.started", "task.finished"):
            tid = l.get("task") if isinstance(l.get("task"), str) and l.get("task") else None
            entry = tasks.setdefault(tid or f"#{l.number}", {"task": tid, "title": l.get("title"), "scope": l.get("scope"),
                                           "started": None, "state": "active", "outcome": None})
            if l.event == "task.started":
                entry["started"] = l.ts
            else:
                entry.update(state="finished", outcome=l.get("outcome"), finished=l.ts,
                             verify=l.get("verify"))
        elif l.event == "verification.failed":  # the task stays active: the interesting event
            tid = l.get("task") if isinstance(l.get("task"), str) and l.get("task") else None
            entry = tasks.setdefault(tid or f"#{l.number}", {"task": tid, "title": l.get("title"), "scope": None,
                                           "started": None, "state": "active", "outcome": None})
            entry.setdefault("failed", []).append({"ts": l.ts, "command": l.get("command"), "code": l.get("code"),
                                                   "timed_out": l.get("timed_out")})
    return {"checkpoints": checkpoints, "decisions": decisions,
            "questions": list(questions.values()), "tasks": list(tasks.values())}


def span_list(ws: Workspace, episode: str, window: list[Line]) -> list[dict[str, Any]]:
    """Every span of the episode, first to last: its opening and, once it closed, its close."""
    record = episodes.open_record(ws, episode)
    found = episodes.spans(window)
    out = []
    for index, span in enumerate(found):
        o, c = span.opened, span.closed
        entry: dict[str, Any] = {"span": index + 1, "opened": o.ts if o else None,
                                 **{k: o.get(k) if o else None for k in ("source", "by", "branch", "head")},
                                 "closed": None}
        if c is not None:
            entry["closed"] = {"closed": c.ts, **{k: c.get(k) for k in ("reason", "by", "branch", "head")}}
        elif o is None and record is not None and index == len(found) - 1:
            entry.update({k: record.get(k) for k in ("opened", "source", "by", "branch", "head")})
        out.append(entry)
    return out


def compose(ws: Workspace, episode: str, window: list[Line] | None = None) -> SessionContext:
    """The working context of `episode`, now, over the whole episode (every span).
    `window`: its ledger lines, when already read."""
    window = ws.ledger.window(episode) if window is None else window
    state, newest, closed = opening(ws, episode, _span(window))
    spans = span_list(ws, episode, window)
    opened = newest
    if len(spans) > 1 and spans[0]["opened"] is not None:  # the episode's first open, not the newest span's
        opened = {k: spans[0][k] for k in ("opened", "source", "by", "branch", "head")}
    info = git_since(ws, opened.get("head"), (closed or {}).get("head"), closed=closed is not None)
    if closed is not None:
        info["branch"] = closed.get("branch")
    # the derivation's own candidate files are not the worker's uncommitted work: counted apart
    under = ws.rel(ws.candidates).rstrip("/") + "/"
    info["derived_paths"] = [p for p in info["dirty_paths"] if p[3:].startswith(under)]
    info["dirty_paths"] = [p for p in info["dirty_paths"] if not p[3:].startswith(under)]
    if info["dirty"] is not None:
        info["dirty"] = bool(info["dirty_paths"])
    return SessionContext(episode, state, opened, closed, info, len(window), authored(window), spans)


def _short(sha: Any) -> str:
    return sha[:12] if isinstance(sha, str) and sha else "(no commit)"


def _task(entry: dict[str, Any]) -> str:
    return f" [task {entry['task']}]" if isinstance(entry.get("task"), str) and entry["task"] else ""


def _said(value: Any, absent: str) -> str:
    """A stored value as text, or what `absent` says when the line has none (never `None`)."""
    return value if isinstance(value, str) and value else absent


def blocks(ctx: SessionContext, level: int = 1) -> list[Block]:
    """The context as text blocks; `level` is the title's heading level (sections one deeper)."""
    sub = level + 1
    o, c, g = ctx.opened, ctx.closed, ctx.git
    title = Block(f"Working context of episode {ctx.episode} ({ctx.state})", level, [
        "Composed now from the episode's open record, git and its ledger window; nothing here is "
        "cached. The repository's context (policy, rules, knowledge, active task, open questions, "
        f"last handover, outbox) is `{REPOSITORY_CONTEXT}`."] if level == 1 else [])
    episode = [f"- opened {o.get('opened') or '(its session.opened line is no longer in the ledger)'}"
               f" ({o.get('source') or '-'}, by {o.get('by') or '-'})"
               f" on {o.get('branch') or 'a detached head'} at {_short(o.get('head'))}"]
    if len(ctx.spans) > 1:
        episode[0] = episode[0].replace("- opened", "- first opened", 1)
        for span in ctx.spans:
            close = span["closed"]
            episode.append(f"  - span {span['span']}: opened {span['opened'] or '(line no longer in the ledger)'}"
                           f" ({span.get('source') or '-'}) at {_short(span.get('head'))}, "
                           + (f"closed {close['closed']} ({close.get('reason') or '-'})" if close else "open"))
    if c:
        episode.append(f"- closed {c['closed']} ({c.get('reason') or '-'}, by {c.get('by') or '-'})"
                       f" on {c.get('branch') or 'a detached head'} at {_short(c.get('head'))}")
    episode.append(f"- ledger window: {ctx.window_lines} line{'s' if ctx.window_lines != 1 else ''} "
                   f"(`majordomus history --episode {ctx.episode}` prints them)")
    when = "at the close" if c else "now"
    branch = g.get("branch") or "a detached head"
    moved = g.get("branch") != o.get("branch")
    head = (f"{_short(o.get('head'))} (unchanged)" if g.get("head") == o.get("head")
            else f"{_short(o.get('head'))} -> {_short(g.get('head'))}")
    gitlines = [f"- branch {when}: {branch}" + (f" (opened on {o.get('branch') or 'a detached head'})"
                                                  if moved else " (as at the open)"),
                f"- head: {head}"]
    if g.get("error"):
        gitlines.append(f"- {g['error']}: commits and files since the open cannot be listed")
    out = [title, Block("Episode", sub, episode), Block(f"Git since the open ({when})", sub, gitlines),
           Block(None, sub, [f"- commits since the open: {len(g['commits'])}"],
                 [f"  - {_short(x['sha'])} {x['subject']}" for x in g["commits"]],
                 what="commits", more=f"git log {o.get('head') or 'HEAD'}..", indent="  "),
           Block(None, sub, [f"- files changed since the open: {len(g['files'])}"],
                 [f"  - {p}" for p in g["files"]], what="files", indent="  ",
                 more=f"git diff --stat {o.get('head')}" if o.get("head") else "git log --stat")]
    if not c:
        dirty = g.get("dirty")
        derived = len(g.get("derived_paths") or [])
        out.append(Block(None, sub, ["- working tree: " + ("unknown (git status failed)" if dirty is None else
                                                          f"dirty, {len(g['dirty_paths'])} path{'s' if len(g['dirty_paths']) != 1 else ''}" if dirty else
                                                          "clean")
                                     + (f" (and {derived} candidate file{'s' if derived != 1 else ''} the derivation "
                                        "wrote: `majordomus knowledge candidates`)" if derived else "")],
                         [f"  - {p}" for p in g["dirty_paths"]], what="paths", more="git status",
                         indent="  "))
    s = ctx.sections
    more = f"majordomus history --episode {ctx.episode}"
    out.append(Block(f"Checkpoints ({len(s['checkpoints'])})", sub, [],
                     [f"- {x['ts']}{_task(x)} at {_short(x.get('head'))}: {_said(x.get('note'), '(no note)')}"
                      for x in s["checkpoints"]], FILLED_BY["checkpoints"][1], "checkpoints", more))
    out.append(Block(f"Decisions ({len(s['decisions'])})", sub, [],
                     [f"- {x['ts']}{_task(x)}: {_said(x['text'], '(no text recorded)')}"
                      + (f" (why: {x['why']})" if isinstance(x.get("why"), str) and x["why"] else "")
                      for x in s["decisions"]], FILLED_BY["decisions"][1], "decisions", more))
    out.append(Block(f"Questions ({len(s['questions'])})", sub, [],
                     [f"- {_said(x['question'], '(no id)')} ({x['state']}){_task(x)}: "
                      f"{_said(x['text'], '(no text recorded)')}"
                      + (f" -> {x['answer']}" if isinstance(x.get("answer"), str) and x["answer"] else "")
                      for x in s["questions"]],
                     FILLED_BY["questions"][1], "questions", more))
    out.append(Block(f"Tasks ({len(s['tasks'])})", sub, [],
                     [f"- {_said(x['task'], '(no id)')} ({_said(x['outcome'], x['state'])}): "
                      f"{_said(x.get('title'), '(started before this episode)')}"
                      + (f" (verified by `{x['verify']}`)" if isinstance(x.get("verify"), str) and x["verify"] else "")
                      + _failures(x)
                      for x in s["tasks"]],
                     FILLED_BY["tasks"][1], "tasks", more))
    return out


def _failures(entry: dict[str, Any]) -> str:
    """A task's failed verifications, the newest named: what the next attempt starts from."""
    failed = entry.get("failed") or []
    if not failed:
        return ""
    last = failed[-1]
    how = (f"stopped after {last['timed_out']:g} s" if isinstance(last.get("timed_out"), (int, float))
           else f"exited {last.get('code')}")
    times = f"{len(failed)} failed verifications, the last" if len(failed) > 1 else "verification failed"
    return f"; {times}: `{_said(last.get('command'), '?')}` {how} at {last['ts']}"


def render(ctx: SessionContext) -> str:
    """The whole working context as Markdown, nothing cut."""

    return render_blocks(blocks(ctx))


def last_handover(lines: list[Line]) -> dict[str, Any] | None:
    """The newest `handover.recorded` among `lines` that names a next action, as data."""
    for line in reversed(lines):
        if line.event == "handover.recorded" and isinstance(line.get("next"), str) and line.get("next").strip():
            return {"next": line.get("next"), "ts": line.ts, "episode": line.session, "task": line.get("task")}
    return None
