"""The package's task graph as one doit namespace: what `majordomus doit …` shows and runs in an
adopter repository, and what this repository's `dodo.py` loads.

`derive` derives every episode in the ledger that has evidence (`derive:<episode>` one of
them), through `evidence:<episode>` and `render:<id>`; `drain` moves the trunk outbox into the
tracked sections through `move:<section>/<name>`. (`generate`, which regenerates the shipped
schemas from the proto, belongs to this project's own `dodo.py`, not to an adopter's.) Nothing is read and no state is kept when this module is imported: `namespace` builds it
all for one run.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from majordomus.derive import table
from majordomus.derive.table import Plan
from majordomus.outbox import staging as outbox
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace
from majordomus.tasks import derive, drain, engine


def plans(ws: Workspace) -> list[Plan]:
    """One plan per episode with evidence, from one pass over the ledger."""
    windows: dict[str, list[Line]] = {}
    for line in ws.ledger.read().lines:
        if line.session:
            windows.setdefault(line.session, []).append(line)
    target = outbox.candidates_dir(ws)
    found = [table.plan(ws, episode, target, window) for episode, window in windows.items()]
    return [p for p in found if p.evidence]


DOCS = {
    "task_evidence": "Write each episode's evidence file (its ledger lines, notes and commits).",
    "task_render": "Render candidate records from their episode's evidence and the template.",
    "task_derive": "Derive candidates for every episode with evidence, and record that it ran.",
    "task_move": "Copy each trunk-outbox record into its tracked section.",
    "task_drain": "Drain the trunk outbox into the tracked sections (on a branch, not the trunk).",
}


def _lazy(make: Callable[[], dict[str, Callable[[], Any]]], name: str) -> Callable[[], Any]:
    """A task creator that builds its family on first use (doit loads every creator it lists)."""
    made: list[dict[str, Callable[[], Any]]] = []

    def creator() -> Any:
        if not made:
            made.append(make())
        return made[0][name]()

    creator.__doc__ = DOCS[name]
    return creator


def _empty() -> Iterator[dict[str, Any]]:
    yield from ()


def namespace(ws: Workspace | None, report: engine.RunReport,
              quiet: bool = False) -> dict[str, Any]:
    """Every task creator and the `DOIT_CONFIG` of one run over `ws` (None: no initialised
    repository here, so the tasks have nothing to do)."""
    found: dict[str, Any] = {}
    if ws is not None:
        state, drained = derive.RunState(), drain.Drained()

        def derive_family() -> dict[str, Callable[[], Any]]:
            return derive.creators(ws, drain.unclaimed(ws, plans(ws)), state)

        def drain_family() -> dict[str, Callable[[], Any]]:
            return drain.creators(ws, drained, report)

        for name in ("task_evidence", "task_render", "task_derive"):
            found[name] = _lazy(derive_family, name)
        for name in ("task_move", "task_drain"):
            found[name] = _lazy(drain_family, name)
        dep_file = ws.dep_file
    else:
        for name in ("task_evidence", "task_render", "task_derive", "task_move"):
            found[name] = _empty
        found["task_drain"] = lambda: {"actions": None, "doc": "no initialised repository here: nothing to drain"}
        dep_file = Path(".doit.db")
    found["DOIT_CONFIG"] = {**engine.config(dep_file, report, quiet), "default_tasks": []}
    return found
