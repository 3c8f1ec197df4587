"""A record's references, resolved for a person: what each `derived_from` entry and relation
target names, in words — the episode with its branch and when it opened, the task by its title,
a commit by its subject, another record by its title.

Two pre-filtered ledger reads (the episodes' open and close lines; the lines that name a task
cited), one git call for every commit, and the store's listing for `knowledge:` targets. Nothing here decides whether a
reference is admissible or resolves: that is `knowledge check`'s; an entry that names nothing
this checkout knows says so (`resolved: false`) and is shown as written.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from majordomus.base import git
from majordomus.base.ids import ID_PATTERN
from majordomus.evidence.commits import first_line
from majordomus.knowledge.queue import episode_branches
from majordomus.store import listing as kstore
from majordomus.store import records
from majordomus.store.workspace import Workspace

TASK_EVENTS = ("task.started", "task.finished", "decision.recorded")


@dataclass(frozen=True)
class Reference:
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
    episodes: dict[str, dict[str, str | None]] = {}
    tasks: dict[str, dict[str, Any]] = {}
    named = {ref.partition(":")[2] for _, ref in pairs if ref.startswith("session:")}
    named_tasks = {ref.partition(":")[2] for _, ref in pairs if ref.partition(":")[0] in ("task", "decision")}
    # one pass over the ledger: only the lines that hold a named episode's or task's id as a JSON
    # string are parsed (at a million lines, every session.opened line parsed costs a second)
    needles = sorted({json.dumps(n, ensure_ascii=False) for n in named | named_tasks})
    for line in ws.ledger.matching(*needles) if needles else ():
        if line.session in named and line.event in ("session.opened", "session.closed"):
            seen = episodes.setdefault(line.session, {"opened": None, "closed": None, "branch": None})
            if line.event == "session.opened":
                seen["opened"] = seen["opened"] or line.ts
                seen["branch"] = line.get("branch") if isinstance(line.get("branch"), str) else seen["branch"]
            else:
                seen["closed"] = line.ts
        task = line.get("task")
        if line.event not in TASK_EVENTS or task not in named_tasks:
            continue
        entry = tasks.setdefault(task, {"title": None, "outcome": None, "decisions": []})
        if line.event == "task.started":
            entry["title"] = line.get("title")
        elif line.event == "task.finished":
            entry["outcome"] = line.get("outcome")
        elif isinstance(line.get("text"), str):
            entry["decisions"].append(line.get("text"))
    branches = episode_branches(ws, named, {e: v["branch"] for e, v in episodes.items()}) if named else {}
    shas = sorted({ref.partition(":")[2] for _, ref in pairs if ref.startswith("commit:")})
    subjects = git.subjects(ws.root, shas) if shas else {}
    listed = kstore.listing(ws) if "knowledge" in kinds else None
    return [_one(ws, field, ref, episodes, branches, tasks, subjects, listed) for field, ref in pairs]


def _one(ws: Workspace, field: str, ref: str, episodes: dict[str, dict[str, str | None]],
         branches: dict[str, str | None], tasks: dict[str, dict[str, Any]], subjects: dict[str, str],
         listed: Any) -> Reference:
    kind, _, target = ref.partition(":")
    if kind == "session":
        seen = episodes.get(target)
        branch = branches.get(target)
        if seen is None and target not in branches:
            return Reference(field, ref, kind, target, False, "an episode this checkout does not know", None)
        parts = [f"episode {target}", f"on {branch}" if branch else "on an unknown branch"]
        if seen and seen.get("opened"):
            parts.append(f"opened {seen['opened']}")
        if seen and seen.get("closed"):
            parts.append(f"closed {seen['closed']}")
        return Reference(field, ref, kind, target, True, ", ".join(parts), None)
    if kind in ("task", "decision"):
        task = tasks.get(target)
        if task is None:
            return Reference(field, ref, kind, target, False, f"task {target}: no ledger line here names it", None)
        title = f"task “{first_line(str(task['title']))}”" if task.get("title") else f"task {target}"
        if kind == "decision":
            count = len(task["decisions"])
            label = f"{'a decision' if count == 1 else f'{count} decisions'} recorded under {title}"
        else:
            label = title + (f", finished {task['outcome']}" if task.get("outcome") else "")
        return Reference(field, ref, kind, target, True, label, None)
    if kind == "commit":
        subject = next((s for sha, s in subjects.items() if sha.startswith(target.lower())), None) \
            if len(target) >= 4 else None
        if subject is None:
            return Reference(field, ref, kind, target, False, "no such commit in this repository", None)
        return Reference(field, ref, kind, target, True, subject, None)
    if kind == "knowledge" and listed is not None:
        entry = listed.find(target) if ID_PATTERN.match(target) and ".." not in target else None
        if entry is None:
            return Reference(field, ref, kind, target, False, "no record with this id in the store", target)
        meta = records.front(entry.path) or {}
        heading, status = meta.get("title"), meta.get("status")
        label = (first_line(str(heading)) if heading else entry.id) + (f" ({status})" if status else "")
        return Reference(field, ref, kind, target, True, label, entry.id)
    return Reference(field, ref, kind, target, None, None, None)
