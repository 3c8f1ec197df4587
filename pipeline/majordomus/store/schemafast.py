"""A quick yes for a valid record, compiled from the generated knowledge/v1 JSON Schema.

jsonschema costs ~0.2 ms a record; `majordomus knowledge check` validates every record. This
module compiles the generated schema (`pipeline.schema.schema()`, the one source) into plain
Python predicates for the keywords it uses, and answers only "valid". Anything else — a record
that fails, or a schema using a keyword this compiler does not know — goes to
`pipeline.schema.record_problems`, which names the problems. So the answers never differ from
jsonschema's; only the cost does.
"""
from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from majordomus.store.schema import record_problems, schema

Check = Callable[[Any], bool]
_ANNOTATIONS = {"description", "$comment", "$id", "$schema", "title", "$defs", "default", "examples"}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}\Z")


class _Unknown(Exception):
    """The schema uses a keyword this compiler does not know: no fast path."""


def _is_date(value: str) -> bool:
    if not _DATE.match(value):
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


_TYPES: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "null": lambda v: v is None,
}


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _compile(node: dict[str, Any], root: dict[str, Any]) -> Check:
    checks: list[Check] = []
    for key, value in node.items():
        if key in _ANNOTATIONS:
            continue
        if key == "$ref":
            if not isinstance(value, str) or not value.startswith("#/$defs/"):
                raise _Unknown(key)
            checks.append(_compile(root["$defs"][value[len("#/$defs/"):]], root))
        elif key == "type":
            if value not in _TYPES:
                raise _Unknown(f"type {value}")
            checks.append(_TYPES[value])
        elif key == "enum":
            choices = frozenset((type(x), x) for x in value)
            checks.append(lambda v, c=choices: _member(v, c))
        elif key == "const":
            checks.append(lambda v, c=value: _same(v, c))
        elif key == "pattern":
            rx = re.compile(value)
            checks.append(lambda v, rx=rx: not isinstance(v, str) or rx.search(v) is not None)
        elif key == "format":
            if value != "date":
                raise _Unknown(f"format {value}")
            checks.append(lambda v: not isinstance(v, str) or _is_date(v))
        elif key == "minLength":
            checks.append(lambda v, n=value: not isinstance(v, str) or len(v) >= n)
        elif key == "minimum":
            checks.append(lambda v, n=value: not isinstance(v, (int, float)) or isinstance(v, bool) or v >= n)
        elif key == "minItems":
            checks.append(lambda v, n=value: not isinstance(v, list) or len(v) >= n)
        elif key == "items":
            item = _compile(value, root)
            checks.append(lambda v, item=item: not isinstance(v, list) or all(map(item, v)))
        elif key == "required":
            names = tuple(value)
            checks.append(lambda v, names=names: not isinstance(v, dict) or all(n in v for n in names))
        elif key == "properties":
            checks.append(_properties({name: _compile(sub, root) for name, sub in value.items()}))
        elif key == "additionalProperties":
            if value is not False:
                raise _Unknown("additionalProperties other than false")
            known = frozenset(node.get("properties", {}))
            checks.append(lambda v, k=known: not isinstance(v, dict) or all(name in k for name in v))
        else:
            raise _Unknown(key)
    return _every(tuple(checks))


def _every(checks: tuple[Check, ...]) -> Check:
    if len(checks) == 1:
        return checks[0]

    def every(v: Any) -> bool:
        for check in checks:
            if not check(v):
                return False
        return True
    return every


def _properties(props: dict[str, Check]) -> Check:
    def check(v: Any) -> bool:
        if not isinstance(v, dict):
            return True
        for key, value in v.items():
            sub = props.get(key)
            if sub is not None and not sub(value):
                return False
        return True
    return check


def _member(value: Any, choices: frozenset[tuple[type, Any]]) -> bool:
    try:
        return (type(value), value) in choices
    except TypeError:  # unhashable: a list or a mapping is never an enum member here
        return False


@lru_cache(maxsize=1)
def compiled() -> Check | None:
    """The predicate for the generated schema, or None when it uses an unknown keyword."""

    root = schema()
    try:
        return _compile(root, root)
    except (_Unknown, KeyError, TypeError, re.error):
        return None


def problems(meta: Any) -> list[tuple[str, str]]:
    """`pipeline.schema.record_problems(meta)`, skipped when the compiled schema says valid."""
    check = compiled()
    if check is not None and check(meta):
        return []

    return record_problems(meta)
