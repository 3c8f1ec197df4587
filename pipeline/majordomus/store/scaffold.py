"""`majordomus init`: lay `.ai/` from the skeleton. Idempotent; a file a person edited is left
alone and named."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from majordomus.base import git
from majordomus.base.fsio import atomic_write, open_folder, read_bytes, read_text
from majordomus.base.resources import data_dir
from majordomus.store import gitmerge
from majordomus.store.workspace import Workspace

IGNORE_LINES = (".ai/local/", ".tmp.*")
LOCAL_DIRS = ("state", "state/completed", "state/outbox/sessions", "state/outbox/candidates",
              "session-contexts")


@dataclass
class Laid:
    written: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)


def _held(path: Path) -> bytes | None:
    """A laid file's bytes, None when it is not a regular file of ours (a link, a pipe)."""
    try:
        return read_bytes(path)
    except OSError:
        return None


def lay_tree(source: Path, dest: Path, ws: Workspace, laid: Laid) -> None:
    """Copy `source` into `dest`: write what is missing, leave what differs, name both."""
    for src in sorted(source.rglob("*")):
        if src.is_dir() or "__pycache__" in src.parts:
            continue
        target = dest / src.relative_to(source)
        data = src.read_bytes()
        rel = ws.rel(target)
        if target.exists():
            (laid.unchanged if _held(target) == data else laid.left_alone).append(rel)
            continue
        atomic_write(target, data, root=ws.root)
        laid.written.append(rel)


def ensure_ignored(ws: Workspace, laid: Laid) -> None:
    path = ws.root / ".gitignore"
    text = read_text(path) if path.exists() else ""
    present = {line.strip() for line in text.splitlines()}
    missing = [line for line in IGNORE_LINES if line not in present]
    if not missing:
        laid.unchanged.append(".gitignore")
        return
    block = ("" if not text or text.endswith("\n") else "\n") + "# majordomus: local state\n"
    atomic_write(path, text + block + "".join(f"{line}\n" for line in missing), root=ws.root)
    laid.written.append(".gitignore")


def init(ws: Workspace) -> Laid:
    laid = Laid()
    lay_tree(data_dir("skeleton"), ws.ai, ws, laid)
    # The standard rules package, vendored; `majordomus rules vendor update` refreshes it.
    lay_tree(data_dir("rules"), ws.repo / "rules" / "vendor", ws, laid)
    for sub in LOCAL_DIRS:
        os.close(open_folder(ws.root, ws.local / sub))  # made without following a link
    ensure_ignored(ws, laid)
    register_merge(ws, laid)
    return laid


def register_merge(ws: Workspace, laid: Laid) -> None:
    """The merge driver: its `.gitattributes` lines (tracked) and this clone's `git config` entry."""
    (laid.written if gitmerge.write_attributes(ws.root) else laid.unchanged).append(gitmerge.ATTRIBUTES)
    try:
        gitmerge.ensure(ws.root)
    except (OSError, git.GitError):
        pass  # no git yet: the first act or close registers it
