"""Credentials in what the repository tracks: `knowledge check` screens every file git's index
holds under `.ai/repo/` (session records, rules, decision records, the policy, records), its name
included, and the majordomus block of `AGENTS.md`, whatever wrote them (a writer that screened,
an old version that did not, a hand edit, a merge).

The knowledge records it has parsed are screened field by field by the integrity check, which
names the field; here they are passed their names only. One `git ls-files` call, shared with the caller (`git.Listing`); a file is read
only when it is a regular file reached through no link (`fsio.read_text`), and the screen's cheap
pre-test keeps detect-secrets unloaded unless a text looks like a credential.

`Screen` keeps each answer by what was screened (`.ai/local/state/screen.cache.json`, and the
records' fields apart in `screen.fields.cache.json`, loaded only when a record is read: doctor,
which reads none on most runs, does not decode 20,000 records' answers at a million ledger lines): the digest
of the screen's own identity (`credentials.identity`: its patterns, plugins and detect-secrets'
version) and of the very bytes read this time. Under `knowledge check` every file is read on every
run and its digest taken (a few milliseconds for a thousand files); the detectors run only on bytes
no run of this screen has screened. Its stat is never asked there: an edit that keeps size and
mtime is read, and screened, like any other. Doctor alone (`Screen(trusted=True)`) trusts a file's stat: a file
whose stat is the one kept beside its answer by the same screen is not read. A missing or
unreadable cache costs time, never an answer.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from majordomus.base import fsio, git
from majordomus.base.credentials import credential_in, identity
from majordomus.knowledge.export import BEGIN, END
from majordomus.store.filecache import FileCache, answer, content_digest, lstat
from majordomus.store.workspace import Workspace

AGENTS_MD = "AGENTS.md"
FIX = ("remove it (and from git's history, then revoke it: it may have been pushed), "
       "then `majordomus knowledge check`")
CACHE = "screen.cache.json"
FIELDS_CACHE = "screen.fields.cache.json"  # the `_FIELDS` answers, loaded when a record is read
_VERSION = 1
_TEXT, _FIELDS = "text:", "fields:"  # the two answers a file may have, kept apart
_SCREEN = "screen:"  # the identity of the screen that kept the answers, for `by_stats`


class Screen:
    """The screen of one run, its answers kept by the digest of the bytes they were made of.
    `trusted` (doctor): a tracked file whose stat is the one kept beside its answer, by this very
    screen, is answered without being read (one `lstat`); `knowledge check` reads every file."""

    def __init__(self, ws: Workspace, trusted: bool = False) -> None:
        self.ws = ws
        self.cache = FileCache(ws.state / CACHE, _VERSION, ws.root)
        self._fields: FileCache | None = None  # loaded by the first record read (`_cache`)
        self._identity: bytes | None = None
        self.seen: dict[str, set[str]] = {}
        self.screened = 0  # files or blocks the detectors' pre-test was run on (no answer kept)
        self.trusted = trusted
        self._mark: list[Any] | None = None
        self._root = os.fspath(ws.root) + os.sep  # a path made as text: no Path a tracked file

    def digest(self, data: bytes) -> str:
        """The key of `data` as this screen reads it."""
        if self._identity is None:
            self._identity = identity()
        return content_digest(self._identity + b"\0" + data)

    def _cache(self, folder: str) -> FileCache:
        """The cache that keeps the answers of `folder`: the records' fields apart, loaded on first use."""
        if not folder.startswith(_FIELDS):
            return self.cache
        if self._fields is None:
            self._fields = FileCache(self.ws.state / FIELDS_CACHE, _VERSION, self.ws.root)
        return self._fields

    def _kept(self, folder: str, name: str, digest: str) -> tuple[bool, Any]:
        self.seen.setdefault(folder, set()).add(name)
        return self._cache(folder).get_content(folder, name, digest)

    def _keep(self, folder: str, name: str, digest: str, value: Any) -> None:
        st = lstat(self.ws.root / folder.partition(":")[2] / name)
        if st is not None:  # the stat is stored beside the digest, never asked (`get` is not used)
            self._cache(folder).put(folder, name, st, value, digest)

    def by_stats(self, rels: list[str]) -> dict[str, str | None]:
        """rel -> kind of the tracked files answered by their stat alone: under `trusted`, when this
        screen (the identity kept beside the answers) answered a file at that very stat (the cache
        keeps no stat taken within one tick of the file system's clock of a change). One `lstat` a
        file, its folder's answers looked up once: at a million ledger lines these are 20,000
        session records on every doctor."""
        if not self.trusted or self.cache.folders.get(_SCREEN, {}).get("identity") != self._marker():
            return {}
        found: dict[str, str | None] = {}
        where, seen = None, set()
        entries: dict[str, list[Any]] = {}
        lstat_ = os.lstat
        for rel in rels:
            parent, _, name = rel.rpartition("/")
            if parent != where:  # the listing is sorted: one look-up a folder
                where = parent
                entries = self.cache.folders.get(_TEXT + parent, {})
                seen = self.seen.setdefault(_TEXT + parent, set())
            try:
                st = lstat_(self._root + rel)
            except OSError:
                continue
            hit, kind = answer(entries.get(name), st)  # `FileCache.get`, its folder looked up once
            if hit and (kind is None or isinstance(kind, str)):
                seen.add(name)
                found[rel] = kind
        return found

    def _marker(self) -> list[Any]:
        if self._mark is None:  # an entry no stat matches, holding the screen's key
            self._mark = [0, -1, 0, 0, self.digest(b"")]
        return self._mark

    def text(self, rel: str, data: bytes) -> str | None:
        """The kind of the first credential in a file's bytes (read as UTF-8, bad bytes replaced),
        or None."""
        folder, name = _TEXT + rel.rpartition("/")[0], rel.rpartition("/")[2]
        digest = self.digest(data)
        hit, kind = self._kept(folder, name, digest)
        if hit and (kind is None or isinstance(kind, str)):
            if self.trusted:  # the bytes were answered at another stat (a checkout, a copy): keep this one
                self._keep(folder, name, digest, kind)
            return kind
        self.screened += 1
        kind = credential_in(data.decode("utf-8", "replace"))
        self._keep(folder, name, digest, kind)
        return kind

    def fields(self, rel: str, data: bytes, texts: Callable[[], Iterable[tuple[str, Any]]]) -> list[tuple[str, str]]:
        """(field, kind) of each field of a parsed record that carries a credential: `texts`, the
        record's (field, text) pairs, is called only when these bytes were not screened before."""
        folder, name = _FIELDS + rel.rpartition("/")[0], rel.rpartition("/")[2]
        digest = self.digest(data)
        hit, kept = self._kept(folder, name, digest)
        if hit and isinstance(kept, list) and all(isinstance(k, list) and len(k) == 2 for k in kept):
            return [(str(f), str(k)) for f, k in kept]
        self.screened += 1
        found = []
        for fld, text in texts():
            kind = credential_in(text) if isinstance(text, str) else None
            if kind:
                found.append((fld, kind))
        self._keep(folder, name, digest, [list(f) for f in found])
        return found

    def unchanged(self, folder: str, names: Iterable[str]) -> None:
        """Keep the answers for the fields of the records `names` of `folder` (repository-relative)
        that a reader trusting the index did not read (their files kept their stamps), so that
        `save` does not forget them."""
        self.seen.setdefault(_FIELDS + folder, set()).update(names)

    def save(self) -> None:
        """Keep the answers of this run's files only: those of files gone are forgotten (the records'
        fields when a record was read: else their cache, not loaded, keeps answers of records that
        may be gone, which answer only for those very bytes)."""
        for folder in [f for f in self.cache.folders if f.startswith(_FIELDS)]:  # kept together before
            moved = self.cache.folders.pop(folder)
            self._cache(folder).folders.setdefault(folder, moved)
            self.cache.changed = self._cache(folder).changed = True
        for cache in (self.cache, self._fields):
            if cache is None:
                continue
            for folder in list(cache.folders):
                if folder != _SCREEN:
                    cache.keep_only(folder, self.seen.get(folder, set()))
                if not cache.folders[folder]:
                    del cache.folders[folder]
        if self.cache.folders.get(_SCREEN, {}).get("identity") != self._marker():
            self.cache.folders[_SCREEN] = {"identity": self._marker()}  # who answered (`by_stats`)
            self.cache.changed = True
        self.cache.save()
        if self._fields is not None:
            self._fields.save()


def screen(ws: Workspace, parsed: dict[str, str | None], finding: Callable[[str, str | None, str, str], None],
           listing: git.Listing, kept: Screen | None = None) -> None:
    """Report each tracked file under `.ai/repo/` (and the AGENTS.md block) that carries a
    credential, in its name or its text; `parsed`: the records the caller screened by field, each
    with what `credential_in` found in its path (the caller keeps it with the record); `listing`:
    git's, shared with the caller; `kept`: the caller's screen, which it saves."""
    cache = kept if kept is not None else Screen(ws)
    tracked = listing.under(".ai/repo") or []
    others = [rel for rel in tracked if rel not in parsed]
    known = cache.by_stats(others)  # a hit: this screen passed its name and answered its text
    clean = len(known) == len(others) and not any(known.values()) and not any(parsed.values())
    for rel in () if clean else tracked:  # nothing to report (a doctor at rest): no file looked at again
        if rel in parsed:
            kind = parsed[rel]
            if kind:
                finding(rel, "name", f"its file name carries a credential ({kind})", "rename it: " + FIX)
            continue
        if rel in known:
            kind = known[rel]
        else:
            kind = credential_in(rel)
            if kind:
                finding(rel, "name", f"its file name carries a credential ({kind})", "rename it: " + FIX)
                continue
            data = _bytes(ws, rel)
            kind = cache.text(rel, data) if data is not None else None
        if kind:
            finding(rel, None, f"carries a credential ({kind}) in a tracked file", FIX)
    block = agents_block(ws)
    kind = cache.text(AGENTS_MD, block) if block else None
    if kind:
        finding(AGENTS_MD, "majordomus block", f"carries a credential ({kind}) in a tracked file",
                "remove the record that carries it, then `majordomus knowledge export --agents-md`")
    if kept is None:
        cache.save()


def screen_key() -> str:
    """The screen's own key (`Screen.digest` of no bytes): another screen's answers are another's."""
    return content_digest(identity() + b"\0")


def agents_block(ws: Workspace) -> bytes | None:
    """The majordomus block of AGENTS.md, as the screen reads it (None: no block)."""
    return _block(_bytes(ws, AGENTS_MD), BEGIN.encode(), END.encode())


def _bytes(ws: Workspace, rel: str) -> bytes | None:
    try:
        return fsio.read_bytes(ws.root / rel)
    except OSError:
        return None  # gone, a link, a pipe, too large or not text: the other checks name it


def _block(data: bytes | None, begin: bytes, end: bytes) -> bytes | None:
    if not data:
        return None
    start = data.find(begin)
    stop = data.find(end, start + 1) if start >= 0 else -1
    return data[start:stop] if 0 <= start < stop else None
