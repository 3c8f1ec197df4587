"""A record's references, resolved for a person: what each `derived_from` entry and relation
target names, in words — the episode with its branch and when it opened, the task by its title,
a commit by its subject, another record by its title.

The ledger's facts kept in the knowledge index for the episodes and tasks cited (store/facts.py:
no pass over the ledger), one git call for every commit, and a look-up in the store's listing for
each `knowledge:` target. Nothing here decides whether a reference is admissible or resolves: that is `knowledge
check`'s; an entry that names nothing this checkout knows says so (`resolved: false`) and is
shown as written.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from typing import Any

from majordomus.base import git
from majordomus.base.ids import ID_PATTERN
from majordomus.base.lean import TYPE_CHECKING
from majordomus.evidence.commits import first_line
from majordomus.knowledge import accumulation
from majordomus.knowledge.queue import episode_branches
from majordomus.store import listing as kstore
from majordomus.store import records
from majordomus.store.facts import Episode, Task
from majordomus.store.workspace import Workspace



if TYPE_CHECKING:
    from typing import NamedTuple
else:  # not a dataclass: `dataclasses` imports `inspect` (with ast, dis, tokenize: ~6 ms of a record's read)
    from majordomus.base.lean import NamedTuple


class Reference(NamedTuple):
    field: str  # derived_from | relates_to | superseded_by | … (the edge's type)
    ref: str  # as written
    kind: str  # the prefix: session, decision, task, commit, file, issue, test, knowledge
    target: str  # what follows the prefix
    resolved: bool | None  # None: not something this checkout can look up (file:, issue:, test:)
    label: str | None  # what it names, in words
    record: str | None  # the record id a `knowledge:` target or `superseded_by` names

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "ref": self.ref, "kind": self.kind, "target": self.target,
                "resolved": self.resolved, "label": self.label, "record": self.record}


def references(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """(edge type, reference) of a record's derived_from entries, relations and superseded_by."""
    found: list[tuple[str, str]] = []
    prov = meta.get("provenance")
    refs = prov.get("derived_from") if isinstance(prov, dict) else None
    found += [("derived_from", r) for r in refs if isinstance(r, str)] if isinstance(refs, list) else []
    rels = meta.get("relations")
    for rel in rels if isinstance(rels, list) else []:
        if isinstance(rel, dict) and isinstance(rel.get("target"), str):
            found.append((str(rel.get("type") or "relates_to"), rel["target"]))
    later = meta.get("superseded_by")
    if isinstance(later, str) and later:
        found.append(("superseded_by", f"knowledge:{later}"))
    return found


def resolve(ws: Workspace, meta: dict[str, Any]) -> list[Reference]:
    """Every reference of a record's front matter, resolved in words."""
    pairs = references(meta)
    kinds = {ref.partition(":")[0] for _, ref in pairs}
    named = {ref.partition(":")[2] for _, ref in pairs if ref.startswith("session:")}
    named_tasks = {ref.partition(":")[2] for _, ref in pairs if ref.partition(":")[0] in ("task", "decision")}
    # the ledger's facts, kept in the knowledge index: no pass over the ledger (store/facts.py)
    facts = accumulation.facts(ws) if named or named_tasks else None
    episodes = facts.episodes(named) if facts is not None and named else {}
    tasks = facts.tasks(named_tasks) if facts is not None and named_tasks else {}
    branches = episode_branches(ws, named, {e: v[1] for e, v in episodes.items()}) if named else {}
    shas = sorted({ref.partition(":")[2] for _, ref in pairs if ref.startswith("commit:")})
    subjects = git.subjects(ws.root, shas) if shas else {}
    find = partial(kstore.find, ws) if "knowledge" in kinds else None
    return [_one(ws, field, ref, episodes, branches, tasks, subjects, find) for field, ref in pairs]


def _one(ws: Workspace, field: str, ref: str, episodes: dict[str, Episode], branches: dict[str, str | None],
         tasks: dict[str, Task], subjects: dict[str, str],
         find: Callable[[str], kstore.Entry | None] | None) -> Reference:
    kind, _, target = ref.partition(":")
    if kind == "session":
        seen = episodes.get(target)
        branch = branches.get(target)
        if seen is None and target not in branches:
            return Reference(field, ref, kind, target, False, "an episode this checkout does not know", None)
        parts = [f"episode {target}", f"on {branch}" if branch else "on an unknown branch"]
        if seen and seen[0]:
            parts.append(f"opened {seen[0]}")
        if seen and seen[2]:
            parts.append(f"closed {seen[2]}")
        return Reference(field, ref, kind, target, True, ", ".join(parts), None)
    if kind in ("task", "decision"):
        task = tasks.get(target)
        if task is None:
            return Reference(field, ref, kind, target, False, f"task {target}: no ledger line here names it", None)
        _, named_title, _, named_outcome, count = task
        called = json.loads(named_title) if named_title is not None else None
        outcome = json.loads(named_outcome) if named_outcome is not None else None
        title = f"task “{first_line(str(called))}”" if called else f"task {target}"
        if kind == "decision":
            label = f"{'a decision' if count == 1 else f'{count} decisions'} recorded under {title}"
        else:
            label = title + (f", finished {outcome}" if outcome else "")
        return Reference(field, ref, kind, target, True, label, None)
    if kind == "commit":
        subject = next((s for sha, s in subjects.items() if sha.startswith(target.lower())), None) \
            if len(target) >= 4 else None
        if subject is None:
            return Reference(field, ref, kind, target, False, "no such commit in this repository", None)
        return Reference(field, ref, kind, target, True, subject, None)
    if kind == "knowledge" and find is not None:
        entry = find(target) if ID_PATTERN.match(target) and ".." not in target else None
        if entry is None:
            return Reference(field, ref, kind, target, False, "no record with this id in the store", target)
        meta = records.front(entry.path) or {}
        heading, status = meta.get("title"), meta.get("status")
        label = (first_line(str(heading)) if heading else entry.id) + (f" ({status})" if status else "")
        return Reference(field, ref, kind, target, True, label, entry.id)
    return Reference(field, ref, kind, target, None, None, None)
