"""Atomic writes and the sweep of their leftovers.

Every write goes through a `.tmp.`-prefixed name in the target's own folder and a rename, so a
reader sees the old bytes or the new ones, never half of either, whenever a writer is killed.
`.tmp.*` is ignored by git. There is no fsync per file: it cost 3 ms a record on the end hook's
budget, and the rename alone is what keeps a killed process from leaving half a record.
"""
from __future__ import annotations

import fcntl
import os
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from majordomus.base.errors import Busy

TMP_PREFIX = ".tmp."


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write `data` to `path` through a temporary file in the same folder and a rename."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f"{TMP_PREFIX}{path.name}.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)
    os.replace(tmp, path)


def read_regular(path: Path | str, limit: int = -1) -> bytes:
    """The bytes of `path` (the first `limit` when given) if it is a regular file. A symbolic link,
    a folder or a pipe raises OSError instead: a link is never followed, and a pipe would block a
    reader (the start hook) forever. Open without blocking, then check what was opened."""

    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IsADirectoryError(f"{path}: not a regular file")
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit)
    finally:
        os.close(fd)


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write atomically unless the file already holds exactly `data`; True when written."""
    try:
        if path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    atomic_write(path, data)
    return True


def sweep_tmp(folder: Path, older_than_s: float = 60.0) -> int:
    """Remove `.tmp.` leftovers of interrupted writes; young ones may belong to a live writer."""
    removed = 0
    if not folder.is_dir():
        return 0
    cutoff = time.time() - older_than_s
    for entry in folder.iterdir():
        if entry.name.startswith(TMP_PREFIX):
            try:
                if entry.stat().st_mtime < cutoff:
                    entry.unlink()
                    removed += 1
            except FileNotFoundError:
                pass
    return removed


@contextmanager
def locked(lock_path: Path, wait_s: float | None = None, remove: bool = False) -> Iterator[None]:
    """Hold an exclusive lock on `lock_path` (created when missing) for the block.

    With `wait_s`, wait at most that long for another holder (a stopped process holds its lock
    for ever), then raise `Busy`. With `remove`, the lock file is removed before it is let go (a
    lock per episode leaves no file behind): a waiter that then gets the removed file sees that
    it is no longer the one at `lock_path` and takes that one instead.
    """
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    deadline = None if wait_s is None else time.monotonic() + max(wait_s, 0.0)
    while True:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            _acquire(fd, lock_path, deadline, wait_s)
            if _is_at(fd, lock_path):
                break
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # its holder removed it while we waited: lock the file now there
    try:
        yield
    finally:
        if remove:
            try:
                os.unlink(lock_path)
            except FileNotFoundError:
                pass
        os.close(fd)


def _acquire(fd: int, lock_path: Path, deadline: float | None, wait_s: float | None) -> None:
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return
    pause = 0.001
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Busy(str(lock_path), wait_s or 0.0) from None
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.05)


def _is_at(fd: int, lock_path: Path) -> bool:
    """Whether the open lock file `fd` is still the file at `lock_path`."""
    try:
        there = os.stat(lock_path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (there.st_ino, there.st_dev) == (held.st_ino, held.st_dev)
