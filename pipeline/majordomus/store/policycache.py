"""The policy, read without YAML when it has not changed: a cache derived from the file.

Importing PyYAML and the one YAML module costs tens of milliseconds, which the session-start hook
cannot pay. `.ai/local/state/policy.cache.json` holds the checked values beside the policy file's
text, the declared keys it was checked against, and the identity of the very file it was read
from (device, inode, size, change and modification times). The cache is checked against its
source every time: a change to any of them rebuilds it from the file, so it is never a second
source of truth. A cache that a repository carries (committed by a careless or hostile hand) can
name the text but never the inode and change time of this checkout's file, so it is never
believed. (The text itself is the key: comparing it costs less than importing a hash.) The
problems a policy has are cached with its values (they follow from the same text); a file that
cannot be read at all is never cached: it is read (and found unreadable) again each time.
"""
from __future__ import annotations

import os
from pathlib import Path

from majordomus.base.errors import FatalError
from majordomus.base.fsio import atomic_write, read_regular
from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.store.policy import Policy, declared, load, parse, read_policy_text

if TYPE_CHECKING:
    from typing import Any

CACHE_LIMIT = 1 << 20


def _key(text: str, info: os.stat_result) -> list[Any]:
    return [json.dumps(declared(), sort_keys=True, default=str), text,
            [info.st_dev, info.st_ino, info.st_size, info.st_ctime_ns, info.st_mtime_ns]]


def load_cached(path: Path, cache: Path, root: Path) -> Policy:
    """`policy.load(path)`, from `cache` when the file, its identity and the declared keys are
    unchanged since the cache was written by this checkout."""
    try:
        text, info = read_policy_text(path)
    except (FileNotFoundError, FatalError):
        return load(path)
    key = _key(text, info)
    try:
        cached = json.loads(read_regular(cache, CACHE_LIMIT).decode("utf-8"))
        if cached.get("key") == key:
            problems = tuple((str(k), str(what)) for k, what in cached["problems"])
            return Policy(dict(cached["values"]), frozenset(cached["declared"]), path, problems)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):  # an older cache has no problems
        pass
    policy = parse(text, path)
    try:
        atomic_write(cache, json.dumps({"key": key, "values": policy.values,
                                        "declared": sorted(policy.declared),
                                        "problems": [list(p) for p in policy.problems]}, indent=1) + "\n", root=root)
    except (OSError, FatalError):
        pass  # a cache that cannot be written costs time, not correctness
    return policy
