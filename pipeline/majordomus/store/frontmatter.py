"""A fast reader for the front matter the deriver and the review acts write, for whole-store scans.

A YAML parse costs ~0.1–0.3 ms per record even with the C loader; `majordomus knowledge check`
reads every record. The records this tool writes use a small subset of YAML: top-level
`key: scalar`, one nested mapping level, block lists of scalars or of flat mappings, and scalars
that are double-quoted (JSON-compatible escapes), single-quoted, or plain words that YAML can
only read as strings. `load` reads exactly that subset and answers None for anything else
(a comment, a flow collection, a number, a duplicate key, a block scalar…), and the caller then
takes the full YAML path. So the result is always what `yamlio.load` would return, or nothing.
"""
from __future__ import annotations

from majordomus.base.lean import TYPE_CHECKING, json, pattern

if TYPE_CHECKING:
    from typing import Any

# A plain scalar PyYAML can only resolve as a string: starts with a letter, then word characters,
# '.', '/', '-', ':' never followed by a space, and spaces never trailing; minus the YAML 1.1
# booleans and null.
_PLAIN = pattern(r"^[A-Za-z](?:[A-Za-z0-9_./-]|:(?! )| (?![ :]*\Z))*\Z")
_NOT_STR = frozenset(("y", "n", "yes", "no", "on", "off", "true", "false", "null"))
_KEY = pattern(r"^(?!(?:[yY]es|YES|[nN]o|NO|[tT]rue|TRUE|[fF]alse|FALSE|[oO]n|ON|[oO]ff|OFF|[nN]ull|NULL):)"
                  r"([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?$")


# What a line (`key: raw`) and a scalar read as, kept for the lines every record repeats (`kind:
# knowledge/v1`, `status: candidate`, `provenance:` …): a store scan matches each of them once.
_MISS = object()
_MEMO = 8192
_KEYS: dict[str, Any] = {}
_SCALARS: dict[str, str | None] = {}


def _key(line: str) -> tuple[str, str | None] | None:
    """(key, the rest after `: `) of a `key:` line in the subset, or None."""
    found = _KEYS.get(line, _MISS)
    if found is _MISS:
        m = _KEY().match(line)
        found = (m.group(1), m.group(2)) if m is not None else None
        if len(_KEYS) < _MEMO:
            _KEYS[line] = found
    return found  # type: ignore[no-any-return]


def scalar(raw: str) -> str | None:
    """The string a YAML scalar denotes, or None when it is outside the subset."""
    found = _SCALARS.get(raw, _MISS)
    if found is _MISS:
        found = _scalar(raw)
        if len(_SCALARS) < _MEMO:
            _SCALARS[raw] = found
    return found  # type: ignore[return-value]


def _scalar(raw: str) -> str | None:
    if not raw:
        return None
    first = raw[0]
    if first == '"':
        inner = raw[1:-1]
        if len(raw) >= 2 and raw[-1] == '"' and '"' not in inner and "\\" not in inner and inner.isprintable():
            return inner  # no escape and no control character: the text between the quotes
        if len(raw) < 2 or raw[-1] != '"' or "\\" in raw and not _json_escapes_only(raw):
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    if first == "'":
        inner = raw[1:-1]
        if len(raw) < 2 or raw[-1] != "'" or "'" in inner.replace("''", ""):
            return None
        return inner.replace("''", "'")
    if _PLAIN().match(raw) and raw.lower() not in _NOT_STR and not raw.endswith(":"):
        return raw
    return None


_INT = pattern(r"(?:0|[1-9][0-9]{0,17})\Z")
# A plain word that begins with a digit and holds a letter, as `yaml.dump` leaves an id such as
# `0a1b-…` (the one writer quotes it): without '.', ':', '_', '+' or a space it is no float,
# sexagesimal, timestamp nor decimal or octal int, and its hex and binary ints are `0x` and `0b`
# followed by hex or binary digits alone (an id such as `0b7c-…` is a string). PyYAML reads every
# other such word as the string.
_DIGIT_WORD = pattern(r"(?!0x[0-9a-fA-F]*\Z|0b[01]*\Z)[0-9][0-9-]*[A-Za-z][A-Za-z0-9-]*\Z")


def _value(raw: str) -> str | int | None:
    """A scalar as YAML reads it, in the subset: a string, or a plain decimal integer (a review's
    `seen: 0`) as the int YAML makes of it. A plain word beginning with a digit (`_DIGIT_WORD`) is
    read here, not in `scalar`, so the one writer keeps quoting it."""
    found = scalar(raw)
    if found is None:
        if _INT().match(raw):
            return int(raw)
        if _DIGIT_WORD().match(raw):
            return raw
    return found


_NOT_JSON_ESCAPE = pattern(r'\\(?![\\"/bfnrt]|u(?![dD][89abAB])[0-9a-fA-F]{4})')


def _json_escapes_only(raw: str) -> bool:
    """Backslash escapes YAML and JSON read alike (YAML also knows \\x, \\N, \\_, \\e …)."""
    return _NOT_JSON_ESCAPE().search(raw) is None


def load(text: str) -> dict[str, Any] | None:
    """The front matter `text` (between the `---` lines) as a dict, or None outside the subset."""
    meta: dict[str, Any] = {}
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i, n = 0, len(lines)
    while i < n:
        m = _key(lines[i])
        if m is None or m[0] in meta:
            return None
        key, raw = m
        i += 1
        if raw is not None and raw != "":
            value = _value(raw)
            if value is None:
                return None
            meta[key] = value
            continue
        block, i = _block(lines, i, 0)
        if block is None:
            return None
        meta[key] = block
    return meta


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block(lines: list[str], i: int, parent: int) -> tuple[Any, int]:
    """The block under a key at indent `parent`: a list or a mapping, indented deeper (or a list
    at the same indent, as PyYAML writes it)."""
    if i >= len(lines):
        return None, i
    ind = _indent(lines[i])
    body = lines[i][ind:]
    if body.startswith("- ") and ind >= parent:
        return _list(lines, i, ind)
    if ind > parent and _key(body):
        return _mapping(lines, i, ind)
    return None, i


def _list(lines: list[str], i: int, ind: int) -> tuple[Any, int]:
    items: list[Any] = []
    while i < len(lines) and _indent(lines[i]) == ind and lines[i][ind:].startswith("- "):
        rest = lines[i][ind + 2:]
        m = _key(rest)
        if m and m[1]:
            # A mapping item: `- key: value` and its sibling keys at ind + 2.
            item: dict[str, Any] = {}
            sub = [" " * (ind + 2) + rest]
            j = i + 1
            while j < len(lines) and _indent(lines[j]) == ind + 2 and not lines[j][ind + 2:].startswith("-"):
                sub.append(lines[j])
                j += 1
            for entry in sub:
                km = _key(entry[ind + 2:])
                value = _value(km[1] or "") if km else None
                if km is None or value is None or km[0] in item:
                    return None, i
                item[km[0]] = value
            items.append(item)
            i = j
            continue
        value = _value(rest)
        if value is None:
            return None, i
        items.append(value)
        i += 1
    return items, i


def _mapping(lines: list[str], i: int, ind: int) -> tuple[Any, int]:
    mapping: dict[str, Any] = {}
    while i < len(lines) and _indent(lines[i]) == ind:
        m = _key(lines[i][ind:])
        if m is None or m[0] in mapping:
            return None, i
        key, raw = m
        i += 1
        if raw:
            value = _value(raw)
            if value is None:
                return None, i
            mapping[key] = value
            continue
        block, i = _block(lines, i, ind)
        if block is None or isinstance(block, dict):
            return None, i  # two nesting levels are outside the subset
        mapping[key] = block
    return mapping, i
