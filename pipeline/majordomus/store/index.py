"""The knowledge index: `.ai/local/state/index.sqlite3`, what the readers need of the record
folders, so that `knowledge candidates`, `status`, `search`, the queue and the verified list ask one
file instead of listing, stat'ing and parsing every record. Derived, never a source: deleting it
changes no output, only time.

It holds, in stdlib `sqlite3` (a rollback journal; opened on first use):
- `listing`: git's listing of the source classes (`git ls-files`, store/listing.py), kept with the
  stamps of what that listing depends on: git's index file, `sources.yaml`, every folder of the
  store and the ignore files on the way to it; and the same listing as rows (`listed`: each file's
  source class, folder, name and whether git tracks it), for a query to join;
- `folders`: each record folder's stamp (`filecache.stamp`) when its rows were last checked;
- `files`: each record file's stamp and, per view, what a reader made of it (JSON): the queue's
  fields (`queue`), the verified list's (`known`), status and class (`summary`), the search's, and
  the integrity check's (`integrity`: the record's own findings and what the checks across records
  need, which doctor trusts while the file keeps its stamp, checked one `lstat` a file); beside a
  view's JSON, the columns a query filters and orders by (KEYED: the queue's, whether the record
  waits, its episode and its time), so that `knowledge candidates` counts and orders the queue,
  joined with the ledger's facts (store/facts.py) and git's listing, and decodes the rows it shows.

How it is checked: one `lstat` a folder. A folder's stamp changes when an entry is added, removed
or renamed in it, which every writer of ours (temp file + rename) and git's checkout, merge and
pull do; then the folder is scanned again (scandir, one `lstat` an entry) and only the files whose
stamp changed are read again. A stamp taken within one tick of the file system's clock of a change
vouches for nothing (`filecache.settled`): such a folder is scanned, such a file read, every time
until it settles. A folder of fewer than SCAN_BELOW records is checked file by file every time
anyway. An editor that rewrites a record in place keeps its folder's stamp: in a bigger folder the
rows are caught up by `recheck` where git's status is at hand (the briefing's composition, at a
start and at a boundary: each file git names, and each it named the time before, by its own
stamp), by `refresh` (`knowledge check`, which reads every record anyway and runs in the
pre-commit gate, calls it), and a record's own page reads its file. The other readers show such a
record as it was until one of those runs or its folder changes.

When the file is unreadable, of another version, not an index or a symbolic link (it or a
journal beside it: sqlite would follow one out of the repository), it is removed and built again
from the sources, with one line on stderr saying so; a missing one is simply built. When it cannot
be written (a read-only checkout, a full disk), readers read the files as they did without it.
"""
from __future__ import annotations

import os
import struct
import sys
import time
from _thread import get_ident
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from stat import S_ISLNK, S_ISREG

from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.base import fsio, git
from majordomus.base.errors import FatalError
from majordomus.store import filecache, records
from majordomus.store.filecache import settled, stamp

if TYPE_CHECKING:
    import sqlite3
    from typing import Any
else:  # `sqlite3` is `_sqlite3` and `dbapi2`'s adapters of dates, which import `datetime` (~1.5 ms
    import _sqlite3 as sqlite3  # of every reader's imports); the index keeps text and numbers alone

FILE = "index.sqlite3"
KEPT = "index.kept"  # the folder of the answers `rows` keeps (`_answered`)
SCHEMA = 12  # of the tables: raise it when they change (a view's own version is kept per view)
VIEWS = ("queue", "known", "summary", "search", "integrity", "branch")
# The columns a view's reader also keeps of a file, beside its JSON, for a query to filter, join
# and order the rows by without decoding them (`rows`): the queue's, whether a file waits for
# review (1) or not (0), the episode it names, the time that orders it and its status (what
# `majordomus context` and doctor count); a session record's,
# whether it states a branch (1) and which (knowledge/queue.py); a record's summary, whether it
# could be read (1), its status and its class (store/listing.py).
# the views whose kept text is read for a whole folder, each from its own covering index: the
# search's scanned by a query (`listed_view`), the verified list's read by `view` (every start's
# and close's briefing: 4,000 curated records at 1M)
SCANNED = ("search", "known")
KEYED = {"queue": ("q_live", "q_episode", "q_when", "q_status"), "branch": ("b_named", "b_branch"),
         "summary": ("s_ok", "s_status", "s_class")}
if TYPE_CHECKING:  # annotations' names alone: `typing` is not imported on the hooks' path
    Keys = Callable[[Any], tuple[Any, ...]]  # what a view keeps of a file -> its KEYED columns
# A folder of fewer records is checked file by file every time (one `lstat` each, a millisecond),
# so a record rewritten in place is seen at once; a bigger one is trusted to its stamp.
SCAN_BELOW = 1000
FEW = 500  # `view`'s `only` names up to this many are looked up in SQL (one parameter each)


def _stale(view: str) -> str:
    """Which rows of a KEYED view `rows` reads again: the value or its columns not kept, or a file
    too recent to vouch for itself. Written the same in the query and its partial index, so that
    SQLite uses the index."""
    return f"({view} IS NULL OR stamp IS NULL OR {KEYED[view][0]} IS NULL)"


_TABLES = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE folders (folder TEXT PRIMARY KEY, stamp TEXT NOT NULL)",
    "CREATE TABLE listed (source TEXT NOT NULL, folder TEXT NOT NULL, name TEXT NOT NULL, tracked INTEGER NOT NULL, "
    "PRIMARY KEY (folder, name, source)) WITHOUT ROWID",
    "CREATE TABLE files (folder TEXT NOT NULL, name TEXT NOT NULL, stamp BLOB, "
    + ", ".join(f"{v} TEXT" for v in VIEWS) + "".join(f", {k}" for keys in KEYED.values() for k in keys)
    + ", PRIMARY KEY (folder, name))",
    # a query reads a folder's KEYED columns from this index alone, not from rows that hold JSON
    "CREATE INDEX files_queue ON files (folder, q_live, name, q_episode, q_when, q_status)",
    # a check reads a folder's stamps from this index alone (`_check`)
    "CREATE INDEX files_stamp ON files (folder, name, stamp)",
    # a query's rows (`rows`) find the files a view must read again among these few, not every row
    *(f"CREATE INDEX files_{view}_stale ON files (folder, name) WHERE {_stale(view)}" for view in KEYED),
    # a scan of a view's kept text (`listed_view`: the search's `GLOB`s; `view`: the verified list)
    # reads this index alone, a quarter of the rows' pages, which hold every view's JSON
    *(f"CREATE INDEX files_{view}_text ON files (folder, name, stamp, {view})" for view in SCANNED),
)
_MADE = frozenset(_TABLES)  # `_wrong`
# A file's stamp as kept (`_check`): its inode, size, mtime and ctime (ns) as 32 bytes, compared
# without a string formatted a file.
_STAMP = struct.Struct("<QQqq").pack

if TYPE_CHECKING:
    Reader = Callable[[str], Any]  # a file's path -> what a view keeps of it (JSON)
    Source = tuple[Sequence[Path], str, "int | str", Reader, Keys]  # folders, view, version, reader, KEYED


class Index:
    """The index of one checkout, opened on first use; every method answers from the files
    themselves when the index cannot be used."""

    def __init__(self, root: Path, state: Path) -> None:
        self.root = root
        self.state = state
        self.path = state / FILE
        self._db: sqlite3.Connection | None = None
        self._failed = False
        self._held: set[str] | None = None  # the folders a held run checked file by file (`hold`)

    # --- opening -----------------------------------------------------------------------------

    def db(self) -> sqlite3.Connection | None:
        if self._db is not None or self._failed:
            return self._db
        try:
            os.close(fsio.open_folder(self.root, self.state))  # a real folder inside the repository
            existed = os.path.lexists(self.path)
            if existed:
                fsio.confined(self.path)
            why: str | None = _linked(self.path)
            db: sqlite3.Connection | None = None
            if why is None and not existed:
                why = "missing"
            elif why is None:
                try:
                    db = self._connect()
                    why = _wrong(db)
                except sqlite3.DatabaseError as exc:
                    why = f"unreadable ({exc})"
            if why is not None:
                if why != "missing":
                    print(f"majordomus: the knowledge index {self.path.name} was {why}: rebuilt it from the "
                          "records", file=sys.stderr)
                db = self._create(db)
            assert db is not None
            self._db = db
        except (OSError, sqlite3.Error, ValueError):
            self._failed = True
        return self._db

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=2.0, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA synchronous=OFF")  # derived: a torn write is rebuilt, never trusted
        return db

    def _create(self, db: sqlite3.Connection | None) -> sqlite3.Connection:
        if db is not None:
            db.close()
        for suffix in ("", "-journal", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass
        db = self._connect()
        with _transaction(db):
            for table in _TABLES:
                db.execute(table)
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
            db.execute("INSERT INTO meta VALUES ('nonce', ?)", (os.urandom(8).hex(),))  # `_answered`'s
        return db

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def _lost(self) -> None:
        """A failure past opening (a disk full, a file removed underneath, a file name sqlite cannot
        hold): read the files. The connection is dropped, not closed: the ledger's facts read from
        it already (store/facts.py) keep answering from their own tables."""
        self._db = None
        self._failed = True
        if self._held is not None:
            self._held.clear()

    def hold(self) -> None:
        """Begin one run of the rules (doctor, `check`, `watch`; `release` ends it): a folder this
        run has checked file by file (a forced check, or one of a folder below SCAN_BELOW, which
        every check makes) is not listed and stat'ed again by the run's later readers, which see
        its files as that check found them: the run judges the store as of one moment, not each
        rule a moment later (doctor's queue rule, the records' tracking, the integrity rule and
        the currency rule each checked candidates/ or curated/ again). A process that serves many
        calls (the MCP server) holds nothing: each call checks what it reads."""
        self._held = set()

    def release(self) -> None:
        """End the run `hold` began: every later check looks at the folders again."""
        self._held = None

    # --- git's listing -----------------------------------------------------------------------

    def listing(self, key: object, inputs: Iterable[Path], make: Callable[[], str],
                rows: Callable[[str], Iterable[tuple[str, str, str, int]]] | None = None) -> str:
        """What `make` (git's listing) returns for `key`, kept while every one of `inputs` keeps
        its stamp. One `lstat` an input when it is unchanged. `rows`: the listing's files as
        (source, folder, name, tracked), kept in the `listed` table for a query to join (`listed`)."""
        stamps = [stamp(p) for p in inputs]
        kept_key = json.dumps([key, stamps], separators=(",", ":"))
        db = self.db()
        out: str | None = None
        if db is not None and [] not in stamps:
            try:
                row = db.execute("SELECT value FROM meta WHERE key = 'listing'").fetchone()
                if row is not None:
                    found = json.loads(row[0])
                    if found[0] == kept_key:
                        out = str(found[1])
            except (sqlite3.Error, ValueError, IndexError, TypeError):
                self._lost()
                db = None
        fresh = out is None
        if out is None:
            out = make()
        if db is not None and [] not in stamps:
            try:
                if fresh:
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('listing', ?)",
                               (json.dumps([kept_key, out], separators=(",", ":")),))
                if rows is not None and not self._listed(db, kept_key):
                    with _transaction(db):
                        db.execute("DELETE FROM listed")
                        db.executemany("INSERT OR REPLACE INTO listed VALUES (?, ?, ?, ?)", rows(out))
                        db.execute("INSERT OR REPLACE INTO meta VALUES ('listed', ?)", (kept_key,))
            except (sqlite3.Error, UnicodeError):  # a file name that is not UTF-8: read the files
                self._lost()
        return out

    def listed(self, key: object, inputs: Iterable[Path]) -> bool:
        """Whether the `listed` table holds git's listing for `key` as of now (as `listing` kept
        it, every one of `inputs` keeping its stamp since): one `lstat` an input."""
        stamps = [stamp(p) for p in inputs]
        db = self.db()
        if db is None or [] in stamps:
            return False
        try:
            return self._listed(db, json.dumps([key, stamps], separators=(",", ":")))
        except (sqlite3.Error, UnicodeError):  # a file name that is not UTF-8: read the files
            self._lost()
            return False

    def named(self, name: str, key: object, inputs: Iterable[Path]) -> list[tuple[str, str, str, int]] | None:
        """`listed_files`, of the files called `name` alone (a look-up, not the whole table)."""
        return self.listed_files(key, inputs, name)

    def listed_files(self, key: object, inputs: Iterable[Path],
                     name: str | None = None) -> list[tuple[str, str, str, int]] | None:
        """The `listed` table's files (`name`: those called so) as (source, folder, name, tracked),
        ordered by source and folder, when it holds git's listing for `key` as of now (as `listed`
        tells); None when it does not or the index cannot be used."""
        stamps = [stamp(p) for p in inputs]
        db = self.db()
        if db is None or [] in stamps:
            return None
        try:
            db.execute("BEGIN")  # the check and the rows read from one state of the table
            try:
                if not self._listed(db, json.dumps([key, stamps], separators=(",", ":"))):
                    return None
                if name is not None:
                    return db.execute("SELECT source, folder, name, tracked FROM listed WHERE name = ? "
                                      "ORDER BY source, folder", (name,)).fetchall()
                return db.execute("SELECT source, folder, name, tracked FROM listed").fetchall()
            finally:
                db.execute("COMMIT")
        except (sqlite3.Error, UnicodeError):
            self._lost()
            return None

    def listed_view(self, key: object, inputs: Iterable[Path], hidden: str, folders: Sequence[Path], view: str,
                    version: int | str, read: Reader, match: tuple[str, Sequence[Any]] | None
                    ) -> list[tuple[str, str, str, int, Any]] | None:
        """(source, folder, name, tracked, what `read` made of it) of the files of the `listed` table
        (`l`) but those `hidden` (a condition on `l`) that are record files of `folders` (rows of
        `files`: regular `*.md` files), when the table holds git's listing for `key` as of now:
        `view`'s kept value for the files whose stamp is unchanged and that meet `match` (as in
        `view`), `read` of the others (and kept). The check and the rows are read in one
        transaction; the files' values are matched first and only the rows that meet `match` are
        looked up in the listing, fetched and decoded. None when the table does not hold the
        listing or the index cannot be used."""
        stamps = [stamp(p) for p in inputs]
        db = self.db()
        rels = [self._rel(f) for f in folders]
        if db is None or [] in stamps or None in rels:
            return None
        cond, params = match if match is not None else ("1", ())
        try:
            self._versions(db, view, version)
            for folder, rel in zip(folders, rels):
                assert rel is not None
                self._check(db, folder, rel)
            db.execute("BEGIN")  # the check and the rows read from one state of the tables
            try:
                if not self._listed(db, json.dumps([key, stamps], separators=(",", ":"))):
                    return None
                # the files' kept values scanned (a SCANNED view's from its own index, else from
                # the rows) and matched, then each one that meets `match` looked up in the listing
                rows = db.execute(
                    f"SELECT l.source, l.folder, l.name, l.tracked, f.stamp, f.{view} FROM files f "
                    + (f"INDEXED BY files_{view}_text " if view in SCANNED else "NOT INDEXED ") +
                    f"CROSS JOIN listed l ON l.folder = f.folder AND l.name = f.name "
                    f"WHERE f.folder IN ({','.join('?' * len(rels))}) "
                    f"AND (f.{view} IS NULL OR f.stamp IS NULL OR ({cond})) AND NOT ({hidden})",
                    (*rels, *params)).fetchall()
            finally:
                db.execute("COMMIT")
            where = {rel: os.fspath(folder) + os.sep for folder, rel in zip(folders, rels)}
            values, fresh = _kept_or_read(((folder_rel, name, where[folder_rel] + name, kept_stamp, value)
                                           for _, folder_rel, name, _, kept_stamp, value in rows), read, None)
            if fresh:
                with _transaction(db):
                    db.executemany(_update(view, False), fresh)
            return [(source, folder_rel, name, tracked, value)
                    for (source, folder_rel, name, tracked, _, _), (_, value) in zip(rows, values)]
        except (sqlite3.Error, ValueError, UnicodeError):
            self._lost()
            return None

    @staticmethod
    def _listed(db: sqlite3.Connection, kept_key: str) -> bool:
        row = db.execute("SELECT value FROM meta WHERE key = 'listed'").fetchone()
        return row is not None and row[0] == kept_key

    # --- record folders ----------------------------------------------------------------------

    def check(self, folder: Path) -> None:
        """Bring the rows of `folder` up to date with it, as `names` does, without reading them
        (a boundary warming the index while git answers)."""
        rel = self._rel(folder)
        db = self.db()
        if db is None or rel is None:
            return
        try:
            self._check(db, folder, rel)
        except (sqlite3.Error, UnicodeError):  # a file name that is not UTF-8: read the files
            self._lost()

    def names(self, folder: Path) -> list[str] | None:
        """The record files of `folder` (`records.names`: regular `*.md` files), sorted, as of
        now: from the index when the folder's stamp is unchanged, else from a scan that brings the
        index up to date. None when the index cannot be used."""
        rel = self._rel(folder)
        db = self.db()
        if db is None or rel is None:
            return None
        try:
            self._check(db, folder, rel)
            return [n for (n,) in db.execute("SELECT name FROM files WHERE folder = ? ORDER BY name", (rel,))]
        except (sqlite3.Error, UnicodeError):  # a file name that is not UTF-8: read the files
            self._lost()
            return None

    def view(self, folder: Path, view: str, version: int | str, read: Reader,
             only: Iterable[str] | None = None, each: bool = False, keys: Keys | None = None,
             match: tuple[str, Sequence[Any]] | None = None) -> list[tuple[str, Any]]:
        """(name, what `read` made of it) of every record file of `folder` (or of the names in
        `only`), sorted by name: kept values for the files whose stamp is unchanged, `read` of the
        others (and kept). `each`: every file's stamp is checked, whatever its folder's says (doctor's
        integrity view: a record edited in place is read again). `keys`: what the view keeps in its
        KEYED columns, given whenever it has some. `match`: an SQL condition on the kept JSON text
        (the column named as the view) and its parameters; a kept value it fails is left out, so it
        must hold for every value the caller wants (files read now are always in). Without the
        index, `read` of every file."""
        rel = self._rel(folder)
        db = self.db()
        where = os.fspath(folder) + os.sep
        if db is not None and rel is not None:
            try:
                return self._view(db, folder, rel, view, version, read, only, each, keys, match)
            except (sqlite3.Error, ValueError):
                self._lost()
        names = records.names(folder) if only is None else sorted(set(only) & set(records.names(folder)))
        return [(n, read(where + n)) for n in names]

    def _view(self, db: sqlite3.Connection, folder: Path, rel: str, view: str, version: int | str, read: Reader,
              only: Iterable[str] | None, each: bool, keys: Keys | None = None,
              match: tuple[str, Sequence[Any]] | None = None) -> list[tuple[str, Any]]:
        assert view in VIEWS
        self._versions(db, view, version)
        self._check(db, folder, rel, force=each)
        cond, params = match if match is not None else ("1", ())
        wanted = set(only) if only is not None else None
        # a few names (a search's verified hits among thousands of records) looked up, not every row fetched
        few = sorted(wanted) if wanted is not None and len(wanted) <= FEW else None
        narrow = f" AND name IN ({','.join('?' * len(few))})" if few is not None else ""
        indexed = f" INDEXED BY files_{view}_text" if view in SCANNED else ""  # its kept text alone
        rows = db.execute(f"SELECT name, stamp, {view} FROM files{indexed} WHERE folder = ? AND "
                          f"({view} IS NULL OR stamp IS NULL OR ({cond})){narrow} ORDER BY name",
                          (rel, *params, *(few or ()))).fetchall()
        where = os.fspath(folder) + os.sep
        found, fresh = _kept_or_read(((rel, name, where + name, kept_stamp, value) for name, kept_stamp, value in rows
                                      if wanted is None or name in wanted), read, keys)
        if fresh:
            with _transaction(db):
                db.executemany(_update(view, keys is not None), fresh)
        return found

    def rows(self, sources: Sequence[Source], queries: Sequence[str], params: dict[str, Any], kept: str = ""
             ) -> list[list[Any]] | None:
        """The rows each of `queries` selects once, for each source (folders, view, its version, its
        reader, its KEYED columns), the view of every record file of those folders is kept (in its
        KEYED columns too), so that a query filters, joins and orders what it needs without a value
        decoded: `:folder0`, `:folder1`, ... name the folders in a query, in the sources' order. A
        file too recent to vouch for itself is read again each time (its value kept only until the
        next check). `kept`: the answer is kept in a file of that name while the index keeps its state
        (`_answered`), for queries that join thousands of rows to answer a few. None when the index
        cannot be used."""
        db = self.db()
        named = dict(params)
        if db is None:
            return None
        counted = 0
        try:
            for folders, view, version, read, keys in sources:
                self._versions(db, view, version)
                stale: list[tuple[Any, ...]] = []
                for folder in folders:
                    rel = self._rel(folder)
                    if rel is None:
                        return None
                    named[f"folder{counted}"], counted = rel, counted + 1
                    self._check(db, folder, rel)
                    where = os.fspath(folder) + os.sep
                    stale += [_kept(read(where + name), keys, rel, name) for (name,) in db.execute(
                        f"SELECT name FROM files WHERE folder = ? AND {_stale(view)}", (rel,))]
                if stale:
                    with _transaction(db):
                        db.executemany(_update(view), stale)
            if kept:
                return self._answered(db, queries, named, kept)
            return [db.execute(sql, named).fetchall() for sql in queries]
        except (sqlite3.Error, UnicodeError):  # a file name that is not UTF-8: read the files
            self._lost()
            return None

    def _answered(self, db: sqlite3.Connection, queries: Sequence[str], named: dict[str, Any], name: str
                  ) -> list[list[Any]]:
        """The rows of `queries`, as kept in the file `name` (of KEPT) with the state of the index
        they were read from (`_state`), while the index is in that state. Else the queries run and
        their rows are kept: a reader asking again of an index nothing wrote to since decodes one
        file, not the joins of thousands of rows."""
        key = json.dumps([list(queries), sorted(named.items())], separators=(",", ":"))
        db.execute("BEGIN")  # the state and the rows read under one read lock
        try:
            state = self._state(db)
            if state is not None:
                found = self.kept(name, [key, state])
                if _answers(found, len(queries)):  # else not what `keep` wrote: the queries run
                    return [[tuple(row) for row in rows] for rows in found]
            answers = [db.execute(sql, named).fetchall() for sql in queries]
        finally:
            db.execute("COMMIT")
        if state is not None:
            self.keep(name, [key, state], answers)
        return answers

    def written(self) -> list[Any] | None:
        """The index's state (`_state`: how far it has been written) as of now: for a reader that keeps an answer of its own (`keep`)
        made of several reads, the same before and after them when nothing wrote in between. None
        when it cannot be told."""
        db = self.db()
        if db is None:
            return None
        try:
            db.execute("BEGIN")
            try:
                return self._state(db)
            finally:
                db.execute("COMMIT")
        except sqlite3.Error:
            self._lost()
            return None

    def _state(self, db: sqlite3.Connection) -> list[Any] | None:
        """[the index's nonce (`meta`), SQLite's file change counter (the database header's four bytes
        at offset 24, raised whenever the file is unlocked after a transaction wrote to it, in a
        rollback journal's mode: SQLite's file format), the file's device and inode], read in the
        caller's transaction under the read lock its first read takes, which keeps every writer out.
        None without a nonce (written here, once: the next reader's state) or a counter. The nonce
        and the counter are in the file: a repository that commits its index (and answers kept
        under the state a clone's first reader brings it to) names them; the inode git's checkout
        gives the file, no commit can."""
        row = db.execute("SELECT value FROM meta WHERE key = 'nonce'").fetchone()  # takes the lock
        if row is None:
            db.execute("COMMIT")
            db.execute("INSERT OR IGNORE INTO meta VALUES ('nonce', ?)", (os.urandom(8).hex(),))
            db.execute("BEGIN")
            return None
        counter = self._counter()
        return None if counter is None else [row[0], *counter]

    def kept(self, name: str, key: Any, fit: Callable[[Any], Any] | None = None) -> Any:
        """What `keep` kept as `name` for `key` (JSON: lists for tuples), as `fit` makes it when one
        is named (None for a value not of the shape it keeps), else None; None for a `key` of None
        (what the answer depends on could not be said: nothing kept is believed)."""
        if key is None:
            return None
        try:
            found = json.loads(fsio.read_regular(self.state / KEPT / f"{name}.json"))
        except (OSError, ValueError):
            return None
        text = json.dumps(key, separators=(",", ":"), ensure_ascii=False)
        if not (isinstance(found, list) and len(found) == 2 and found[0] == text):
            return None
        return found[1] if fit is None else fit(found[1])

    def keep(self, name: str, key: Any, value: Any) -> None:
        """Keep `value` as `name` (a file of KEPT) for `key`, which says the index's state it was read
        from (`written`) and whatever else it depends on; nothing when it cannot be written."""
        try:
            text = json.dumps([json.dumps(key, separators=(",", ":"), ensure_ascii=False), value],
                              separators=(",", ":"), ensure_ascii=False)
            fsio.atomic_write(self.state / KEPT / f"{name}.json", text.encode("utf-8"), root=self.root)
        except (OSError, TypeError, ValueError, UnicodeError, FatalError):  # a value JSON does not hold,
            pass  # a full disk, a link where the folder or the file should be: the next reader asks SQL

    def kept_bytes(self, name: str, key: Any) -> tuple[Any, memoryview] | None:
        """What `keep_bytes` kept as `name` for `key`: (its value, its bytes, not copied), else None."""
        try:
            data = fsio.read_regular(self.state / KEPT / f"{name}.bin")
            end = data.find(b"\n")
            found = json.loads(data[:end]) if end >= 0 else None
        except (OSError, ValueError):
            return None
        text = json.dumps(key, separators=(",", ":"), ensure_ascii=False)
        if not (isinstance(found, list) and len(found) == 2 and found[0] == text):
            return None
        return found[1], memoryview(data)[end + 1:]

    def keep_bytes(self, name: str, key: Any, value: Any, blob: Iterable[bytes]) -> None:
        """Keep `value` (JSON) and the bytes `blob` (pieces: an encoded answer of megabytes, not
        escaped again as JSON text) as `name` for `key`, as `keep` keeps a value: one line of JSON,
        then the bytes."""
        try:
            text = json.dumps([json.dumps(key, separators=(",", ":"), ensure_ascii=False), value],
                              separators=(",", ":"), ensure_ascii=False)
            fsio.atomic_write(self.state / KEPT / f"{name}.bin", [text.encode("utf-8") + b"\n", *blob],
                              root=self.root)
        except (OSError, TypeError, ValueError, UnicodeError, FatalError):  # as `keep`
            pass

    def _counter(self) -> list[int] | None:
        """[SQLite's file change counter of the index, as of the read lock the caller holds, the file's
        device and inode]; None in a journal mode that does not keep it (WAL: the header's read and
        write versions, bytes 18 and 19, are 2), read from the header each time: another process may
        switch the file to WAL under a process that answers many calls (the MCP server)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            head = os.pread(fd, 10, 18)
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if len(head) != 10 or head[:2] != b"\x01\x01":
            return None
        return [int.from_bytes(head[6:], "big"), st.st_dev, st.st_ino]

    def values(self, folder: Path, view: str, names: Iterable[str]) -> dict[str, Any] | None:
        """What `view` keeps of the files `names` of `folder`, as `rows` just left it (decoded: the
        few rows a reader shows). None when the index cannot be used or a value is not kept."""
        db = self.db()
        rel = self._rel(folder)
        wanted = sorted(set(names))
        if db is None or rel is None:
            return None
        try:
            found: list[tuple[str, Any]] = []
            kept: list[str] = []
            for i in range(0, len(wanted), 500):
                part = wanted[i:i + 500]
                for name, value in db.execute(f"SELECT name, {view} FROM files WHERE folder = ? AND name IN "
                                              f"({','.join('?' * len(part))})", [rel, *part]):
                    if value is None:
                        return None
                    found.append((name, None))
                    kept.append(value)
            return dict(_decoded(found, kept)) if len(found) == len(wanted) else None
        except (sqlite3.Error, ValueError):
            self._lost()
            return None

    def _versions(self, db: sqlite3.Connection, view: str, version: int | str) -> None:
        """A view read by another version of its reader is forgotten."""
        key = f"view:{view}"
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        if row is None or row[0] != str(version):
            with _transaction(db):
                db.execute(f"UPDATE files SET {view} = NULL" + "".join(f", {k} = NULL" for k in KEYED.get(view, ())))
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, str(version)))

    def _check(self, db: sqlite3.Connection, folder: Path, rel: str, force: bool = False) -> None:
        """Bring the rows of `folder` up to date with it when its stamp changed (or `force`): one
        `lstat` a file, compared with its kept stamp as bytes (`_STAMP`), and a write only when a
        file was added, removed, changed or is too recent to vouch for itself, or the folder's
        stamp changed."""
        if self._held is not None and rel in self._held:
            return  # checked file by file earlier in this run (`hold`)
        now = stamp(folder)
        folder_stamp = _text(now) if now else None
        kept = db.execute("SELECT stamp FROM folders WHERE folder = ?", (rel,)).fetchone()
        kept_folder = kept[0] if kept is not None else None
        if not force and folder_stamp is not None and kept_folder == folder_stamp:
            (count,) = db.execute("SELECT count(*) FROM (SELECT 1 FROM files WHERE folder = ? LIMIT ?)",
                                  (rel, SCAN_BELOW)).fetchone()  # counted up to the bound, not 20,000 rows
            if count >= SCAN_BELOW:
                return
        # The clock is read once, before the scan: a file changed after it reads as too recent, as
        # it would file by file. A change older than the widest window (RACY_NS) is settled without
        # asking `settled`, which decides the rest.
        clock = time.time_ns()
        surely = clock - filecache.RACY_NS
        rows: dict[str, bytes | str | None] = dict(
            db.execute("SELECT name, stamp FROM files WHERE folder = ?", (rel,)))  # the covering index alone
        trusted = len(rows) >= SCAN_BELOW  # a folder `recheck` must hear of each file read again in
        changes: list[tuple[str, bytes | str | None]] = []
        for name, st in records.stats(folder):
            # `_file_stamp`, inline: one call a file fewer, 16,000 a scan at 1M
            file_stamp: bytes | str | None = None
            if st is not None and (st.st_ctime_ns <= surely or settled(st, clock)):
                try:
                    file_stamp = _STAMP(st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
                except struct.error:  # a time outside 64 bits of nanoseconds: kept as text
                    file_stamp = f"[{st.st_ino},{st.st_size},{st.st_mtime_ns},{st.st_ctime_ns}]"
            # popped whatever it holds: what is left in `rows` afterwards is gone from the folder
            if rows.pop(name, None) != file_stamp or file_stamp is None:
                changes.append((name, file_stamp))
        if changes or rows or kept_folder != folder_stamp:  # else nothing to write: no transaction
            # (a lock and a journal) for a folder as it was
            with _transaction(db):
                db.executemany("DELETE FROM files WHERE folder = ? AND name = ?", [(rel, n) for n in rows])
                db.executemany("INSERT OR REPLACE INTO files (folder, name, stamp) VALUES (?, ?, ?)",
                               [(rel, n, s) for n, s in changes])
                if changes and (trusted or len(changes) >= SCAN_BELOW):
                    _mark(db, [f"{rel}/{n}" for n, _ in changes] if len(changes) < SCAN_BELOW else [f"{rel}/"])
                if folder_stamp is not None:
                    db.execute("INSERT OR REPLACE INTO folders VALUES (?, ?)", (rel, folder_stamp))
                else:
                    db.execute("DELETE FROM folders WHERE folder = ?", (rel,))
        if self._held is not None:
            self._held.add(rel)

    def recheck(self, named: Iterable[str], head: str | None) -> None:
        """Check the record files git's status names (`named`: repository-relative paths, changed
        or untracked, an untracked folder with its `/`; `head`: the commit it was asked at) each
        by its own stamp, whatever its folder's says, and those it named at the last recheck, and
        those committed since (between that recheck's HEAD and `head`): a record an editor rewrote
        in place in a folder trusted to its stamp (SCAN_BELOW) is read again by the composition
        that follows (the briefing's, which has git's status anyway), and so is one restored in
        place since (git names it no more) or committed since (the same). A folder git names
        whole (untracked: it names no file in it) has the record folders in it checked file by
        file, and so has every folder when git cannot say what the commits since changed. Also
        each file of a trusted folder read again since the last recheck (`_mark`: one that a check,
        or a scan of its folder, read while it was edited in place, then restored in place: git
        names it neither then nor now). A few `lstat`s; a write only for a file whose stamp
        changed."""
        db = self.db()
        if db is None:
            return
        try:
            known = {f for (f,) in db.execute("SELECT folder FROM folders") if _a_store_folder(f)}
            row = db.execute("SELECT value FROM meta WHERE key = 'named'").fetchone()
            kept = json.loads(row[0]) if row is not None else {}
            before = [str(p) for p in kept.get("named", ())] if isinstance(kept, dict) else []
            was = kept.get("head") if isinstance(kept, dict) else None
            now = sorted({p for p in named if p.rpartition("/")[0] in known
                          or (p.endswith("/") and any(f"{f}/".startswith(p) for f in known))})
            marked = _marks(db)
            since: list[str] | None = []
            if isinstance(was, str) and head is not None and was != head:
                since = git.changed_between(self.root, was, head, ".ai/repo/")
            clock = time.time_ns()
            surely = clock - filecache.RACY_NS
            files: list[tuple[str, str]] = []
            every = since is None or (was is None and head is not None)  # no earlier recheck to go from
            for p in sorted(set(now) | set(before) | set(since or ()) | set(marked)) if not every else ["/"]:
                if p.endswith("/"):
                    for f in sorted(known):
                        if f"{f}/".startswith(p.lstrip("/")):
                            self._check(db, self.root / f, f, force=True)
                elif p.rpartition("/")[0] in known:
                    files.append(p.rpartition("/")[::2])
            marked = _marks(db)  # with what the checks above read again: checked now
            changes, gone = self._restamped(db, files, clock, surely)
            if changes or gone or now != before or was != head or marked:
                with _transaction(db):
                    db.executemany("DELETE FROM files WHERE folder = ? AND name = ?", gone)
                    db.executemany("INSERT OR REPLACE INTO files (folder, name, stamp) VALUES (?, ?, ?)", changes)
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('named', ?)",
                               (json.dumps({"head": head, "named": now}, ensure_ascii=False, separators=(",", ":")),))
                    if marked:  # those another process marked meanwhile stay marked
                        _mark(db, [], drop=set(marked))
        except (sqlite3.Error, UnicodeError, ValueError, FatalError):  # a name that is not UTF-8, a folder
            self._lost()  # reached through a link: read the files

    def _restamped(self, db: sqlite3.Connection, files: list[tuple[str, str]], clock: int, surely: int
                   ) -> tuple[list[tuple[str, str, bytes | str | None]], list[tuple[str, str]]]:
        """Of `files` (folder, name), those whose stamp differs from the kept one, with the new
        stamp, and those no longer a record file (a row is kept only for a regular `*.md`)."""
        changes: list[tuple[str, str, bytes | str | None]] = []
        gone: list[tuple[str, str]] = []
        for folder, name in files:
            kept = db.execute("SELECT stamp FROM files WHERE folder = ? AND name = ?", (folder, name)).fetchone()
            try:
                st: os.stat_result | None = os.lstat(os.path.join(self.root, folder, name))
            except OSError:
                st = None
            if st is None or not S_ISREG(st.st_mode) or not records.is_record_name(name):
                if kept is not None:
                    gone.append((folder, name))
                continue
            file_stamp = _file_stamp(st, clock, surely)
            if kept is None or kept[0] != file_stamp or file_stamp is None:
                changes.append((folder, name, file_stamp))
        return changes, gone

    def refresh(self, folders: Iterable[Path]) -> None:
        """Check every file of `folders` by its own stamp, whatever the folder's says: what an
        editor rewrote in place is read again by the next reader."""
        db = self.db()
        if db is None:
            return
        try:
            for folder in folders:
                rel = self._rel(folder)
                if rel is not None:
                    self._check(db, folder, rel, force=True)
        except (sqlite3.Error, UnicodeError):  # a file name that is not UTF-8: read the files
            self._lost()

    def forget(self, paths: Iterable[Path]) -> None:
        """Forget what was read of `paths` (a writer that just wrote them in place)."""
        db = self.db()
        if db is None:
            return
        rows = [(r.rpartition("/")[0], r.rpartition("/")[2]) for p in paths if (r := self._rel(p)) is not None]
        try:
            with _transaction(db):
                db.executemany("UPDATE files SET stamp = NULL WHERE folder = ? AND name = ?", rows)
        except (sqlite3.Error, UnicodeError):  # a file name that is not UTF-8: read the files
            self._lost()

    def _rel(self, path: Path) -> str | None:
        try:
            return Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return None


def _a_store_folder(rel: object) -> bool:
    """Whether a folder the index names (`folders`) is one of the store's, as every reader names
    them: relative, under `.ai/`, no `..`. A committed index is read, not believed: `recheck`
    takes its folders as paths to check."""
    return isinstance(rel, str) and rel.startswith(".ai/") and ".." not in rel.split("/") and "\0" not in rel


def _file_stamp(st: os.stat_result | None, clock: int, surely: int) -> bytes | str | None:
    """A record file's stamp as kept (`_STAMP`), None when it vouches for nothing (gone, or changed
    within the file system's clock's tick of `clock`: `settled`); `surely`: `clock` less the widest
    window, before which a change is settled without asking."""
    if st is None or not (st.st_ctime_ns <= surely or settled(st, clock)):
        return None
    try:
        return _STAMP(st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except struct.error:  # a time outside 64 bits of nanoseconds: kept as text
        return f"[{st.st_ino},{st.st_size},{st.st_mtime_ns},{st.st_ctime_ns}]"


def _marks(db: sqlite3.Connection) -> list[str]:
    """The files (and whole folders, with their `/`) `_mark` noted for the next `recheck`."""
    row = db.execute("SELECT value FROM meta WHERE key = 'marked'").fetchone()
    found = json.loads(row[0]) if row is not None else []
    return [str(p) for p in found] if isinstance(found, list) else []


def _mark(db: sqlite3.Connection, paths: list[str], drop: set[str] | None = None) -> None:
    """Note `paths` (repository-relative files of a folder trusted to its stamp, read again, or a
    whole folder with its `/`) for the next `recheck`, in the caller's transaction; `drop`: those
    it checked. A file read again while edited in place, then restored in place, would otherwise
    keep what was read: git names it neither then nor now. Past SCAN_BELOW paths, each folder is
    noted whole."""
    found = (set(_marks(db)) - (drop or set())) | set(paths)
    if len(found) >= SCAN_BELOW:
        found = {p if p.endswith("/") else p.rpartition("/")[0] + "/" for p in found}
    db.execute("INSERT OR REPLACE INTO meta VALUES ('marked', ?)",
               (json.dumps(sorted(found), ensure_ascii=False, separators=(",", ":")),))


class _transaction:
    """BEGIN IMMEDIATE … COMMIT (ROLLBACK on an error) on a connection in autocommit mode."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *_: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")


def _kept(value: Any, keys: Keys | None, rel: str, name: str) -> tuple[Any, ...]:
    """The parameters of `_update`: what a view keeps of the file `name` of folder `rel`."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return (text, *keys(value), rel, name) if keys is not None else (text, rel, name)


def _update(view: str, keyed: bool = True) -> str:
    """Keep a view's value and its KEYED columns; without `keyed` (a reader that gave no `keys`),
    those are emptied, so that `rows` reads the file again before a query trusts them."""
    return f"UPDATE files SET {view} = ?" + "".join(f", {k} = {'?' if keyed else 'NULL'}"
                                                    for k in KEYED.get(view, ())) + " WHERE folder = ? AND name = ?"


def _linked(path: Path) -> str | None:
    """Why the index, or a file sqlite keeps beside it, cannot be opened by its name: sqlite follows a
    symbolic link (out of the repository, to write there), so any file there but a regular one is
    removed (the link itself) and the index built again. None: nothing odd there."""
    for suffix in ("", "-journal", "-wal", "-shm"):
        try:
            mode = os.lstat(f"{path}{suffix}").st_mode
        except FileNotFoundError:
            continue
        if not S_ISREG(mode):
            kind = "a symbolic link" if S_ISLNK(mode) else "not a regular file"
            return f"kept beside {kind}, {path.name}{suffix}" if suffix else kind
    return None


def _wrong(db: sqlite3.Connection) -> str | None:
    """Why the index cannot be used as it is (None: it can)."""
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        if row is None or row[0] != str(SCHEMA):
            return "of another version"  # said before its tables are read: another version's differ
        # each table and index as `_create` makes it, and nothing that acts or answers in a table's
        # stead (a trigger or view, as a committed index of a hostile clone may hold): beside them
        # only the ledger's facts' tables (store/facts.py) and their indexes
        made = db.execute("SELECT type, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
        if any(kind not in ("table", "index") for kind, _ in made) or not _MADE <= {sql for _, sql in made}:
            return "of another version"
        db.execute("SELECT folder, name, stamp, " + ", ".join(VIEWS) + "".join(
            f", {k}" for keys in KEYED.values() for k in keys) + " FROM files LIMIT 1").fetchall()
        db.execute("SELECT source, folder, name, tracked FROM listed LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        return f"unreadable ({exc})"
    return None


def _kept_or_read(rows: Iterable[tuple[str, str, str, Any, str | None]], read: Reader,
                  keys: Keys | None) -> tuple[list[tuple[str, Any]], list[tuple[Any, ...]]]:
    """Each row's (folder, name, path, kept stamp, kept value) answer: the kept value where the
    stamp vouches for it, else the file read now, and the rows to keep again (a file too recent
    to vouch for itself is read each time, its answer kept unvouched)."""
    found: list[tuple[str, Any]] = []
    kept: list[str] = []  # the kept values, decoded together
    fresh: list[tuple[Any, ...]] = []
    for rel, name, path, kept_stamp, value in rows:
        if value is not None and kept_stamp is not None:
            found.append((name, None))
            kept.append(value)
            continue
        got = read(path)
        found.append((name, got))
        kept.append("null")
        if kept_stamp is not None:
            fresh.append(_kept(got, keys, rel, name))
    return _decoded(found, kept), fresh


def _decoded(found: list[tuple[str, Any]], kept: list[str]) -> list[tuple[str, Any]]:
    """`found` with the kept values (JSON texts, "null" where `found` holds what was just read)
    decoded in one `json.loads` of them all: a call a row costs more than the decoding."""
    values = json.loads("[" + ",".join(kept) + "]")
    if not isinstance(values, list) or len(values) != len(kept):  # a value written by no reader of ours
        raise ValueError("the index holds a value that is not one JSON value")
    return [(name, got if value is None else value) for (name, got), value in zip(found, values)]


def _answers(found: Any, queries: int) -> bool:
    """Whether `found` is a kept answer of `queries` queries: a list of that many lists of rows,
    each row a list (JSON's tuple)."""
    return type(found) is list and len(found) == queries and all(
        type(rows) is list and all(type(row) is list for row in rows) for rows in found)


def _text(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


_OPEN: dict[tuple[str, int], Index] = {}


def of(ws: Any) -> Index:
    """The index of the workspace's checkout, opened once a process and thread (a server answers
    many calls; each call checks the folders it reads against their stamps)."""
    key = (os.fspath(ws.state), get_ident())  # threading's own, without importing threading
    found = _OPEN.get(key)
    if found is None or found.root != ws.root:
        found = _OPEN[key] = Index(ws.root, ws.state)
    return found
