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
from json.encoder import encode_basestring  # imported by json itself

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
    if text.isascii() and "\x7f" not in text:  # told without the pattern (a megabyte of --json: ~10 ms)
        return text
    return re.sub(_RAW_IN_JSON, _escaped, text)


def emit_json(data: Any) -> None:
    sys.stdout.write(raw_in_json(indented(data)) + "\n")


def indented(data: Any) -> str:
    """`json.dumps(data, indent=2, ensure_ascii=False)`, the same text, made without the pure-Python
    encoder's generators (which `indent` chooses over the C one: 2,000 search hits cost ~20 ms
    there): each string by the C encoder's own `encode_basestring`, a list of strings joined in
    one call. A value of any other type than dict with text keys, list, tuple, str, int, bool,
    None or a finite float (a subclass, a NaN, a cycle) goes to `json.dumps` whole."""
    try:
        return _Indented().text(data)
    except (_Other, RecursionError):
        return json.dumps(data, indent=2, ensure_ascii=False)


class _Other(Exception):
    """A value `indented` leaves to `json.dumps`."""


class _Indented:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.string = encode_basestring  # the C encoder's (`c_encode_basestring`)

    def text(self, data: Any) -> str:
        self.value(data, "\n")
        return "".join(self.parts)

    def value(self, v: Any, pad: str) -> None:
        add, string = self.parts.append, self.string
        kind = type(v)
        if kind is str:
            add(string(v))
        elif kind is dict:
            if not v:
                add("{}")
                return
            inner = pad + "  "
            sep = "{" + inner
            for key, item in v.items():
                if type(key) is not str:
                    raise _Other
                add(sep)
                add(string(key))
                sep = "," + inner
                if type(item) is str:
                    add(": " + string(item))
                else:
                    add(": ")
                    self.value(item, inner)
            add(pad + "}")
        elif kind is list or kind is tuple:
            if not v:
                add("[]")
                return
            inner = pad + "  "
            if all(type(item) is str for item in v):
                add("[" + inner + ("," + inner).join(map(string, v)) + pad + "]")
                return
            sep = "[" + inner
            for item in v:
                add(sep)
                sep = "," + inner
                self.value(item, inner)
            add(pad + "]")
        elif v is None:
            add("null")
        elif v is True:
            add("true")
        elif v is False:
            add("false")
        elif kind is int:
            add(int.__repr__(v))
        elif kind is float and v - v == 0:  # finite: NaN and the infinities are json's to spell
            add(float.__repr__(v))
        else:
            raise _Other


def say(message: str) -> None:
    print(escape(message), file=sys.stderr)


def table(rows: list[list[str]], header: list[str]) -> str:
    """Rows under a header, columns aligned; every cell one line (`line`)."""
    rows = [[line(cell) for cell in row] for row in rows]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [header, *rows]]
    return "\n".join(lines) + "\n"
