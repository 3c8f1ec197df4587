"""Transcript markers: the one list. A text carrying any of them is refused as knowledge,
evidence or record text, because a record is never a quotation of a conversation."""
from __future__ import annotations

import re

SPEAKERS = ("Human", "Assistant", "User", "System")
TAGS = ("system-reminder", "function_calls", "tool_use", "tool_result")

_MARKER = re.compile(
    r"(?m)^[ \t]*(?:" + "|".join(SPEAKERS) + r"):"
    r"|</?(?:" + "|".join(re.escape(t) for t in TAGS) + r")\b"
)


def marker_in(text: str) -> str | None:
    """The first transcript marker in `text`, or None."""
    found = _MARKER.search(text or "")
    return found.group(0).strip() if found else None
