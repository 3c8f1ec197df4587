"""The knowledge store as git sees it: the source classes declared in
`.ai/repo/knowledge/sources.yaml`, each a pathspec, listed in ONE `git ls-files` call that says
for every file whether git tracks it.

A reader never builds a path from a caller's id: it looks the id up among the files git listed,
and it reads nothing outside `.ai/repo/knowledge/` (a pathspec edited to reach further, or a
symbolic link, is not followed).
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from majordomus.base import fsio, git, yamlio
from majordomus.base.errors import NOT_INITIALISED, FatalError
from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.store import index as store_index
from majordomus.store import records
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    import re
    import sqlite3
    from collections.abc import Iterator, Sequence
    from typing import Any, NamedTuple
else:
    import _sqlite3 as sqlite3  # its errors alone: the `sqlite3` package's `dbapi2` imports `datetime` (store/index.py)

    from majordomus.base.lean import NamedTuple

SOURCES = "sources.yaml"
CONTRACT = "README.md"  # each folder's README contract: not a record


class _Listed(NamedTuple):
    id: str  # the file name without .md
    source: str  # the source class: candidates | curated
    file: str  # the absolute path as text: a listing of thousands makes no path objects
    tracked: bool  # False: in the tree, not in git's index (reviewed by nobody else)
    readable: bool = True  # a regular file, really inside the store (never a symbolic link)
    rel: str = ""  # the repository-relative path, as git wrote it


class Entry(_Listed):
    """One file the source classes list."""

    @property
    def path(self) -> Path:
        """The file as a path object, made for the few entries a reader shows or reads."""
        return Path(self.file)

    def split(self) -> tuple[str, str]:
        """(its folder, its file name), as text."""
        folder, _, name = self.file.rpartition(os.sep)
        return folder, name


class Store(NamedTuple):
    entries: tuple[Entry, ...]

    def of(self, source: str) -> list[Entry]:
        return [e for e in self.entries if e.source == source]

    def find(self, rid: str) -> Entry | None:
        """The record named `rid`: curated first (promotion moves a candidate there)."""
        found = [e for e in self.entries if e.id == rid]
        found.sort(key=lambda e: e.source != "curated")
        return found[0] if found else None

    @property
    def untracked(self) -> list[Entry]:
        return [e for e in self.entries if not e.tracked]


def pathspecs(ws: Workspace) -> dict[str, str]:
    """Source class -> pathspec, read from sources.yaml (the one declaration of the classes). What
    YAML made of the file is kept beside its text in `.ai/local/state/sources.cache.json`: the same
    text is not parsed again (importing PyYAML costs more than the rest of a reader). The file's
    identity (device, inode, times) is kept with the text, as the policy cache keeps it: a cache a
    repository commits can name the text, never this checkout's file, so it is never believed."""

    path = ws.knowledge / SOURCES
    cache = ws.state / "sources.cache.json"
    try:
        text = fsio.read_text(path)
    except FileNotFoundError:
        raise FatalError(f"{ws.rel(path)} is missing: run `majordomus init` to restore it", NOT_INITIALISED) from None
    except (OSError, UnicodeDecodeError) as exc:  # a link, a pipe, a device, a huge or binary file
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        fix = "" if isinstance(exc, OSError) and exc.errno == errno.ELOOP else ": run `majordomus init` to restore it"
        raise FatalError(f"{ws.rel(path)} unreadable ({why}){fix}", NOT_INITIALISED) from None
    try:
        st = os.lstat(path)  # after the read: a change in between differs in the text or here next time
        identity = [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    except OSError:
        identity = None
    try:
        kept = json.loads(fsio.read_regular(cache, 1 << 20))
        if isinstance(kept, dict) and kept.get("text") == text and identity is not None \
                and kept.get("file") == identity and isinstance(kept.get("specs"), dict):
            return {str(k): str(v) for k, v in kept["specs"].items()}
    except (OSError, ValueError):
        pass
    specs = _pathspecs(ws, path, text)
    try:
        fsio.atomic_write(cache, json.dumps({"text": text, "file": identity, "specs": specs},
                                            ensure_ascii=False) + "\n", root=ws.root)
    except OSError:
        pass  # a cache that cannot be written costs time, not correctness
    return specs


def _pathspecs(ws: Workspace, path: Path, text: str) -> dict[str, str]:
    try:
        tree = yamlio.load(text, str(path)) or {}
    except yamlio.YamlError as exc:
        raise FatalError(f"{exc}: fix the YAML or run `majordomus init` to restore it", NOT_INITIALISED) from None
    classes = tree.get("classes") if isinstance(tree, dict) else None
    if not isinstance(classes, dict):
        raise FatalError(f"{ws.rel(path)} declares no `classes:`: run `majordomus init` to restore it",
                         NOT_INITIALISED)
    return {str(name): str(spec["pathspec"]) for name, spec in classes.items()
            if isinstance(spec, dict) and isinstance(spec.get("pathspec"), str)}


def _bare(pathspec: str) -> str:
    """A pathspec without its magic signature (`:(glob)`, `:(top,icase)`): what `^:\\([^)]*\\)`
    would leave, without `re` (a reader of the queue matches no pattern)."""
    end = pathspec.find(")", 2) if pathspec.startswith(":(") else -1
    return pathspec[end + 1:] if end >= 0 else pathspec


def _matcher(pathspec: str) -> re.Pattern[str]:
    """A `:(glob)` pathspec as a regex over repository-relative paths (`*` stays in one folder)."""
    import re

    pattern = _bare(pathspec)
    if not any(c in pattern for c in "*?["):  # a plain pathspec names a file or a folder
        return re.compile(re.escape(pattern.rstrip("/")) + r"(?:/.*)?\Z")
    out = ""
    for token in re.split(r"(\*\*/?|\*|\?)", pattern):
        if token.startswith("**"):
            out += "(?:.*/)?" if token.endswith("/") else ".*"
        elif token == "*":
            out += "[^/]*"
        elif token == "?":
            out += "[^/]"
        else:
            out += re.escape(token)
    return re.compile(out + r"\Z")


def listing(ws: Workspace) -> Store:
    """Every record file the source classes name, tracked or not, in one git call."""

    specs = pathspecs(ws)
    if not specs:
        return Store(())
    index = store_index.of(ws)
    folders = _folders(ws, specs)
    # the files parsed once, when git's listing was kept, else git's listing (kept now) parsed
    files = index.listed_files(sorted(specs.items()), _inputs(ws, folders)) if folders else None
    found = (_listed(ws, specs, _ls_files(ws, specs, index, folders)) if files is None
             else ((source, f"{folder}/{name}", name, bool(tracked)) for source, folder, name, tracked in files))
    guard = Guard(ws, index if folders else None)
    root = os.fspath(ws.root) + os.sep
    seen: dict[tuple[str, str], Entry] = {}
    for source, rel, name, tracked in found:
        path = root + rel
        seen[(source, rel)] = Entry(name[:-3], source, path, tracked, guard(path), rel)
    # A candidate beside its reviewed record (every act leaves one; docs/TEAM.md) is that record.
    reviewed = {e.id for e in seen.values() if e.source != "candidates"}
    kept = [e for e in seen.values() if e.source != "candidates" or e.id not in reviewed]
    return Store(tuple(sorted(kept, key=lambda e: (e.source, e.id))))


def find(ws: Workspace, rid: str) -> Entry | None:
    """`listing(ws).find(rid)`, from the `listed` table when it holds git's listing as of now
    (checked and read in one transaction): the files named `rid`.md looked up, not every record
    file made an entry.
    `rid` is an id (base/ids.check_id), never a path."""
    specs = pathspecs(ws)
    folders = _folders(ws, specs) if specs else []
    index = store_index.of(ws)
    rows = index.named(rid + ".md", sorted(specs.items()), _inputs(ws, folders)) if folders else None
    if rows is None:
        return listing(ws).find(rid)
    if any(source != "candidates" for source, *_ in rows):  # a reviewed record hides its candidate
        rows = [row for row in rows if row[0] != "candidates"]
    if not rows:
        return None
    source, folder, _, tracked = min(rows, key=lambda row: row[0] != "curated")  # curated first, as `find`
    rel = f"{folder}/{rid}.md"
    path = os.fspath(ws.root) + os.sep + rel
    return Entry(rid, source, path, bool(tracked), Guard(ws, index)(path), rel)


def indexed(ws: Workspace) -> bool:
    """Whether the knowledge index's `listed` table holds git's listing of the source classes as
    of now, each file as (source, folder, name, tracked): brought up to date when it does not
    (`listing`). False when the listing is not kept (no index, a pathspec into subfolders, an
    input too recent to vouch for itself): then `listing` is the one answer."""
    specs = pathspecs(ws)
    index = store_index.of(ws)
    folders = _folders(ws, specs) if specs else []
    if not folders:
        return False
    key, inputs = sorted(specs.items()), _inputs(ws, folders)
    if not index.listed(key, inputs):
        _ls_files(ws, specs, index, folders)
    return index.listed(key, inputs)


# The folders of the `listed` table, sorted: one seek of its primary key a folder (a skip scan),
# not a pass over its 20,000 rows as `SELECT DISTINCT folder` makes (~2 ms at 1M).
_FOLDERS = ("WITH RECURSIVE f(folder) AS (SELECT min(folder) FROM listed UNION ALL "
            "SELECT (SELECT min(folder) FROM listed WHERE folder > f.folder) FROM f WHERE f.folder IS NOT NULL) "
            "SELECT folder FROM f WHERE folder IS NOT NULL")


def matched(ws: Workspace, view: str, version: int | str, read: store_index.Reader,
            match: tuple[str, Sequence[Any]] | None) -> list[tuple[Entry, Any]] | None:
    """The readable entries of `listing` with what `read` made of each, as `index.view` of their
    folders with `match` hands them over (a kept value that fails `match` is left out), in the
    listing's order: from the knowledge index, git's listing joined with the kept values, so that
    only the entries that meet `match` are made. None when the index does not hold the listing."""
    if not indexed(ws):
        return None
    specs = pathspecs(ws)
    index = store_index.of(ws)
    db = index.db()
    if db is None:
        return None
    try:
        listed = [f for (f,) in db.execute(_FOLDERS)]
    except sqlite3.Error:
        return None
    guard = Guard(ws)
    folders = [ws.root / f for f in listed if guard.inside(os.fspath(ws.root / f))]
    rows = index.listed_view(sorted(specs.items()), _inputs(ws, _folders(ws, specs)), _REVIEWED, folders, view,
                             version, read, match)
    if rows is None:
        return None
    root = os.fspath(ws.root) + os.sep
    found = [(Entry(name[:-3], source, root + rel, bool(tracked), True, rel), value)
             for source, folder, name, tracked, value in rows for rel in (f"{folder}/{name}",)]
    found.sort(key=lambda pair: (pair[0].source, pair[0].id))
    return found


def _ls_files(ws: Workspace, specs: dict[str, str], index: store_index.Index, folders: list[Path]) -> str:
    """git's listing of the source classes: kept in the index while what it depends on is unchanged
    (with its files in the `listed` table), else asked of git."""

    def ls_files() -> str:
        try:
            return git.run(ws.root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "-t",
                           "--", *specs.values())
        except git.GitError as exc:
            raise FatalError(f"{exc}: the store is read through git; run majordomus inside the repository "
                             "(`git init` if it has none)", NOT_INITIALISED) from None

    if not folders:
        return ls_files()

    def rows(out: str) -> Iterator[tuple[str, str, str, int]]:
        for source, rel, name, tracked in _listed(ws, specs, out):
            yield source, rel.rpartition("/")[0], name, int(tracked)

    return index.listing(sorted(specs.items()), _inputs(ws, folders), ls_files, rows)


def _listed(ws: Workspace, specs: dict[str, str], out: str) -> Iterator[tuple[str, str, str, bool]]:
    """(source class, repository-relative path, file name, tracked) of each record file in git's
    listing `out` that a source class names."""
    matchers = [(name, _matcher(spec).match) for name, spec in specs.items()]
    store_dir = ws.rel(ws.knowledge) + "/"
    for item in out.split("\0"):
        if len(item) < 3:
            continue
        rel = item[2:]
        name = rel.rpartition("/")[2]
        if not name.endswith(".md") or name == CONTRACT or name.startswith(".tmp.") or not rel.startswith(store_dir):
            continue
        for source, match in matchers:  # a loop, not a generator: once for each of 20,000 files
            if match(rel):
                break
        else:
            continue
        yield source, rel, name, item[0] != "?"


def _folders(ws: Workspace, specs: dict[str, str]) -> list[Path]:
    """The folders the pathspecs list files of, when each names one folder's files (`folder/*.md`):
    then git's listing depends on those folders, git's index and the ignore files alone. [] when a
    pathspec reaches into subfolders (`**`, a folder named whole): git is asked every time."""
    found = []
    for spec in specs.values():
        pattern = _bare(spec)
        folder, _, name = pattern.rpartition("/")
        if not folder or any(c in folder for c in "*?[") or not any(c in name for c in "*?[") or "**" in name:
            return []
        found.append(ws.root / folder)
    return sorted(set(found))


def _inputs(ws: Workspace, folders: list[Path]) -> list[Path]:
    """What git's listing of `folders` depends on: git's index, the folders, the ignore files on
    the way down to them and the repository's own exclude file (a global `core.excludesFile`
    changed in between is not seen: it rarely names a record). A linked worktree has an index of
    its own, and reads the main repository's exclude file (git's common folder)."""
    found = [ws.knowledge / SOURCES, *folders]
    index_file, common = git.index_file(ws.root), git.common_dir(ws.root)
    if index_file is not None:
        found.append(index_file)
    if common is not None:
        found.append(common / "info" / "exclude")
    ignores = {ws.root / ".gitignore"}
    for folder in folders:
        parts = folder.relative_to(ws.root).parts
        ignores.update(ws.root.joinpath(*parts[:n], ".gitignore") for n in range(1, len(parts) + 1))
    return found + sorted(ignores)


class Guard:
    """Is a path a regular file whose real location is inside the store? Each folder is resolved
    once (a store of thousands of records has a handful of folders); with the `index`, a folder's
    regular files are those the index lists (checked by the folder's stamp), not one `lstat` each."""

    def __init__(self, ws: Workspace, index: store_index.Index | None = None) -> None:
        self.store = os.path.realpath(ws.knowledge)
        self.folders: dict[str, bool] = {}
        self.index = index
        self.names: dict[str, set[str] | None] = {}

    def __call__(self, path: str) -> bool:
        if self.index is not None:
            folder, _, name = path.rpartition(os.sep)
            if folder not in self.names:
                listed = self.index.names(Path(folder)) if self.inside(folder) else []
                self.names[folder] = set(listed) if listed is not None else None
            found = self.names[folder]
            if found is not None:
                return name in found
        try:
            mode = os.lstat(path).st_mode
        except OSError:
            return False
        if not stat.S_ISREG(mode):  # a symbolic link is never followed
            return False
        return self.inside(os.path.dirname(path))

    def inside(self, folder: str) -> bool:
        if folder not in self.folders:
            real = os.path.realpath(folder)
            self.folders[folder] = real == self.store or real.startswith(self.store + os.sep)
        return self.folders[folder]


def load(ws: Workspace, entry: Entry) -> Any:
    """The entry as a `records.Record`; `records.RecordError` when it cannot be read as one."""

    if not entry.readable:
        if not os.path.lexists(entry.path):
            raise records.RecordError(f"{entry.rel}: tracked by git but missing from the tree "
                                      "(`git restore` or `git rm` it)")
        raise records.RecordError(f"{entry.rel}: not a regular file inside .ai/repo/knowledge/ "
                                  "(a symbolic link is never followed)")
    return records.load(entry.path)


def _stated(value: Any) -> str:
    """A status or class as a person reads it in a table: `(none)` for a missing, empty or null
    one (never `None`, never `null`)."""
    return str(value) if value is not None and value != "" else "(none)"


SUMMARY = 1  # the version of what `summaries` keeps of a record


def summaries(ws: Workspace, store: Store, unreadable: list[dict[str, str]]) -> Iterator[tuple[Entry, str, str]]:
    """`readable`, as each record's status and class alone (`(none)` when it states none), through
    the knowledge index (`store/index.py`): a record unchanged since it was read is not read again."""
    index = store_index.of(ws)
    by_folder: dict[str, list[str]] = {}
    for entry in store.entries:
        if entry.readable:
            folder, name = entry.split()
            by_folder.setdefault(folder, []).append(name)
    kept: dict[str, dict[str, Any]] = {
        folder: dict(index.view(Path(folder), "summary", SUMMARY, _summary, only=names, keys=_summary_keys))
        for folder, names in by_folder.items()}
    for entry in store.entries:
        summary = None
        if entry.readable:
            folder, name = entry.split()
            summary = kept.get(folder, {}).get(name)
        if summary is None:
            summary = _summary_of(ws, entry)
        if summary[0] == "ok":
            yield entry, summary[1], summary[2]
        else:
            unreadable.append({"id": entry.id, "path": entry.rel, "problem": summary[1]})


def _summary_keys(summary: list[str]) -> tuple[int, str | None, str | None]:
    """A summary's KEYED columns in the index: read or not, its status and its class."""
    return (1, summary[1], summary[2]) if summary[0] == "ok" else (0, None, None)


# What `status` counts of the store (`tally`): the entries of `listing` (a candidate the listing
# names under another class aside), counted by class, by status and by class of record, the
# untracked ones and the unreadable ones, in `listing`'s order (source, id). `_REVIEWED`: a row of
# `listed` (`l`) that `listing` hides, a candidate beside its reviewed record (`matched` too).
_REVIEWED = "l.source = 'candidates' AND l.name IN (SELECT name FROM listed WHERE source != 'candidates')"
_ENTRIES = f"WITH e AS (SELECT source, folder, name, tracked FROM listed l WHERE NOT ({_REVIEWED})) "
_JOINED = "FROM e LEFT JOIN files f ON f.folder = e.folder AND f.name = e.name"
TALLY = (
    # the entries counted by class, and by (read, status, class) of their summary
    _ENTRIES + "SELECT e.source, f.s_ok, f.s_status, f.s_class, count(*) " + _JOINED + " GROUP BY 1, 2, 3, 4",
    # the untracked and the unreadable ones, in the listing's order (source, id)
    _ENTRIES + "SELECT e.source, e.folder, e.name, e.tracked, f.name IS NOT NULL AND f.s_ok = 1, "
    "CASE WHEN f.s_ok = 1 THEN NULL ELSE f.summary END " + _JOINED + " WHERE e.tracked = 0 OR f.name IS NULL "
    "OR f.s_ok IS NOT 1 ORDER BY e.source, substr(e.name, 1, length(e.name) - 3)",
)

# TALLY's second query when its first counted no entry missing or unreadable (none not `s_ok` 1):
# the untracked entries alone, the same rows, from the listing without a look-up in the files.
UNTRACKED = ("SELECT source, folder, name, tracked, 1, NULL FROM listed WHERE tracked = 0 AND NOT (source = "
             "'candidates' AND name IN (SELECT name FROM listed WHERE source != 'candidates')) "
             "ORDER BY source, substr(name, 1, length(name) - 3)")


class Tally(NamedTuple):
    """What `knowledge status` counts of the store (`tally`)."""

    records: int
    by_source: dict[str, int]
    by_status: dict[str, int]
    by_class: dict[str, int]
    untracked: list[str]  # repository-relative
    unreadable: list[dict[str, str]]  # id, path, problem


def tally(ws: Workspace) -> Tally | None:
    """The entries of `listing` counted as `summaries` of them counts them, from the knowledge index
    (git's listing as rows joined with each record's kept summary): no entry made, no summary
    decoded but an unreadable one's. None when the index does not hold the listing."""
    if not indexed(ws):
        return None
    index = store_index.of(ws)
    db = index.db()
    if db is None:
        return None
    try:
        folders = [ws.root / f for (f,) in db.execute(_FOLDERS)]
    except sqlite3.Error:
        return None
    found = index.rows([(folders, "summary", SUMMARY, _summary, _summary_keys)], TALLY[:1], {}, kept="tally")
    if found is None:
        return None
    (counts,) = found
    try:  # every entry read: the odd ones are the untracked ones, found without joining every entry
        odd = db.execute(TALLY[1] if any(ok != 1 for _, ok, *_ in counts) else UNTRACKED).fetchall()
    except sqlite3.Error:
        return None
    by_source: dict[str, int] = {}
    by_status: dict[str, int] = {}
    by_class: dict[str, int] = {}
    for source, ok, status, cls, n in counts:
        by_source[source] = by_source.get(source, 0) + n
        if ok == 1:
            by_status[status] = by_status.get(status, 0) + n
            by_class[cls] = by_class.get(cls, 0) + n
    root = os.fspath(ws.root) + os.sep
    untracked, unreadable = [], []
    for source, folder, name, tracked, ok, kept in odd:
        rel = folder + "/" + name
        if not tracked:
            untracked.append(rel)
        if ok:
            continue
        summary = json.loads(kept) if kept is not None else None
        if not isinstance(summary, list) or len(summary) < 2:  # not in the folder's files: not readable
            summary = _summary_of(ws, Entry(name[:-3], source, root + rel, bool(tracked), False, rel))
        unreadable.append({"id": name[:-3], "path": rel, "problem": summary[1]})
    return Tally(sum(by_source.values()), by_source, by_status, by_class, untracked, unreadable)


def _summary(path: str) -> list[str]:
    try:
        meta = records.load(Path(path)).meta
        return ["ok", _stated(meta.get("status")), _stated(meta.get("class"))]
    except records.RecordError as exc:
        return ["bad", str(exc)]
    except FileNotFoundError:
        return ["bad", f"{path}: missing"]


def _summary_of(ws: Workspace, entry: Entry) -> list[str]:
    try:
        meta = load(ws, entry).meta
        return ["ok", _stated(meta.get("status")), _stated(meta.get("class"))]
    except records.RecordError as exc:
        return ["bad", str(exc)]


def readable(ws: Workspace, store: Store, unreadable: list[dict[str, str]]) -> Iterator[tuple[Entry, dict[str, Any]]]:
    """Each entry of `store` with its front matter, every record read once; one that cannot be
    read is added to `unreadable` (id, path, problem) and passed over."""

    for entry in store.entries:
        try:
            meta = load(ws, entry).meta
        except records.RecordError as exc:
            unreadable.append({"id": entry.id, "path": entry.rel, "problem": str(exc)})
            continue
        yield entry, meta


def jsonable(value: Any) -> Any:
    """Front matter as JSON: a date YAML read unquoted becomes its ISO text; keys become text."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if hasattr(value, "isoformat"):  # datetime.date / datetime (datetime stays off the hook path)
        return value.isoformat()
    return str(value)
