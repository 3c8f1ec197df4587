"""The allow-list the runtime reads: reference prefixes, enums and policy keys, generated from the
proto (`schemas/allowlist.v1.json`, written by `doit generate`, never edited by hand).

Only `json` is imported here: the session-start hook loads the policy through this module.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from majordomus.base.errors import FatalError
from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.base.resources import data_dir

if TYPE_CHECKING:
    from typing import Any

NAME = "allowlist.v1.json"


def path() -> Path:
    return data_dir("schemas") / NAME


@lru_cache(maxsize=1)
def load() -> dict[str, Any]:
    """The generated allow-list, read once per process; missing or unreadable is an install fault."""
    where = path()
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FatalError(f"{where} is missing: it is generated from schemas/knowledge.v1.proto; run "
                         "`majordomus generate` in a source checkout, or reinstall majordomus") from None
    except ValueError as exc:
        raise FatalError(f"{where} is not JSON ({exc}): it is generated, never edited; run "
                         "`majordomus generate` or reinstall majordomus") from None
    if not isinstance(data, dict) or not isinstance(data.get("policy"), dict) \
            or not isinstance(data.get("reference_prefixes"), list):
        raise FatalError(f"{where} lacks policy or reference_prefixes: run `majordomus generate` or reinstall")
    return data


def reference_prefixes() -> tuple[str, ...]:
    """The prefixes a typed reference may carry, in the proto's order."""
    return tuple(load()["reference_prefixes"])


def field_prefixes(field: str) -> tuple[str, ...]:
    """Prefixes the field `field` (dotted, e.g. `relations.target`) admits beyond the vocabulary."""
    return tuple(load().get("field_prefixes", {}).get(field, ()))


def refused_prefixes() -> tuple[str, ...]:
    return tuple(load().get("refused_prefixes", ()))


def refused_targets() -> tuple[str, ...]:
    return tuple(load().get("refused_targets", ()))


def enum(key: str) -> tuple[str, ...]:
    """The values a record's enum field admits, by its dotted key (`class`, `provenance.origin`)."""
    return tuple(load().get("enums", {}).get(key, ()))


def policy_keys() -> dict[str, dict[str, Any]]:
    """Every policy key: its type (switch, integer, enum, string, boolean), default and bounds."""
    keys: dict[str, dict[str, Any]] = load()["policy"]
    return keys
