"""The append-only ledger: `.ai/local/ledger.jsonl`, one JSON object a line.

Events are registered here before anything may write them. Appends hold an exclusive lock on a
separate lock file, so the retention trim (which rewrites the file through a rename) never races
an appender holding the old inode. Readers are tolerant: a malformed line is skipped and counted,
never fatal.
"""
from __future__ import annotations

import errno
import json
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majordomus.base.errors import refused
from majordomus.base.fsio import append_line, atomic_write, locked

# The registry: event name -> what its payload carries (documentation and the check below).
EVENTS: dict[str, tuple[str, ...]] = {
    "session.opened": ("episode", "source", "branch", "head", "reflog", "agent"),
    "session.resumed": ("episode", "source"),
    "session.closed": ("episode", "reason", "branch", "head"),
    "session.refused": ("episode", "why"),
    "task.started": ("task", "title", "scope"),
    "task.finished": ("task", "outcome", "verify", "note"),
    "decision.recorded": ("task", "text", "why"),
    "question.opened": ("question", "task", "text"),
    "question.resolved": ("question", "task", "text", "answer"),
    "checkpoint.recorded": ("task", "note", "head", "changed_files", "changed_total",
                            "changed_error"),
    "handover.recorded": ("task", "next"),
    "knowledge.derived": ("episode", "written", "unchanged", "skipped", "kept", "edited", "paths", "provenance"),
    "knowledge.promoted": ("id", "class", "evidence_lines", "path", "by", "sha256"),
    "knowledge.rejected": ("id", "superseded_by", "reason", "path", "by", "finished"),
    "provider.event.failed": ("hook", "error"),
    "outbox.drained": ("moved", "same", "settled", "kept", "paths", "kept_paths"),
    "ledger.trimmed": ("removed", "kept"),
}

LEDGER = "ledger.jsonl"


def utc_now() -> str:
    """The current time as the ledger writes it: UTC, seconds, `Z`."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True)
class Line:
    """One parsed ledger line with its 1-based line number."""

    number: int
    ts: str
    event: str
    session: str | None
    data: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.data.get(key, default)


@dataclass
class ReadResult:
    lines: list[Line]
    malformed: int = 0
    first_malformed: int | None = None


class Ledger:
    """The ledger of one checkout."""

    def __init__(self, local_dir: Path, wait: Callable[[], float | None] | None = None,
                 root: Path | None = None) -> None:
        self.path = local_dir / LEDGER
        self.lock_path = local_dir / "state" / "ledger.lock"
        self.wait = wait  # how long the lock may be waited for (the workspace's bound), None: unbounded
        # the repository whose real folders alone are written (`.ai/local` is two below it)
        self.root = root if root is not None else local_dir.parent.parent

    @contextmanager
    def locked(self) -> Iterator[None]:
        with locked(self.lock_path, self.wait() if self.wait else None, root=self.root):
            yield

    def append(self, event: str, session: str | None, ts: str | None = None, **data: Any) -> dict[str, Any]:
        """Append one registered event, stamped with `session`, as one whole line."""
        if event not in EVENTS:
            raise ValueError(f"unregistered ledger event {event!r}: register it in pipeline/ledger.py")
        line: dict[str, Any] = {"ts": ts or utc_now(), "event": event, "session": session}
        line.update(data)
        encoded = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        with self.locked():
            append_line(self.path, encoded, root=self.root)  # whole, on a fresh line, or not at all
        return line

    def _open(self) -> int | None:
        """A descriptor of the ledger, None when there is none; a link or a pipe is refused."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO):
                raise
            fd = -1
        if fd < 0 or not stat.S_ISREG(os.fstat(fd).st_mode):
            if fd >= 0:
                os.close(fd)
            raise refused(f"{self.path}: the ledger is not a regular file (a symbolic link or a "
                          "pipe): move it away, and majordomus starts a new one")
        return fd

    def read_bytes(self) -> bytes:
        """The whole ledger's bytes (FileNotFoundError when there is none); never through a link."""
        fd = self._open()
        if fd is None:
            raise FileNotFoundError(self.path)
        with open(fd, "rb") as handle:
            return handle.read()

    def raw_lines(self) -> Iterator[tuple[int, str]]:
        fd = self._open()
        if fd is None:
            return
        with open(fd, encoding="utf-8", errors="replace", newline="\n") as handle:
            for number, text in enumerate(handle, 1):
                yield number, text

    def read(self, contains: str | None = None) -> ReadResult:
        """Every parseable line, in order; `contains` is a cheap substring pre-filter."""
        result = ReadResult(lines=[])
        for number, text in self.raw_lines():
            if contains is not None and contains not in text:
                continue
            parsed = parse_line(number, text)
            if parsed is None:
                if text.strip():
                    result.malformed += 1
                    if result.first_malformed is None:
                        result.first_malformed = number
                continue
            result.lines.append(parsed)
        return result

    def matching(self, *needles: str) -> list[Line]:
        """The one event reader: every parseable line holding one of `needles` (an event name in
        quotes, an episode id as JSON), in ledger order, with its line number. The file is read once
        and searched at C speed; only the lines that hold a needle are parsed."""
        try:
            with open(self.path, "rb") as handle:
                data = handle.read().decode("utf-8", errors="replace")
        except FileNotFoundError:
            return []
        hits: dict[int, str] = {}
        for needle in needles:
            pos = data.find(needle)
            while pos >= 0:
                start = data.rfind("\n", 0, pos) + 1
                end = data.find("\n", pos)
                end = len(data) if end < 0 else end
                hits[start] = data[start:end]
                pos = data.find(needle, end)
        found, number, last = [], 1, 0
        for offset in sorted(hits):
            number += data.count("\n", last, offset)  # line numbers as the ledger counts them
            last = offset
            line = parse_line(number, hits[offset])
            if line is not None:
                found.append(line)
        return found

    def events(self, *names: str) -> list[Line]:
        """The lines whose event is one of `names`, in order."""
        return [line for line in self.matching(*(json.dumps(n) for n in names)) if line.event in names]

    def window(self, episode: str) -> list[Line]:
        """The lines stamped with `episode`, in order."""
        needle = json.dumps(episode, ensure_ascii=False)
        return [line for line in self.read(contains=needle).lines if line.session == episode]

    def trim(self, keep: int, open_episodes: Iterable[str] = ()) -> int:
        """Drop the oldest lines beyond `keep`, except the lines of `open_episodes`: an episode
        still open has not been derived yet, and its window is its evidence. Returns how many
        lines were removed."""

        if keep <= 0:
            return 0
        keep_sessions = set(open_episodes)
        needles = [json.dumps(e, ensure_ascii=False).encode("utf-8") for e in keep_sessions]
        with self.locked():
            # under the lock no other trim runs: any temporary ledger is a killed trim's leftover
            for leftover in self.path.parent.glob(".tmp.ledger.jsonl.*"):
                leftover.unlink(missing_ok=True)
            try:
                data = self.read_bytes()
            except FileNotFoundError:
                return 0
            lines = data.splitlines(keepends=True)
            excess = len(lines) - keep
            if excess <= 0:
                return 0
            kept = [line for line in lines[:excess] if needles and _stamped(line, needles, keep_sessions)]
            if len(kept) == excess:
                return 0
            atomic_write(self.path, b"".join(kept + lines[excess:]), root=self.root)
        return excess - len(kept)


def _stamped(line: bytes, needles: list[bytes], sessions: set[str]) -> bool:
    """True when `line` is stamped with one of `sessions` (a cheap substring test for the quoted
    name first, whatever the line's spacing; the parse decides)."""
    if not any(needle in line for needle in needles):
        return False
    parsed = parse_line(0, line.decode("utf-8", errors="replace"))
    return parsed is not None and parsed.session in sessions


def parse_line(number: int, text: str) -> Line | None:
    """A ledger line, or None when it is not a JSON object with the three stamped keys."""
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    ts, event, session = obj.pop("ts", None), obj.pop("event", None), obj.pop("session", None)
    if not isinstance(ts, str) or not isinstance(event, str):
        return None
    if session is not None and not isinstance(session, str):
        return None
    return Line(number, ts, event, session, obj)
