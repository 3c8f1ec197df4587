"""The policy, read without YAML when it has not changed: a cache derived from the file.

Importing PyYAML and the one YAML module costs tens of milliseconds, which the session-start hook
cannot pay. `.ai/local/state/policy.cache.json` holds the checked values beside a digest of the
policy file's text and the declared keys it was checked against; a change to either rebuilds it
from the file, so it is never a second source of truth. (The text itself is the key: comparing it
costs less than importing a hash.) An unreadable policy is never cached: it fails as before.
"""
from __future__ import annotations

import json
from pathlib import Path

from majordomus.base.fsio import atomic_write
from majordomus.store.policy import Policy, declared, load


def _key(text: str) -> list[str]:
    return [json.dumps(declared(), sort_keys=True, default=str), text]


def load_cached(path: Path, cache: Path) -> Policy:
    """`policy.load(path)`, from `cache` when the file and the declared keys are unchanged."""
    try:
        key = _key(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, UnicodeDecodeError):
        return load(path)
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("key") == key:
            return Policy(dict(cached["values"]), frozenset(cached["declared"]), path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    policy = load(path)
    try:
        atomic_write(cache, json.dumps({"key": key, "values": policy.values,
                                        "declared": sorted(policy.declared)}, indent=1) + "\n")
    except OSError:
        pass  # a cache that cannot be written costs time, not correctness
    return policy
