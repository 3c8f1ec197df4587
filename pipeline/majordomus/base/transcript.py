"""Transcript markers: the one list. A text carrying any of them is refused as knowledge,
evidence or record text, because a record is never a quotation of a conversation."""
from __future__ import annotations

import re

from majordomus.base.lean import pattern

SPEAKERS = ("Human", "Assistant", "User", "System")
TAGS = ("system-reminder", "function_calls", "tool_use", "tool_result")

_MARKER = pattern(  # compiled when a text is first asked: doctor reads none on most runs
    r"(?m)^[ \t]*(?:" + "|".join(SPEAKERS) + r"):"
    r"|</?(?:" + "|".join(re.escape(t) for t in TAGS) + r")\b"
)


def marker_in(text: str) -> str | None:
    """The first transcript marker in `text`, or None."""
    found = _MARKER().search(text or "")
    return found.group(0).strip() if found else None


def refusal(what: str, marker: str, fix: str = "restate it in your own words, without the marker") -> str:
    """The one line a writer refuses a text carrying a transcript marker with: the deriver would
    drop its record, so it is refused where it is written rather than lost later without a word."""
    return (f"{what} refused: it carries the transcript marker {marker!r}, and a record is never a "
            f"quotation of a conversation; nothing was written: {fix}")
