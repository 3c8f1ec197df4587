"""The review queue: candidates under `.ai/repo/knowledge/candidates/` (and the trunk's outbox),
each placed on the branch where the work of the episode it names in `derived_from` was: an
episode open in this checkout works on the branch checked out; a closed one, where it closed (its
session record's newest `branch_close`, else its newest span's `branch`); else the ledger's
opening. A candidate that moved (`git checkout -b` mid-episode) or was merged counts where it is:
in the tree. Read through the one front-matter reader (its fast path needs no YAML: this runs on
the start hook), with the evidence's time (`Evidence: <event> at <ts>.`, the body's last line)
that orders it.

What the queue reads of each candidate is kept in the knowledge index (`store/index.py`), checked by
its folder's stamp; the branch each session record states, in `.ai/local/state/queue.cache.json` by
the record's stat (`store/filecache.py`).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from operator import attrgetter
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING, json, pattern
from majordomus.base.fsio import read_regular
from majordomus.base.ids import ID_PATTERN
from majordomus.store import records
from majordomus.store import index as store_index
from majordomus.store.filecache import FileCache
from majordomus.store.index import Index
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

_BRANCH = pattern(r"(?m)^(?:    )?branch(?:_close)?:[ \t]*(.*)$")  # each span's, newest last
_EVIDENCE = pattern(rb"(?m)^Evidence: [\w.]+ at (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\.[ \t]*$")
CACHE = "queue.cache.json"
_VERSION = 5  # of what an entry holds: raise it when the fields read change
HEAD_LIMIT = 1 << 16  # what is read of a record for its front matter (`records.front`'s bound)
_FIELDS = ("class", "status", "title", "date")
FEW = 16  # files read directly rather than through the cache


class Candidate(NamedTuple):
    id: str
    path: str  # the file, as text: a queue of thousands makes no path objects
    cls: str
    status: str
    title: str
    episode: str | None
    branch: str | None  # None: this checkout cannot place the episode
    date: str = ""  # the evidence day, as written
    ts: str = ""  # the evidence's time, from the body's `Evidence:` line ("" when it has none)

    @property
    def when(self) -> str:
        """What orders it: the evidence's time, else its day."""
        return self.ts or self.date


_ID, _WHEN = attrgetter("id"), attrgetter("when")  # keys read in C: a queue of 8,000 at 1M


def by_time(queue: list[Candidate], newest_first: bool = False) -> list[Candidate]:
    """`queue` in the evidence's order (time, then id: stable, whatever the listing order)."""
    ordered = sorted(queue, key=_ID)
    return sorted(ordered, key=_WHEN, reverse=newest_first)

def _scalar(raw: str) -> str:
    raw = raw.strip()
    if raw.startswith('"'):
        try:
            value = json.loads(raw)
            return value if isinstance(value, str) else raw
        except ValueError:
            return raw.strip('"')
    return raw


def _cache(ws: Workspace) -> FileCache:
    return FileCache(ws.state / CACHE, _VERSION, ws.root)


def episode_branches(ws: Workspace, episodes: set[str],
                     ledger_branches: dict[str, str | None] | None = None,
                     cache: FileCache | None = None,
                     current: tuple[str, str | None] | None = None) -> dict[str, str | None]:
    """Where each episode's work was: the episode at work now (`current`: (episode, the branch
    checked out), when the caller knows it), there; else its session record (where it closed);
    else its `session.opened` ledger line. `ledger_branches`: the episodes' branches at their
    open, when the caller has read the ledger."""
    found: dict[str, str | None] = {}
    if current is not None and current[0] in episodes:
        found[current[0]] = current[1]
    named = _ids(episodes - found.keys())  # a record's text never becomes a path unchecked
    for folder in (ws.sessions, ws.outbox / "sessions"):
        where, prefix = os.fspath(folder) + os.sep, ws.rel(folder)
        kept = cache.folders.get(prefix, {}) if cache is not None else {}
        for episode in named:
            if episode in found:
                continue
            name = episode + ".md"
            try:
                st = os.lstat(where + name)
            except OSError:
                continue
            # `FileCache.get`, inline: one call a record fewer, thousands at 1M
            entry = kept.get(name)
            if type(entry) is list and len(entry) >= 5 and entry[0] == st.st_ino and entry[1] == st.st_size \
                    and entry[2] == st.st_mtime_ns and entry[3] == st.st_ctime_ns:
                branch = entry[4]
            else:
                branch = _record_branch(Path(where + name))
                if cache is not None:
                    cache.put(prefix, name, st, branch)
            if isinstance(branch, list):  # [branch]: the record names one (maybe null)
                found[episode] = branch[0]
    missing = episodes - found.keys()
    if missing and ledger_branches is not None:
        found.update({e: ledger_branches[e] for e in missing if e in ledger_branches})
    elif missing:  # through the ledger's index: one line read an episode
        found.update(ws.ledger.opened_branches(sorted(missing)))
    return found


# ids, one a line, each as `ID_PATTERN` reads it (`_ids`)
_ID_LINES = pattern(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}(?:\n[A-Za-z0-9][A-Za-z0-9._-]{0,127})*")


def _ids(names: Iterable[str]) -> list[str]:
    """Those of `names` that are ids (`ID_PATTERN`), sorted: one pattern over them all (8,000
    episodes at 1M: ~1.5 ms, where a check each costs ~7), each one checked when any fails. A
    name holding a newline would read as more lines than names: the count tells."""
    ordered = sorted(names)
    text = "\n".join(ordered)
    if ordered and text.count("\n") == len(ordered) - 1 and _ID_LINES().fullmatch(text):
        return ordered
    return [n for n in ordered if ID_PATTERN.match(n)]


def _record_branch(path: Path) -> list[str | None] | None:
    """[branch] a session record states (None inside when it says null or nothing), or None when
    it cannot be read as one."""
    try:
        head = read_regular(path, 2048).decode("utf-8", errors="replace")
    except OSError:
        return None
    front, _, _ = head.partition("\n---")
    found = _BRANCH().findall(front)
    return [_scalar(found[-1]) or None] if found else None



def _front(path: Path | str, head: bytes | None = None) -> list[Any] | None:
    """What the queue reads of one record: [fields, episode named in derived_from, status as
    `records.quick_status` reads it], or None when it is not a readable record. Through the one
    front-matter reader (of `head`, the file's first bytes, when the caller read them)."""
    if head is None:
        try:
            head = read_regular(path, HEAD_LIMIT)
        except OSError:
            return None
    meta = records.front_of(head, str(path))
    if meta is None:
        return None
    status = meta.get("status")
    raw = status if isinstance(status, str) else None
    fields = {k: str(meta[k]) for k in _FIELDS if meta.get(k) is not None}
    if fields.get("status", "candidate") != "candidate":
        return [{"status": fields["status"]}, None, raw]  # not in the queue: its status is all that counts
    stamps = _EVIDENCE().findall(head)
    if stamps:
        fields["ts"] = stamps[-1].decode("ascii")
    prov = meta.get("provenance")
    refs = prov.get("derived_from") if isinstance(prov, dict) else None
    session = next((r[len("session:"):] for r in refs or () if isinstance(r, str) and r.startswith("session:")),
                   None) if isinstance(refs, list) else None
    return [fields, session, raw]


def _knowledge_of(folder: str) -> str:
    """The knowledge folder a candidates folder (candidates/ or the outbox's) belongs to."""
    knowledge = os.path.dirname(folder)
    if os.path.basename(knowledge) == "outbox":  # .ai/local/state/outbox/candidates
        knowledge = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(knowledge))), "repo", "knowledge")
    return knowledge


def reviewed(folder: str, name: str) -> bool:
    """Whether the candidate `name` of `folder` (candidates/ or the outbox's) has a reviewed record
    in curated/: every act leaves the candidate's file where it was (docs/TEAM.md), and it is in no
    queue from then on. One stat."""
    if os.path.basename(folder) != "candidates":
        return False
    return os.path.exists(os.path.join(_knowledge_of(folder), "curated", name))


class _Reviewed:
    """`reviewed`, for many names: each curated folder's names listed once (from the index when
    there is one), not one stat a candidate."""

    def __init__(self, index: Index | None) -> None:
        self.index = index
        self.curated: dict[str, set[str] | None] = {}

    def __call__(self, folder: str, name: str) -> bool:
        if folder not in self.curated:  # None: one stat a name (no index, or not a candidates folder)
            listed = None
            if self.index is not None and os.path.basename(folder) == "candidates":
                listed = self.index.names(Path(_knowledge_of(folder), "curated"))
            self.curated[folder] = set(listed) if listed is not None else None
        found = self.curated[folder]
        return reviewed(folder, name) if found is None else name in found


def _read(path: str) -> list[Any] | None:
    return _front(path)


def _keys(read: list[Any] | None) -> tuple[int, str | None, str, str | None]:
    """The queue's KEYED columns in the index (`store/index.py`) of what `_front` read: whether the
    file waits for review (status candidate), the episode it names, what orders it
    (`Candidate.when`) and its status as `records.quick_status` reads it (`status_names`)."""
    if read is None:
        return 0, None, "", None
    fields, session, status = read
    return (int(fields.get("status", "candidate") == "candidate"), session, fields.get("ts") or fields.get("date", ""),
            status)


def view(index: Index, folder: Path, only: Iterable[str] | None = None) -> list[tuple[str, Any]]:
    """What the queue reads of each record file of `folder` (of `only`), through the index."""
    return index.view(folder, "queue", _VERSION, _read, only=only, keys=_keys)


# The rows waiting in candidates/ (:folder0) and curated/ (:folder1), a candidate with a reviewed
# record beside it aside (`reviewed`), each with its oldest `knowledge.derived` line when the
# ledger's facts have one (store/facts.py): what orders the queue, no value decoded.
WAITING = ("SELECT f.folder, f.name, f.q_episode, f.q_when, d.ts, d.number, d.since FROM files f "
           "LEFT JOIN derived d ON d.name = f.name WHERE f.folder IN (:folder0, :folder1) AND f.q_live = 1 "
           "AND NOT (f.folder = :folder0 AND f.name IN (SELECT name FROM files WHERE folder = :folder1))")
# The same, of the files git's listing names (the `listed` table, store/listing.py) as the
# candidates and curated source classes, a candidate the listing names under another class aside
# (`listing.listing`), each with its class, whether git tracks it, and what the session records
# of its episode (sessions/ :folder2, the outbox's :folder3) state of its branch (`placed`).
_DATED = "f.folder, f.name, f.q_episode, f.q_when, d.ts, d.number, d.since, l.source, l.tracked"
_ENTRY = _DATED + ", s.b_named, s.b_branch, o.b_named AS o_named, o.b_branch AS o_branch"
_FROM = "FROM files f JOIN listed l ON l.folder = f.folder AND l.name = f.name LEFT JOIN derived d ON d.name = f.name "
_SESSIONS = ("LEFT JOIN files s ON s.folder = :folder2 AND s.name = f.q_episode || '.md' "
             "LEFT JOIN files o ON o.folder = :folder3 AND o.name = f.q_episode || '.md' ")
_WHERE = ("WHERE f.folder IN (:folder0, :folder1) AND f.q_live = 1 AND l.source IN ('candidates', 'curated') "
          "AND NOT (f.folder = :folder0 AND f.name IN (SELECT name FROM files WHERE folder = :folder1)) "
          "AND NOT (l.source = 'candidates' AND f.name IN (SELECT name FROM listed WHERE source != 'candidates'))")
_JOINED = _FROM + _SESSIONS + _WHERE
LISTED = "SELECT " + _ENTRY + " " + _JOINED
# LISTED's rows with what the queue's view keeps of each entry (its JSON text, as `rows` left it):
# a reader that shows every entry (`--json`) decodes them from this one pass, not looked up again.
LISTED_KEPT = "SELECT " + _ENTRY + ", f.queue " + _JOINED
# LISTED's rows without the session records' columns: what a count of the queue and its ages needs
# (`knowledge status`), not where each entry is placed.
DATED = "SELECT " + _DATED + " " + _FROM + _WHERE
# DATED's rows of the candidates source class alone, with what dates them and nothing else: the
# queue `knowledge status` counts and ages (a curated record back at candidate is not in it).
AGED = "SELECT f.folder, f.name, d.ts, d.number, d.since " + _FROM + _WHERE + " AND l.source = 'candidates'"
# The branch an entry's session records state (`branches_of`), and its group in review order
# (`agenda.ranked`'s key: 0 on the :branch checked out, 1 on another, 2 none), where SQL places
# and dates an entry exactly as Python does: a candidate the ledger dates (else git's history or
# its day date it, in Python), named `<id>.md`, of no episode or of one whose session record states
# a branch (else the ledger's opening places it, in Python), the episode an id (`ID_PATTERN`, as
# GLOBs: ASCII only); NULL for every other entry.
_STATED = "(CASE WHEN s.b_named THEN s.b_branch ELSE o.b_branch END)"
_GROUP = ("CASE WHEN d.since IS NULL OR l.source != 'candidates' OR f.q_when IS NULL "
          "OR substr(f.name, -3) != '.md' THEN NULL "
          "WHEN coalesce(f.q_episode, '') = '' THEN 2 "
          "WHEN NOT (length(f.q_episode) <= 128 AND f.q_episode GLOB '[A-Za-z0-9]*' "
          "AND f.q_episode NOT GLOB '*[^A-Za-z0-9._-]*') "
          "OR NOT (coalesce(s.b_named, 0) OR coalesce(o.b_named, 0)) THEN NULL "
          f"WHEN {_STATED} = :branch THEN 0 WHEN {_STATED} IS NOT NULL THEN 1 ELSE 2 END")
# LISTED's rows as `knowledge candidates` shows the head of the queue: the first :limit of those
# SQL orders (by `agenda.ranked`'s key: group, review age, `Candidate.when`, id), then every entry
# SQL cannot place or date, and every entry git does not track (listed by the reader whole), each
# with its group (NULL: Python orders it), the first with how many SQL orders. One pass of the
# joins (the entries kept in a table of the query's own), not one Python tuple an entry.
HEADED = ("WITH q AS MATERIALIZED (SELECT " + _ENTRY + ", " + _GROUP + " AS grp " + _JOINED + ") "
          "SELECT *, (SELECT count(*) FROM q WHERE grp IS NOT NULL) FROM (SELECT * FROM q WHERE grp IS NOT NULL "
          "ORDER BY grp, since, q_when, substr(name, 1, length(name) - 3) LIMIT :limit) "
          "UNION ALL SELECT *, NULL FROM q WHERE grp IS NULL OR tracked = 0")
# Whether the two classes list files beyond the two folders (then LISTED does not answer).
BEYOND = ("SELECT count(*) FROM listed WHERE source IN ('candidates', 'curated') "
          "AND folder NOT IN (:folder0, :folder1)")
_BRANCH_VERSION = 1  # of what the index keeps of a session record (`_record_branch`)


def _branch_read(path: str) -> list[str | None] | None:
    return _record_branch(Path(path))


def _branch_keys(read: list[str | None] | None) -> tuple[int, str | None]:
    """A session record's KEYED columns in the index: whether it states a branch, and which."""
    return (1, read[0]) if isinstance(read, list) else (0, None)


def waiting_rows(ws: Workspace) -> list[Any] | None:
    """(folder, name, episode, when, ledger ts, ledger line, since) of every file waiting in
    candidates/ or curated/ (WAITING), from the index brought up to date; None without one."""
    found = store_index.of(ws).rows([([ws.candidates, ws.curated], "queue", _VERSION, _read, _keys)],
                                    [WAITING], {})
    return found[0] if found is not None else None


def dated_rows(ws: Workspace, aged: bool = False) -> list[Any] | None:
    """DATED's rows: LISTED's without the session records' columns (None as `listed_rows`); `aged`:
    AGED's."""
    found = store_index.of(ws).rows([([ws.candidates, ws.curated], "queue", _VERSION, _read, _keys)],
                                    [BEYOND, AGED if aged else DATED], {},
                                    kept="aged" if aged else "dated")
    return None if found is None or found[0][0][0] else found[1]


def listed_rows(ws: Workspace, kept: bool = False) -> list[Any] | None:
    """LISTED's rows: (folder, name, episode, when, ledger ts, ledger line, since, source class,
    tracked, then whether and what sessions/'s record of the episode states of its branch, then
    the outbox's), from the index brought up to date (session records too); None without one, or
    when the source classes list files beyond the two folders. `kept`: LISTED_KEPT's rows, each
    ending with the queue view's JSON text of the entry."""
    found = store_index.of(ws).rows(
        [([ws.candidates, ws.curated], "queue", _VERSION, _read, _keys),
         ([ws.sessions, ws.outbox / "sessions"], "branch", _BRANCH_VERSION, _branch_read, _branch_keys)],
        [BEYOND, LISTED_KEPT if kept else LISTED], {})
    return None if found is None or found[0][0][0] else found[1]


def brought_up(ws: Workspace, sessions: bool = True) -> bool:
    """Whether the index's rows of what `listed_rows` reads (without `sessions`: `dated_rows`) are
    brought up to date (as it would, no query run): False without an index."""
    return store_index.of(ws).rows(
        [([ws.candidates, ws.curated], "queue", _VERSION, _read, _keys),
         ([ws.sessions, ws.outbox / "sessions"], "branch", _BRANCH_VERSION, _branch_read, _branch_keys)][
            :2 if sessions else 1], [], {}) is not None


def placed_by_records(rows: Iterable[tuple[str | None, Any, Any, Any, Any]]) -> bool:
    """Whether `branches_of` places every episode of `rows` by what its session records state (of the
    index), none through the ledger's opening."""
    return all(not episode or (ID_PATTERN.match(episode) and (named or outbox_named))
               for episode, named, _, outbox_named, _ in rows)


def headed_rows(ws: Workspace, branch: str | None, limit: int) -> list[Any] | None:
    """HEADED's rows: LISTED's, then the group SQL placed the entry in (None: not placed) and, on
    the first `limit` it ordered, how many it ordered; None as `listed_rows`."""
    found = store_index.of(ws).rows(
        [([ws.candidates, ws.curated], "queue", _VERSION, _read, _keys),
         ([ws.sessions, ws.outbox / "sessions"], "branch", _BRANCH_VERSION, _branch_read, _branch_keys)],
        [BEYOND, HEADED], {"branch": branch, "limit": limit}, kept="headed")
    return None if found is None or found[0][0][0] else found[1]


def branches_of(ws: Workspace, rows: Iterable[tuple[str | None, Any, Any, Any, Any]]) -> dict[str, str | None]:
    """Episode -> its branch, as `episode_branches` places it, from LISTED's (episode, the session
    records' columns) rows: what a record states, else the ledger's opening."""
    found: dict[str, str | None] = {}
    missing: set[str] = set()
    for episode, named, branch, outbox_named, outbox_branch in rows:
        if not episode or episode in found or episode in missing:
            continue
        if ID_PATTERN.match(episode) and (named or outbox_named):  # a record's text never names a path unchecked
            found[episode] = branch if named else outbox_branch
        else:
            missing.add(episode)
    if missing:  # through the ledger's index: one line read an episode
        found.update(ws.ledger.opened_branches(sorted(missing)))
    return found


def candidate(path: str, read: list[Any] | None, branch: str | None) -> Candidate:
    """The Candidate of the file `path`, of what `_front` read of it, placed on `branch`."""
    fields, episode, _ = read if read is not None else ({}, None, None)
    name = path.rpartition(os.sep)[2]
    return Candidate(name[:-3] if name.endswith(".md") else os.path.splitext(name)[0], path,
                     fields.get("class", "?"), fields.get("status", "candidate"), fields.get("title", ""),
                     episode, branch, fields.get("date", ""), fields.get("ts", ""))


# The status `_front` read (its KEYED column: NULL when it has none or the file cannot be read) of
# each file of candidates/ (:folder0) and curated/ (:folder1), from the index's covering index
# alone, no value decoded; counted and placed in Python (a GROUP BY sorts in a temporary b-tree,
# and a reviewed record looked up a row costs more than the rows).
STATUSES = "SELECT f.folder = :folder0, f.name, f.q_status FROM files f WHERE f.folder IN (:folder0, :folder1)"


def _statuses(ws: Workspace) -> list[tuple[int, str, str | None]] | None:
    """(whether in candidates/, name, status as `status_names` says it) of every file of the
    candidates and curated folders, the queue's view of each brought up to date first (a
    candidate with a reviewed record beside it: `reviewed`); None without the index."""
    found = store_index.of(ws).rows([([ws.candidates, ws.curated], "queue", _VERSION, _read, _keys)],
                                    [STATUSES], {})
    if found is None:
        return None
    curated = {name for is_candidate, name, _ in found[0] if not is_candidate}
    return [(is_candidate, name, "reviewed" if is_candidate and status in (None, "candidate") and name in curated
             else status) for is_candidate, name, status in found[0]]


def status_counts(ws: Workspace) -> dict[str, dict[str, int]]:
    """{"candidates": …, "curated": …}: the records of each folder counted by `status_names`'s
    status ("unreadable" for None), sorted by it; from the index's columns, no value decoded."""
    rows = _statuses(ws)
    counts: dict[str, dict[str, int]] = {"candidates": {}, "curated": {}}
    if rows is None:
        for name, folder in (("candidates", ws.candidates), ("curated", ws.curated)):
            for status in status_names(ws, folder).values():
                counts[name][status or "unreadable"] = counts[name].get(status or "unreadable", 0) + 1
    else:
        for is_candidate, _, status in rows:
            counted = counts["candidates" if is_candidate else "curated"]
            counted[status or "unreadable"] = counted.get(status or "unreadable", 0) + 1
    return {name: dict(sorted(counted.items())) for name, counted in counts.items()}


def status_names(ws: Workspace, folder: Path) -> dict[str, str | None]:
    """The `status:` of each record file of `folder`, by file name (None when it has none, or
    cannot be read), as `records.quick_status` reads it, through the index: counts and the review
    queue's length for `majordomus context`, doctor and status."""
    if folder in (ws.candidates, ws.curated):
        rows = _statuses(ws)
        if rows is not None:
            wanted = int(folder == ws.candidates)
            return dict(sorted((name, status) for is_candidate, name, status in rows if is_candidate == wanted))
    index = store_index.of(ws)
    is_reviewed = _Reviewed(index)
    where = os.fspath(folder)
    found: dict[str, str | None] = {}
    for name, read in view(index, folder):
        status = read[2] if read is not None else None
        if status in (None, "candidate") and is_reviewed(where, name):
            status = "reviewed"
        found[name] = status
    return found


def fronts(folder: Path, paths: Sequence[str | Path] | None = None, index: Index | None = None
           ) -> list[tuple[str, str, dict[str, str], str | None]]:
    """(id, file, front-matter fields, episode named in derived_from) of every record with status
    candidate, sorted by id: the files of `folder`, or `paths` (the files a source class lists).
    Read through the one front-matter reader, so the queue agrees with `knowledge check`; with an
    `index`, a file whose stamp is unchanged is not read again. Paths are strings here: thousands
    of path objects cost more than the stats."""
    listed: list[tuple[str, str, Any]] = []
    if paths is None:
        where = os.fspath(folder)
        if index is not None:
            listed = [(where, n, r) for n, r in view(index, folder)]
        else:
            listed = [(where, n, _front(where + os.sep + n)) for n in records.names(folder)]
    else:
        by_folder: dict[str, list[str]] = {}
        for p in paths:
            parent, _, name = os.fspath(p).rpartition(os.sep)
            by_folder.setdefault(parent, []).append(name)
        for parent, names in by_folder.items():
            if index is not None:
                got = dict(view(index, Path(parent), names))
                listed.extend((parent, n, got[n] if n in got else _front(parent + os.sep + n)) for n in names)
            else:
                listed.extend((parent, n, _front(parent + os.sep + n)) for n in names)
        listed.sort(key=lambda item: item[1])
    is_reviewed = _Reviewed(index)
    found = []
    for parent, name, read in listed:
        if name == "README.md" or name.startswith(".tmp.") or read is None:
            continue
        fields, session, _ = read
        if fields.get("status", "candidate") != "candidate" or is_reviewed(parent, name):
            continue
        found.append((name[:-3] if name.endswith(".md") else os.path.splitext(name)[0], parent + os.sep + name,
                      fields, session))
    return found


def waiting(ws: Workspace, folder: Path | None = None, paths: Sequence[str | Path] | None = None,
            ledger_branches: dict[str, str | None] | None = None,
            current: tuple[str, str | None] | None = None) -> list[Candidate]:
    """Every candidate with status candidate, sorted by id, placed on its branch. `paths` (the
    files a source class lists) replaces the listing of `folder`. A few `paths` are read, not
    looked up in the cache (which costs more to load than they cost to read)."""
    many = paths is None or len(paths) > FEW
    cache = _cache(ws) if many else None
    raw = fronts(folder or ws.candidates, paths, store_index.of(ws) if many else None)
    branches = episode_branches(ws, {e for *_, e in raw if e}, ledger_branches, cache, current)
    if cache is not None:
        cache.save()
    return [Candidate(rid, where, f.get("class", "?"), f.get("status", "candidate"),
                      f.get("title", ""), episode, branches.get(episode) if episode else None,
                      f.get("date", ""), f.get("ts", ""))
            for rid, where, f, episode in raw]


# The candidates waiting in candidates/ (:folder0), one with a reviewed record in curated/
# (:folder1) aside (`reviewed`), as `fronts` finds them, from the index's covering index alone, no
# value decoded: what the briefing's queue counts, places and orders (`briefed`).
BRIEFED = ("SELECT f.name, f.q_episode, f.q_when FROM files f WHERE f.folder = :folder0 AND f.q_live = 1 "
           "AND f.name NOT IN (SELECT name FROM files WHERE folder = :folder1)")


class Waiting(NamedTuple):
    """A candidate of the queue as `briefed` counts and orders it: its front matter's other fields
    are read for the few the briefing shows (`whole`)."""
    id: str
    path: str
    episode: str | None
    branch: str | None
    when: str  # `Candidate.when`


def briefed(ws: Workspace, ledger_branches: dict[str, str | None] | None = None,
            current: tuple[str, str | None] | None = None) -> list[Waiting] | None:
    """`waiting(ws, ...)` of candidates/ as `Waiting`s, sorted by id, from the index's KEYED
    columns (BRIEFED): the briefing reads the front matter of those it shows alone (`whole`).
    None without the index."""
    found = store_index.of(ws).rows([([ws.candidates, ws.curated], "queue", _VERSION, _read, _keys)], [BRIEFED], {})
    if found is None:
        return None
    rows = sorted(found[0])
    cache = _cache(ws)
    branches = episode_branches(ws, {e for _, e, _ in rows if e}, ledger_branches, cache, current)
    cache.save(unless_fewer=FEW)  # the record the last close wrote is read again, not 840 KB written at 1M
    where = os.fspath(ws.candidates) + os.sep
    made = tuple.__new__  # each field given: `Waiting`'s own `__new__` adds nothing but time (8,000 at 1M)
    return [made(Waiting, (name[:-3], where + name, episode, branches.get(episode) if episode else None, when or ""))
            for name, episode, when in rows]


def whole(ws: Workspace, entry: Waiting | Candidate) -> Candidate:
    """The Candidate of a queue's entry: what the index keeps of its file (as `briefed` left it),
    else the file read (`wholes` of the one entry)."""
    return wholes(ws, [entry])[0]


def wholes(ws: Workspace, entries: Sequence[Waiting | Candidate]) -> list[Candidate]:
    """`whole` of each entry, what the index keeps of their files asked for once a folder (the
    briefing shows a screenful: one query, not one an entry); a folder whose files the index does
    not all keep, each file read."""
    names: dict[str, list[str]] = {}
    for entry in entries:
        if not isinstance(entry, Candidate):
            folder, _, name = entry.path.rpartition(os.sep)
            names.setdefault(folder, []).append(name)
    kept = {folder: store_index.of(ws).values(Path(folder), "queue", found) for folder, found in names.items()}
    out = []
    for entry in entries:
        if isinstance(entry, Candidate):
            out.append(entry)
            continue
        folder, _, name = entry.path.rpartition(os.sep)
        values = kept[folder]
        out.append(candidate(entry.path, values[name] if values is not None else _front(entry.path), entry.branch))
    return out


def placed(ws: Workspace, ledger_branches: dict[str, str | None] | None = None
           ) -> list[tuple[str, str | None, str | None]]:
    """(id, episode, branch) of every candidate: the queue as the start briefing needs it."""
    cache = _cache(ws)
    raw = fronts(ws.candidates, index=store_index.of(ws))
    branches = episode_branches(ws, {e for *_, e in raw if e}, ledger_branches, cache)
    cache.save()
    return [(rid, episode, branches.get(episode) if episode else None) for rid, _, _, episode in raw]
