"""Episodes: which are open, and the open record of each (the session layer opens and closes them).

The open-episode state lives under `.ai/local/state/episodes/<id>.json`; `state/current` names
the most recently opened one, which is the open episode for a command that does not carry
`$MAJORDOMUS_EPISODE` (written to `$CLAUDE_ENV_FILE` by the start hook where Claude Code gives one).
"""
from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from majordomus.base.errors import UNKNOWN, FatalError
from majordomus.base.fsio import atomic_write, read_text, remove
from majordomus.base.ids import check_id
from majordomus.store.workspace import Workspace

P = ParamSpec("P")
R = TypeVar("R")


def open_dir(ws: Workspace) -> Path:
    return ws.state / "episodes"


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


def require_current(ws: Workspace) -> str:
    episode = current(ws)
    if episode is None:
        raise FatalError("no open episode: run `majordomus session start` or start Claude Code", UNKNOWN)
    return episode


def open_episodes(ws: Workspace) -> list[str]:
    folder = open_dir(ws)
    return sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []


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
