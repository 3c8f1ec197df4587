"""The ledger's facts, kept in the knowledge index (`.ai/local/state/index.sqlite3`, store/index.py)
beside the record folders: what the readers that once made a pass over the whole ledger need of
it, extended from a saved byte offset as the ledger grows.

- `derived`: each candidate file name, the oldest `knowledge.derived` line (dated) whose `paths`
  name it under a `candidates/` folder: the queue's review age (`knowledge candidates`, status,
  doctor's rule candidates-reviewed, the cockpit);
- `ids`: the episodes seen and opened, the tasks named, the tasks with a decision (doctor's and
  `knowledge check`'s reference resolution) and the agents that opened an episode;
- `closes`, `derivations` and two lines in `meta`: what the freshness judgement reads (the newest
  close, the close before it of the same episode, the newest derivation naming each episode, the
  newest derivation);
- `disputes`: every `knowledge.disputed` line naming a record (its number, the record's id, who,
  why, when): what a verified record's currency says of a dispute (`knowledge/verdict.disputes`);
- `episodes` and `tasks`: what a record's references say in words (`knowledge record`,
  knowledge/provenance.py): each episode's first open time, its branch at its last open that named
  one and its last close time; each task's title at its last `task.started`, its outcome at its
  last `task.finished` and how many decisions name it;
- the lines counted: parsed and malformed (the first by its number).

The ledger is append-only between trims. The facts are checked as `Ledger.index` checks its own
index: the same file (device and inode), no shorter than the indexed end, and the same bytes
before that end (`Ledger.digest`). Then only the lines appended since are read (and kept); a last
line without its newline (one being written, or torn) is read every time and never kept. A
ledger replaced by a trim (another inode) is read again from its start, silently (that is what a
trim does); one rewritten in place is read again with one line on stderr. When the index cannot
be used, the facts come from one pass over the ledger, through the same code: deleting the index
changes no output, only time.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable

from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.store import index as store_index
from majordomus.store.ledger import Ledger, Line, ReadResult

if TYPE_CHECKING:
    import sqlite3
    from typing import Any
else:
    from majordomus.store.index import sqlite3  # `_sqlite3`, without `datetime` (store/index.py)

VERSION = 4  # of these tables and of what a line adds to them: raise it when either changes
KINDS = ("session", "opened", "task", "decision", "agent")
_TABLES = ("derived", "ids", "closes", "derivations", "disputes", "episodes", "tasks")
_CREATE = (
    "CREATE TABLE derived (name TEXT PRIMARY KEY, ts TEXT NOT NULL, number INTEGER NOT NULL, since REAL NOT NULL) "
    "WITHOUT ROWID",
    "CREATE TABLE ids (kind TEXT NOT NULL, id TEXT NOT NULL, PRIMARY KEY (kind, id)) WITHOUT ROWID",
    "CREATE TABLE closes (episode TEXT PRIMARY KEY, newest INTEGER NOT NULL, previous INTEGER NOT NULL) "
    "WITHOUT ROWID",
    "CREATE TABLE derivations (episode TEXT PRIMARY KEY, newest INTEGER NOT NULL) WITHOUT ROWID",
    "CREATE TABLE disputes (number INTEGER PRIMARY KEY, id TEXT NOT NULL, by TEXT NOT NULL, reason TEXT NOT NULL, "
    "ts TEXT NOT NULL)",
    "CREATE TABLE episodes (episode TEXT PRIMARY KEY, opened TEXT, branch TEXT, closed TEXT) WITHOUT ROWID",
    "CREATE TABLE tasks (task TEXT PRIMARY KEY, started INTEGER NOT NULL, title TEXT, finished INTEGER NOT NULL, "
    "outcome TEXT, decisions INTEGER NOT NULL) WITHOUT ROWID",
)
DISPUTED = "knowledge.disputed"  # the event a dispute of a record is kept as (`knowledge dispute`)
Dispute = tuple[int, str, str, str, str]  # (line number, record id, by, reason, ts)
Dated = Callable[[str], "float | None"]  # the epoch a ledger `ts` dates a queue entry from (accumulation.epoch)
TASK_EVENTS = ("task.started", "task.finished", "decision.recorded")
# an episode's (first open time, branch at its last open naming one, last close time); a task's
# (whether started, the title at its last start as JSON, whether finished, the outcome at its last
# finish as JSON, how many decisions with a text name it)
Episode = tuple["str | None", "str | None", "str | None"]
Task = tuple[bool, "str | None", bool, "str | None", int]


def _key(value: Any) -> str | None:
    """An episode as the freshness judgement compares it (a text, or none), as a table key."""
    return json.dumps(value) if value is None or isinstance(value, str) else None


class Delta:
    """What a run of ledger lines adds to the facts (all of them, when there is no index)."""

    __slots__ = ("derived", "ids", "closes", "derivations", "disputes", "episodes", "tasks", "last_close",
                 "last_derived", "lines", "parsed", "malformed", "first_malformed")

    def __init__(self) -> None:
        self.derived: dict[str, tuple[str, int, float]] = {}
        self.ids: dict[str, set[str]] = {kind: set() for kind in KINDS}
        self.closes: dict[str, tuple[int, int]] = {}  # episode key -> (newest, the one before or 0)
        self.derivations: dict[str, int] = {}
        self.disputes: list[Dispute] = []
        self.episodes: dict[str, Episode] = {}
        self.tasks: dict[str, Task] = {}
        self.last_close: tuple[int, dict[str, Any]] | None = None
        self.last_derived: tuple[int, dict[str, Any]] | None = None
        self.lines = self.parsed = self.malformed = 0
        self.first_malformed: int | None = None

    def add(self, number: int, obj: dict[str, Any], dated: Dated) -> None:
        """One parsed line (its JSON object, stamped keys included), line `number`."""
        self.parsed += 1
        session, event, task = obj.get("session"), obj.get("event"), obj.get("task")
        ids = self.ids
        if session:
            ids["session"].add(session)
        if isinstance(task, str):
            ids["task"].add(task)
            if event == "decision.recorded":
                ids["decision"].add(task)
            if event in TASK_EVENTS:
                self._task(task, event, obj)
        if event == "session.opened":
            if isinstance(session, str):
                opened, branch, closed = self.episodes.get(session, (None, None, None))
                mark = obj.get("branch")
                self.episodes[session] = (opened or obj["ts"], mark if isinstance(mark, str) else branch, closed)
            named, agent = obj.get("episode") or session, obj.get("agent")
            if isinstance(named, str):
                ids["opened"].add(named)
            if isinstance(agent, str):
                ids["agent"].add(agent)
        elif event == "session.closed":
            if isinstance(session, str):
                opened, branch, _ = self.episodes.get(session, (None, None, None))
                self.episodes[session] = (opened, branch, obj["ts"])
            key = _key(obj.get("episode") or session)
            if key is not None:
                self.closes[key] = (number, self.closes.get(key, (0, 0))[0])
            self.last_close = (number, obj)
        elif event == DISPUTED:
            rid = obj.get("id")
            if isinstance(rid, str):
                self.disputes.append((number, rid, str(obj.get("by") or ""), str(obj.get("reason") or ""),
                                      str(obj["ts"])))
        elif event == "knowledge.derived":
            key = _key(obj.get("episode"))
            if key is not None:
                self.derivations[key] = number
            self.last_derived = (number, obj)
            paths = obj.get("paths")
            since = dated(obj["ts"]) if isinstance(paths, list) else None
            if since is not None:
                for rel in paths:  # type: ignore[union-attr]
                    if isinstance(rel, str) and "/candidates/" in rel:
                        self.derived.setdefault(rel.rsplit("/", 1)[-1], (obj["ts"], number, since))

    def _task(self, task: str, event: str, obj: dict[str, Any]) -> None:
        started, title, finished, outcome, decisions = self.tasks.get(task, (False, None, False, None, 0))
        if event == "task.started":
            started, title = True, json.dumps(obj.get("title"), ensure_ascii=False)
        elif event == "task.finished":
            finished, outcome = True, json.dumps(obj.get("outcome"), ensure_ascii=False)
        elif isinstance(obj.get("text"), str):
            decisions += 1
        self.tasks[task] = (started, title, finished, outcome, decisions)


class Facts:
    """The ledger's facts as of now: the kept ones (`db`, None without an index) and `tail`, what
    the lines past them add (everything, without an index)."""

    def __init__(self, db: sqlite3.Connection | None, head: dict[str, Any], tail: Delta) -> None:
        self.db, self.head, self.tail = db, head, tail
        self.parsed = int(head.get("parsed", 0)) + tail.parsed
        self.malformed = int(head.get("malformed", 0)) + tail.malformed
        first = head.get("first_malformed")
        self.first_malformed: int | None = first if isinstance(first, int) else tail.first_malformed

    def result(self) -> ReadResult:
        """The malformed lines counted, as a pass over the ledger counts them."""
        found = ReadResult(lines=[])
        found.malformed, found.first_malformed = self.malformed, self.first_malformed
        return found

    def ages(self, names: Iterable[str]) -> dict[str, tuple[str, int, float]]:
        """File name -> (ts, line number, the epoch `dated` read) of the oldest dated
        `knowledge.derived` line naming it."""
        wanted = sorted(set(names))
        found: dict[str, tuple[str, int, float]] = {}
        if self.db is not None:
            for i in range(0, len(wanted), 500):
                part = wanted[i:i + 500]
                found.update((n, (ts, num, since)) for n, ts, num, since in _among(
                    self.db, "SELECT name, ts, number, since FROM derived WHERE name IN ({})", [], part))
        for name in wanted:
            if name not in found and name in self.tail.derived:
                found[name] = self.tail.derived[name]
        return found

    def ids(self, kind: str) -> set[str]:
        """The ids of `kind` (KINDS) the ledger names."""
        found = set(self.tail.ids[kind])
        if self.db is not None:
            found.update(i for (i,) in self.db.execute("SELECT id FROM ids WHERE kind = ?", (kind,)))
        return found

    def having(self, kind: str, ids: Iterable[str]) -> set[str]:
        """Those of `ids` the ledger names as `kind` (KINDS): a look-up of each, not every id read."""
        wanted = sorted(set(ids))
        found = {i for i in wanted if i in self.tail.ids[kind]}
        if self.db is not None:
            for i in range(0, len(wanted), 500):
                part = wanted[i:i + 500]
                found.update(r for (r,) in _among(self.db, "SELECT id FROM ids WHERE kind = ? AND id IN ({})", [kind],
                                                  part))
        return found

    def episodes(self, names: Iterable[str]) -> dict[str, Episode]:
        """Those of `names` a `session.opened` or `session.closed` line names as its session ->
        (the first open's time, the branch of the last open naming one, the last close's time)."""
        wanted = sorted(set(names))
        found: dict[str, Episode] = {}
        if self.db is not None:
            for i in range(0, len(wanted), 500):
                found.update((e, (o, b, c)) for e, o, b, c in _among(
                    self.db, "SELECT episode, opened, branch, closed FROM episodes WHERE episode IN ({})", [],
                    wanted[i:i + 500]))
        for name in wanted:
            if name in self.tail.episodes:
                found[name] = _later_episode(found.get(name), self.tail.episodes[name])
        return found

    def tasks(self, names: Iterable[str]) -> dict[str, Task]:
        """Those of `names` a task's or decision's line names -> (started, the last start's title
        as JSON, finished, the last finish's outcome as JSON, the decisions with a text)."""
        wanted = sorted(set(names))
        found: dict[str, Task] = {}
        if self.db is not None:
            for i in range(0, len(wanted), 500):
                found.update((t, (bool(s), ti, bool(f), o, d)) for t, s, ti, f, o, d in _among(
                    self.db, "SELECT task, started, title, finished, outcome, decisions FROM tasks WHERE task IN ({})",
                    [], wanted[i:i + 500]))
        for name in wanted:
            if name in self.tail.tasks:
                found[name] = _later_task(found.get(name), self.tail.tasks[name])
        return found

    def disputes(self) -> list[Dispute]:
        """Every `knowledge.disputed` line naming a record, in ledger order."""
        found: list[Dispute] = []
        if self.db is not None:
            found += self.db.execute("SELECT number, id, by, reason, ts FROM disputes ORDER BY number")
        return found + self.tail.disputes

    def freshness_lines(self) -> list[Line]:
        """The `session.closed` and `knowledge.derived` lines the freshness judgement decides by, in
        order, with their numbers: the newest close, the close of its episode before it (its
        number and episode only), the newest derivation naming that episode (likewise) and the
        newest derivation. The judgement of these is the judgement of all of them."""
        last_close = self.tail.last_close or _pair(self.head.get("last_close"))
        last_derived = self.tail.last_derived or _pair(self.head.get("last_derived"))
        found: dict[int, Line] = {}
        if last_close is not None:
            obj = last_close[1]
            key = _key(obj.get("episode") or obj.get("session"))
            if key is not None:
                previous = self._close(key)[1]
                if previous:
                    found[previous] = Line(previous, "", "session.closed", None, {"episode": json.loads(key)})
                derived = self._derivation(key)
                if derived:
                    found[derived] = Line(derived, "", "knowledge.derived", None, {"episode": json.loads(key)})
            found[last_close[0]] = _line(*last_close)
        if last_derived is not None:
            found[last_derived[0]] = _line(*last_derived)
        return [found[n] for n in sorted(found)]

    def _close(self, key: str) -> tuple[int, int]:
        kept = (0, 0)
        if self.db is not None:
            row = self.db.execute("SELECT newest, previous FROM closes WHERE episode = ?", (key,)).fetchone()
            kept = (row[0], row[1]) if row is not None else kept
        if key in self.tail.closes:
            newest, before = self.tail.closes[key]
            return newest, before or kept[0]
        return kept

    def _derivation(self, key: str) -> int:
        if key in self.tail.derivations:
            return self.tail.derivations[key]
        if self.db is None:
            return 0
        row = self.db.execute("SELECT newest FROM derivations WHERE episode = ?", (key,)).fetchone()
        return int(row[0]) if row is not None else 0


def _later_episode(kept: Episode | None, later: Episode) -> Episode:
    """An episode's facts, those of later lines (`later`) after `kept`."""
    if kept is None:
        return later
    return (kept[0] or later[0], later[1] if later[1] is not None else kept[1],
            later[2] if later[2] is not None else kept[2])


def _later_task(kept: Task | None, later: Task) -> Task:
    """A task's facts, those of later lines (`later`) after `kept`."""
    if kept is None:
        return later
    return (kept[0] or later[0], later[1] if later[0] else kept[1], kept[2] or later[2],
            later[3] if later[2] else kept[3], kept[4] + later[4])


def _pair(value: Any) -> tuple[int, dict[str, Any]] | None:
    return (int(value[0]), dict(value[1])) if isinstance(value, list) and len(value) == 2 else None


def _line(number: int, obj: dict[str, Any]) -> Line:
    data = {k: v for k, v in obj.items() if k not in ("ts", "event", "session")}
    return Line(number, obj["ts"], obj["event"], obj.get("session"), data)


def read(ledger: Ledger, dated: Dated, start: int = 0, number: int = 1) -> tuple[Delta, Delta, int]:
    """What the ledger's lines from byte `start` (line `number`) add: (the whole lines', the torn
    last line's, the offset the whole lines end at)."""
    whole, tail, end = Delta(), Delta(), start
    counted = ReadResult(lines=[])
    seen: tuple[int, int | None] = (0, None)
    for lines, runs, block_end, complete in ledger.object_blocks(counted, start, number):
        into = whole if complete else tail
        for first, objs in runs:
            for n, obj in enumerate(objs, first):
                into.add(n, obj, dated)
        into.lines += lines
        into.malformed += counted.malformed - seen[0]
        if into.first_malformed is None and counted.first_malformed != seen[1]:
            into.first_malformed = counted.first_malformed
        seen = (counted.malformed, counted.first_malformed)
        if complete:
            end = block_end
    return whole, tail, end


def _among(db: sqlite3.Connection, sql: str, fixed: list[Any], names: list[str]) -> list[Any]:
    """The rows of `sql` whose `IN ({})` is `names`. A name sqlite cannot hold (a file name of bytes
    that are not UTF-8, a lone surrogate in Python) is in no table, the ledger being UTF-8: left out."""
    try:
        return db.execute(sql.format(",".join("?" * len(names))), [*fixed, *names]).fetchall()
    except UnicodeEncodeError:
        names = [n for n in names if _encodes(n)]
        return db.execute(sql.format(",".join("?" * len(names))), [*fixed, *names]).fetchall()


def _encodes(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def of(ws: Any, dated: Dated) -> Facts:
    """The facts of the workspace's ledger as of now: from the index, extended over what was
    appended since (or rebuilt), else from one pass over the ledger."""
    ledger: Ledger = ws.ledger
    db = store_index.of(ws).db()
    if db is not None:
        try:
            return _indexed(db, ledger, dated)
        except (sqlite3.Error, ValueError, TypeError, KeyError):
            store_index.of(ws)._lost()
    whole, tail, _ = read(ledger, dated)
    _merge(whole, tail)
    return Facts(None, {}, whole)


def _merge(into: Delta, tail: Delta) -> None:
    """`tail` (the lines after `into`'s) added to `into`."""
    for name, found in tail.derived.items():
        into.derived.setdefault(name, found)
    for key, (newest, before) in tail.closes.items():
        into.closes[key] = (newest, before or into.closes.get(key, (0, 0))[0])
    into.derivations.update(tail.derivations)
    into.disputes += tail.disputes
    for name, episode in tail.episodes.items():
        into.episodes[name] = _later_episode(into.episodes.get(name), episode)
    for name, task in tail.tasks.items():
        into.tasks[name] = _later_task(into.tasks.get(name), task)
    for kind in KINDS:
        into.ids[kind] |= tail.ids[kind]
    into.last_close = tail.last_close or into.last_close
    into.last_derived = tail.last_derived or into.last_derived
    into.lines += tail.lines
    into.parsed += tail.parsed
    into.malformed += tail.malformed
    into.first_malformed = into.first_malformed if into.first_malformed is not None else tail.first_malformed


def _head(db: sqlite3.Connection) -> dict[str, Any] | None:
    row = db.execute("SELECT value FROM meta WHERE key = 'ledger'").fetchone()
    head = json.loads(row[0]) if row is not None else None
    return head if isinstance(head, dict) and head.get("v") == VERSION else None


def _indexed(db: sqlite3.Connection, ledger: Ledger, dated: Dated) -> Facts:
    try:
        st = os.stat(ledger.path)
    except FileNotFoundError:
        return Facts(None, {}, Delta())
    head = _head(db)
    if head is not None and (head["dev"], head["ino"]) == (st.st_dev, st.st_ino) \
            and head["size"] == st.st_size and _digest(ledger, head["size"]) == head["check"]:
        return Facts(db, head, Delta())  # the usual case: nothing appended
    with store_index._transaction(db):
        head = _head(db)  # as another process may have left it meanwhile
        st = os.stat(ledger.path)
        fresh = head is None or (head["dev"], head["ino"]) != (st.st_dev, st.st_ino)
        if head is not None and not fresh \
                and (head["size"] > st.st_size or _digest(ledger, head["size"]) != head["check"]):
            print(f"majordomus: the ledger {ledger.path.name} was rewritten in place: read its facts "
                  "again from its start", file=sys.stderr)
            fresh = True
        if fresh or head is None:
            for table in _TABLES:
                db.execute(f"DROP TABLE IF EXISTS {table}")
            for create in _CREATE:
                db.execute(create)
            head = {"v": VERSION, "dev": st.st_dev, "ino": st.st_ino, "size": 0, "lines": 0, "check": "",
                    "parsed": 0, "malformed": 0, "first_malformed": None, "last_close": None,
                    "last_derived": None}
        assert head is not None
        whole, tail, end = read(ledger, dated, head["size"], head["lines"] + 1)
        _keep(db, head, whole, end, ledger)
    return Facts(db, head, tail)


def _digest(ledger: Ledger, size: int) -> str:
    """The ledger's first bytes and its bytes before `size`: a file rewritten in place (a test,
    an editor) differs in one of them, as its oldest line is where a rewrite starts."""
    return ledger.digest(min(size, 64)) + ":" + ledger.digest(size)


def _keep(db: sqlite3.Connection, head: dict[str, Any], whole: Delta, end: int, ledger: Ledger) -> None:
    """Add `whole` (the lines up to byte `end`) to the kept facts and `head`."""
    db.executemany("INSERT OR IGNORE INTO derived VALUES (?, ?, ?, ?)",
                   [(name, *found) for name, found in whole.derived.items()])
    db.executemany("INSERT OR IGNORE INTO ids VALUES (?, ?)",
                   [(kind, i) for kind in KINDS for i in whole.ids[kind]])
    db.executemany("INSERT INTO closes VALUES (?1, ?2, ?3) ON CONFLICT(episode) DO UPDATE SET "
                   "previous = CASE WHEN ?3 > 0 THEN ?3 ELSE newest END, newest = ?2",
                   [(key, newest, before) for key, (newest, before) in whole.closes.items()])
    db.executemany("INSERT OR REPLACE INTO derivations VALUES (?, ?)", list(whole.derivations.items()))
    db.executemany("INSERT OR IGNORE INTO disputes VALUES (?, ?, ?, ?, ?)", whole.disputes)
    if whole.episodes:  # _later_episode, in SQL
        db.executemany("INSERT INTO episodes VALUES (?1, ?2, ?3, ?4) ON CONFLICT(episode) DO UPDATE SET "
                       "opened = CASE WHEN opened IS NULL OR opened = '' THEN ?2 ELSE opened END, "
                       "branch = COALESCE(?3, branch), closed = COALESCE(?4, closed)",
                       [(name, *episode) for name, episode in whole.episodes.items()])
    if whole.tasks:  # _later_task, in SQL
        db.executemany("INSERT INTO tasks VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(task) DO UPDATE SET "
                       "title = CASE WHEN ?2 THEN ?3 ELSE title END, started = started OR ?2, "
                       "outcome = CASE WHEN ?4 THEN ?5 ELSE outcome END, finished = finished OR ?4, "
                       "decisions = decisions + ?6",
                       [(name, *task) for name, task in whole.tasks.items()])
    head["size"], head["lines"] = end, head["lines"] + whole.lines
    head["check"] = _digest(ledger, end)
    head["parsed"] += whole.parsed
    head["malformed"] += whole.malformed
    if head["first_malformed"] is None:
        head["first_malformed"] = whole.first_malformed
    head["last_close"] = list(whole.last_close) if whole.last_close else head["last_close"]
    head["last_derived"] = list(whole.last_derived) if whole.last_derived else head["last_derived"]
    db.execute("INSERT OR REPLACE INTO meta VALUES ('ledger', ?)",
               (json.dumps(head, separators=(",", ":"), ensure_ascii=False),))
