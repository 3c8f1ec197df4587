"""Derivations a boundary could not run: a lock held past its wait (a `knowledge derive` stopped
with Ctrl-Z holds the dep file's lock for ever), doit's dep file locked by another process's
sqlite transaction, a signal, any failure. A derivation that did not happen is never dropped: the
boundary marks the episode under `.ai/local/state/pending/<episode>`, records its failure and goes
on; the next boundary (a start, an end, a compaction: hook or command) runs the marked derivations,
waiting only briefly for their locks, and removes each mark once its derivation ran. Until then
`majordomus doctor` names each marked episode."""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from majordomus.base.errors import Busy, FatalError
from majordomus.base.fsio import TMP_PREFIX, atomic_write, open_folder, remove
from majordomus.evidence import episodes as _episodes
from majordomus.store.workspace import Workspace

PICK_UP_WAIT_S = 1.0  # a boundary never waits long for work it only picks up
# the episodes this process marked: its own boundary reported them already, so the pick-up that
# follows in the same process leaves them to the next boundary instead of failing them twice
_MARKED_HERE: set[str] = set()


def folder(ws: Workspace) -> Path:
    return _episodes.waiting_dir(ws)


@contextmanager
def held(ws: Workspace, episode: str) -> Iterator[None]:
    """Mark `episode`'s derivation as not yet run before it starts, and hold the mark locked while
    it runs: a process killed outright (SIGKILL, no handler runs) leaves the mark, unlocked, to the
    next boundary; a boundary running meanwhile in another process finds it locked and leaves it.
    The mark appears already locked (locked under a temporary name, then renamed into place). The
    derivation removes it when it ran."""
    dfd = open_folder(ws.root, folder(ws))
    fd = -1
    try:
        temporary = f"{TMP_PREFIX}{episode}.{os.getpid()}"
        fd = os.open(temporary, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644,
                     dir_fd=dfd)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.rename(temporary, episode, src_dir_fd=dfd, dst_dir_fd=dfd)
        _MARKED_HERE.add(episode)
        yield
    finally:
        if fd >= 0:
            os.close(fd)
        os.close(dfd)


def _taken(ws: Workspace, episode: str) -> int | None:
    """The mark of `episode`, locked for this process; None when it is gone or another holds it."""
    dfd = open_folder(ws.root, folder(ws), create=False)
    try:
        try:
            fd = os.open(episode, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_ino == os.stat(episode, dir_fd=dfd, follow_symlinks=False).st_ino:
                return fd
        except OSError:  # held (a derivation running now), or replaced since
            pass
        os.close(fd)
        return None
    finally:
        os.close(dfd)


@contextmanager
def kept_on_busy(ws: Workspace, episode: str) -> Iterator[None]:
    """Run a boundary's derivation of `episode`; when it did not happen (a lock kept it from
    running, a signal stopped it, it failed), mark it for the next boundary, and raise on: this
    boundary records the failure."""
    try:
        yield
    except BaseException:  # a busy lock, a locked dep file, a signal, any failure: not derived
        atomic_write(folder(ws) / episode, b"", root=ws.root)
        _MARKED_HERE.add(episode)
        raise


def waiting(ws: Workspace) -> list[str]:
    """The episodes whose derivation waits for a boundary (one directory read)."""
    return _episodes.derivations_waiting(ws)


def sweep_dead(ws: Workspace) -> None:
    """Remove the temporary marks (`.tmp.<episode>.<pid>`) of boundaries killed between creating
    their mark and renaming it into place: those whose process is gone (a live one is mid-way)."""
    try:
        names = os.listdir(folder(ws))
    except OSError:
        return
    for name in names:
        pid = name.rpartition(".")[2]
        if not name.startswith(TMP_PREFIX) or not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            remove(folder(ws) / name, root=ws.root)
        except OSError:
            pass  # alive under another user, or not ours to tell: left


def pick_up(ws: Workspace) -> list[str]:
    """Run the waiting derivations; what failed, one line each (a lock still held is no failure:
    that one waits for the next boundary). A derivation that failed again stays marked."""
    sweep_dead(ws)
    problems: list[str] = []
    episodes = [e for e in waiting(ws) if e not in _MARKED_HERE]
    _MARKED_HERE.clear()
    if not episodes:  # the usual case: nothing waits, and doit's runner is never loaded
        return problems
    from majordomus.tasks import derive

    for episode in episodes:
        fd = _taken(ws, episode)
        if fd is None:  # done meanwhile, or running in another process now
            continue
        try:
            with ws.waiting_at_most(PICK_UP_WAIT_S):
                try:
                    derive.derive(ws, episode)
                except Busy:
                    continue
                except FatalError as exc:
                    problems.append(f"the derivation of {episode} left by an earlier boundary failed again "
                                    f"(it waits for the next): {exc.message}")
                    continue
            remove(folder(ws) / episode, root=ws.root)
        finally:
            os.close(fd)
    return problems
