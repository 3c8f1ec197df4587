"""The cockpit's pages of what a record's evidence names, so that every reference on a review page
is a link that answers: `/cockpit/evidence/session/<episode>` (the episode's published session
record), `/cockpit/evidence/task/<task>` (what the ledger says of the task: its title, its
decisions, how it finished) and `/cockpit/evidence/commit/<sha>` (the commit's message and the
paths it changed). Read-only; an id is checked before it names a file, a sha before git sees it."""
from __future__ import annotations

import json
from typing import Any

from majordomus.base import git
from majordomus.base.errors import FatalError, unknown
from majordomus.base.ids import check_id
from majordomus.evidence import episodes
from majordomus.readers import markdown
from majordomus.readers.pages import document, e, short
from majordomus.store.workspace import Workspace

PREFIX = "/cockpit/evidence/"
HOME: list[tuple[str, str | None]] = [("review queue", "/")]
TASK_EVENTS = ("task.started", "task.finished", "decision.recorded", "question.asked", "question.resolved")


def owns(path: str) -> bool:
    return path.startswith(PREFIX)


def session_page(ws: Workspace, episode: str) -> str:
    check_id(episode, "episode")
    found = episodes.record_file(ws, episode)
    if found is None:
        raise unknown(f"no session record for episode {episode!r}: it is written when the episode ends")
    path, text = found
    body = (f"<h1>Episode {e(episode)}</h1><p class=\"meta\">its session record, {e(ws.rel(path))}</p>"
            f'<div class="body">{markdown.render(text, shift=1)}</div>')
    return document(f"episode {episode}", body, [*HOME, (f"episode {episode}", None)])


def _said(line: Any) -> str:
    for key in ("title", "text", "answer", "reason", "outcome"):
        value = line.get(key)
        if isinstance(value, str) and value:
            extra = line.get("why") if key == "text" and isinstance(line.get("why"), str) else None
            return e(value) + (f" <span class=\"ref\">— {e(extra)}</span>" if extra else "")
    return ""


def task_page(ws: Workspace, task: str) -> str:
    check_id(task, "task")
    lines = [line for line in ws.ledger.matching(json.dumps(task, ensure_ascii=False))
             if line.event in TASK_EVENTS and line.get("task") == task]
    if not lines:
        raise unknown(f"no ledger line here names task {task!r}")
    title = next((str(line.get("title")) for line in lines if line.event == "task.started" and line.get("title")),
                 f"task {task}")
    items = "".join(f"<li><span class=\"ref\">{e(line.ts)} · {e(line.event)}</span> {_said(line)}</li>"
                    for line in lines)
    body = (f"<h1>{e(title)}</h1><p class=\"meta\">task <code>{e(task)}</code>, as the ledger of this "
            f"checkout records it</p><ul class=\"lines\">{items}</ul>")
    return document(title, body, [*HOME, (f"task {task}", None)])


def commit_page(ws: Workspace, sha: str) -> str:
    found = git.commit(ws.root, sha)
    if found is None:
        raise unknown(f"no commit {sha[:64]!r} in this repository")
    subject, _, rest = found["message"].partition("\n")
    paths = "".join(f"<li><code>{e(p)}</code></li>" for p in found["paths"])
    body = (f"<h1>{e(subject)}</h1><p class=\"meta\">commit {short(found['sha'])} · {e(found['author'])} · "
            f"{e(found['date'])}</p>" + (f"<pre>{e(rest.strip())}</pre>" if rest.strip() else "")
            + (f"<h2>Paths changed ({len(found['paths'])})</h2><ul class=\"lines\">{paths}</ul>" if paths else ""))
    return document(subject, body, [*HOME, (f"commit {found['sha'][:12]}", None)])


PAGES = {"session": session_page, "task": task_page, "commit": commit_page}


def page(ws: Workspace, path: str) -> str:
    """The evidence page at `path` (under PREFIX); FatalError when there is none."""
    kind, _, target = path[len(PREFIX):].partition("/")
    render = PAGES.get(kind)
    if render is None or not target or "/" in target:
        raise unknown(f"no page at {path!r}: the evidence pages are {', '.join(PREFIX + k + '/…' for k in PAGES)}")
    try:
        return render(ws, target)
    except git.GitError as exc:
        raise FatalError(str(exc)) from exc
