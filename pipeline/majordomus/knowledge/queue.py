"""The review queue: candidates under `.ai/repo/knowledge/candidates/`, each placed on the branch
of the episode it names in `derived_from` (from the tracked session record, or from the ledger
while that record is not yet written). Read through the one front-matter reader
(its fast path needs no YAML: this runs on the start hook)."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from majordomus.base.fsio import read_regular
from majordomus.store import records
from majordomus.store.workspace import Workspace

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
    Read through the one front-matter reader, so the queue agrees with `knowledge check`."""
    listed = sorted(paths, key=lambda p: p.name) if paths is not None else records.files(folder)
    found = []
    for path in listed:
        if path.name == "README.md" or path.name.startswith(".tmp."):
            continue
        meta = records.front(path)
        if meta is None:
            continue
        fields = {k: str(meta[k]) for k in ("class", "status", "title") if meta.get(k) is not None}
        if fields.get("status", "candidate") != "candidate":
            continue
        prov = meta.get("provenance")
        refs = prov.get("derived_from") if isinstance(prov, dict) else None
        session = next((r[len("session:"):] for r in refs or () if isinstance(r, str) and r.startswith("session:")),
                       None) if isinstance(refs, list) else None
        found.append((path.stem, os.fspath(path), fields, session))
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
