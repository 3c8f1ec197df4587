"""Derivations a boundary could not run because a lock was held past its wait (a `knowledge
derive` stopped with Ctrl-Z holds the dep file's lock for ever). The boundary marks the episode
under `.ai/local/state/pending/<episode>`, records its failure and goes on; the next boundary (a
start, an end, a compaction: hook or command) runs the marked derivations, waiting only briefly
for their locks, and removes each mark once its derivation ran."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from majordomus.base.errors import Busy, FatalError
from majordomus.base.fsio import TMP_PREFIX, atomic_write, remove
from majordomus.base.ids import ID_PATTERN
from majordomus.store.workspace import Workspace

PICK_UP_WAIT_S = 1.0  # a boundary never waits long for work it only picks up


def folder(ws: Workspace) -> Path:
    return ws.state / "pending"


@contextmanager
def kept_on_busy(ws: Workspace, episode: str) -> Iterator[None]:
    """Run a boundary's derivation of `episode`; when a lock kept it from running, or a signal
    stopped it, mark it for the next boundary (and raise on: this boundary records the failure)."""
    try:
        yield
    except (Busy, KeyboardInterrupt):  # a busy lock, or a hook stopped by a signal
        atomic_write(folder(ws) / episode, b"", root=ws.root)
        raise


def waiting(ws: Workspace) -> list[str]:
    """The episodes whose derivation waits for a boundary (one directory read)."""
    try:
        names = os.listdir(folder(ws))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in names if not n.startswith(TMP_PREFIX) and ID_PATTERN.match(n) and ".." not in n)


def pick_up(ws: Workspace) -> list[str]:
    """Run the waiting derivations; what failed, one line each (a lock still held is no failure:
    that one waits for the next boundary)."""
    problems: list[str] = []
    episodes = waiting(ws)
    if not episodes:  # the usual case: nothing waits, and doit's runner is never loaded
        return problems
    from majordomus.tasks import derive

    for episode in episodes:
        with ws.waiting_at_most(PICK_UP_WAIT_S):
            try:
                derive.derive(ws, episode)
            except Busy:
                continue
            except FatalError as exc:
                problems.append(f"the derivation of {episode} left by an earlier boundary failed: {exc.message}")
        remove(folder(ws) / episode, root=ws.root)
    return problems
