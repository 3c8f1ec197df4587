"""Derivations a boundary could not run: a lock held past its wait (a `knowledge derive` stopped
with Ctrl-Z holds the dep file's lock for ever), doit's dep file locked by another process's
sqlite transaction, a signal, any failure. A derivation that did not happen is never dropped: the
boundary marks the episode under `.ai/local/state/pending/<episode>`, records its failure and goes
on; the next boundary (a start, an end, a compaction: hook or command) runs the marked derivations,
waiting only briefly for their locks, and removes each mark once its derivation ran. Until then
`majordomus doctor` names each marked episode."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from majordomus.base.errors import Busy, FatalError
from majordomus.base.fsio import atomic_write, remove
from majordomus.evidence import episodes as _episodes
from majordomus.store.workspace import Workspace

PICK_UP_WAIT_S = 1.0  # a boundary never waits long for work it only picks up
# the episodes this process marked: its own boundary reported them already, so the pick-up that
# follows in the same process leaves them to the next boundary instead of failing them twice
_MARKED_HERE: set[str] = set()


def folder(ws: Workspace) -> Path:
    return _episodes.waiting_dir(ws)


def mark(ws: Workspace, episode: str) -> None:
    """Mark `episode`'s derivation as not yet run, before it starts: a process killed outright
    (SIGKILL, no handler runs) leaves it to the next boundary. The derivation unmarks it."""
    atomic_write(folder(ws) / episode, b"", root=ws.root)
    _MARKED_HERE.add(episode)


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


def pick_up(ws: Workspace) -> list[str]:
    """Run the waiting derivations; what failed, one line each (a lock still held is no failure:
    that one waits for the next boundary). A derivation that failed again stays marked."""
    problems: list[str] = []
    episodes = [e for e in waiting(ws) if e not in _MARKED_HERE]
    _MARKED_HERE.clear()
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
                problems.append(f"the derivation of {episode} left by an earlier boundary failed again "
                                f"(it waits for the next): {exc.message}")
                continue
        remove(folder(ws) / episode, root=ws.root)
    return problems
