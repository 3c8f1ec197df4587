"""The review acts: promote and reject. `verified` is written here and nowhere else.

An act runs under the knowledge lock (the deriver's writer takes it too), checks everything
before it touches a file, writes atomically, and appends its ledger line last (a promotion: the
curated file, the ledger line, then the candidate's removal). A refusal leaves every file as it
was. A promotion killed after writing its curated file leaves the id in both folders; running
the same promotion again (same evidence, same episode) finishes it: it finds its own bytes in
curated/, adds the ledger line unless it is there, and removes the candidate.

What an act is done under: the open episode (`$MAJORDOMUS_EPISODE` when it names an open one,
else the newest opened) when there is one, and then the promotion adds `session:<episode>` to
`derived_from`; a person at a terminal with no episode open acts as `terminal`, which the
ledger line says (`by: terminal`, `session: null`) and no session reference is added.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majordomus.base import credentials, fsio
from majordomus.base.credentials import credential_in
from majordomus.base.errors import FatalError, refused, unknown
from majordomus.base.fsio import atomic_write
from majordomus.base.ids import check_id
from majordomus.base.transcript import marker_in
from majordomus.evidence import episodes
from majordomus.store import records
from majordomus.store.records import CLASSES, quick_status
from majordomus.store.workspace import Workspace


@dataclass(frozen=True)
class Act:
    id: str
    path: Path  # where the record is now
    by: str  # "episode" or "terminal"
    episode: str | None


def lock_path(ws: Workspace) -> Path:
    """The lock every writer of a record holds: the acts and the deriver's `write_record`."""
    return ws.state / "knowledge.lock"


def with_section(body: str, heading: str, text: str) -> str:
    """`body` with `# heading` and `text` appended."""
    head = body.rstrip("\n")
    return (head + "\n\n" if head else "") + f"# {heading}\n\n{text.strip(chr(10))}\n"


def acting_under(ws: Workspace) -> tuple[str, str | None]:
    episode = episodes.current(ws)
    return ("episode", episode) if episode else ("terminal", None)


def not_text(text: str | bytes) -> str | None:
    """Why `text` is not text a record may hold (undecodable bytes, a NUL or another control
    character but tab, newline and carriage return), or None when it is text."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            return f"it is not UTF-8 text (byte 0x{text[exc.start]:02x} at offset {exc.start})"
    for offset, char in enumerate(text):
        if "\ud800" <= char <= "\udfff":
            return f"it is not UTF-8 text (an undecodable byte at character {offset})"
        if (char < " " and char not in "\t\n\r") or "\x7f" <= char <= "\x9f":
            return f"it carries the control character U+{ord(char):04X} at character {offset}"
    return None


def _screened(text: str | bytes | None, what: str, fix: str) -> str:
    """`text` as a record may hold it: refused (exit 4) when empty, when it is not text, or when
    it carries a transcript marker."""
    if text is not None:
        problem = not_text(text)
        if problem:
            raise refused(f"{what} refused: {problem}, and a record holds text only: {fix}")
        if isinstance(text, bytes):
            text = text.decode("utf-8")
    if text is None or not text.strip():
        raise refused(f"{what} refused: it is empty, and an act without evidence is an assertion: {fix}")
    marker = marker_in(text)
    if marker:
        raise refused(f"{what} refused: it carries the transcript marker {marker!r}, and a record is "
                      f"never a quotation of a conversation: {fix}")
    kind = credential_in(text)
    if kind is not None:
        raise refused(credentials.refusal(what, kind))
    return text


def _candidate(ws: Workspace, rid: str, act: str) -> Any:
    """The candidate `rid`, loaded; refused (exit 4) unless it is one."""

    rid = check_id(rid, "id", written=True)
    path = ws.candidates / f"{rid}.md"
    listing = "`majordomus knowledge candidates` lists the candidates"
    if not path.is_file():
        if (ws.curated / f"{rid}.md").is_file():
            raise refused(f"{act} {rid} refused: it is verified already (in curated/), not a candidate; "
                          "supersede it by hand or with a newer record")
        raise unknown(f"{act} {rid}: no candidate has that id; {listing}")
    try:
        record = records.load(path)
    except records.RecordError as exc:
        raise refused(f"{act} {rid} refused: the candidate does not parse ({exc}); fix it by hand, "
                      "then `majordomus knowledge check`") from None
    if record.status != "candidate":
        raise refused(f"{act} {rid} refused: its status is {record.status!r}, not candidate; {listing}")
    if record.id != rid:
        raise refused(f"{act} {rid} refused: the file's id is {record.id!r}; fix the id by hand, "
                      "then `majordomus knowledge check`")
    return record


def promote(ws: Workspace, rid: str, evidence: str | bytes | None, cls: str | None = None) -> Act:
    """Move candidate `rid` to curated/ as verified, with `evidence` under `# Evidence` (bytes
    as read from standard input are decoded as UTF-8, and refused when they are not text)."""

    rid = check_id(rid, "id", written=True)
    if cls is not None and cls not in CLASSES:
        raise refused(f"promote {rid} refused: class {cls!r} is not one of {', '.join(CLASSES)}")
    fix = f"pipe the evidence in your own words: `echo '…' | majordomus knowledge promote {rid}`"
    with ws.lock(lock_path(ws)):
        record = _candidate(ws, rid, "promote")
        said = _screened(evidence, f"evidence for {rid}", fix)
        target = ws.curated / f"{rid}.md"
        by, episode = acting_under(ws)
        meta = dict(record.meta)
        meta["status"] = "verified"
        if cls:
            meta["class"] = cls
        prov = dict(meta.get("provenance") or {})
        refs = list(prov.get("derived_from") or [])
        if episode and f"session:{episode}" not in refs:
            refs.append(f"session:{episode}")
        prov.setdefault("origin", "extracted")
        prov["derived_from"] = refs
        meta["provenance"] = prov
        text = records.compose(meta, with_section(record.body, "Evidence", said)).encode("utf-8")
        digest = hashlib.sha256(text).hexdigest()
        resumed = _interrupted(ws, target, text, rid)
        if not resumed:
            atomic_write(target, text, root=ws.root)
        if not (resumed and _promotion_logged(ws, rid, digest)):
            ws.ledger.append("knowledge.promoted", episode, id=rid, **{"class": meta.get("class")},
                             evidence_lines=len(said.strip("\n").splitlines()),
                             path=ws.rel(target), by=by, sha256=digest)
        fsio.remove(record.path, root=ws.root, missing_ok=False)
    return Act(rid, target, by, episode)


def _interrupted(ws: Workspace, target: Path, text: bytes, rid: str) -> bool:
    """True when `target` holds exactly what this promotion writes: an earlier run of the same act
    was killed after its write and before the candidate left, and this run finishes it. Other
    bytes there are a conflict for a person (refused, exit 4)."""
    try:
        held = fsio.read_bytes(target)
    except FileNotFoundError:
        return False
    if held == text:
        return True
    raise refused(f"promote {rid} refused: {ws.rel(target)} exists already; "
                  "remove one of the two by hand, then `majordomus knowledge check`")


def _promotion_logged(ws: Workspace, rid: str, digest: str) -> bool:
    """Whether the ledger holds this act's `knowledge.promoted` line: `rid` promoted to exactly
    these bytes (`sha256`). Read only when resuming an interrupted promotion."""
    return any(line.event == "knowledge.promoted" and line.get("id") == rid and line.get("sha256") == digest
               for line in ws.ledger.read(contains=digest).lines)


def reject(ws: Workspace, rid: str, reason: str | None = None, by_id: str | None = None) -> Act:
    """Rewrite candidate `rid` in place as superseded: by `by_id`, or for `reason` (`# Rejected`)."""

    rid = check_id(rid, "id", written=True)
    if reason is None and by_id is None:
        raise FatalError(f"reject {rid}: say why with --reason \"…\" or name the replacement with "
                         "--by ID", 2)
    fix = f"`majordomus knowledge reject {rid} --reason \"…\"` in your own words"
    with ws.lock(lock_path(ws)):
        finished = _finish_interrupted_rejection(ws, rid, reason, by_id)
        if finished is not None:
            return finished
        record = _candidate(ws, rid, "reject")
        if reason is not None:
            reason = _screened(reason, f"reason for rejecting {rid}", fix)
        if by_id is not None:
            _replacement(ws, rid, by_id)
        act_by, episode = acting_under(ws)
        meta = dict(record.meta)
        meta["status"] = "superseded"
        body = record.body
        if by_id is not None:
            meta["superseded_by"] = by_id
        if reason is not None:
            body = with_section(body, "Rejected", reason)
        atomic_write(record.path, records.compose(meta, body), root=ws.root)
        ws.ledger.append("knowledge.rejected", episode, id=rid, superseded_by=by_id,
                         reason=reason.strip() if reason else None, path=ws.rel(record.path), by=act_by)
    return Act(rid, record.path, act_by, episode)


def _finish_interrupted_rejection(ws: Workspace, rid: str, reason: str | None, by_id: str | None) -> Act | None:
    """A rejection killed between its write and its ledger line leaves a superseded candidate that
    no `knowledge.rejected` line names. The same act run again finishes it (the line, once),
    instead of being refused for the status it wrote itself. Anything else returns None."""

    path = ws.candidates / f"{rid}.md"
    if records.quick_status(path) != "superseded":
        return None
    if any(line.event == "knowledge.rejected" and line.get("id") == rid
           for line in ws.ledger.read(contains=rid).lines):
        return None
    try:
        record = records.load(path)
    except records.RecordError:
        return None
    same_by = by_id is None or record.meta.get("superseded_by") == by_id
    same_reason = reason is None or reason.strip() in record.body
    if not (same_by and same_reason):
        return None
    act_by, episode = acting_under(ws)
    ws.ledger.append("knowledge.rejected", episode, id=rid, superseded_by=by_id,
                     reason=reason.strip() if reason else None, path=ws.rel(path), by=act_by,
                     finished="an interrupted rejection")
    return Act(rid, path, act_by, episode)


def _replacement(ws: Workspace, rid: str, by_id: str) -> None:
    """`--by` must name another record of the store that is not itself superseded."""

    by_id = check_id(by_id, "--by id")
    if by_id == rid:
        raise refused(f"reject {rid} refused: a record cannot supersede itself; name its replacement with --by")
    for folder in (ws.curated, ws.candidates):
        status = quick_status(folder / f"{by_id}.md")
        if status is None:
            continue
        if status == "superseded":
            raise refused(f"reject {rid} refused: --by {by_id} is superseded itself; name the record "
                          "that replaces both")
        return
    raise unknown(f"reject {rid}: --by {by_id} names no record in candidates/ or curated/; "
                  "`majordomus knowledge candidates` lists the candidates")
