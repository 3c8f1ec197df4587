"""The allow-list the runtime reads: reference prefixes and policy keys, generated from the proto
(`schemas/allowlist.v1.json`, written by `doit generate`)."""
from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from pipeline.resources import data_dir

_FALLBACK_PREFIXES = ("decision", "session", "commit", "issue", "file", "test", "task")


@lru_cache(maxsize=1)
def _load() -> dict[str, Any]:
    path = data_dir("schemas") / "allowlist.v1.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"reference_prefixes": list(_FALLBACK_PREFIXES)}
    return data if isinstance(data, dict) else {}


def reference_prefixes() -> tuple[str, ...]:
    return tuple(_load().get("reference_prefixes", _FALLBACK_PREFIXES))
