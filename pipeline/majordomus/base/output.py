"""Payload on stdout, talk on stderr; `--json` prints data with stable keys.

Stored text (a decision, a record's title or body, a commit subject, a request line) may carry
control characters: an escape sequence that recolours the terminal, rewrites the line, or (OSC 52)
writes the clipboard. Every human output goes through `show` or `say`, which escape them the way
JSON does (`\u001b`), keeping only newlines and tabs; `line` escapes a newline too, for a value
that must stay on its own line (a table cell, a list item). `emit_json` escapes what JSON itself
leaves raw (DEL and the C1 controls), so its output is as safe on a terminal and parses the same.
"""
from __future__ import annotations

import os
import sys

from majordomus.base.lean import TYPE_CHECKING, json

if TYPE_CHECKING:
    import re
    from typing import Any

# C0 but tab and newline, DEL, C1, lone surrogates (undecodable bytes that would reach the
# terminal raw under the surrogateescape handler), the line and paragraph separators (a line
# break to `str.splitlines`, to editors and to JavaScript) and the bidirectional controls (they
# reorder what a terminal or an editor shows: a name reads as another)
# (patterns compiled on first use, by re's own cache: a run that prints nothing compiles nothing)
_UNSEEN = "\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
_CONTROL = "[\x00-\x08\x0b-\x1f" + _UNSEEN + "]"
_CONTROL_OR_NEWLINE = "[\x00-\x1f" + _UNSEEN + "]"
_RAW_IN_JSON = "[\x7f-\x9f\ud800-\udfff]"
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group(0)
    return _NAMED.get(char) or f"\\u{ord(char):04x}"


def escape(text: str) -> str:
    """`text` with its control characters escaped; newlines and tabs kept."""
    if text.replace("\n", "").replace("\t", "").isprintable():
        return text  # nothing to escape, no pattern compiled (see `_printable`)
    import re  # (a text to escape is rare: a run that prints none imports no `re`)

    return re.sub(_CONTROL, _escaped, text)


def line(value: Any) -> str:
    """`value` as text for one line: every control character escaped, newlines included. The one
    escaping of a name or a title (a file name, a record's title, an id) wherever it reaches a
    person: a newline in a file name never forges a line of a report."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text  # (see `_printable`)
    import re

    return re.sub(_CONTROL_OR_NEWLINE, _escaped, text)


# `_printable`: every character these patterns escape is one `str.isprintable` refuses (Cc: C0, DEL,
# C1; Cs: the surrogates; Cf: the bidirectional controls; Zl, Zp: the separators), so a text it
# accepts has nothing to escape; one it refuses (a no-break space too) goes through the pattern.


def show(text: str) -> None:
    """Write human text to stdout, its control characters escaped."""
    sys.stdout.write(escape(text))


def raw_in_json(text: str) -> str:
    """JSON text with what JSON itself leaves raw (DEL, the C1 controls) escaped."""
    if text.isascii() and "\x7f" not in text:  # nothing to escape: no pattern run over megabytes
        return text
    import re

    return re.sub(_RAW_IN_JSON, _escaped, text)


def emit_json(data: Any) -> None:
    sys.stdout.write(json_text(data))


def json_text(data: Any) -> str:
    """What `emit_json` prints: the indented JSON, what JSON leaves raw escaped, and a newline."""
    return raw_in_json(indented(data)) + "\n"


def show_json(data: bytes) -> None:
    """Print `json_text`'s text, as UTF-8 bytes, as `emit_json` prints it: the bytes themselves when
    stdout writes UTF-8 (4 MB not decoded to be encoded again)."""
    out = sys.stdout
    raw = getattr(out, "buffer", None)
    if raw is not None and os.linesep == "\n" and (out.encoding or "").lower().replace("_", "-") in ("utf-8", "utf8"):
        out.flush()
        raw.write(data)
    else:
        out.write(data.decode("utf-8"))


def indented(data: Any) -> str:
    """`json.dumps(data, indent=2, ensure_ascii=False)`, the same text (`lean.json` makes it a
    container of scalars at a time, in C)."""
    return json.dumps(data, indent=2, ensure_ascii=False)


def say(message: str) -> None:
    print(escape(message), file=sys.stderr)


def table(rows: list[list[str]], header: list[str]) -> str:
    """Rows under a header, columns aligned; every cell one line (`line`)."""
    rows = [[line(cell) for cell in row] for row in rows]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join(lines) + "\n"
