"""The review queue in the order a person reviews it: the candidates of this checkout's branch
first, then the others (unattributed ones last), each group oldest review age first, then in the
order of the evidence (its time, then the id).

Review age is the age of the queue entry, not of the evidence (seed 001), measured by
`accumulation.review_ages` — the measure the rule candidates-reviewed and `knowledge status`
take — and each entry says which source it used (ledger, commit or date).
"""
from __future__ import annotations

import os
import time
from collections.abc import Container, Iterable, Sequence
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.knowledge import accumulation, queue
from majordomus.knowledge.accumulation import Age
from majordomus.knowledge.queue import Candidate
from majordomus.store import index as store_index
from majordomus.store import listing as store_listing
from majordomus.store.ledger import Line
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple


class Waiting(NamedTuple):  # no dataclass on the reader paths (docs/PERFORMANCE.md, imports)
    """One candidate of the queue, with how long it has waited and whether it is this branch's."""

    candidate: Candidate
    age: Age | None
    minutes: int | None  # whole minutes waited; None when no source dates it
    here: bool  # derived by an episode of the checkout's branch

    def as_dict(self) -> dict[str, object]:
        return {"age_minutes": self.minutes, "age_source": self.age.source if self.age else None,
                "age_detail": self.age.detail if self.age else None, "this_branch": self.here}


def ordered(ws: Workspace, queue: list[Candidate], branch: str | None, lines: Iterable[Line] | None = None,
            now: float | None = None) -> list[Waiting]:
    """`queue` in review order. `lines`: the `knowledge.derived` lines, when the caller has them;
    else the ledger's facts are asked (the knowledge index: no pass over the ledger)."""
    now = time.time() if now is None else now
    ages = accumulation.review_ages(ws, [c.path for c in queue], lines)
    found = []
    for c in queue:
        age = ages.get(c.path)
        minutes = int(max(0.0, now - age.since) // 60) if age is not None else None
        found.append(Waiting(c, age, minutes, branch is not None and c.branch == branch))

    def key(w: Waiting) -> tuple[int, int, float, str, str]:
        group = 0 if w.here else (1 if w.candidate.branch is not None else 2)
        since = w.age.since if w.age is not None else float("inf")  # undated: after the dated ones
        # one derivation dates many entries alike: then the evidence's order, not the id's
        return group, 0 if w.age is not None else 1, since, w.candidate.when, w.candidate.id

    return sorted(found, key=key)


class Row(NamedTuple):
    """One entry of the queue as the index orders it: no value of the record decoded."""

    path: str  # the file, as text
    id: str
    episode: str | None
    when: str  # `Candidate.when`
    age: Age | None
    rel: str = ""  # repository-relative, as git lists it (`dated` of the listing)
    tracked: bool = True
    source: str = "candidates"  # the source class that lists it (`dated` of the listing)


def dated(ws: Workspace, wanted: Container[str] | None = None,
          placed: list[tuple[Any, ...]] | None = None, kept: dict[str, str | None] | None = None
          ) -> list[Row] | None:
    """The entries of the queue (status candidate, no reviewed record beside) among the files
    `wanted` (paths as text) of candidates/ and curated/, each with its review age, in no order:
    from the knowledge index, None without one. Without `wanted`, the files git's listing names
    (`listing.indexed`): the candidates and the curated records back at status candidate (a
    reviewed record two clones' reviewers disagreed on), as `knowledge candidates` lists them, and
    `placed` (when given: else the session records are not joined) filled with what the session
    records of each entry's episode state of its branch (`queue.branches_of`), entry by entry;
    `kept` (with `placed`) filled with what the queue's view keeps of each entry, by path (the JSON
    text `Index.values` would decode: `shown`'s)."""
    if wanted is None and not store_listing.indexed(ws):
        return None
    found = accumulation.facts(ws)  # first: brings the ledger's facts in the index up to date
    if found.db is None:  # the facts are not the index's (no ledger yet): its tables are not joined
        return None
    rows = (queue.waiting_rows(ws) if wanted is not None else
            queue.listed_rows(ws, kept is not None) if placed is not None else queue.dated_rows(ws))
    if rows is not None and kept is not None and placed is not None:
        folders = {ws.rel(f): os.fspath(f) + os.sep for f in (ws.candidates, ws.curated)}
        kept.update((folders[row[0]] + row[1], row[-1]) for row in rows)
        rows = [row[:-1] for row in rows]
    return None if rows is None else _dated(ws, found, rows, wanted, placed)


def ages(ws: Workspace) -> list[tuple[str, Age | None]] | None:
    """(id, review age) of each entry of `dated` (git's listing) that the candidates source class
    lists, in no order, as `dated` dates it: what `knowledge status` counts and ages, no Row made
    an entry. None as `dated`. Kept beside the index (`_AGES`) under `whole`'s key, the branch
    aside, when the ledger dated every entry and nothing wrote to the index while it was read."""
    if not store_listing.indexed(ws):
        return None
    found = accumulation.facts(ws)  # first: brings the ledger's facts in the index up to date
    if found.db is None:
        return None
    key = _aged(ws)
    index = store_index.of(ws)
    kept: list[tuple[str, Age | None]] | None = index.kept(_AGES, key, _kept_ages)
    if kept is not None:
        return kept
    rows = queue.dated_rows(ws, aged=True)
    if rows is None:
        return None
    folders = {ws.rel(f): os.fspath(f) + os.sep for f in (ws.candidates, ws.curated)}
    dating = _Ages(found)
    aged: list[tuple[str, Age | None]] = []
    undated: list[tuple[int, str]] = []
    for folder, name, ts, number, since in rows:
        age = dating.of(name, ts, number, since)
        if age is None:
            undated.append((len(aged), folders[folder] + name))
        aged.append((name[:-3] if name.endswith(".md") else os.path.splitext(name)[0], age))
    for (i, _), age in zip(undated, _undated(ws, [path for _, path in undated])):
        aged[i] = (aged[i][0], age)
    if key is not None and not undated and _aged(ws) == key:  # all the ledger's, nothing wrote meanwhile
        places: dict[Any, int] = {}  # one Age a ledger line (`_Ages`): kept once
        which = [places.setdefault(age, len(places)) for _, age in aged]
        index.keep(_AGES, key, [[list(age) for age in places], [rid for rid, _ in aged], which])
    return aged


_AGES = "ages"  # `ages`' answer, kept beside the index (`Index.keep`)


def _aged(ws: Workspace) -> list[Any] | None:
    """What `ages` depends on when the ledger dates every entry: the index's state once the ledger's
    facts and the queue's rows are brought up to date, and the facts' tail (`whole`, the session
    records and the branch aside). None when the index cannot answer."""
    found = accumulation.facts(ws)
    if found.db is None or not queue.brought_up(ws, sessions=False):
        return None
    written = store_index.of(ws).written()
    return None if written is None else [_WHOLE, written, sorted(found.tail.derived.items())]


def _kept_ages(kept: Any) -> list[tuple[str, Age | None]] | None:
    """`ages`' answer from what it kept ([each distinct age, each entry's id, the place of its age
    among them]); None when `kept` is not of that shape."""
    try:
        distinct, ids, which = kept
        dated = [Age(since, source, detail) for since, source, detail in distinct]
        if len(ids) != len(which) or not all(type(a.since) in (int, float) and type(a.source) is str
                                             and type(a.detail) is str for a in dated):
            return None
        found = [(rid, dated[k]) for rid, k in zip(ids, which)]
        return found if all(type(rid) is str for rid in ids) else None
    except (TypeError, ValueError, IndexError):
        return None


class _Ages:
    """The review ages of the index's rows, from the ledger: a derivation line's (the last line,
    being written, is in no table: from the facts' tail), one Age a line (it dates many entries)."""

    __slots__ = ("tail", "kept")

    def __init__(self, found: Any) -> None:
        self.tail = found.tail.derived
        self.kept: dict[tuple[Any, Any, Any], Age] = {}

    def of(self, name: str, ts: Any, number: Any, since: Any) -> Age | None:
        """None: the ledger names no derivation of it (`_undated`)."""
        if since is None and name in self.tail:
            ts, number, since = self.tail[name]
        if since is None:
            return None
        age = self.kept.get((number, ts, since))
        if age is None:
            age = self.kept[number, ts, since] = Age(since, "ledger", f"knowledge.derived at ledger line {number}, {ts}")
        return age


def _undated(ws: Workspace, paths: list[str]) -> list[Age | None]:
    """The ages of records the ledger dates not: git's history, else the record's date."""
    if not paths:
        return []
    from_git = accumulation.commit_ages(ws)
    return [from_git.get(path.rpartition(os.sep)[2]) or accumulation.date_age(path) for path in paths]


def _dated(ws: Workspace, found: Any, rows: Iterable[Sequence[Any]], wanted: Container[str] | None = None,
           placed: list[tuple[Any, ...]] | None = None) -> list[Row]:
    """`dated` of the index's `rows` (WAITING's or LISTED's), `found` the ledger's facts."""
    folders = {ws.rel(f): os.fspath(f) + os.sep for f in (ws.candidates, ws.curated)}
    dating = _Ages(found)
    listed: list[Row] = []
    undated: list[int] = []
    contested: list[int] = []
    for folder, name, episode, when, ts, number, since, *more in rows:
        path = folders[folder] + name
        if wanted is not None and path not in wanted:
            continue
        age = dating.of(name, ts, number, since)
        if age is None:
            undated.append(len(listed))
        tracked, source = True, "candidates"
        if more:
            source, tracked, *records = more
            if source == "curated":
                contested.append(len(listed))
            if placed is not None:
                placed.append((episode, *records))
        listed.append(Row(path, name[:-3] if name.endswith(".md") else os.path.splitext(name)[0], episode, when,
                          age, folder + "/" + name, bool(tracked), source))
    for i, age in zip(undated, _undated(ws, [listed[i].path for i in undated])):
        listed[i] = listed[i]._replace(age=age)
    if contested:  # a curated record waits when its status, read whole, is candidate
        entries = store_listing.Store(tuple(store_listing.Entry(listed[i].id, "curated", listed[i].path,
                                                                listed[i].tracked, True, listed[i].rel)
                                            for i in contested))
        waits = {e.file for e, status, _ in store_listing.summaries(ws, entries, []) if status == "candidate"}
        cut = {listed[i].path for i in contested} - waits
        listed = [r for r in listed if r.path not in cut]
    return listed


def ranked(ws: Workspace, branch: str | None, kept: dict[str, str | None] | None = None,
           records: list[tuple[Any, ...]] | None = None) -> list[tuple[Row, str | None]] | None:
    """The queue as `knowledge candidates` lists it (`dated` of git's listing), each entry with the
    branch it is placed on, in review order (as `ordered`). None without the index. `kept`: filled
    as `dated` fills it, for `shown`; `records`: with what the session records state of each
    entry's episode (`queue.branches_of`'s rows)."""
    records = [] if records is None else records
    listed = dated(ws, placed=records, kept=kept)
    if listed is None:
        return None
    branches = queue.branches_of(ws, records)
    placed = [(r, branches.get(r.episode) if r.episode else None) for r in listed]

    return sorted(placed, key=lambda item: _key(branch, *item))


def _key(branch: str | None, row: Row, on: str | None) -> tuple[int, int, float, str, str]:
    """`ordered`'s key of an entry (of `dated`) placed on `on`, `branch` checked out."""
    group = 0 if branch is not None and on == branch else (1 if on is not None else 2)
    return group, 0 if row.age is not None else 1, row.age.since if row.age is not None else float("inf"), \
        row.when, row.id


_WHOLE = 1  # of what `whole` keys and answers.head keeps of the whole queue: raise it when they change


def whole(ws: Workspace, branch: str | None) -> list[Any] | None:
    """What the whole queue in review order (`ranked`, and `shown` of it) depends on, the clock
    aside, when it is all the index's: its state once the listing, the ledger's facts and the
    queue's rows are brought up to date (`Index.written`), the branch checked out and the facts'
    tail (the ledger's lines past its indexed end). None when the index cannot answer. A reader
    keeps the queue under it when it was the same after the queue was read and every entry was
    dated by the ledger, placed by a session record, kept in the index and listed as a candidate
    (`pure`): no answer of git's history, the files or the ledger's opening lines in it."""
    if not store_listing.indexed(ws):
        return None
    found = accumulation.facts(ws)  # first: brings the ledger's facts in the index up to date
    if found.db is None or not queue.brought_up(ws):
        return None
    written = store_index.of(ws).written()
    return None if written is None else [_WHOLE, branch, written, sorted(found.tail.derived.items())]


def pure(listed: Sequence[tuple[Row, str | None]], records: list[tuple[Any, ...]],
         texts: dict[str, str | None]) -> bool:
    """Whether `ranked`'s `listed` (`records`, `texts` as it filled them) was all the index's (`whole`)."""
    return (queue.placed_by_records(records)
            and all(row.source == "candidates" and row.age is not None and row.age.source == "ledger"
                    and texts.get(row.path) is not None for row, _ in listed))


def head(ws: Workspace, branch: str | None, limit: int
         ) -> tuple[list[tuple[Row, str | None]], int, list[Row]] | None:
    """The first `limit` entries of `ranked`, how many entries it ranks, and those git does not
    track, in review order: SQL orders and cuts the entries it can place and date as `ranked` does
    (queue.HEADED), Python the others, so that a queue of thousands makes a few dozen rows, not one
    an entry. None without the index, or when an entry SQL ordered is not where Python places it."""
    if limit < 1 or not store_listing.indexed(ws):
        return None
    found = accumulation.facts(ws)  # first: brings the ledger's facts in the index up to date
    if found.db is None:
        return None
    got = queue.headed_rows(ws, branch, limit)
    if got is None:
        return None
    ordered = 0
    group: dict[str, int | None] = {}
    unique = []
    for *row, grp, counted in got:
        path = row[0] + "/" + row[1]
        if path in group:  # one SQL ordered that git does not track: twice
            continue
        group[path] = grp
        unique.append(row)
        ordered = counted if counted is not None else ordered
    records: list[tuple[Any, ...]] = []
    listed = _dated(ws, found, unique, placed=records)
    branches = queue.branches_of(ws, records)
    keyed = []
    for row in listed:
        on = branches.get(row.episode) if row.episode else None
        key = _key(branch, row, on)
        sql = group[row.rel]
        if sql is not None and (sql != key[0] or row.age is None or row.age.source != "ledger"):
            return None  # SQL placed it elsewhere than Python does: the whole queue in Python
        keyed.append((key, row, on))
    keyed.sort(key=lambda k: k[0])
    total = ordered + sum(1 for _, row, _ in keyed if group[row.rel] is None)
    return [(row, on) for _, row, on in keyed[:limit]], total, [row for _, row, _ in keyed if not row.tracked]


def shown(ws: Workspace, head: Sequence[tuple[Row, str | None]], branch: str | None,
          now: float | None = None, texts: dict[str, str | None] | None = None) -> list[Waiting]:
    """The entries `head` (of `ranked`) as `ordered` gives them: only these records' values decoded
    (from `texts`, the JSON texts `ranked` kept of them, when given; else looked up in the index)."""
    now = time.time() if now is None else now
    kept: dict[str, Any] = {}
    if texts is not None:
        paths = [row.path for row, _ in head if texts.get(row.path) is not None]
        try:  # one `json.loads` of them all (`index._decoded`); a value no reader of ours wrote: the files
            values = json.loads("[" + ",".join(texts[p] or "null" for p in paths) + "]")
        except ValueError:
            values = None
        kept.update(zip(paths, values) if isinstance(values, list) and len(values) == len(paths) else ())
    else:
        by_folder: dict[str, list[str]] = {}
        for row, _ in head:
            folder, _, name = row.path.rpartition(os.sep)
            by_folder.setdefault(folder, []).append(name)
        index = store_index.of(ws)
        for folder, names in by_folder.items():
            kept.update((folder + os.sep + n, v)
                        for n, v in (index.values(Path(folder), "queue", names) or {}).items())
    found = []
    for row, on in head:
        read = kept[row.path] if row.path in kept else queue._front(row.path)
        c = queue.candidate(row.path, read, on)
        minutes = int(max(0.0, now - row.age.since) // 60) if row.age is not None else None
        found.append(Waiting(c, row.age, minutes, branch is not None and on == branch))
    return found


def waited(minutes: int | None) -> str:
    """How long an entry has waited, said the way a person reads it."""
    if minutes is None:
        return "waiting (no date)"
    return "waiting " + accumulation.minutes(minutes * 60.0)
