"""Episodes: which are open, the open record of each, their spans, and which have gone quiet
(the session layer opens and closes them).

The open-episode state lives under `.ai/local/state/episodes/<id>.json`; `state/current` names
the most recently opened one, which is the open episode for a command that does not carry
`$MAJORDOMUS_EPISODE` (written to `$CLAUDE_ENV_FILE` by the start hook where Claude Code gives one).

An episode is one session id with one or more spans (open -> close): a resume of a closed
episode opens a new span with a new `session.opened` line. In the ledger window the spans are
the runs of lines that each `session.opened` begins (docs/EPISODES.md).
"""
from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from pathlib import Path

from majordomus.base.errors import UNKNOWN, FatalError
from majordomus.base.fsio import (
    TMP_PREFIX,
    atomic_write,
    read_regular,
    read_text,
    remove,
)
from majordomus.base.ids import ID_PATTERN, check_id
from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.store.ledger import Line, parse_line
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any, Concatenate, ParamSpec, TypeVar

    P = ParamSpec("P")
    R = TypeVar("R")
RECORD_LIMIT = 1 << 20  # a session record is a few hundred bytes a span


def open_dir(ws: Workspace) -> Path:
    return ws.state / "episodes"


def waiting_dir(ws: Workspace) -> Path:
    """Where a boundary marks an episode whose derivation did not happen (`session/pending.py`)."""
    return ws.state / "pending"


def derivations_waiting(ws: Workspace) -> list[str]:
    """The episodes whose derivation waits for a boundary (one directory read; doctor names them)."""
    try:
        names = os.listdir(waiting_dir(ws))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in names if not n.startswith(TMP_PREFIX) and ID_PATTERN.match(n) and ".." not in n)


def lock_path(ws: Workspace, episode: str) -> Path:
    """The lock of one episode: its opens and closes hold it, so two of them never interleave."""
    return open_dir(ws) / f"{check_id(episode, 'episode id')}.lock"


def serialised(remove: bool = False) -> Callable[[Callable[Concatenate[Workspace, str, P], R]],
                                                 Callable[Concatenate[Workspace, str, P], R]]:
    """Run the decorated `f(ws, episode, ...)` holding `episode`'s lock (waited for the workspace's
    bound): two closes of one episode at once give one close and one "not open"; two opens give
    one open and one resume. `remove`: the close removes the lock file as it lets go."""

    def decorate(f: Callable[Concatenate[Workspace, str, P], R]) -> Callable[Concatenate[Workspace, str, P], R]:
        @functools.wraps(f)
        def held(ws: Workspace, episode: str, /, *args: P.args, **kwargs: P.kwargs) -> R:
            with ws.lock(lock_path(ws, episode), remove=remove):
                return f(ws, episode, *args, **kwargs)
        return held
    return decorate


def open_record(ws: Workspace, episode: str) -> dict[str, Any] | None:
    try:
        data = json.loads(read_text(open_dir(ws) / f"{episode}.json"))
    except (OSError, ValueError):  # missing, or not a regular file of ours: not open
        return None
    return data if isinstance(data, dict) else None


def write_open(ws: Workspace, record: dict[str, Any]) -> None:
    """Write the open record of `record["episode"]` and make it the newest opened."""
    episode = record["episode"]
    atomic_write(open_dir(ws) / f"{episode}.json", json.dumps(record, indent=2) + "\n", root=ws.root)
    write_current(ws, episode)


def write_current(ws: Workspace, episode: str) -> None:
    """Make `episode` the open episode of commands that carry no $MAJORDOMUS_EPISODE."""
    atomic_write(ws.state / "current", episode + "\n", root=ws.root)


def current(ws: Workspace) -> str | None:
    """The open episode of this command: $MAJORDOMUS_EPISODE when open, else the newest opened."""
    named = os.environ.get("MAJORDOMUS_EPISODE")
    if named and (open_dir(ws) / f"{named}.json").is_file():
        return named
    try:
        newest = read_text(ws.state / "current", 4096).strip()
    except (OSError, ValueError):
        return None
    if newest and (open_dir(ws) / f"{newest}.json").is_file():
        return newest
    return None


def current_sources(ws: Workspace) -> list[Path]:
    """The files `current` reads (besides $MAJORDOMUS_EPISODE): the newest-opened file and the
    open record of each episode it may answer."""
    names = [os.environ.get("MAJORDOMUS_EPISODE")]
    try:
        names.append(read_text(ws.state / "current", 4096).strip())
    except (OSError, ValueError):
        pass
    return [ws.state / "current", *(open_dir(ws) / f"{n}.json" for n in sorted({n for n in names if n}))]


def require_current(ws: Workspace) -> str:
    episode = current(ws)
    if episode is None:
        raise FatalError("no open episode: run `majordomus session start` or start Claude Code", UNKNOWN)
    return episode


def open_episodes(ws: Workspace) -> list[str]:
    """The stems of the open folder's `*.json` names, as `Path.glob("*.json")` gives them (dot
    names and folders included), without the pattern it compiles (and `re`: the start path)."""
    try:
        names = os.listdir(open_dir(ws))
    except OSError:  # none, or not a folder
        return []
    return sorted(Path(n).stem for n in names if n.endswith(".json"))


def forget_current(ws: Workspace, episode: str) -> None:
    path = ws.state / "current"
    try:
        if read_text(path, 4096).strip() == episode:
            rest = [e for e in open_episodes(ws) if e != episode]
            if rest:
                newest = max(rest, key=lambda e: (open_record(ws, e) or {}).get("opened", ""))
                atomic_write(path, newest + "\n", root=ws.root)
            else:
                remove(path, root=ws.root, missing_ok=False)
    except FileNotFoundError:
        pass


# --- which agents have opened an episode here (doctor: installed hooks that never fired) ---------

def agents_dir(ws: Workspace) -> Path:
    return ws.state / "agents"


def note_agent(ws: Workspace, agent: str, episode: str) -> None:
    """Remember that `agent`'s hooks opened an episode in this checkout (once: the first one).
    The ledger says so too, until its retention trims the line; this file stays."""
    path = agents_dir(ws) / agent
    if not path.exists():
        atomic_write(path, episode + "\n", root=ws.root)


def agents_seen(ws: Workspace) -> set[str]:
    folder = agents_dir(ws)
    return {p.name for p in folder.iterdir() if p.is_file()} if folder.is_dir() else set()


# --- the published session record -------------------------------------------------------------

def record_file(ws: Workspace, episode: str) -> tuple[Path, str] | None:
    """The published session record of `episode` and its text: tracked, else waiting in the
    trunk outbox; None when neither holds one (or it is not a regular file)."""
    for folder in (ws.sessions, ws.outbox / "sessions"):
        path = folder / f"{episode}.md"
        try:
            return path, read_regular(path, RECORD_LIMIT).decode("utf-8", errors="replace")
        except OSError:
            continue
    return None


# --- spans --------------------------------------------------------------------------------------

class SpanLines:
    """One span of an episode as its ledger window holds it."""

    __slots__ = ("opened", "closed", "lines")

    def __init__(self, opened: Line | None) -> None:
        self.opened = opened  # None: the window starts inside it (retention trimmed its opening)
        self.closed: Line | None = None  # None: still open, or its close never came
        self.lines: list[Line] = []


def spans(window: list[Line]) -> list[SpanLines]:
    """The spans of a window, first to last: each `session.opened` line begins one; lines before
    the first belong to a span whose opening the ledger no longer holds."""
    found: list[SpanLines] = []
    for line in window:
        if line.event == "session.opened" or not found:
            found.append(SpanLines(line if line.event == "session.opened" else None))
        span = found[-1]
        span.lines.append(line)
        if line.event == "session.closed":
            span.closed = line
    return found


# --- quiet open episodes (the orphan sweep and doctor) ------------------------------------------

def _stamp(value: Any) -> str | None:
    """A ledger timestamp (UTC, seconds, `Z`: they sort as text), or None when it is not one."""
    if isinstance(value, str) and len(value) == 20 and value[4] == "-" and value[10] == "T" and value[-1] == "Z":
        return value
    return None


def quiet_open(ws: Workspace, minutes: int, now: float, exclude: frozenset[str] = frozenset()) -> list[str]:
    """Open episodes (but `exclude`) with no ledger line in the last `minutes`, sorted.

    Cheap enough for the start hook: an episode opened inside the window has a line inside it
    (its `session.opened`) and costs one small file read; only when an older one is open is the
    ledger read, from its end backwards, and only as far as the first line older than the window.
    """
    cutoff = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - minutes * 60.0))
    suspects = set()
    for episode in open_episodes(ws):
        if episode in exclude:
            continue
        opened = _stamp((open_record(ws, episode) or {}).get("opened"))
        if opened is None or opened < cutoff:
            suspects.add(episode)
    if not suspects:
        return []
    for text in ws.ledger.reversed_lines():
        line = parse_line(0, text)
        if line is None:
            continue
        when = _stamp(line.ts)
        if when is not None and when < cutoff:
            break
        suspects.discard(line.session or "")
        if not suspects:
            break
    return sorted(suspects)
