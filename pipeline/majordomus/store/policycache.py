"""The policy, read without YAML when it has not changed: a cache derived from the file.

Importing PyYAML and the one YAML module costs tens of milliseconds, which the session-start hook
cannot pay. `.ai/local/state/policy.cache.json` holds the checked values beside the policy file's
text, the declared keys it was checked against, and the identity of the very file it was read
from (device, inode, size, change and modification times). The cache is checked against its
source every time: a change to any of them rebuilds it from the file, so it is never a second
source of truth. A cache that a repository carries (committed by a careless or hostile hand) can
name the text but never the inode and change time of this checkout's file, so it is never
believed. (The text itself is the key: comparing it costs less than importing a hash.) An
unreadable policy is never cached: it fails as before.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from majordomus.base.errors import FatalError
from majordomus.base.fsio import atomic_write, read_regular
from majordomus.store.policy import Policy, declared, load, read_policy_text

CACHE_LIMIT = 1 << 20


def _key(text: str, info: os.stat_result) -> list[Any]:
    return [json.dumps(declared(), sort_keys=True, default=str), text,
            [info.st_dev, info.st_ino, info.st_size, info.st_ctime_ns, info.st_mtime_ns]]


def load_cached(path: Path, cache: Path, root: Path) -> Policy:
    """`policy.load(path)`, from `cache` when the file, its identity and the declared keys are
    unchanged since the cache was written by this checkout."""
    try:
        text, info = read_policy_text(path)
    except FileNotFoundError:
        return load(path)
    key = _key(text, info)
    try:
        cached = json.loads(read_regular(cache, CACHE_LIMIT).decode("utf-8"))
        if cached.get("key") == key:
            return Policy(dict(cached["values"]), frozenset(cached["declared"]), path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    policy = load(path)
    try:
        atomic_write(cache, json.dumps({"key": key, "values": policy.values,
                                        "declared": sorted(policy.declared)}, indent=1) + "\n", root=root)
    except (OSError, FatalError):
        pass  # a cache that cannot be written costs time, not correctness
    return policy
