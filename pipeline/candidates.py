"""The review queue: candidates under `.ai/repo/knowledge/candidates/`, each placed on the branch
of the episode it names in `derived_from` (from the tracked session record, or from the ledger
while that record is not yet written). Read without a YAML parse: this runs on the start hook."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from pipeline.workspace import Workspace

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


def episode_branches(ws: Workspace, episodes: set[str]) -> dict[str, str | None]:
    """Branch of each episode: its session record, else its `session.opened` ledger line."""
    found: dict[str, str | None] = {}
    for folder in (ws.sessions, ws.outbox / "sessions"):
        for episode in episodes - found.keys():
            try:
                head = (folder / f"{episode}.md").read_text(encoding="utf-8")[:2048]
            except (FileNotFoundError, OSError):
                continue
            match = _BRANCH.search(head)
            if match:
                found[episode] = _scalar(match.group(1)) or None
    missing = episodes - found.keys()
    if missing:
        for line in ws.ledger.read(contains='"session.opened"').lines:
            if line.event == "session.opened" and line.session in missing:
                branch = line.get("branch")
                found[line.session] = branch if isinstance(branch, str) else None
    return found


def waiting(ws: Workspace, folder: Path | None = None, paths: list[Path] | None = None) -> list[Candidate]:
    """Every candidate with status candidate, sorted by id, placed on its branch. `paths` (the
    files a source class lists) replaces the glob of `folder`."""
    folder = folder or ws.candidates
    if paths is None and not folder.is_dir():
        return []
    raw: list[tuple[str, Path, dict[str, str], str | None]] = []
    for path in sorted(paths if paths is not None else folder.glob("*.md"), key=lambda p: p.name):
        if path.name == "README.md" or path.name.startswith(".tmp."):
            continue
        try:
            head = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        end = head.find("\n---", 4)
        front = head[: end if end > 0 else 4096]
        fields = {m.group(1): _scalar(m.group(2)) for m in _FIELD.finditer(front)}
        if fields.get("status", "candidate") != "candidate":
            continue
        ref = _SESSION_REF.search(front)
        raw.append((path.stem, path, fields, ref.group(1) if ref else None))
    branches = episode_branches(ws, {e for *_, e in raw if e})
    return [Candidate(rid, path, f.get("class", "?"), f.get("status", "candidate"), f.get("title", ""),
                      episode, branches.get(episode) if episode else None)
            for rid, path, f, episode in raw]
