"""Where an episode boundary writes: the tracked sections, or the outbox on the trunk.

The trunk is the remote's default branch as git records it (`refs/remotes/<remote>/HEAD`); no
branch name is written down anywhere. No remote, or no default recorded, means no trunk.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pipeline.workspace import Workspace


@lru_cache(maxsize=8)
def trunk_branches(root: Path) -> frozenset[str]:
    """Local names of the remotes' default branches (`main` for `refs/remotes/origin/main`)."""
    from pipeline import git

    out = git.run(root, "for-each-ref", "--format=%(refname) %(symref)", "refs/remotes/*/HEAD",
                  check=False)
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 2:
            remote = parts[0][len("refs/remotes/"):-len("/HEAD")]
            prefix = f"refs/remotes/{remote}/"
            if parts[1].startswith(prefix):
                names.add(parts[1][len(prefix):])
    return frozenset(names)


def on_trunk(ws: Workspace, branch: str | None = None) -> bool:
    from pipeline import git

    if branch is None:
        branch = git.head(ws.root).branch
    return branch is not None and branch in trunk_branches(ws.root)


def sessions_dir(ws: Workspace, branch: str | None = None) -> Path:
    return ws.outbox / "sessions" if on_trunk(ws, branch) else ws.sessions


def candidates_dir(ws: Workspace, branch: str | None = None) -> Path:
    return ws.outbox / "candidates" if on_trunk(ws, branch) else ws.candidates
