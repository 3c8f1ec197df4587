"""majordomus merge-driver: what git runs to merge two clones' versions of a record (docs/TEAM.md).

Registered by `init`, `capture install`, every review act and every close (`store/gitmerge.py`);
not a command for a person. git passes the ancestor's, our and their versions as temporary files
and the path; the merged text replaces ours and exit 0 says it merged cleanly. A version the
driver cannot read exits 1, and git marks the conflict as it would without the driver.
"""
from __future__ import annotations

import sys
from pathlib import Path

from majordomus.base import fsio
from majordomus.cli.commands import Subparsers
from majordomus.knowledge import merge

NAMES = ("merge-driver",)


def add_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("merge-driver", help="(run by git) merge two clones' versions of a record",
                       description="git's merge driver for .ai/repo/knowledge/{candidates,curated}/*.md "
                       "and .ai/repo/sessions/*.md: review acts, references and session spans merge by "
                       "union, in an order that does not depend on which side is ours (docs/TEAM.md).")
    p.add_argument("base", help="the common ancestor's version (%%O)")
    p.add_argument("ours", help="our version, replaced by the merge (%%A)")
    p.add_argument("theirs", help="their version (%%B)")
    p.add_argument("path", help="the path in the repository (%%P)")
    p.set_defaults(handler=lambda a: merge_driver(Path(a.base), Path(a.ours), Path(a.theirs), a.path))


def merge_driver(base: Path, ours: Path, theirs: Path, path: str) -> int:
    limit = 8 << 20
    try:
        texts = [fsio.read_bytes(p, limit).decode("utf-8") for p in (base, ours, theirs)]
        merged = merge.merge(texts[0], texts[1], texts[2], path)
    except (OSError, ValueError) as exc:  # Unmergeable, undecodable, too large: git marks the conflict
        sys.stderr.write(f"majordomus merge-driver: {path}: {exc}; left to git as a conflict\n")
        return 1
    ours.write_bytes(merged.encode("utf-8"))  # git's own temporary file, which git reads back
    return 0
