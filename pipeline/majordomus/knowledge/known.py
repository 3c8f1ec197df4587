"""What the repository knows: the verified records under `.ai/repo/knowledge/curated/`, read for
the start briefing and the `AGENTS.md` export.

One line of each record matters here (class, title, id) and the order in which an agent should
meet them: constraints first, then conventions, lessons, facts and memories; within a class, the
records that relate to a path this branch or the working tree changed, then the newest. A
superseded record is never read back as knowledge.

Records are read through the one front-matter reader (`store.records.front`), whose fast path
needs no YAML: this runs on the start hook.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majordomus.store import records

# The order an agent meets the classes in: what binds first.
CLASS_ORDER = ("constraint", "convention", "lesson", "fact", "memory")


@dataclass(frozen=True)
class Known:
    id: str
    cls: str
    title: str
    date: str
    paths: tuple[str, ...]  # the `file:` targets of its relates_to relations


def text_of(value: Any) -> str:
    """A front-matter value as text (a date YAML read unquoted as its ISO form)."""
    if value is None:
        return ""
    if hasattr(value, "isoformat"):
        return str(value.isoformat())
    return str(value)


def _paths(meta: dict[str, Any]) -> tuple[str, ...]:
    found = []
    relations = meta.get("relations")
    for rel in relations if isinstance(relations, list) else []:
        if isinstance(rel, dict) and rel.get("type") == "relates_to":
            target = rel.get("target")
            if isinstance(target, str) and target.startswith("file:") and len(target) > 5:
                found.append(target[5:])
    return tuple(found)


def verified(folder: Path) -> list[Known]:
    """Every record under `folder` whose status is verified, sorted by id. Leftovers of
    interrupted writes, links and unreadable files are passed over."""
    found = []
    for path in records.files(folder):
        meta = records.front(path)
        if meta is None or meta.get("status") != "verified":
            continue
        found.append(Known(path.stem, text_of(meta.get("class")) or "?", " ".join(text_of(meta.get("title")).split()),
                           text_of(meta.get("date")), _paths(meta)))
    return found


def relates(record: Known, changed: Iterable[str]) -> bool:
    """Whether `record` relates to one of the `changed` paths: the path it names, one under the
    folder it names, or (for an untracked folder, named with its `/`) a path inside that folder."""
    targets = [p.rstrip("/") for p in record.paths]
    return any(path == t or path.startswith(t + "/") or (path.endswith("/") and t.startswith(path))
               for path in changed for t in targets)


def ordered(found: list[Known], changed: frozenset[str] = frozenset()) -> list[Known]:
    """`found` in the order an agent should meet them: by class (CLASS_ORDER, then any other
    class by name); within a class, those relating to a `changed` path first, then the newest
    (by date), then by id. Same records, same changed paths: same order."""
    rank = {cls: i for i, cls in enumerate(CLASS_ORDER)}
    by_date = sorted(found, key=lambda r: r.id)
    by_date.sort(key=lambda r: r.date, reverse=True)  # stable: equal dates keep id order
    return sorted(by_date, key=lambda r: (rank.get(r.cls, len(rank)), r.cls if r.cls not in rank else "",
                                         not (changed and relates(r, changed))))
