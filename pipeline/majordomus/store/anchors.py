"""Anchor paths: the files a record is about, repository-relative.

An anchor is given by a person or an agent (`--about PATH` on `decision add`, `question add`,
`start`, `knowledge promote` and `reverify`, the MCP writers) or named by a record's evidence (a
task's scope, a `file:` relation, the files of the commits it cites). Either way it is written as
git names the file: relative to the repository's root, `/`-separated, with no `..` step and no
control character; a path outside the repository is refused (exit 4), since nothing there can
tell whether the record is still current.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from majordomus.base.errors import refused
from majordomus.base.lean import pattern

_CONTROL = pattern(r"[\x00-\x1f\x7f\u2028\u2029]")


def anchor(root: Path, given: str, *, cwd: Path | None = None, what: str = "--about") -> str:
    """`given` (relative to `cwd`, by default the process's, or absolute) as a repository-relative
    path; refused (exit 4) when it is empty, carries a control character or lies outside `root`."""
    fix = f"name a file inside the repository ({root}), e.g. {what} src/module.py"
    if not isinstance(given, str) or not given.strip():
        raise refused(f"{what} refused: the path is empty; {fix}")
    if _CONTROL().search(given):
        raise refused(f"{what} {given!r} refused: a path carries no control character; {fix}")
    base = cwd if cwd is not None else Path.cwd()
    full = os.path.normpath(os.path.join(base, given))
    real_root = os.path.normpath(str(root))
    try:
        rel = os.path.relpath(full, real_root)
    except ValueError:  # another drive
        rel = ".."
    if rel == "." or rel == ".." or rel.startswith(".." + os.sep) or os.path.isabs(rel):
        raise refused(f"{what} {given!r} refused: it lies outside the repository; {fix}")
    return rel.replace(os.sep, "/")


def anchors(root: Path, given: Iterable[str], *, cwd: Path | None = None, what: str = "--about") -> list[str]:
    """Every path of `given` as `anchor` makes it, each once, sorted."""
    return sorted({anchor(root, g, cwd=cwd, what=what) for g in given})


def admissible(path: object) -> bool:
    """Whether a stored anchor is a path `anchor` could have written (a hand-edited record may
    hold anything; readers skip the rest)."""
    return (isinstance(path, str) and bool(path) and not path.startswith("/") and not _CONTROL().search(path)
            and ".." not in path.split("/"))
