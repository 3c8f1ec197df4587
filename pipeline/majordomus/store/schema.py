"""Record validation against the generated JSON Schema (`schemas/knowledge.v1.schema.json`).

`record_problems(meta)` checks one record's front matter and returns (field path, message) pairs,
empty when the record is valid. The validator is compiled once per process; jsonschema is imported
only when the first record is checked, never on the hook paths.
"""
from __future__ import annotations

import datetime
import json
import re
from functools import lru_cache
from typing import Any

from majordomus.base.errors import FatalError
from majordomus.base.resources import data_dir
from majordomus.store.records import RELATION_TARGET, reference_problem

NAME = "knowledge.v1.schema.json"


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    where = data_dir("schemas") / NAME
    try:
        data: dict[str, Any] = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FatalError(f"{where} is missing: it is generated from schemas/knowledge.v1.proto; run "
                         "`majordomus generate` in a source checkout, or reinstall majordomus") from None
    return data


def _reference_patterns() -> set[str]:
    """The patterns of every typed-reference definition (`reference`, `reference_knowledge`, …)."""
    return {d["pattern"] for name, d in schema().get("$defs", {}).items()
            if name == "reference" or name.startswith("reference_")}


@lru_cache(maxsize=1)
def validator() -> Any:
    """The compiled Draft 2020-12 validator, with format checks (a `date` is a real day)."""
    from jsonschema import Draft202012Validator, FormatChecker

    return Draft202012Validator(schema(), format_checker=FormatChecker())


def _plain(value: Any) -> Any:
    # YAML reads an unquoted 2026-01-02 as a date: the same day as the string the template writes.
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _path(parts: Any) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _message(error: Any) -> tuple[str, str]:
    where = _path(error.absolute_path)
    value, keyword = error.instance, error.validator
    if keyword == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "?"
        return (f"{where}.{missing}" if where else missing), "missing: every knowledge/v1 record carries it"
    if keyword == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        extra = sorted(set(value) - set(allowed)) if isinstance(value, dict) else []
        keys = ", ".join(map(str, extra)) or "?"
        return (f"{where}.{extra[0]}" if where and extra else (str(extra[0]) if extra else where)), \
            f"unknown key {keys}: remove it (admitted here: {', '.join(allowed)})"
    if keyword == "enum":
        return where, f"{value!r} is not one of {'|'.join(map(str, error.validator_value))}"
    if keyword == "const":
        return where, f"{value!r} must be {error.validator_value!r}"
    if keyword == "pattern" and error.validator_value in _reference_patterns():
        field = RELATION_TARGET if re.fullmatch(r"relations\[\d+\]\.target", where) else None
        return where, reference_problem(value, field) or f"{value!r} is not a typed reference"
    if keyword == "pattern":
        return where, f"{value!r} does not have the form {error.validator_value}"
    if keyword in ("minLength", "minItems"):
        unit = "character" if keyword == "minLength" else "item"
        count = error.validator_value
        return where, f"{value!r} is too short: at least {count} {unit}{'s' if count != 1 else ''}"
    if keyword == "format":
        return where, f"{value!r} is not a valid {error.validator_value}"
    return where, error.message


def record_problems(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """What is wrong with a record's front matter under knowledge/v1: (field path, message) pairs,
    in a stable order, empty when the record is valid."""
    if not isinstance(meta, dict):
        return [("", "the front matter is not a mapping")]
    found = {_message(error) for error in validator().iter_errors(_plain(meta))}
    return sorted(found)
