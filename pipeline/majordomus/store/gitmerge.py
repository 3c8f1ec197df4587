"""The merge driver's registration: how git is told to merge two clones' versions of a record.

Two halves, as git wants them (gitattributes(5), "Defining a custom merge driver"):
- `.gitattributes` at the repository's root (tracked: every clone reads it) names the driver
  `majordomus` for the records and the session records;
- `.git/config` (this clone's own, shared by its worktrees; never carried by a clone, so a hostile
  repository cannot name a command of its own) says what runs: this interpreter's
  `python -m majordomus merge-driver %O %A %B %P`.

A clone that has not registered the driver yet merges those files with git's own text merge, as
before; `init`, `capture install`, every review act and every close register it.
"""
from __future__ import annotations

import sys
from pathlib import Path

from majordomus.base import fsio, git

NAME = "majordomus"
PATTERNS = (".ai/repo/knowledge/candidates/*.md", ".ai/repo/knowledge/curated/*.md", ".ai/repo/sessions/*.md")
MARK = "# majordomus: two clones' review acts and session spans merge by union (docs/TEAM.md)"
ATTRIBUTES = ".gitattributes"


# what `shlex.quote` leaves as it is (its `_find_unsafe`: no character but these, ASCII)
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")


def driver_command() -> str:
    """The command git runs: this interpreter, so a merge finds the installation that registered it.
    A path `shlex.quote` would leave as it is is not given to it: every close asks, and `shlex`
    compiles a pattern at import."""
    executable = sys.executable
    if not executable or not _PLAIN.issuperset(executable):
        import shlex

        executable = shlex.quote(executable)
    return f"{executable} -m majordomus merge-driver %O %A %B %P"


def attribute_lines() -> list[str]:
    return [MARK] + [f"{p} merge={NAME}" for p in PATTERNS]


def write_attributes(root: Path) -> bool:
    """Add the attribute lines to `.gitattributes` where they are missing; True when it changed."""
    path = root / ATTRIBUTES
    try:
        text = fsio.read_text(path, 1 << 20)
    except FileNotFoundError:
        text = ""
    have = set(text.splitlines())
    missing = [line for line in attribute_lines() if line not in have]
    if not missing:
        return False
    lead = "" if not text or text.endswith("\n") else "\n"
    fsio.atomic_write(path, (text + lead + "\n".join(missing) + "\n").encode("utf-8"), root=root)
    return True


def _config_text(root: Path) -> str:
    """This repository's own configuration file as text ("" when it cannot be read): `.git/config`,
    or for a linked worktree the common folder's (`gitdir:`, then `commondir`)."""
    try:
        dot = root / ".git"
        if not dot.is_dir():
            pointer = fsio.read_text(dot, 4096).strip()
            dot = (root / pointer.removeprefix("gitdir: ")).resolve()
            if (dot / "commondir").is_file():
                dot = (dot / fsio.read_text(dot / "commondir", 4096).strip()).resolve()
        return fsio.read_text(dot / "config", 1 << 20)
    except (OSError, ValueError):
        return ""


def ensure(root: Path) -> bool:
    """Register the driver in this clone's configuration when it is not: a read of the file, and
    `git config` only when the entry is missing or names another command; True when it wrote."""
    command = driver_command()
    text = _config_text(root)
    if f'[merge "{NAME}"]' in text and f"driver = {command}" in text:
        return False
    if git.config_get(root, f"merge.{NAME}.driver") == command:
        return False
    git.config_set(root, f"merge.{NAME}.name", "majordomus: merge two clones' records by union")
    git.config_set(root, f"merge.{NAME}.driver", command)
    return True
