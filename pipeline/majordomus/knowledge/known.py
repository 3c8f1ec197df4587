"""What the repository knows: the verified records under `.ai/repo/knowledge/curated/`, read for
the start briefing and the `AGENTS.md` export.

One line of each record matters here (class, title, id) and the order in which an agent should
meet them: constraints first, then conventions, lessons, facts and memories; within a class, the
records that relate to a path this branch or the working tree changed, then the newest. A
superseded record is never read back as knowledge.

Records are read through the one front-matter reader (`store.records.front`), whose fast path
needs no YAML: this runs on the start hook. What was read of each file is kept in the knowledge
index (`store/index.py`), checked by the folder's stamp, so the start hook reads one row a record
instead of each record.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.fsio import read_regular
from majordomus.store import records
from majordomus.store import index as store_index
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

# The order an agent meets the classes in: what binds first.
CLASS_ORDER = ("constraint", "convention", "lesson", "fact", "memory")
_VERSION = 4  # of what an entry holds: raise it when the fields read change
HEAD_LIMIT = 1 << 16  # what is read of a record: its front matter and the start of its body
# body lines that are pointers or bookkeeping, never a record's reason
_NOT_A_REASON = ("Evidence:", "Verified:", "Commits of the task:", "Scope:", "- ", "#", "Question:")

VERIFYING = ("promoted", "reverified")  # the review acts that verify a record at a commit


class Known(NamedTuple):
    id: str
    cls: str
    title: str
    date: str
    paths: tuple[str, ...]  # the `file:` targets of its relates_to relations
    reason: str = ""  # why it holds: its description, its `Why:` line, or its body's first statement
    anchors: tuple[str, ...] = ()  # the files it is about (`anchors:`), repository-relative
    verified_at: tuple[str, ...] = ()  # the commits of its verifications, newest first
    reviewed_at: str = ""  # the time of its newest review act ("" when none is recorded)


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


def reason_of(meta: dict[str, Any], body: str) -> str:
    """Why a record holds, in one line: its description; else its `Why:` line; else the first
    line of its body that is neither its title nor a pointer; "" when it says none. A verified
    record shown without it ("SHA-1 stays the default") invites the next agent to "fix" it."""
    described = " ".join(text_of(meta.get("description")).split())
    if described:
        return described
    title = " ".join(text_of(meta.get("title")).split())
    lines = []
    for line in body.splitlines():  # the record's own text: not what an act appended (# Evidence)
        if line.startswith("# "):
            break
        if line.strip():
            lines.append(" ".join(line.split()))
    why = next((line[len("Why:"):].strip() for line in lines if line.startswith("Why:")), "")
    if why:
        return why
    return next((line for line in lines if line != title and not line.startswith(_NOT_A_REASON)), "")


def reviews(meta: dict[str, Any]) -> tuple[list[str], str]:
    """The commits a record was verified at (promoted or reverified), newest first by (at, seen,
    commit), and the time of its newest review act of any kind ("" when it records none)."""
    acts = meta.get("reviews")
    found = []
    newest = ""
    for act in acts if isinstance(acts, list) else []:
        if not isinstance(act, dict):
            continue
        at = text_of(act.get("at"))
        newest = max(newest, at)
        commit = act.get("commit")
        if act.get("act") in VERIFYING and isinstance(commit, str) and commit:
            seen = act.get("seen")
            found.append((at, int(str(seen)) if str(seen).isdigit() else 0, commit))
    found.sort(reverse=True)
    return list(dict.fromkeys(commit for _, _, commit in found)), newest


def anchors(meta: dict[str, Any]) -> list[str]:
    """The record's anchor paths, as written (repository-relative)."""
    value = meta.get("anchors")
    return [p for p in value if isinstance(p, str) and p] if isinstance(value, list) else []


def _read(path: Path) -> list[Any] | None:
    """What is kept of one record: [class, title, date, paths, reason, anchors, verified at,
    reviewed at] when it is verified, [] when it is a record of another status, None when it cannot
    be read as one."""
    try:
        head = read_regular(path, HEAD_LIMIT)
    except OSError:
        return None
    meta = records.front_of(head, str(path))
    if meta is None:
        return None
    if meta.get("status") != "verified":
        return []
    text = head.decode("utf-8", errors="replace")
    end = text.find("\n---", 3)
    body = text[text.find("\n", end + 1) + 1:] if end != -1 else ""
    commits, newest = reviews(meta)
    return [text_of(meta.get("class")) or "?", " ".join(text_of(meta.get("title")).split()),
            text_of(meta.get("date")), list(_paths(meta)), reason_of(meta, body), anchors(meta), commits, newest]


def _read_path(path: str) -> list[Any] | None:
    return _read(Path(path))


def verified(folder: Path, ws: Workspace | None = None, only: Iterable[str] | None = None) -> list[Known]:
    """Every record under `folder` whose status is verified, sorted by id (`only`: of the files of
    those names alone). Leftovers of interrupted writes, links and unreadable files are passed over.
    With `ws`, through the knowledge index (`store/index.py`): a file whose stamp is unchanged is
    not read again."""
    if ws is not None:
        listed = store_index.of(ws).view(folder, "known", _VERSION, _read_path, only=only)
    elif only is not None:
        listed = [(name, _read(folder / name)) for name in sorted(set(only) & set(records.names(folder)))]
    else:
        listed = [(name, _read(folder / name)) for name in records.names(folder)]
    return [_known(name, read) for name, read in listed if read]


def one(path: Path) -> Known | None:
    """The record at `path` as `verified` reads it; None when it is not a verified record."""
    read = _read(path)
    return _known(path.name, read) if read else None


def _known(name: str, read: list[Any]) -> Known:
    cls, title, date, paths, reason, anchored, commits, newest = read
    return Known(name[:-len(".md")], cls, title, date, tuple(paths), reason, tuple(anchored), tuple(commits), newest)


def relates(record: Known, changed: Iterable[str]) -> bool:
    """Whether `record` relates to one of the `changed` paths: the path it names, one under the
    folder it names, or (for an untracked folder, named with its `/`) a path inside that folder."""
    return Changes(changed).related(record)


class Changes:
    """The `changed` paths, kept as the sets `relates` looks a record's targets up in: each path,
    every folder above one (`a/b/c` holds `a` and `a/b`), and the untracked folders (named with
    their `/`). A record's check then costs its targets' length, not targets × changed paths (a
    store of thousands of verified records met hundreds of changed paths at every close)."""

    __slots__ = ("paths", "above", "folders")

    def __init__(self, changed: Iterable[str]) -> None:
        self.paths = set(changed)
        self.above: set[str] = set()
        self.folders: set[str] = set()
        for path in self.paths:
            parts = path.split("/")
            # path.startswith(t + "/") exactly when t is the text before one of its slashes
            self.above.update("/".join(parts[:n]) for n in range(1, len(parts)))
            if path.endswith("/"):
                self.folders.add(path)

    def related(self, record: Known) -> bool:
        for target in record.paths:
            t = target.rstrip("/")
            if t in self.paths or t in self.above:
                return True
            if self.folders:  # an untracked folder holding t: t's text up to one of its slashes
                parts = t.split("/")
                if any("/".join(parts[:n]) + "/" in self.folders for n in range(1, len(parts))):
                    return True
        return False


def ordered(found: list[Known], changed: frozenset[str] = frozenset()) -> list[Known]:
    """`found` in the order an agent should meet them: by class (CLASS_ORDER, then any other
    class by name); within a class, those relating to a `changed` path first, then the newest
    (by date), then by id. Same records, same changed paths: same order."""
    rank = {cls: i for i, cls in enumerate(CLASS_ORDER)}
    by_date = sorted(found, key=lambda r: r.id)
    by_date.sort(key=lambda r: r.date, reverse=True)  # stable: equal dates keep id order
    changes = Changes(changed) if changed else None
    return sorted(by_date, key=lambda r: (rank.get(r.cls, len(rank)), r.cls if r.cls not in rank else "",
                                         not (changes is not None and changes.related(r))))
