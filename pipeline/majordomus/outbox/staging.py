"""Where an episode boundary writes: the tracked sections, or the outbox on the trunk; and what
the outbox holds until a branch episode drains it.

The trunk is the remote's default branch as git records it (`refs/remotes/<remote>/HEAD`); no
branch name is written down anywhere. No remote, or no default recorded, means no trunk.

On the trunk the closed session record and the derived candidates wait in
`.ai/local/state/outbox/{sessions,candidates}/`, so a trunk that changes only through pull
requests stays clean. The next episode boundary on another branch moves them, byte for byte,
into `.ai/repo/sessions/` and `.ai/repo/knowledge/candidates/` (the doit task `drain`, in
`pipeline.tasks.drain`); that branch's pull request carries them to the trunk.

Listing the outbox is two directory scans and no git: the start hook calls it every time, and
only a non-empty outbox costs a git question and doit.
"""
from __future__ import annotations

import os
from pathlib import Path

from majordomus.base.fsio import atomic_write, read_bytes, read_regular
from majordomus.base.ids import ID_PATTERN
from majordomus.base.lean import TYPE_CHECKING, pattern
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from majordomus.base.lean import NamedTuple

SECTIONS = ("sessions", "candidates")

# What a drain does with one staged record (see `classify`).
MOVE = "move"  # nothing tracked under its name (or a session record it only adds spans to): copy it there
SAME = "same"  # tracked already with the same bytes (or, a session record, with more spans): remove it
SETTLED = "settled"  # a candidate a person already promoted or rejected: remove it, never revive it
DIFFERS = "differs"  # tracked with other bytes: keep it in the outbox and report it


def trunk_state(ws: Workspace) -> tuple[str | None, frozenset[str]]:
    """The checked-out branch (None when HEAD is detached or unborn) and the local names of the
    remotes' default branches (`main` for `refs/remotes/origin/HEAD -> refs/remotes/origin/main`),
    as git stated them once for this workspace (`Workspace.refs`)."""
    refs = ws.refs()
    return refs.current, refs.trunks


def on_trunk(ws: Workspace, branch: str | None = None) -> bool:
    """Whether `branch` (default: the checked-out one) is the trunk."""
    if not ws.refs_or_unknown()[0].known:  # git could not be run: the outbox, which a later boundary drains
        return True
    current, trunks = trunk_state(ws)
    branch = current if branch is None else branch
    return branch is not None and branch in trunks


def sessions_dir(ws: Workspace, branch: str | None = None) -> Path:
    return ws.outbox / "sessions" if on_trunk(ws, branch) else ws.sessions


def candidates_dir(ws: Workspace, branch: str | None = None) -> Path:
    return ws.outbox / "candidates" if on_trunk(ws, branch) else ws.candidates


def tracked_dir(ws: Workspace, section: str) -> Path:
    return ws.sessions if section == "sessions" else ws.candidates


class Staged(NamedTuple):
    """One record waiting in the outbox, and where a drain puts it."""

    section: str  # "sessions" or "candidates"
    name: str  # `<id>.md`
    src: Path  # in the outbox
    dst: Path  # in the tracked section

    @property
    def id(self) -> str:
        return self.name[:-3]


def listing(ws: Workspace) -> list[Staged]:
    """The outbox's records, sessions then candidates, each sorted by name: no git, no parse.

    A README, a `.tmp.` leftover of an interrupted write, a name that is no record id, or
    anything but a regular file (a symbolic link is never followed) is not a record and is
    never moved.
    """
    staged = []
    for section in SECTIONS:
        folder = ws.outbox / section
        try:
            with os.scandir(folder) as entries:
                names = sorted(e.name for e in entries if e.is_file(follow_symlinks=False))
        except (FileNotFoundError, NotADirectoryError):
            continue
        for name in names:
            if name.endswith(".md") and name != "README.md" and ID_PATTERN.match(name[:-3]):
                staged.append(Staged(section, name, folder / name, tracked_dir(ws, section) / name))
    return staged


# a derived record's last body line, the evidence's time in the clone that derived it (derive/table.py)
_EVIDENCE_TIME = pattern(rb"(?m)^Evidence: [\w.]+ at \S+Z\.$")


def classify(ws: Workspace, item: Staged) -> str:
    """What a drain does with `item`: MOVE, SAME, SETTLED or DIFFERS (see the constants)."""
    # the records' readers, for a drain alone: the start lists the outbox and, empty, goes on
    from majordomus.store import records, sessionrecord

    if item.section == "candidates":
        if (ws.curated / item.name).exists() or records.quick_status(item.dst) in ("verified", "superseded"):
            return SETTLED
    try:
        tracked = read_bytes(item.dst)
    except FileNotFoundError:
        return MOVE
    staged = read_bytes(item.src)
    if tracked == staged:
        return SAME
    if item.section == "candidates" and _EVIDENCE_TIME().sub(b"", tracked) == _EVIDENCE_TIME().sub(b"", staged):
        return SAME  # one record (its id is the evidence's digest), seen at another second in another clone
    if item.section == "sessions":  # a record grows by spans: the copy that holds the other whole wins
        old, new = tracked.decode("utf-8", "replace"), staged.decode("utf-8", "replace")
        if sessionrecord.extends(old, new):
            return MOVE
        if sessionrecord.extends(new, old):
            return SAME  # the tracked record already holds every span the staged one lists
    return DIFFERS


def move_bytes(ws: Workspace, item: Staged) -> None:
    """Copy `item` to its tracked file byte for byte, atomically. The outbox copy stays: the
    drain removes it once the tracked file holds the same bytes, so a crash in between leaves
    two equal copies, which the next drain settles as SAME."""

    atomic_write(item.dst, read_regular(item.src), root=ws.root)


def refusal(ws: Workspace) -> str | None:
    """Why this checkout may not drain now (on the trunk, or no branch checked out), else None."""
    branch, trunks = trunk_state(ws)
    if branch is None:
        return ("HEAD is detached: the outbox drains into a branch that a pull request carries; "
                "switch to one (`git switch -c NAME`) and rerun `majordomus drain`")
    if branch in trunks:
        return (f"{branch} is the trunk (the remote's default branch) and records moved here would "
                "leave it dirty; they wait in the outbox for an episode boundary on another branch "
                "(`git switch -c NAME`, then `majordomus drain`)")
    return None


def pending(ws: Workspace) -> dict[str, Any]:
    """What waits in the outbox, for `majordomus context` and `doctor`: counts and paths, no git.

    `conflicts` are the waiting records whose name is tracked already with other bytes: a drain
    keeps them and reports them until a person settles which copy is right.
    """
    items = listing(ws)
    conflicts = []
    for item in items:
        try:
            if classify(ws, item) == DIFFERS:
                conflicts.append(ws.rel(item.src))
        except FileNotFoundError:  # drained by another process since the listing
            pass
    return {"where": ws.rel(ws.outbox), "total": len(items),
            "sessions": sum(1 for i in items if i.section == "sessions"),
            "candidates": sum(1 for i in items if i.section == "candidates"),
            "paths": [ws.rel(i.src) for i in items], "conflicts": conflicts}


def actionable(ws: Workspace, item: Staged) -> bool:
    try:
        return classify(ws, item) != DIFFERS
    except FileNotFoundError:  # another process is draining: let the locked run sort it out
        return True
