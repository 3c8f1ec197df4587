"""doit entry point for this repository: `doit generate` (the schemas from the proto), and
`doit derive`, `doit drain` over this checkout's ledger when it is initialised.

The task creators live in `majordomus.tasks`; in an adopter repository `majordomus doit …` runs
the same graph, so an adopter needs no dodo.py of its own. A run by hand holds the dep file's
lock for its whole process, as every `majordomus` run holds it for its own.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from majordomus.base.errors import FatalError
from majordomus.base.fsio import locked
from majordomus.store.workspace import open_workspace
from majordomus.tasks import dodo, engine
from majordomus.tasks.generate import task_generate  # noqa: F401 - a task creator doit finds here

try:
    _ws: Any = open_workspace()
except FatalError:
    _ws = None
globals().update(dodo.namespace(_ws, engine.RunReport()))
_ROOT = _ws.root if _ws is not None else Path.cwd()
_HOLD = locked(engine.lock_path(_ws.dep_file if _ws is not None else _ROOT / ".doit.db"), root=_ROOT)
_HOLD.__enter__()  # released when doit's process ends
