"""The review queue: candidates under `.ai/repo/knowledge/candidates/`, each placed on the branch
of the episode it names in `derived_from` (from the tracked session record, or from the ledger
while that record is not yet written). Read without a YAML parse: this runs on the start hook."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from majordomus.base.fsio import read_regular
from majordomus.store.workspace import Workspace

_SESSION_REF = re.compile(r"^\s*-\s*\"?session:([^\"\s]+)\"?\s*$", re.M)
_FIELD = re.compile(r"^(class|status|title):\s*(.*)$", re.M)
_BRANCH = re.compile(r"^branch:\s*(.*)$", re.M)


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


def episode_branches(ws: Workspace, episodes: set[str],
                     ledger_branches: dict[str, str | None] | None = None) -> dict[str, str | None]:
    """Branch of each episode: its session record, else its `session.opened` ledger line.
    `ledger_branches`: the episodes' branches at their open, when the caller has read the ledger."""
    found: dict[str, str | None] = {}
    for folder in (ws.sessions, ws.outbox / "sessions"):
        try:
            present = {name[:-3] for name in os.listdir(folder) if name.endswith(".md")}
        except OSError:
            continue
        for episode in (episodes - found.keys()) & present:
            try:
                head = read_regular(folder / f"{episode}.md", 2048).decode("utf-8", errors="replace")
            except (FileNotFoundError, OSError):
                continue
            match = _BRANCH.search(head)
            if match:
                found[episode] = _scalar(match.group(1)) or None
    missing = episodes - found.keys()
    if missing and ledger_branches is not None:
        found.update({e: ledger_branches[e] for e in missing if e in ledger_branches})
    elif missing:
        for line in ws.ledger.read(contains='"session.opened"').lines:
            if line.event == "session.opened" and line.session in missing:
                branch = line.get("branch")
                found[line.session] = branch if isinstance(branch, str) else None
    return found


def fronts(folder: Path, paths: list[Path] | None = None) -> list[tuple[str, str, dict[str, str], str | None]]:
    """(id, file, front-matter fields, episode named in derived_from) of every record with status
    candidate, sorted by id: the files of `folder`, or `paths` (the files a source class lists).
    os.scandir and binary reads: on the start hook, pathlib and text wrappers cost more than the
    reads themselves."""
    if paths is not None:
        files = sorted((p.name, os.fspath(p)) for p in paths)
    else:
        try:
            with os.scandir(folder) as entries:
                files = sorted((e.name, e.path) for e in entries if e.name.endswith(".md"))
        except OSError:
            return []
    found = []
    for name, where in files:
        if name == "README.md" or name.startswith(".tmp."):
            continue
        try:
            head = read_regular(where).decode("utf-8", errors="replace")
        except OSError:
            continue
        end = head.find("\n---", 4)
        front = head[: end if end > 0 else 4096]
        fields = {m.group(1): _scalar(m.group(2)) for m in _FIELD.finditer(front)}
        if fields.get("status", "candidate") != "candidate":
            continue
        ref = _SESSION_REF.search(front)
        found.append((os.path.splitext(name)[0], where, fields, ref.group(1) if ref else None))
    return found


def waiting(ws: Workspace, folder: Path | None = None, paths: list[Path] | None = None,
            ledger_branches: dict[str, str | None] | None = None) -> list[Candidate]:
    """Every candidate with status candidate, sorted by id, placed on its branch. `paths` (the
    files a source class lists) replaces the listing of `folder`."""
    raw = fronts(folder or ws.candidates, paths)
    branches = episode_branches(ws, {e for *_, e in raw if e}, ledger_branches)
    return [Candidate(rid, Path(where), f.get("class", "?"), f.get("status", "candidate"),
                      f.get("title", ""), episode, branches.get(episode) if episode else None)
            for rid, where, f, episode in raw]


def placed(ws: Workspace, ledger_branches: dict[str, str | None] | None = None
           ) -> list[tuple[str, str | None, str | None]]:
    """(id, episode, branch) of every candidate: the queue as the start briefing needs it."""
    raw = fronts(ws.candidates)
    branches = episode_branches(ws, {e for *_, e in raw if e}, ledger_branches)
    return [(rid, episode, branches.get(episode) if episode else None) for rid, _, _, episode in raw]
