"""git's word on the files under `.ai/repo/` against its index, which doctor's kept judgement is
keyed by (`integrity._Judged`): asked ahead, first thing in doctor's run (before the rules are
imported), so that git stats the files while the rest loads. Imports nothing of the store's
records, the index or the rules."""
from __future__ import annotations

import json
import os
import stat as stat_module
import time
from pathlib import Path
from typing import Any

from majordomus.base import fsio, git
from majordomus.base.errors import FatalError
from majordomus.store.filecache import RACY_NS, settled, stamp

WORKTREE = "integrity.worktree.json"  # git's word on `.ai/repo/` but the stat'ed files, under state (`Worktree`)


class Worktree:
    """What git says of the files under `.ai/repo/` against its index (`git.as_held`), asked ahead
    (doctor asks before its rules run), and the stamp of git's index file from before it was
    asked: what doctor's kept judgement is keyed by (`_Judged`). With `state`, the entries that are
    the index's own (its tags) and the folders' (the untracked files) are kept (`WORKTREE`) with
    the index file's stamp and every folder's under `.ai/repo/`; while none changed, git is asked
    for the files that differ from the index alone (`git.changed_held`: no folder listed)."""

    __slots__ = ("root", "index", "before", "asked", "odd", "state", "folders", "held")

    def __init__(self, root: Path, state: Path | None = None) -> None:
        self.root = root
        self.state = state
        self.folders: list[list[Any]] | None = None  # `_folders`, taken before git is asked
        self.held: list[bytes] | None = None  # the kept entries, when they hold
        self.index = git.index_file(root)
        self.before = stamp(self.index) if self.index is not None else None
        # git compares a file's times in whole seconds: a file it cached the stat of in the second
        # its index was written may change within that second unseen. Written two seconds before
        # now, before any file is read, every later change is in a later second.
        if self.before and time.time_ns() - max(self.before[3:5]) < RACY_NS:
            self.before = None
        self.asked: git.Running | None = None
        self.odd: list[bytes] | None = None

    def start(self) -> Worktree:
        if self.before and self.asked is None:
            if self.state is not None:
                self.folders = _folders(os.fspath(self.root) + os.sep, ".ai/repo")
                self.held = self._kept()
            try:
                self.asked = (git.as_held if self.held is None else git.changed_held)(self.root, ".ai/repo/")
            except OSError:  # git cannot be started: nothing is keyed, the store is judged
                self.before = None
        return self

    def _kept(self) -> list[bytes] | None:
        """The entries kept (`_keep`), when the index file and every folder kept their stamps."""
        if self.folders is None or self.state is None:
            return None
        try:
            kept = json.loads(fsio.read_regular(self.state / WORKTREE))
        except (OSError, ValueError):
            return None
        if not (isinstance(kept, dict) and kept.get("index") == self.before and kept.get("folders") == self.folders
                and isinstance(kept.get("held"), list) and all(type(e) is str for e in kept["held"])):
            return None
        return [os.fsencode(e) for e in kept["held"]]

    def _keep(self, odd: list[bytes]) -> None:
        """Keep the entries of a whole answer that are not a file's stat against the index ("C ",
        "c "), with the stamps they were made of (taken before git was asked)."""
        if self.folders is None or self.state is None:
            return
        value = {"index": self.before, "folders": self.folders,
                 "held": [os.fsdecode(e) for e in odd if not e.startswith((b"C ", b"c "))]}
        try:
            fsio.atomic_write(self.state / WORKTREE, json.dumps(value, separators=(",", ":")).encode("ascii"),
                              root=self.root)
        except (OSError, ValueError, UnicodeError, FatalError):  # a full disk, a link there: asked whole each time
            pass

    def end(self) -> None:
        """Stop a git asked ahead whose answer was never read."""
        if self.asked is not None:
            self.asked.end()

    def _odd(self) -> list[bytes] | None:
        """The entries git did not tag "H " (tracked, as its index holds it), sorted, each as git
        wrote it (its tag, a space, the path); None when git could not say. Asked once."""
        if self.asked is not None:
            asked, self.asked = self.asked, None
            try:
                code, out, _ = asked.wait_bytes()
            except git.GitError:
                code, out = 1, b""
            if code == 0 and self.held is not None:  # the stat'ed files alone: the rest as kept
                self.odd = sorted(self.held + [e for e in out.split(b"\0") if e])
            elif code == 0:
                self.odd = [] if out.count(b"\0") == (b"\0" + out).count(b"\0H ") else sorted(
                    e for e in out.split(b"\0") if e and not e.startswith(b"H "))
                self._keep(self.odd)
        return self.odd

    def untracked(self, folder: str) -> set[str] | None:
        """The names of the files right in `folder` (repository-relative, under `.ai/repo/`) that git's
        index does not hold; None when git could not say."""
        odd = self._odd()
        if odd is None or not folder.startswith(".ai/repo/"):
            return None
        prefix = b"? " + os.fsencode(folder.rstrip("/") + "/")
        return {os.fsdecode(e[len(prefix):]) for e in odd if e.startswith(prefix) and b"/" not in e[len(prefix):]}

    def key(self) -> list[bytes] | None:
        """git's index file's stamp (git writes a new file each time: its inode and change time,
        which no clone shares, change) and each file git does not say is as that index holds it
        (changed, gone, untracked, flagged not to be looked at), with its own stamp: every other
        file is as it was when git last looked at it. None when git could not say, its index
        changed meanwhile or a stamp is too recent to vouch for itself."""
        odd = self._odd()
        if not self.before or odd is None or self.index is None or stamp(self.index) != self.before:
            return None
        parts = [repr(self.before).encode()]
        where = os.fspath(self.root) + os.sep
        for entry in odd:
            st = stamp(where + os.fsdecode(entry[2:]))
            if st == []:
                return None
            parts.append(entry + b"\0" + repr(st).encode())
        return parts


def _folders(base: str, top: str) -> list[list[Any]] | None:
    """[path, device, inode, size, mtime, ctime] of `top` (repository-relative, under `base`) and of
    every folder below it, no link followed, sorted: a folder's stamp changes when an entry is
    added, removed or renamed in it. A folder whose link count is 2 holds no folder (the file
    systems that count a folder's links count one for each folder in it) and is not listed. None
    when a folder is not there or changed too recently to vouch for itself."""
    found: list[list[Any]] = []
    stack = [top]
    while stack:
        rel = stack.pop()
        try:
            st = os.lstat(base + rel)
        except OSError:
            return None
        if not stat_module.S_ISDIR(st.st_mode) or not settled(st):
            return None
        found.append([rel, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns])
        if st.st_nlink != 2:
            try:
                with os.scandir(base + rel) as entries:
                    stack += [f"{rel}/{e.name}" for e in entries if e.is_dir(follow_symlinks=False)]
            except OSError:
                return None
    return sorted(found)
