"""The policy, read without YAML when it has not changed: a cache derived from the file.

Importing PyYAML and the one YAML module costs tens of milliseconds, which the session-start hook
cannot pay. `.ai/local/state/policy.cache.json` holds the checked values beside a digest of the
policy file's bytes and of the declared keys; a change to either rebuilds it from the file, so it
is never a second source of truth. An unreadable policy is never cached: it fails as before.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from pipeline.policy import DECLARED, Policy, load


def _digest(data: bytes) -> str:
    declared = json.dumps(DECLARED, sort_keys=True, default=str).encode("utf-8")
    return hashlib.sha256(declared + b"\0" + data).hexdigest()


def load_cached(path: Path, cache: Path) -> Policy:
    """`policy.load(path)`, from `cache` when the file and the declared keys are unchanged."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return load(path)
    digest = _digest(data)
    try:
        cached = json.loads(cache.read_text(encoding="utf-8"))
        if cached.get("digest") == digest:
            return Policy(dict(cached["values"]), frozenset(cached["declared"]), path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    policy = load(path)
    try:
        from pipeline.fsio import atomic_write

        atomic_write(cache, json.dumps({"digest": digest, "values": policy.values,
                                        "declared": sorted(policy.declared)}, indent=1) + "\n")
    except OSError:
        pass  # a cache that cannot be written costs time, not correctness
    return policy
