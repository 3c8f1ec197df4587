"""The no-op re-derive, told from saved stamps before the deriver or doit is imported.

A derivation that leaves every record as the deriver renders it (`derive.derive`) keeps, in
`.ai/local/state/noop/<episode>.json`, what a re-run over the same inputs would do (the
`knowledge.derived` line's fields, the ledger stamp, the summary it prints) and what those inputs
were: `filecache.vouch` of every file the plan, the renders and the routing read (the evidence
file; of each record's id its file, its name in the candidates, outbox and curated folders and
its hand-edit digest; the policy, the open episodes, git's index and HEAD reflog, the deriver's
own source and the schemas), HEAD and the trunk as git's files state them, `MAJORDOMUS_EPISODE`, and the ledger's
length with the bytes before its end. `answered` checks them all; when every one holds and no
line stamped with the episode was appended since, it appends the same `knowledge.derived` line
and prints the same text as the doit path would, and the command ends without importing the
deriver. Anything that differs, or cannot be read, falls through to the real derivation, which
keeps the stamps again. The sources stay the truth: deleting the file changes no output.
"""
from __future__ import annotations

import os
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING, json
from majordomus.base import fsio, git
from majordomus.base.output import show
from majordomus.store import filecache
from majordomus.store.workspace import Workspace
from majordomus.tasks.engine import lock_path  # light: doit is imported only by a run

if TYPE_CHECKING:
    from typing import Any

VERSION = 1
LIMIT = 1 << 22  # bytes the stamps file may hold
TAIL_LIMIT = 1 << 20  # ledger bytes appended since the stamps a check reads, at most


def path(ws: Workspace, episode: str) -> Path:
    return ws.state / "noop" / f"{episode}.json"


def _context(ws: Workspace) -> list[Any] | None:
    """What, besides the files, a re-run reads: the root's spellings, the episode the caller
    names, HEAD and the trunk (from git's files; None when they are unusual or git is absent,
    whose absence the derivation reports)."""
    refs = git.refs_from_files(ws.root) if git.on_path() else None
    if refs is None:
        return None
    return [str(ws.root), os.path.realpath(ws.root), os.environ.get("MAJORDOMUS_EPISODE"),
            refs.current, refs.head.branch, refs.head.sha, sorted(refs.trunks)]


def _window_unchanged(ws: Workspace, kept: Any, episode: str, closed_at: str | None = None) -> bool:
    """Whether the ledger is the one stamped, with no line stamped with `episode` appended since
    (the episode's window is what it was). `closed_at` (a close's check): its `session.closed`
    line at that head, which bounds the span where HEAD already bounded it, may be among them."""
    appended = ws.ledger.appended_since(kept, TAIL_LIMIT)
    if appended is None:
        return False
    needle = json.dumps(episode, ensure_ascii=False).encode("utf-8")
    for raw in appended.splitlines():
        if needle in raw:
            try:
                line = json.loads(raw)
            except ValueError:
                return False
            if not isinstance(line, dict):
                return False
            if line.get("session") == episode and not (
                    closed_at is not None and line.get("event") == "session.closed" and line.get("head") == closed_at):
                return False
    return True


def keep(ws: Workspace, episode: str, sources: list[Path], said: str, derived: dict[str, Any],
         session: str | None, stamps: list[Any] | None = None, folders: frozenset[Path] = frozenset()) -> None:
    """Keep what a re-run of `episode` over `sources` (as they are now, or as `stamps` vouch for
    them) prints (`said`) and appends (`derived`, stamped with `session`); forget it when the
    context cannot be told. Of the `folders` among `sources`, the folder itself is stamped
    (`filecache.identity`), not its entries."""
    context, ledger = _context(ws), ws.ledger.tail_stamp()
    if context is None or ledger is None:
        forget(ws, episode)
        return
    record = {"v": VERSION, "context": context, "ledger": ledger, "said": said, "derived": derived,
              "session": session, "sources": [str(p) for p in sources],
              "stamps": stamps if stamps is not None else [
                  filecache.identity(p) if p in folders else filecache.vouch(p) for p in sources]}
    try:
        fsio.atomic_write(path(ws, episode), json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n",
                          root=ws.root)
    except OSError:
        pass  # not kept: the next re-run derives


def forget(ws: Workspace, episode: str) -> None:
    try:
        os.unlink(path(ws, episode))
    except OSError:
        pass


def answered(ws: Workspace, episode: str) -> bool:
    """Whether the re-derivation of `episode` was told from its stamps (its line appended, its
    summary printed); False, having done nothing, when any input differs: the caller derives."""
    if os.environ.get("MJ_TIMING") == "1":
        return False  # a timed run reports the derivation's own figures
    try:
        record = json.loads(fsio.read_regular(path(ws, episode), LIMIT))
    except (OSError, ValueError):
        return False
    try:
        if not isinstance(record, dict) or record.get("v") != VERSION:
            return False
        with ws.lock(lock_path(ws.dep_file)):
            if not _holds(ws, record, episode):
                return False
            ws.ledger.append("knowledge.derived", record["session"], **record["derived"])
    except (KeyError, TypeError, AttributeError):
        return False  # not a file this module wrote
    show(record["said"] + "\n")
    return True


def _holds(ws: Workspace, record: dict[str, Any], episode: str, skip: set[str] | None = None,
           closed_at: str | None = None) -> bool:
    """Whether every input `record` stamped is as it was (but the sources in `skip`), and no line
    of `episode`'s window was appended since (`closed_at`: its own close's may be)."""
    sources, stamps = record["sources"], record["stamps"]
    return record["context"] == _context(ws) and len(sources) == len(stamps) \
        and all(skip is not None and where in skip or filecache.vouched(kept, where)
                for where, kept in zip(sources, stamps)) \
        and _window_unchanged(ws, record["ledger"], episode, closed_at)


def after_close(ws: Workspace, episode: str, session: str | None, moved: list[Path]) -> None:
    """The close that derived `episode` ended its span after the derivation: its `session.closed`
    line (at the head the derivation read), the open record removed (`moved`: the files the close
    itself changed) and the line a re-run appends is stamped with `session` now. When nothing
    else changed since the stamps were taken, they are taken again as the close left things;
    otherwise forgotten (the re-run derives)."""
    try:
        record = json.loads(fsio.read_regular(path(ws, episode), LIMIT))
        sources, stamps = record["sources"], record["stamps"]
        skip = {str(p) for p in moved}
        holds = _holds(ws, record, episode, skip, closed_at=record["context"][5])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError):
        holds = False
    if not holds:
        forget(ws, episode)
        return
    # a stat that vouched for its source still does; a digest (a source that had just changed)
    # and a moved source are taken again, now that the close's writes have settled
    again = [kept if where not in skip and kept and kept[:1] != ["d"] else filecache.vouch(where)
             for where, kept in zip(sources, stamps)]
    keep(ws, episode, [Path(p) for p in sources], record["said"], record["derived"], session, again)
