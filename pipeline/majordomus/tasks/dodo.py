"""What `dodo.py` exposes when doit is run by hand: the same creators the CLI runs.

In an initialised repository `doit derive` derives every episode in the ledger that has
evidence (`doit derive:<episode>` one of them), and `doit drain` moves the trunk outbox into
the tracked sections; elsewhere they have nothing to do.
"""
from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from majordomus.base.errors import FatalError
from majordomus.derive import table as derive
from majordomus.derive.table import Plan
from majordomus.outbox import staging as outbox
from majordomus.store.workspace import open_workspace
from majordomus.tasks import derive as derive_tasks
from majordomus.tasks import drain as drain_tasks
from majordomus.tasks import engine as doitrun

_REPORT = doitrun.RunReport()
_STATE = derive_tasks.RunState()
_DRAINED = drain_tasks.Drained()


def _dep_file() -> str:
    ws = _workspace()
    return str(ws.dep_file) if ws is not None else ".doit.db"


@lru_cache(maxsize=1)
def _workspace() -> Any:

    try:
        return open_workspace()
    except FatalError:
        return None


@lru_cache(maxsize=1)
def _plans() -> tuple[Plan, ...]:

    ws = _workspace()
    if ws is None:
        return ()
    windows: dict[str, list[Any]] = {}
    for line in ws.ledger.read().lines:  # one pass, grouped by episode
        if line.session:
            windows.setdefault(line.session, []).append(line)
    target = outbox.candidates_dir(ws)
    plans = [derive.plan(ws, episode, target, window) for episode, window in windows.items()]
    return tuple(p for p in plans if p.evidence)


def _creators() -> dict[str, Any]:
    return derive_tasks.creators(_workspace(), drain_tasks.unclaimed(_workspace(), _plans()), _STATE)


def task_render() -> Iterator[dict[str, Any]]:
    """Render candidate records (one sub-task per record)."""
    if _workspace() is not None:  # doit wants a generator here, even an empty one
        yield from _creators()["task_render"]()


def task_derive() -> Iterator[dict[str, Any]]:
    """Derive candidates for every episode with evidence (one sub-task per episode)."""
    if _workspace() is not None:  # doit wants a generator here, even an empty one
        yield from _creators()["task_derive"]()


@lru_cache(maxsize=1)
def _drain_creators() -> dict[str, Any]:
    return drain_tasks.creators(_workspace(), _DRAINED, _REPORT)


def task_move() -> Iterator[dict[str, Any]]:
    """Copy one trunk-outbox record into its tracked section (one sub-task per record)."""
    if _workspace() is not None:  # doit wants a generator here, even an empty one
        yield from _drain_creators()["task_move"]()


def task_drain() -> Any:
    """Drain the trunk outbox into the tracked sections, on a branch that is not the trunk."""
    if _workspace() is None:
        return {"actions": None, "doc": "no initialised repository here: nothing to drain"}
    return _drain_creators()["task_drain"]()


DOIT_CONFIG = {**doitrun.config(Path(_dep_file()), _REPORT),
               "default_tasks": []}
