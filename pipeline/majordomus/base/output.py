"""Payload on stdout, talk on stderr; `--json` prints data with stable keys.

Stored text (a decision, a record's title or body, a commit subject, a request line) may carry
control characters: an escape sequence that recolours the terminal, rewrites the line, or (OSC 52)
writes the clipboard. Every human output goes through `show` or `say`, which escape them the way
JSON does (`\u001b`), keeping only newlines and tabs; `line` escapes a newline too, for a value
that must stay on its own line (a table cell, a list item). `emit_json` escapes what JSON itself
leaves raw (DEL and the C1 controls), so its output is as safe on a terminal and parses the same.
"""
from __future__ import annotations

import json
import re
import sys
from json import encoder as library  # imported by json itself

from majordomus.base.lean import TYPE_CHECKING

if TYPE_CHECKING:
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
    return re.sub(_CONTROL, _escaped, text)


def line(value: Any) -> str:
    """`value` as text for one line: every control character escaped, newlines included. The one
    escaping of a name or a title (a file name, a record's title, an id) wherever it reaches a
    person: a newline in a file name never forges a line of a report."""
    text = value if isinstance(value, str) else str(value)
    if text.isprintable():
        return text  # (see `_printable`)
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
    return re.sub(_RAW_IN_JSON, _escaped, text)


def emit_json(data: Any) -> None:
    sys.stdout.write(raw_in_json(indented(data)) + "\n")


def indented(data: Any) -> str:
    """`json.dumps(data, indent=2, ensure_ascii=False)`, the same text: the standard library
    indents in Python, a generator step a value (a queue of 8,000 entries, 100,000 values: ~50 ms
    at 1M); here a dict or a list of scalars alone is one call of its C encoder, its separator the
    newline and indent of its level. A value it does not know (a key not a string, a subclass, a
    non-finite float) goes to `json.dumps` whole, so its answer or its error is the library's."""
    out: list[str] = []
    try:
        _indent(data, "", out)
    except (_Unknown, RecursionError):
        return json.dumps(data, indent=2, ensure_ascii=False)
    return "".join(out)


class _Unknown(Exception):
    """A value `indented` leaves to the standard library."""


_SCALARS = frozenset((str, int, float, bool, type(None)))  # encoded by C as by Python
_ENCODERS: dict[str, Any] = {}  # by the indent of a container's items: its C encoder


def _items(pad: str) -> Any:
    """The C encoder of a dict or list of scalars whose items are indented by `pad`."""
    encoder = _ENCODERS.get(pad)
    if encoder is None:
        make = getattr(library, "c_make_encoder", None)
        if make is None:  # an interpreter without the C encoder
            raise _Unknown
        encoder = _ENCODERS[pad] = make(None, None, library.encode_basestring, None, ": ", ",\n" + pad,
                                        False, False, True)
    return encoder


def _indent(value: Any, pad: str, out: list[str]) -> None:
    kind = type(value)
    if kind is dict:
        if not value:
            out.append("{}")
            return
        inner = pad + "  "
        if _SCALARS.issuperset(map(type, value.values())):  # keys as the library converts them
            out.append("{\n" + inner + "".join(_items(inner)(value, 0))[1:-1] + "\n" + pad + "}")
            return
        encode_basestring = library.encode_basestring
        sep = "{\n" + inner
        for key, item in value.items():
            if type(key) is not str:  # the library's conversion, or its TypeError
                raise _Unknown
            if type(item) is str:
                out.append(sep + encode_basestring(key) + ": " + encode_basestring(item))
            else:
                out.append(sep + encode_basestring(key) + ": ")
                _indent(item, inner, out)
            sep = ",\n" + inner
        out.append("\n" + pad + "}")
    elif kind is list or kind is tuple:
        if not value:
            out.append("[]")
            return
        inner = pad + "  "
        if _SCALARS.issuperset(map(type, value)):
            out.append("[\n" + inner + "".join(_items(inner)(value, 0))[1:-1] + "\n" + pad + "]")
            return
        sep = "[\n" + inner
        for item in value:
            out.append(sep)
            sep = ",\n" + inner
            _indent(item, inner, out)
        out.append("\n" + pad + "]")
    elif kind in _SCALARS:
        out.append("".join(_items(pad)([value], 0))[1:-1])
    else:
        raise _Unknown


def say(message: str) -> None:
    print(escape(message), file=sys.stderr)


def table(rows: list[list[str]], header: list[str]) -> str:
    """Rows under a header, columns aligned; every cell one line (`line`)."""
    rows = [[line(cell) for cell in row] for row in rows]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join(lines) + "\n"
