"""The review queue: candidates under `.ai/repo/knowledge/candidates/`, each placed on the branch
of the episode it names in `derived_from` (from the tracked session record, or from the ledger
while that record is not yet written). Read through the one front-matter reader
(its fast path needs no YAML: this runs on the start hook).

What the queue reads of each file is kept in `.ai/local/state/queue.cache.json`, keyed by the
file's inode, size, modification and change times: a file whose stat differs (or that changed in
the two seconds before it was read, which a clock tick may not tell apart) is read again, so the
cache is derived from the files and never a second source of truth. The start hook then stats
the candidates and the session records it needs instead of reading them.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majordomus.base.fsio import atomic_write, read_regular
from majordomus.base.ids import ID_PATTERN
from majordomus.store import records
from majordomus.store.workspace import Workspace

_BRANCH = re.compile(r"^branch:\s*(.*)$", re.M)
CACHE = "queue.cache.json"
_VERSION = 1  # of what an entry holds: raise it when the fields read change
_FIELDS = ("class", "status", "title", "date")
FEW = 16  # files read directly rather than through the cache
_RACY_NS = 2_000_000_000  # a file changed this recently may change again within one clock tick


@dataclass(frozen=True)
class Candidate:
    id: str
    path: Path
    cls: str
    status: str
    title: str
    episode: str | None
    branch: str | None  # None: this checkout cannot place the episode


def _scalar(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
            return value if isinstance(value, str) else raw
        except ValueError:
            return raw.strip('"')
    return raw


class _Cache:
    """What was read of each file, by its stat: one JSON file, loaded once, written when changed."""

    def __init__(self, ws: Workspace) -> None:
        self.path = ws.state / CACHE
        self.root = ws.root
        self.entries: dict[str, list[Any]] = {}
        self.changed = False
        self.now = time.time_ns()
        try:
            data = json.loads(read_regular(self.path, 1 << 28))
            if isinstance(data, dict) and data.get("v") == _VERSION and isinstance(data.get("entries"), dict):
                self.entries = data["entries"]
        except (OSError, ValueError):
            pass

    @staticmethod
    def stamp(st: os.stat_result) -> list[int]:
        return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]

    def get(self, key: str, st: os.stat_result) -> tuple[bool, Any]:
        """(hit, value) of the file at `key` whose stat is `st`."""
        entry = self.entries.get(key)
        if isinstance(entry, list) and len(entry) == 2 and entry[0] == self.stamp(st):
            return True, entry[1]
        return False, None

    def put(self, key: str, st: os.stat_result, value: Any) -> None:
        if self.now - st.st_ctime_ns < _RACY_NS:  # it may change again unseen: read it next time
            if self.entries.pop(key, None) is not None:
                self.changed = True
            return
        self.entries[key] = [self.stamp(st), value]
        self.changed = True

    def keep_only(self, prefix: str, keys: set[str]) -> None:
        """Forget the files under `prefix` that are no longer there."""
        gone = [k for k in self.entries if k.startswith(prefix) and k not in keys]
        for key in gone:
            del self.entries[key]
        self.changed = self.changed or bool(gone)

    def save(self) -> None:
        if not self.changed:
            return
        try:
            atomic_write(self.path, json.dumps({"v": _VERSION, "entries": self.entries},
                                               separators=(",", ":"), ensure_ascii=False) + "\n",
                         root=self.root)
        except OSError:
            pass  # a cache that cannot be written costs time, not correctness
        self.changed = False


def _lstat(path: Path | str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def episode_branches(ws: Workspace, episodes: set[str],
                     ledger_branches: dict[str, str | None] | None = None,
                     cache: _Cache | None = None) -> dict[str, str | None]:
    """Branch of each episode: its session record, else its `session.opened` ledger line.
    `ledger_branches`: the episodes' branches at their open, when the caller has read the ledger."""
    found: dict[str, str | None] = {}
    for folder in (ws.sessions, ws.outbox / "sessions"):
        where, prefix = os.fspath(folder) + os.sep, ws.rel(folder) + "/"
        for episode in sorted(episodes - found.keys()):
            if not ID_PATTERN.match(episode):  # a record's text never becomes a path unchecked
                continue
            path = where + episode + ".md"
            st = _lstat(path)
            if st is None:
                continue
            hit, branch = cache.get(prefix + episode + ".md", st) if cache is not None else (False, None)
            if not hit:
                branch = _record_branch(Path(path))
                if cache is not None:
                    cache.put(prefix + episode + ".md", st, branch)
            if isinstance(branch, list):  # [branch]: the record names one (maybe null)
                found[episode] = branch[0]
    missing = episodes - found.keys()
    if missing and ledger_branches is not None:
        found.update({e: ledger_branches[e] for e in missing if e in ledger_branches})
    elif missing:  # through the ledger's index: one line read an episode
        found.update(ws.ledger.opened_branches(sorted(missing)))
    return found


def _record_branch(path: Path) -> list[str | None] | None:
    """[branch] a session record states (None inside when it says null or nothing), or None when
    it cannot be read as one."""
    try:
        head = read_regular(path, 2048).decode("utf-8", errors="replace")
    except OSError:
        return None
    match = _BRANCH.search(head)
    return [_scalar(match.group(1)) or None] if match else None


def _front(path: Path) -> list[Any] | None:
    """What the queue reads of one record: [fields, episode named in derived_from], or None when
    it is not a readable record. Through the one front-matter reader."""
    meta = records.front(path)
    if meta is None:
        return None
    fields = {k: str(meta[k]) for k in _FIELDS if meta.get(k) is not None}
    prov = meta.get("provenance")
    refs = prov.get("derived_from") if isinstance(prov, dict) else None
    session = next((r[len("session:"):] for r in refs or () if isinstance(r, str) and r.startswith("session:")),
                   None) if isinstance(refs, list) else None
    return [fields, session]


def fronts(folder: Path, paths: list[Path] | None = None, cache: _Cache | None = None,
           root: Path | None = None) -> list[tuple[str, str, dict[str, str], str | None]]:
    """(id, file, front-matter fields, episode named in derived_from) of every record with status
    candidate, sorted by id: the files of `folder`, or `paths` (the files a source class lists).
    Read through the one front-matter reader, so the queue agrees with `knowledge check`; with a
    `cache` (and the repository `root`), a file whose stat is unchanged is not read again."""
    listed = sorted(paths, key=lambda p: p.name) if paths is not None else records.files(folder)
    found = []
    keys: set[str] = set()
    prefixes: dict[Path, str] = {}  # folder -> its repository-relative path (pathlib is slow per file)
    for path in listed:
        if path.name == "README.md" or path.name.startswith(".tmp."):
            continue
        st = _lstat(path) if cache is not None else None
        if cache is not None and st is not None and root is not None:
            parent = path.parent
            if parent not in prefixes:
                prefixes[parent] = parent.relative_to(root).as_posix() + "/"
            key = prefixes[parent] + path.name
            keys.add(key)
            hit, read = cache.get(key, st)
            if not hit:
                read = _front(path)
                cache.put(key, st, read)
        else:
            read = _front(path)
        if read is None:
            continue
        fields, session = read
        if fields.get("status", "candidate") != "candidate":
            continue
        found.append((path.stem, os.fspath(path), fields, session))
    if cache is not None and root is not None and paths is None:
        cache.keep_only(folder.relative_to(root).as_posix() + "/", keys)
    return found


def waiting(ws: Workspace, folder: Path | None = None, paths: list[Path] | None = None,
            ledger_branches: dict[str, str | None] | None = None) -> list[Candidate]:
    """Every candidate with status candidate, sorted by id, placed on its branch. `paths` (the
    files a source class lists) replaces the listing of `folder`. A few `paths` are read, not
    looked up in the cache (which costs more to load than they cost to read)."""
    cache = _Cache(ws) if paths is None or len(paths) > FEW else None
    raw = fronts(folder or ws.candidates, paths, cache, ws.root)
    branches = episode_branches(ws, {e for *_, e in raw if e}, ledger_branches, cache)
    if cache is not None:
        cache.save()
    return [Candidate(rid, Path(where), f.get("class", "?"), f.get("status", "candidate"),
                      f.get("title", ""), episode, branches.get(episode) if episode else None)
            for rid, where, f, episode in raw]


def placed(ws: Workspace, ledger_branches: dict[str, str | None] | None = None
           ) -> list[tuple[str, str | None, str | None]]:
    """(id, episode, branch) of every candidate: the queue as the start briefing needs it."""
    cache = _Cache(ws)
    raw = fronts(ws.candidates, cache=cache, root=ws.root)
    branches = episode_branches(ws, {e for *_, e in raw if e}, ledger_branches, cache)
    cache.save()
    return [(rid, episode, branches.get(episode) if episode else None) for rid, _, _, episode in raw]
