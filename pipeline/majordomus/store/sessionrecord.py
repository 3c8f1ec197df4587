"""The session record, `.ai/repo/sessions/<episode>.md`: one file per episode, one entry per span.

An episode is one agent session id with one or more spans (open -> close). The first span's keys
are the record's top-level keys, as they were before spans existed; every later span is one item
of `later_spans` and one body line. A later span's close *adds* its lines to the published record
(text in, text out: nothing above is re-rendered), so the lines a commit holds never change and
`git diff` of a resumed episode's record shows additions only.

Pure text, composed here (the hook path: no template engine to import, as the opening snapshot
and the knowledge records' writer): every free-text scalar through `yamlio.scalar`, so a quotation
mark never cuts a record, and the body's words on one line. The close path (session/end.py)
decides where the record lives, the drain (outbox/staging.py) uses `extends` to tell a grown
record from a conflicting one.
"""
from __future__ import annotations

import re

from majordomus.base import credentials
from majordomus.base.lean import TYPE_CHECKING, pattern
from majordomus.base.yamlio import scalar

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

LATER = "later_spans:\n"
_ITEM = pattern(r"(?m)^  - span: ")
_OPENED = pattern(r"(?m)^(?:    )?opened: (.*)$")
_REASON = pattern(r"(?m)^(?:    )?reason: (.*)$")


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
    """The whole record of `episode` with `spans` (at least one), first to last: the first span's
    keys at the top level, every later span one item of `later_spans` and one body line."""
    first, later = _screened(spans[0]), [_screened(s) for s in spans[1:]]
    front = ["---", f"id: {scalar(episode)}", "kind: session/v1", f"branch: {scalar(first.branch)}"]
    if forked_from:
        front.append(f"forked_from: {scalar(forked_from)}")
    front += [f"{key}: {scalar(getattr(first, key))}"
              for key in ("opened", "closed", "source", "reason", "head_open", "head_close")]
    if first.branch_close and first.branch_close != first.branch:
        front.append(f"branch_close: {scalar(first.branch_close)}")
    text = "\n".join(front) + "\n"
    if later:
        text += LATER + "".join(_item(s, n) for n, s in enumerate(later, 2))
    return (text + "---\n" + f"Episode {episode} opened {_words(first)}.\n"
            + "".join(_line(s, n) for n, s in enumerate(later, 2)))


def _item(span: Span, number: int) -> str:
    """One later span's item of `later_spans` (already screened)."""
    lines = [f"  - span: {number}"] + [f"    {key}: {scalar(getattr(span, key))}" for key in
                                       ("opened", "source", "branch", "head_open", "closed", "reason", "head_close")]
    if span.branch_close and span.branch_close != span.branch:
        lines.append(f"    branch_close: {scalar(span.branch_close)}")
    return "\n".join(lines) + "\n"


def _line(span: Span, number: int) -> str:
    """One later span's body line (already screened)."""
    return f"Span {number} opened {_words(span)}.\n"


def _words(span: Span) -> str:
    return (f"{_oneline(span.opened)} ({_oneline(span.source)}) on {_oneline(span.branch or 'a detached head')} "
            f"and closed {_oneline(span.closed)} ({_oneline(span.reason)})")


def _oneline(value: Any) -> str:
    """Free text on one line of prose."""
    return " ".join(str(value).split())


def _screened(span: Span) -> Span:
    """The span's values as a tracked record may carry them: the texts that come from outside (a
    branch name, a hook payload's source and close reason) withheld when they carry a
    credential. The ledger, which stays local, keeps them as they were."""
    return span._replace(**{key: credentials.withheld(getattr(span, key))
                            for key in ("source", "branch", "branch_close", "reason")})


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
    return 0 if parts is None else 1 + len(_ITEM().findall(parts[0]))


def openings(text: str) -> list[str]:
    """The `opened` values of the spans a record lists, first to last, as written (YAML scalars)."""
    parts = _split(text)
    return [] if parts is None else [m.group(1) for m in _OPENED().finditer(parts[0])]


def last_reason(text: str) -> str | None:
    """The close reason of the newest span a record lists, unquoted; None when there is none."""
    parts = _split(text)
    found = _REASON().findall(parts[0]) if parts else []
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
    count = 1 + len(_ITEM().findall(front))
    opened = openings(text)
    if listed is not None:
        again = count > listed
    else:
        again = bool(opened) and opened[-1] == scalar(span.opened)
    if again:
        if count == 1:
            return render(episode, [span], forked_from)
        front = front[:list(_ITEM().finditer(front))[-1].start()]
        lines = body.splitlines(keepends=True)
        body = "".join(lines[:-1])
        count -= 1
    number = count + 1
    if not re.search(r"^later_spans:$", front, re.M):
        front += LATER
    if body and not body.endswith("\n"):
        body += "\n"
    screened = _screened(span)
    return "---\n" + front + _item(screened, number) + "---\n" + body + _line(screened, number)


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
