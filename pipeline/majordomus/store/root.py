"""Where a checkout's root is, found with a few `stat`s and nothing imported that reads it: the MCP
server finds its repository before it imports anything a tool call needs (`store/workspace.py`
builds the `Workspace` on it)."""
from __future__ import annotations

import os
from pathlib import Path

from majordomus.base.errors import NOT_INITIALISED, FatalError


def find_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` holding `.ai/repo` (else a `.git`)."""
    here = (start or Path.cwd()).resolve()
    git_root = None
    for folder in (here, *here.parents):
        if (folder / ".ai" / "repo").is_dir():
            return folder
        if git_root is None and (folder / ".git").exists():
            git_root = folder
    return git_root


def start_dir() -> Path | None:
    """Where a command looks for its repository from: $MAJORDOMUS_ROOT when set (else the current
    directory, None)."""
    root = os.environ.get("MAJORDOMUS_ROOT")
    return Path(root) if root else None


def checkout(start: Path | None = None, *, require_init: bool = True) -> Path:
    """The root of `start` (default: `start_dir()`), refused (exit 5) outside a git repository and,
    with `require_init`, in one that `majordomus init` has not prepared."""
    root = find_root(start if start is not None else start_dir())
    if root is None:
        raise FatalError("not inside a git repository: run `git init`, then `majordomus init`", NOT_INITIALISED)
    if require_init and not (root / ".ai" / "repo").is_dir():
        raise FatalError(f"{root} is not initialised for majordomus: run `majordomus init`", NOT_INITIALISED)
    return root
