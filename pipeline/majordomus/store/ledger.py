"""The append-only ledger: `.ai/local/ledger.jsonl`, one JSON object a line.

Events are registered here before anything may write them. Appends hold an exclusive lock on a
separate lock file, so the retention trim (which rewrites the file through a rename) never races
an appender holding the old inode. Readers are tolerant: a malformed line is skipped and counted,
never fatal.

Readers never hold the whole file: they read it in blocks (`CHUNK`), search each block for their
needles at C speed and parse only the lines that hold one. What is recent is found through the
index (`LedgerIndex`, `.ai/local/state/ledger.index.json`): derived from the ledger, extended by
the bytes appended since it was written, and rebuilt from the file whenever it does not describe
it (another file, a shorter one, other bytes where it stopped), so it is never a second source
of truth. It knows how many lines the ledger has, where each episode's first line is, where each
episode's newest `session.opened` is, and where the newest `handover.recorded` is: an episode's
window is read from its first line on, the retention cap is checked without reading the file,
and the start briefing reads a handful of lines.

The retention cap (`ledger.retention_lines`) is enforced by a trim that runs when it is worth it
(`trim_due`): once the ledger is over the cap by a tenth of it (`SLACK`), it is rewritten down to
the cap in one streamed pass, so a boundary pays for a rewrite once every cap/10 lines appended,
never on each close. Lines of an episode still open are kept; the line count a trim leaves (which
they may hold above the cap) is the floor the next trim waits to be passed by the same margin.
"""
from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from itertools import accumulate
from pathlib import Path

from majordomus.base.errors import FatalError, refused
from majordomus.base.fsio import append_line, atomic_write, locked, open_regular
from majordomus.base.lean import TYPE_CHECKING, json, pattern

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

# The registry: event name -> what its payload carries (documentation and the check below).
EVENTS: dict[str, tuple[str, ...]] = {
    "session.opened": ("episode", "source", "branch", "head", "reflog", "agent", "forked_from", "span"),
    "session.resumed": ("episode", "source"),
    "session.closed": ("episode", "reason", "branch", "head", "orphan_after_minutes", "swept_by"),
    "session.refused": ("episode", "why"),
    "session.reminded": ("episode", "commits"),
    "task.started": ("task", "title", "scope", "about", "head", "reflog"),
    "task.finished": ("task", "title", "outcome", "verify", "note", "scope", "head", "reason"),
    "verification.failed": ("task", "title", "command", "code", "timed_out", "head"),
    "decision.recorded": ("task", "text", "why", "about"),
    "question.opened": ("question", "task", "text", "about"),
    "question.resolved": ("question", "task", "text", "answer"),
    "checkpoint.recorded": ("task", "note", "head", "changed_files", "changed_total",
                            "changed_error"),
    "handover.recorded": ("task", "next"),
    "knowledge.derived": ("episode", "written", "unchanged", "skipped", "kept", "edited", "paths", "provenance"),
    "knowledge.promoted": ("id", "class", "status", "evidence_lines", "path", "by", "digest"),
    "knowledge.rejected": ("id", "superseded_by", "status", "reason", "path", "by", "digest"),
    "knowledge.reverified": ("id", "status", "evidence_lines", "path", "by", "digest"),
    "knowledge.retired": ("id", "superseded_by", "status", "reason", "path", "by", "digest"),
    "knowledge.disputed": ("id", "reason", "by"),
    "provider.event.failed": ("hook", "error"),
    "outbox.drained": ("moved", "same", "settled", "kept", "paths", "kept_paths"),
    "ledger.trimmed": ("removed", "kept"),
}

LEDGER = "ledger.jsonl"
INDEX = "ledger.index.json"
CHUNK = 1 << 22  # a reader holds at most this much of the ledger (plus one line) at once
# The longest line a reader takes: an event is a few hundred bytes, a derivation's list of paths
# some kilobytes. A longer line (a runaway writer, a hostile file, a file with no newline at all)
# is skipped unread and counted as malformed, so no reader ever holds more than CHUNK +
# LINE_LIMIT of the ledger; `append` refuses to write one.
LINE_LIMIT = 1 << 20
INDEX_LIMIT = 64 << 20  # the index's saved episodes map: ~60 bytes an episode
OVERLONG = b"\x00\n"  # what a reader is given for a line longer than LINE_LIMIT: one malformed line
OVERLONG_TAIL = b"\x00"  # the same, for such a line the file ends in
SEARCHED = 8  # episodes an index looks up in its saved text one by one before it parses the map whole
SAVE_AFTER = 1 << 18  # the index is rewritten once this many bytes were appended past it
_CHECK = 64  # the bytes before the indexed end that must still be there for the index to hold
# A line as `append` writes it (or with JSON's blanks between the tokens, as `json.dumps` writes
# by default): its session read without a JSON parse. A line of any other shape (another key
# order, an escape in the id, a second "session" key) is parsed instead.
_CANON = pattern(  # `_`: JSON's blanks
    rb'(?m)^\{_"ts"_:_"[^"\\\n]*"_,_"event"_:_"[^"\\\n]*"_,_"session"_:_("[^"\\\n]*"|null)_[,}]'
    .replace(b"_", rb"[ \t\r]*"))
_SESSION_KEY = b'"session"'
BATCH = 4096  # lines parsed in one `json.loads` by the readers of matching lines
FEW = 64  # new episodes in one block up to which each first line is found by its own search
_OPENED = b'"session.opened"'
SLACK = 10  # a trim is due once the ledger is over the cap (or the last trim's floor) by 1/SLACK of it
_HANDOVER = b'"handover.recorded"'


def utc_now() -> str:
    """The current time as the ledger writes it: UTC, seconds, `Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Line(NamedTuple):
    """One parsed ledger line with its 1-based line number."""

    number: int
    ts: str
    event: str
    session: str | None
    data: dict[str, Any]

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


class LedgerIndex:
    """What the ledger holds up to `size` bytes (a line boundary), derived from its bytes.

    Per episode: [offset of its first line, that line's number, offset of its newest
    `session.opened` line or -1]. The first offset is a lower bound (a line read there may turn
    out malformed: the window reader parses what it reads). `handover` is the offset of the
    newest parseable `handover.recorded` line, or -1. The saved map is parsed only when an
    episode is looked up: the start hook mostly needs the header, a close one episode, which is
    found in the saved text (`_saved_entry`) without parsing the map of every episode."""

    __slots__ = ("dev", "ino", "size", "lines", "check", "handover", "floor", "saved", "fresh", "scanned",
                 "_known", "_looked")

    def __init__(self, dev: int, ino: int, size: int = 0, lines: int = 0, check: str = "",
                 handover: int = -1, saved: bytes = b"{}", floor: int = 0) -> None:
        self.dev, self.ino, self.size, self.lines, self.check = dev, ino, size, lines, check
        self.handover = handover
        self.floor = floor  # the lines the last trim left (0: unknown, the index was rebuilt)
        self.saved = saved  # the saved episodes map, as JSON text until it is needed
        self.fresh: dict[str, list[int]] = {}  # episodes seen past the saved map
        self.scanned = 0  # bytes scanned past what was loaded (not saved yet)
        self._known: dict[str, list[int]] | None = None
        self._looked = 0  # episodes found in the saved text one by one so far

    def known(self) -> dict[str, list[int]]:
        if self._known is None:
            try:
                loaded = json.loads(self.saved)
            except ValueError:
                loaded = None
            self._known = loaded if isinstance(loaded, dict) else {}
        return self._known

    def episode(self, episode: str) -> list[int] | None:
        """[first offset, first number, newest session.opened offset] of `episode`, or None."""
        old, new = self._saved_entry(episode), self.fresh.get(episode)
        if old is None or new is None:
            return old or new
        return [old[0], old[1], new[2] if new[2] >= 0 else old[2]]

    def _saved_entry(self, episode: str) -> Any:
        """What the saved map holds for `episode`: for the first few lookups of a process, found in
        its text (a search at C speed; the map is 1.3 MB at a million lines, and a close looks up
        one episode), after that, and whenever the text is not plainly of the writer's shape, from
        the map parsed whole."""
        if self._known is None and self._looked < SEARCHED:
            found = _search_saved(self.saved, episode)
            if found is not _UNSURE:
                self._looked += 1
                return found
        return self.known().get(episode)

    def episodes(self) -> dict[str, list[int]]:
        merged = dict(self.known())
        for episode in self.fresh:
            merged[episode] = self.episode(episode) or self.fresh[episode]
        return merged

    def header(self) -> dict[str, Any]:
        return {"v": 1, "dev": self.dev, "ino": self.ino, "size": self.size, "lines": self.lines,
                "check": self.check, "handover": self.handover, "floor": self.floor}


_UNSURE = object()  # the saved text cannot answer by a search: parse it whole


def _search_saved(saved: bytes, episode: str) -> Any:
    """The value the saved episodes map (`_save`: one JSON object of lists of numbers, compact)
    holds for `episode`, found by searching its text, or `_UNSURE`. With no backslash in the text
    every quotation mark delimits a key (the values are numbers), so `"<episode>":` after an even
    number of them is that key, and no key written with an escape can be the one asked for; a
    text with a backslash, or of another shape, is left to the parser."""
    text = saved.rstrip(b"\n")
    if not (text.startswith(b"{") and text.endswith(b"}")) or b"\\" in text:
        return _UNSURE
    try:
        key = json.dumps(episode, ensure_ascii=False).encode("utf-8") + b":"
    except UnicodeEncodeError:
        return _UNSURE
    pos = text.find(key)
    while pos >= 0 and (text.count(b'"', 0, pos) % 2 or text[pos - 1:pos] not in (b"{", b",")):
        pos = text.find(key, pos + 1)
    if pos < 0:
        return None
    start = pos + len(key)
    end = text.find(b"]", start)
    try:
        value = json.loads(text[start:end + 1]) if end >= 0 else None
    except ValueError:
        return _UNSURE
    return value if isinstance(value, list) and all(type(v) is int for v in value) else _UNSURE


class ReadResult:
    """Parsed lines, and the malformed ones counted (the first by its number)."""

    __slots__ = ("lines", "malformed", "first_malformed")

    def __init__(self, lines: list[Line]) -> None:
        self.lines = lines
        self.malformed = 0
        self.first_malformed: int | None = None


class Ledger:
    """The ledger of one checkout."""

    def __init__(self, local_dir: Path, wait: Callable[[], float | None] | None = None,
                 root: Path | None = None) -> None:
        self.path = local_dir / LEDGER
        self.lock_path = local_dir / "state" / "ledger.lock"
        self.wait = wait  # how long the lock may be waited for (the workspace's bound), None: unbounded
        # the repository whose real folders alone are written (`.ai/local` is two below it)
        self.root = root if root is not None else local_dir.parent.parent
        self._index: LedgerIndex | None = None  # this process's, extended as the file grows

    @contextmanager
    def locked(self) -> Iterator[None]:
        with locked(self.lock_path, self.wait() if self.wait else None, root=self.root):
            yield

    def append(self, event: str, session: str | None, ts: str | None = None, **data: Any) -> dict[str, Any]:
        """Append one registered event, stamped with `session`, as one whole line."""
        if event not in EVENTS:
            raise ValueError(f"unregistered ledger event {event!r}: register it in EVENTS of pipeline/majordomus/store/ledger.py")
        line: dict[str, Any] = {"ts": ts or utc_now(), "event": event, "session": session}
        line.update(data)
        encoded = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        if len(encoded) > LINE_LIMIT:
            raise refused(f"a {event} line of {len(encoded)} bytes is longer than the ledger's "
                          f"{LINE_LIMIT} a line: nothing was written; shorten the text")
        with self.locked():
            append_line(self.path, encoded, root=self.root)  # whole, on a fresh line, or not at all
        return line

    def _open(self) -> int | None:
        """A descriptor of the ledger, None when there is none; a link, a pipe, or a ledger reached
        through a linked folder (`.ai/local` linked elsewhere) is refused."""
        try:
            return open_regular(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise
            raise refused(f"{self.path}: the ledger is not a regular file inside the repository (a "
                          "symbolic link, a pipe, or reached through a linked folder): replace it with a "
                          "real one, and majordomus starts a new ledger") from None

    def raw_lines(self) -> Iterator[tuple[int, str]]:
        """(number, text) of every line, in order, read in blocks."""
        for number, raw in self._blocks_lines():
            yield number, raw.decode("utf-8", errors="replace")

    def _blocks(self, start: int = 0) -> Iterator[tuple[int, bytes, int]]:
        """(offset, block, end) from `start` on, each block a whole number of lines (the last one
        may end without a newline) from byte `offset` to `end`; at most CHUNK bytes plus one line
        of LINE_LIMIT at a time; never through a link. A line longer than LINE_LIMIT that runs
        past a block is not kept: it comes as `OVERLONG` (`OVERLONG_TAIL` when the file ends in
        it), one line that never parses, so every reader skips it and counts it malformed."""
        fd = self._open()
        if fd is None:
            return
        with open(fd, "rb", buffering=0) as handle:
            handle.seek(start)
            offset, rest, pos, skipping = start, b"", start, False
            scratch = bytearray(0)
            while True:
                if skipping:  # within an overlong line: read on to its end into one buffer, keeping nothing
                    if not scratch:
                        scratch = bytearray(CHUNK)
                    got = handle.readinto(scratch)
                    if not got:
                        break
                    pos += got
                    nl = scratch.find(b"\n", 0, got)
                    if nl < 0:
                        continue
                    end = pos - got + nl + 1
                    yield offset, OVERLONG, end
                    offset, data, skipping = end, bytes(scratch[nl + 1:got]), False
                else:
                    data = handle.read(CHUNK)
                    if not data:
                        break
                    pos += len(data)
                data = rest + data
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    rest = data
                    if len(rest) > LINE_LIMIT:
                        rest, skipping = b"", True
                    continue
                rest = data[cut:]
                yield offset, data[:cut], offset + cut
                offset += cut
                if len(rest) > LINE_LIMIT:
                    rest, skipping = b"", True
            if skipping:
                yield offset, OVERLONG_TAIL, pos
            elif rest:
                yield offset, rest, offset + len(rest)

    def _blocks_lines(self) -> Iterator[tuple[int, bytes]]:
        number = 1
        for _, block, _ in self._blocks():
            lines = block.split(b"\n")
            if block.endswith(b"\n"):
                lines.pop()
            for raw in lines:
                yield number, raw
                number += 1

    def reversed_lines(self, block: int = 1 << 16) -> Iterator[str]:
        """The ledger's non-blank lines, newest first, read in blocks from the end of the file: a
        reader that wants only what is recent stops early and never reads the rest."""
        fd = self._open()
        if fd is None:
            return
        with open(fd, "rb") as handle:
            pos = handle.seek(0, os.SEEK_END)
            rest, skipping = b"", False
            while pos > 0:
                step = min(block, pos)
                pos -= step
                handle.seek(pos)
                data = handle.read(step)
                if skipping:  # within a line longer than LINE_LIMIT: read back to its start, skip it
                    nl = data.rfind(b"\n")
                    if nl < 0:
                        continue
                    data, rest, skipping = data[:nl + 1], b"", False
                parts = (data + rest).split(b"\n")
                rest = parts[0]
                for raw in reversed(parts[1:]):
                    text = raw.decode("utf-8", errors="replace") if len(raw) <= LINE_LIMIT else ""
                    if text.strip():
                        yield text
                if len(rest) > LINE_LIMIT:
                    rest, skipping = b"", True
            text = rest.decode("utf-8", errors="replace")
            if text.strip() and not skipping:
                yield text

    def stream(self, contains: str | None = None, result: ReadResult | None = None,
               any_of: tuple[str, ...] = ()) -> Iterator[Line]:
        """Every parseable line, in order, one at a time; `contains` is a substring pre-filter on
        the line's text, `any_of` one that any of its needles passes (searched at C speed, block
        by block: only the lines holding one are parsed). Malformed lines among those read are
        counted into `result`."""
        needles = tuple(n.encode("utf-8") for n in ((contains,) if contains is not None else any_of))
        for number, raw in (self._hits(*needles) if needles else self._blocks_lines()):
            parsed = parse_line(number, raw.decode("utf-8", errors="replace"))
            if parsed is None:
                if result is not None and raw.strip():
                    result.malformed += 1
                    if result.first_malformed is None:
                        result.first_malformed = number
                continue
            yield parsed

    def objects(self, result: ReadResult | None = None) -> Iterator[dict[str, Any]]:
        """Every parseable line as its JSON object (`ts`, `event`, `session` left in it), in order,
        streamed, for a reader that wants every line and no line number (`knowledge check`)."""
        for _, objs in self.object_runs(result):
            yield from objs

    def object_runs(self, result: ReadResult | None = None) -> Iterator[tuple[int, list[dict[str, Any]]]]:
        """`objects` with their line numbers, for a reader that keeps a few lines of its one pass
        (doctor): (the number of the first, the objects of consecutive lines from it). A block of
        lines is parsed in one call, and only a block holding a line that is not one stamped
        object is parsed line by line. Malformed lines are counted into `result`."""
        for _, runs, _, _ in self.object_blocks(result):
            yield from runs

    def object_blocks(self, result: ReadResult | None = None, start: int = 0, number: int = 1) \
            -> Iterator[tuple[int, list[tuple[int, list[dict[str, Any]]]], int, bool]]:
        """`object_runs` block by block from byte `start` (a line boundary, line `number`), for a
        reader that keeps what it read up to an offset (the index's ledger facts): (lines in the
        block, its runs, the offset it ends at, whether it ends in a newline: a last block that
        does not holds a line being written, or torn)."""
        for _, block, end in self._blocks(start):
            lines = block.split(b"\n")
            if block.endswith(b"\n"):
                lines.pop()
            runs: list[tuple[int, list[dict[str, Any]]]] = []
            objs = _stamped_objects(lines)
            if objs is not None:
                runs.append((number, objs))
            else:
                for n, raw in enumerate(lines, number):
                    obj = _object(raw.decode("utf-8", errors="replace"))
                    if obj is not None:
                        runs.append((n, [obj]))
                    elif result is not None and raw.strip():
                        result.malformed += 1
                        if result.first_malformed is None:
                            result.first_malformed = n
            yield len(lines), runs, end, block.endswith(b"\n")
            number += len(lines)

    def digest(self, size: int) -> str:
        """The bytes before `size` an index of the ledger up to `size` checks are still there."""
        return self._check(size)

    def tail_stamp(self) -> list[Any] | None:
        """[device, inode, length, the bytes before the end (hex)]: what a file derived from the
        ledger (a prebuilt briefing, a no-op's stamps) keeps of it, to tell later from what was
        appended since (`appended_since`) alone that it is the same ledger grown. [0, 0, 0, ""]
        when there is none; None when it cannot be read."""
        try:
            fd = open_regular(self.path)
        except FileNotFoundError:
            return [0, 0, 0, ""]
        except OSError:
            return None
        with open(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            handle.seek(max(st.st_size - _CHECK, 0))
            return [st.st_dev, st.st_ino, st.st_size, handle.read(_CHECK).hex()]

    def appended_since(self, kept: Any, limit: int) -> bytes | None:
        """The bytes appended since `kept` (a `tail_stamp`), a line being written included; None
        when the ledger is not that one grown by at most `limit` bytes (another file, a shorter
        one, the bytes before the stamped end changed: a trim, a rewrite). A ledger stamped when
        there was none may be any file since."""
        if not (isinstance(kept, list) and len(kept) == 4 and all(type(x) is int for x in kept[:3])
                and isinstance(kept[3], str)):
            return None
        dev, ino, size, check = kept
        try:
            fd = open_regular(self.path)
        except FileNotFoundError:
            return b"" if size == 0 else None
        except OSError:
            return None
        with open(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            if (st.st_dev, st.st_ino) != (dev, ino) and size != 0 or not size <= st.st_size <= size + limit:
                return None
            start = max(size - _CHECK, 0)
            handle.seek(start)
            data = handle.read(st.st_size - start)
        return data[size - start:] if data[:size - start].hex() == check else None

    def read(self, contains: str | None = None) -> ReadResult:
        """Every parseable line, in order; `contains` is a cheap substring pre-filter."""
        result = ReadResult(lines=[])
        result.lines.extend(self.stream(contains, result))
        return result

    def _hits(self, *needles: bytes, start: int = 0, number: int = 1) -> Iterator[tuple[int, bytes]]:
        """(number, line) of every line from byte `start` (line `number`) that holds one of
        `needles`, in order: each block searched at C speed, newlines counted only up to a hit."""
        for _, block, _ in self._blocks(start):
            hits: dict[int, int] = {}
            for needle in needles:
                pos = block.find(needle)
                while pos >= 0:
                    begin = block.rfind(b"\n", 0, pos) + 1
                    end = block.find(b"\n", pos)
                    end = len(block) if end < 0 else end
                    hits[begin] = end
                    pos = block.find(needle, end)
            last = 0
            for begin in sorted(hits):
                number += block.count(b"\n", last, begin)
                last = begin
                yield number, block[begin:hits[begin]]
            number += block.count(b"\n", last)

    def matching(self, *needles: str) -> list[Line]:
        """The one event reader: every parseable line holding one of `needles` (an event name in
        quotes, an episode id as JSON), in ledger order, with its line number. The file is read in
        blocks and searched at C speed; only the lines that hold a needle are parsed."""
        return list(_parsed(self._hits(*(n.encode("utf-8") for n in needles))))

    def events(self, *names: str) -> list[Line]:
        """The lines whose event is one of `names`, in order."""
        return [line for line in self.matching(*(json.dumps(n) for n in names)) if line.event in names]

    def window(self, episode: str) -> list[Line]:
        """The lines stamped with `episode`, in order: read from the episode's first line on.

        The index is used as far as it goes and not extended: an episode it knows is read from its
        first line, one it does not know can only have begun in the bytes appended since, which
        are searched for the episode's id at C speed. Extending the index would parse the session
        of every line appended since; the reader that needs the whole index (the start briefing's
        handover, the retention count) extends and saves it."""
        index = self.index(extend=False)
        where = index.episode(episode)
        start, number = (where[0], where[1]) if where is not None else (index.size, index.lines + 1)
        needle = json.dumps(episode, ensure_ascii=False).encode("utf-8")
        hits = self._hits(needle, start=start, number=number)
        return [line for line in _parsed(hits) if line.session == episode]

    def line_at(self, offset: int) -> Line | None:
        """The parseable line starting at byte `offset` (number 0: unknown), or None."""
        if offset < 0:
            return None
        fd = self._open()
        if fd is None:
            return None
        with open(fd, "rb") as handle:
            handle.seek(offset)
            raw = handle.readline(LINE_LIMIT + 1)
        if len(raw) > LINE_LIMIT:
            return None  # a line no reader takes (LINE_LIMIT)
        return parse_line(0, raw.decode("utf-8", errors="replace"))

    def last_handover(self) -> Line | None:
        """The newest `handover.recorded` line that names a next action, from the index: one
        line read."""
        return self.line_at(self.index().handover)

    def since_handover(self, *needles: str) -> list[Line]:
        """The lines from the newest handover on that hold one of `needles` (line numbers
        unknown, 0): what later work did, read from the index's offset, not the whole ledger."""
        index = self.index()
        if index.handover < 0:
            return []
        return list(_parsed(self._hits(*(n.encode("utf-8") for n in needles), start=index.handover, number=0)))

    def opened_branches(self, episodes: Iterable[str]) -> dict[str, str | None]:
        """Each of `episodes` the ledger holds a `session.opened` for: its branch at its newest
        open (None when detached), from the index: one line read each."""
        index = self.index()
        episodes = list(episodes)
        if len(episodes) > SEARCHED:
            index.known()  # parsed once, not searched for each
        found: dict[str, str | None] = {}
        for episode in episodes:
            where = index.episode(episode)
            line = self.line_at(where[2]) if where is not None else None
            if line is not None and line.event == "session.opened" and line.session == episode:
                branch = line.get("branch")
                found[episode] = branch if isinstance(branch, str) else None
        return found

    def count(self) -> int:
        """How many lines the ledger has (a last line without its newline counts), from the
        index and the bytes appended since."""
        index = self.index()
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return 0
        return index.lines + (1 if size > index.size else 0)

    # --- the index ---------------------------------------------------------------------------

    @property
    def index_path(self) -> Path:
        return self.lock_path.parent / INDEX

    def index(self, extend: bool = True) -> LedgerIndex:
        """The index of the ledger as it is now: loaded, checked against the file, extended over
        what was appended since (and saved when that was much), or rebuilt from the file. With
        `extend` false it is only loaded and checked: it describes the ledger up to its `size`."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return LedgerIndex(0, 0)
        index = self._index
        if index is None or (index.dev, index.ino) != (st.st_dev, st.st_ino) or index.size > st.st_size \
                or self._check(index.size) != index.check:
            index = self._load(st) or LedgerIndex(st.st_dev, st.st_ino)
        self._index = index
        if extend and st.st_size > index.size:
            before = index.size
            for offset, block, end in self._blocks(index.size):
                if not block.endswith(b"\n"):
                    break  # a line still being written, or torn: indexed once it ends
                _scan(block, offset, index)
                index.size = end  # an overlong line's placeholder is shorter than the line
            index.scanned += index.size - before
            index.check = self._check(index.size)
            if index.size and (index.scanned >= SAVE_AFTER or before == 0):
                self._save(index)
        return index

    def _load(self, st: os.stat_result) -> LedgerIndex | None:
        try:
            with open(open_regular(self.index_path), "rb") as handle:
                head = json.loads(handle.readline(1 << 16))
                if not (isinstance(head, dict) and head.get("v") == 1 and head.get("dev") == st.st_dev
                        and head.get("ino") == st.st_ino and isinstance(head.get("size"), int)
                        and 0 < head["size"] <= st.st_size):
                    return None
                saved = handle.readline(INDEX_LIMIT + 1)
                if len(saved) > INDEX_LIMIT:
                    return None  # not an index of ours: rebuilt from the ledger
            index = LedgerIndex(st.st_dev, st.st_ino, head["size"], int(head["lines"]), str(head["check"]),
                                int(head["handover"]), saved, int(head.get("floor", 0)))
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if self._check(index.size) != index.check:
            return None
        return index

    def _check(self, size: int) -> str:
        start = max(0, size - _CHECK)
        try:
            fd = self._open()
        except (OSError, FatalError):
            return ""
        if fd is None:
            return ""
        with open(fd, "rb") as handle:
            handle.seek(start)
            return handle.read(size - start).hex()

    def _save(self, index: LedgerIndex) -> None:
        index.check = self._check(index.size)
        data = (json.dumps(index.header(), separators=(",", ":")) + "\n"
                + json.dumps(index.episodes(), separators=(",", ":"), ensure_ascii=False) + "\n")
        try:
            atomic_write(self.index_path, data, root=self.root)
            index.scanned = 0
        except OSError:
            pass  # an index that cannot be written costs time, not correctness

    def trim_due(self, keep: int) -> bool:
        """Whether a boundary should trim the ledger to `keep` lines now: it is over `keep` (or over
        what the last trim left, when open episodes' lines held it above `keep`) by a tenth of
        `keep`. From the index: nothing of the file is read."""
        if keep <= 0:
            return False
        index = self.index()
        return self.count() > max(keep, index.floor) + keep // SLACK

    def trim(self, keep: int, open_episodes: Iterable[str] = ()) -> int:
        """Drop the oldest lines beyond `keep`, except the lines of `open_episodes`: an episode
        still open has not been derived yet, and its window is its evidence. Returns how many
        lines were removed. Under the cap (the index knows the count) the file is not read.

        Under the ledger's lock, which every append holds: an append waits for the rewrite and
        lands in the new file, so none is lost. A boundary calls it only when `trim_due`."""

        if keep <= 0 or self.count() <= keep:
            return 0
        keep_sessions = set(open_episodes)
        needles = [json.dumps(e, ensure_ascii=False).encode("utf-8") for e in keep_sessions]
        with self.locked():
            # under the lock no other trim runs: any temporary ledger is a killed trim's leftover
            for leftover in self.path.parent.glob(".tmp.ledger.jsonl.*"):
                leftover.unlink(missing_ok=True)
            excess = self.count() - keep
            if excess <= 0:
                return 0
            removed = [0]
            atomic_write(self.path, self._trimmed(excess, needles, keep_sessions, removed), root=self.root)
            self._index = None
            index = self.index()  # the rewritten ledger, indexed now, so no reader rebuilds it
            index.floor = self.count()  # what the next trim waits to be passed by the margin
            self._save(index)
        return removed[0]

    def _trimmed(self, excess: int, needles: list[bytes], sessions: set[str],
                 removed: list[int]) -> Iterator[bytes]:
        """The ledger without its first `excess` lines, except those stamped with one of
        `sessions`, block by block (never the whole file in memory); how many lines were dropped
        goes to `removed`. A line longer than LINE_LIMIT, which no reader takes, is dropped."""
        passed = 0  # lines of the file passed so far
        for _, block, _ in self._blocks():
            if block is OVERLONG or block is OVERLONG_TAIL:
                passed += 1
                removed[0] += 1
                continue
            lines = block.count(b"\n") + (0 if block.endswith(b"\n") else 1)
            if passed >= excess:
                yield block
            else:
                cut = 0  # the bytes of this block among the oldest `excess` lines
                for _ in range(min(lines, excess - passed)):
                    nl = block.find(b"\n", cut)
                    cut = len(block) if nl < 0 else nl + 1
                old = block[:cut]
                kept = [line for line in old.splitlines(keepends=True)
                        if _stamped(line, needles, sessions)] if needles and any(n in old for n in needles) else []
                removed[0] += min(lines, excess - passed) - len(kept)
                yield b"".join(kept) + block[cut:]
            passed += lines


def _stamped(line: bytes, needles: list[bytes], sessions: set[str]) -> bool:
    """True when `line` is stamped with one of `sessions` (a cheap substring test for the quoted
    name first, whatever the line's spacing; the parse decides)."""
    if not any(needle in line for needle in needles):
        return False
    parsed = parse_line(0, line.decode("utf-8", errors="replace"))
    return parsed is not None and parsed.session in sessions

def _scan(block: bytes, offset: int, index: LedgerIndex) -> None:
    """Extend `index` over `block` (whole lines, at byte `offset`, `index.size == offset`)."""
    total = block.count(b"\n")
    fresh = index.fresh
    found = _CANON().findall(block) if block.count(_SESSION_KEY) == total else []
    if total and len(found) == total:  # every line as `append` writes it: no line parsed
        _first_lines(block, found, offset, index)
    else:  # a line of another shape: each line on its own
        sessions: list[tuple[int, bytes | None]] = []
        pos = 0
        while pos < len(block):
            end = block.index(b"\n", pos)
            raw = block[pos:end]
            match = _CANON().match(raw)
            if match is not None and raw.count(_SESSION_KEY) == 1:
                sessions.append((pos, match.group(1)[1:-1] if match.group(1) != b"null" else None))
            else:
                parsed = parse_line(0, raw.decode("utf-8", errors="replace"))
                if parsed is not None and parsed.session is not None:
                    sessions.append((pos, parsed.session.encode("utf-8")))
            pos = end + 1
        number, last = index.lines + 1, 0
        for pos, raw_session in sessions:
            if raw_session is None:
                continue
            session = raw_session.decode("utf-8", errors="replace")
            if session not in fresh:  # a later first line than the saved map's is ignored on lookup
                number += block.count(b"\n", last, pos)
                last = pos
                fresh[session] = [offset + pos, number, -1]
    for needle, slot in ((_OPENED, 2), (_HANDOVER, -1)):
        pos = block.find(needle)
        while pos >= 0:
            begin = block.rfind(b"\n", 0, pos) + 1
            end = block.index(b"\n", pos)
            line = parse_line(0, block[begin:end].decode("utf-8", errors="replace"))
            if line is not None and slot == -1 and line.event == "handover.recorded" and _names_next(line):
                index.handover = offset + begin
            elif line is not None and slot == 2 and line.event == "session.opened" and line.session:
                entry = fresh.get(line.session)
                if entry is None:  # not seen by the pass above (it sees every line: defensive)
                    entry = fresh[line.session] = [offset + begin, index.lines + 1 + block.count(b"\n", 0, begin), -1]
                entry[2] = offset + begin
            pos = block.find(needle, end)
    index.size = offset + len(block)
    index.lines += total


def _first_lines(block: bytes, found: list[bytes], offset: int, index: LedgerIndex) -> None:
    """Index the first line of each episode new to `index` in `block`, whose lines' sessions are
    `found` (one per line, quoted, or `null`), at C speed: no loop over the lines in Python."""
    fresh = index.fresh
    new = [s for s in dict.fromkeys(found) if s != b"null" and s[1:-1].decode("utf-8", errors="replace") not in fresh]
    if not new:
        return
    if len(new) <= FEW:
        first = [(found.index(s), s) for s in new]
    else:  # many episodes at once (an imported ledger): one pass
        seen: dict[bytes, int] = {}
        for i, s in enumerate(found):
            seen.setdefault(s, i)
        first = [(seen[s], s) for s in new]
    ends = list(accumulate(map(len, block.split(b"\n"))))  # the line before line i ends at ends[i-1]
    for i, s in first:
        fresh[s[1:-1].decode("utf-8", errors="replace")] = [offset + (ends[i - 1] + i if i else 0),
                                                             index.lines + 1 + i, -1]


def _parsed(hits: Iterable[tuple[int, bytes]]) -> Iterator[Line]:
    """`parse_line` of each (number, raw line), the unparseable left out, `BATCH` lines parsed in
    one `json.loads` (2.5 times faster than a call a line, `_stamped_objects`); a batch that
    does not come back as one stamped object a line (a malformed line among them) is parsed line
    by line. What is read is what a parse of each line reads, except for lines
    made to fool the count (an array opened on one line and closed on the next, and a line of two
    objects to make up for it): they could only say what their writer could have written as
    lines (`objects` reads blocks the same way)."""
    batch: list[tuple[int, bytes]] = []
    for hit in hits:
        batch.append(hit)
        if len(batch) == BATCH:
            yield from _parse_batch(batch)
            batch = []
    if batch:
        yield from _parse_batch(batch)


def _stamped_objects(raws: list[bytes]) -> list[Any] | None:
    """The JSON objects of `raws`, one a line, parsed in one call, when every line is one stamped
    object; else None (the caller parses line by line). The lines are joined by a comma and a
    newline, which no JSON string may hold raw, so no string runs into the next line, and decoded
    as a single line is (a surrogate's bytes replaced, not passed)."""
    if not raws:
        return []
    try:
        objs = json.loads((b"[" + b",\n".join(raws) + b"]").decode("utf-8", errors="replace"))
    except ValueError:
        return None
    return objs if len(objs) == len(raws) and all(map(_is_stamped, objs)) else None


def _parse_batch(batch: list[tuple[int, bytes]]) -> Iterator[Line]:
    objs = _stamped_objects([raw for _, raw in batch])
    if objs is None:
        for number, raw in batch:
            line = parse_line(number, raw.decode("utf-8", errors="replace"))
            if line is not None:
                yield line
        return
    for (number, _), obj in zip(batch, objs):
        yield Line(number, obj.pop("ts"), obj.pop("event"), obj.pop("session", None), obj)


def _names_next(line: Line) -> bool:
    """A handover that names a next action (one without is no handover to a reader)."""
    value = line.get("next")
    return isinstance(value, str) and bool(value.strip())


def _is_stamped(obj: Any) -> bool:
    """A JSON object with the three stamped keys: `ts` and `event` text, `session` text or null."""
    if not isinstance(obj, dict) or not isinstance(obj.get("ts"), str) or not isinstance(obj.get("event"), str):
        return False
    session = obj.get("session")
    return session is None or isinstance(session, str)


def _object(text: str) -> dict[str, Any] | None:
    """A ledger line's JSON object, or None when it is not one with the three stamped keys."""
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    return obj if _is_stamped(obj) else None


def parse_line(number: int, text: str) -> Line | None:
    """A ledger line, or None when it is not a JSON object with the three stamped keys."""
    obj = _object(text)
    if obj is None:
        return None
    ts, event, session = obj.pop("ts"), obj.pop("event"), obj.pop("session", None)
    return Line(number, ts, event, session, obj)
