"""The session record, `.ai/repo/sessions/<episode>.md`: one file per episode, one entry per span.

An episode is one agent session id with one or more spans (open -> close). The first span's keys
are the record's top-level keys, as they were before spans existed; every later span is one item
of `later_spans` and one body line. A later span's close *adds* its lines to the published record
(text in, text out: nothing above is re-rendered), so the lines a commit holds never change and
`git diff` of a resumed episode's record shows additions only.

Pure text and one template: the close path (session/end.py) decides where the record lives, the
drain (outbox/staging.py) uses `extends` to tell a grown record from a conflicting one.
"""
from __future__ import annotations

import re
from typing import Any, NamedTuple

from majordomus.base import credentials
from majordomus.store import templates

TEMPLATE = "session-record.md.j2"
LATER = "later_spans:\n"
_ITEM = re.compile(r"^  - span: ", re.M)
_OPENED = re.compile(r"^(?:    )?opened: (.*)$", re.M)
_REASON = re.compile(r"^(?:    )?reason: (.*)$", re.M)


class Span(NamedTuple):
    """One span as the record states it; the values are the ledger's (ts, heads, branch)."""

    opened: str | None
    source: str | None
    branch: str | None  # at the open
    head_open: str | None
    closed: str | None
    reason: str | None
    head_close: str | None
    branch_close: str | None = None  # at the close, written when it is not the branch at the open


def render(episode: str, spans: list[Span], forked_from: str | None = None) -> str:
    """The whole record of `episode` with `spans` (at least one), first to last."""
    return _render("record", episode=episode, first=spans[0], later=spans[1:], forked_from=forked_from)


def _render(part: str, **context: Any) -> str:
    base: dict[str, Any] = {"part": part, "episode": None, "first": None, "later": [],
                            "forked_from": None, "span": None, "number": None}
    base.update(context)
    for key in ("first", "span"):
        if isinstance(base[key], Span):
            base[key] = _screened(base[key])
    base["later"] = [_screened(s) for s in base["later"]]
    return templates.render(TEMPLATE, base)


def _screened(span: Span) -> dict[str, Any]:
    """The span's values as a tracked record may carry them: the texts that come from outside (a
    branch name, a hook payload's source and close reason) withheld when they carry a
    credential. The ledger, which stays local, keeps them as they were."""
    values = span._asdict()
    for key in ("source", "branch", "branch_close", "reason"):
        values[key] = credentials.withheld(values[key])
    return values


def _split(text: str) -> tuple[str, str] | None:
    """(front matter without its fences, body) of a record, or None when it is not one."""
    if not text.startswith("---\n"):
        return None
    end = text.find("\n---\n", 3)
    if end == -1:
        return None
    return text[4:end + 1], text[end + 5:]


def span_count(text: str) -> int:
    """How many spans a record lists (0 when it is not a record)."""
    parts = _split(text)
    return 0 if parts is None else 1 + len(_ITEM.findall(parts[0]))


def openings(text: str) -> list[str]:
    """The `opened` values of the spans a record lists, first to last, as written (YAML scalars)."""
    parts = _split(text)
    return [] if parts is None else [m.group(1) for m in _OPENED.finditer(parts[0])]


def last_reason(text: str) -> str | None:
    """The close reason of the newest span a record lists, unquoted; None when there is none."""
    parts = _split(text)
    found = _REASON.findall(parts[0]) if parts else []
    return found[-1].strip().strip('"') if found else None


def add_span(text: str, episode: str, span: Span, forked_from: str | None = None,
             listed: int | None = None) -> str:
    """`text` (a published record, or "" for none) with `span` closed in it.

    `listed`: how many spans the record listed when `span` opened. A record that lists no more
    gains `span` after everything it holds; one that lists more already holds it (a close that
    was interrupted after its record and is run again): that newest span's close is replaced,
    and nothing else changes. Without `listed` (an open record written before spans counted),
    a newest span with the same opening is taken for it. A file that is not a record is replaced
    by a record of `span` alone.
    """
    parts = _split(text) if text else None
    if parts is None:
        return render(episode, [span], forked_from)
    front, body = parts
    count = 1 + len(_ITEM.findall(front))
    opened = openings(text)
    if listed is not None:
        again = count > listed
    else:
        again = bool(opened) and opened[-1] == templates.environment().filters["yaml"](span.opened)
    if again:
        if count == 1:
            return render(episode, [span], forked_from)
        front = front[:list(_ITEM.finditer(front))[-1].start()]
        lines = body.splitlines(keepends=True)
        body = "".join(lines[:-1])
        count -= 1
    number = count + 1
    if not re.search(r"^later_spans:$", front, re.M):
        front += LATER
    if body and not body.endswith("\n"):
        body += "\n"
    item = _render("item", span=span, number=number)
    line = _render("line", span=span, number=number)
    return "---\n" + front + item + "---\n" + body + line


def extends(old: str, new: str) -> bool:
    """Whether `new` is `old` with spans added and nothing of it changed: every line of `old`'s
    front matter and body is still there, in order, with only lines added after them."""
    a, b = _split(old), _split(new)
    if a is None or b is None:
        return False
    (front_a, body_a), (front_b, body_b) = a, b
    if not body_b.startswith(body_a):
        return False
    if front_b.startswith(front_a):
        return True
    # the first later span also adds the `later_spans:` key line after the first span's keys
    return not re.search(r"^later_spans:$", front_a, re.M) and front_b.startswith(front_a + LATER)
