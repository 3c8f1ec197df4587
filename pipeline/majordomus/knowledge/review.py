"""The review acts: promote, reject, reverify, retire, and an agent's dispute. `verified` is written
here and nowhere else.

An act is a person's, never the agent's: it is not filed under the episode that happens to be
open, and it names who made it (git's `user.name`). Each act adds one item to the record's
`reviews` (what, who, when, HEAD at the act, how many acts it saw) and one section to its body
(the evidence or the reason, headed by the act), and the record's status, class and replacement
are what the acts add up to (`knowledge/reviews.py`). A reviewed record lives in curated/ whatever
the verdict, and the candidate's own file stays where it is, untouched: two clones' acts on one
candidate each *add* the same path, which git hands to the merge driver (docs/TEAM.md), and
neither deletes a file the other changed (a rename on one side and a deletion on the other is a
conflict no driver is asked about). A candidate with a reviewed record beside it is in no queue.

An act runs under the knowledge lock (the deriver's writer takes it too), checks everything before
it touches a file, writes atomically, appends its ledger line, and stages the record it wrote. A
refusal leaves every file as it was. An act killed after writing its record and before its
ledger line is finished by running the same act again (same text): it finds itself as the
record's newest review and adds the ledger line once.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from majordomus.base import credentials, git
from majordomus.base.credentials import credential_in
from majordomus.base.errors import FatalError, refused, unknown
from majordomus.base.fsio import atomic_write
from majordomus.base.ids import check_id
from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.transcript import marker_in
from majordomus.evidence import episodes
from majordomus.knowledge import reviews
from majordomus.store import anchors as anchoring
from majordomus.store import gitmerge, records
from majordomus.store.ledger import utc_now
from majordomus.store.records import CLASSES, lock_path, quick_status
from majordomus.store.workspace import Workspace

LISTING = "`majordomus knowledge candidates` lists the candidates"
VERIFIED = "`majordomus knowledge status` lists the verified records"


if TYPE_CHECKING:
    from typing import NamedTuple
else:  # not a dataclass: `dataclasses` imports `inspect` (with ast, dis, tokenize), paid by `knowledge check` too
    from majordomus.base.lean import NamedTuple


class Act(NamedTuple):
    id: str
    path: Path  # where the record is now
    act: str  # promoted | rejected | reverified | retired | disputed
    by: str  # who: git's user.name, or "unknown"
    status: str  # the record's status after the act (candidate when reviewers disagree)
    staged: str | None = None  # None: staged; else why it could not be
    cls: str | None = None  # the record's class after the act


def reviewer(ws: Workspace) -> str:
    """Who acts: git's `user.name` in this repository, or "unknown"."""
    try:
        return git.identity(ws.root) or "unknown"
    except OSError:
        return "unknown"


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



def _load(ws: Workspace, path: Path, rid: str, act: str) -> records.Record:
    try:
        record = records.load(path)
    except records.RecordError as exc:
        raise refused(f"{act} {rid} refused: the record does not parse ({exc}); fix it by hand, "
                      "then `majordomus knowledge check`") from None
    if record.id != rid:
        raise refused(f"{act} {rid} refused: the file's id is {record.id!r}; fix the id by hand, "
                      "then `majordomus knowledge check`")
    return record


def _reviewable(ws: Workspace, rid: str, act: str) -> records.Record:
    """The record `act` applies to (curated/ first: a candidate beside a reviewed record is in no
    queue). promote and reject take a candidate: one in candidates/, or one in curated/ that went
    back to `candidate` because reviewers disagreed. reverify, retire and dispute take a verified
    record. Refused (exit 4) for the wrong status; an id no record has is unknown (exit 3)."""
    rid = check_id(rid, "id", written=True)
    curated, candidate = ws.curated / f"{rid}.md", ws.candidates / f"{rid}.md"
    if curated.is_file():
        record = _load(ws, curated, rid, act)
    elif candidate.is_file():
        record = _load(ws, candidate, rid, act)
    else:
        listing = LISTING if act in ("promote", "reject") else VERIFIED
        raise unknown(f"{act} {rid}: no record has that id; {listing}")
    wanted = "candidate" if act in ("promote", "reject") else "verified"
    if record.status != wanted:
        if record.status == "verified":
            hint = f"`majordomus knowledge reverify {rid} < evidence` or `retire {rid} --reason …` act on it"
        elif record.status == "superseded":
            hint = "a superseded record takes no act; derive or write a newer one"
        else:
            hint = f"`majordomus knowledge promote {rid} < evidence` or `reject {rid} --reason …` act on it"
        raise refused(f"{act} {rid} refused: its status is {record.status}, not {wanted}; {hint}")
    return record


def _apply(ws: Workspace, record: records.Record, act: str, text: str, *,
           cls: str | None = None, replaced_by: str | None = None, about: list[str] | None = None) -> Act:
    """Add the act to `record`, write it to curated/ and stage it."""
    by = reviewer(ws)
    done = reviews.items(record.meta)
    item = reviews.review(act, utc_now(), by, ws.refs_or_unknown()[0].head.sha, len(done), text, cls, replaced_by)
    meta = dict(record.meta)
    meta["reviews"] = done + [item]
    outcome = reviews.settle(meta["reviews"])
    meta["status"] = outcome.status or meta.get("status")
    if outcome.cls:
        meta["class"] = outcome.cls
    if outcome.replaced_by:
        meta["superseded_by"] = outcome.replaced_by
    elif outcome.status != "superseded":
        meta.pop("superseded_by", None)
    if act in ("promoted", "reverified"):
        found = anchor_paths(ws, meta) + (about or [])
        if found:
            meta["anchors"] = sorted(set(found) | {a for a in meta.get("anchors") or [] if anchoring.admissible(a)})
    target = ws.curated / f"{record.id}.md"
    atomic_write(target, records.compose(meta, reviews.with_act(record.body, item, text)), root=ws.root)
    staged = _stage(ws, target)
    return Act(record.id, target, act, by, str(meta["status"]), staged, meta.get("class"))


def anchor_paths(ws: Workspace, meta: dict[str, Any]) -> list[str]:
    """The files a record's evidence names: its `file:` references and relations, the anchors the
    deriver wrote, and the files of the commits it cites (one git call)."""
    found: set[str] = set()
    refs = list(((meta.get("provenance") or {}).get("derived_from")) or [])
    refs += [r.get("target") for r in meta.get("relations") or [] if isinstance(r, dict)]
    shas = []
    for ref in refs:
        if not isinstance(ref, str):
            continue
        prefix, _, target = ref.partition(":")
        if prefix == "file" and anchoring.admissible(target):
            found.add(target)
        elif prefix == "commit" and target:
            shas.append(target)
    try:
        for files in git.files_of(ws.root, shas).values():
            found.update(f for f in files if anchoring.admissible(f) and not f.startswith(".ai/"))
    except OSError:
        pass
    found.update(a for a in meta.get("anchors") or [] if anchoring.admissible(a))
    return sorted(found)


def _stage(ws: Workspace, target: Path) -> str | None:
    """Stage the act's record; why not, when git could not (the act stands either way)."""
    try:
        gitmerge.ensure(ws.root)
        git.stage(ws.root, [ws.rel(target)], [])
    except (OSError, git.GitError) as exc:
        return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return None


def _finished(ws: Workspace, rid: str, act: str, text: str) -> Act | None:
    """The same act (same text) made already: the record's newest review. Running it again adds
    its ledger line if a kill took it, and changes nothing else."""
    curated = ws.curated / f"{rid}.md"
    try:
        record = records.load(curated)
    except (OSError, records.RecordError):
        return None
    done = reviews.items(record.meta)
    if not done or done[-1].get("act") != act or done[-1].get("digest") != reviews.digest(text):
        return None
    return Act(rid, curated, act, str(done[-1].get("by")), record.status, _stage(ws, curated),
               record.meta.get("class"))


def _logged(ws: Workspace, event: str, rid: str, digest: str) -> bool:
    return any(line.event == event and line.get("id") == rid and line.get("digest") == digest
               for line in ws.ledger.read(contains=digest).lines)


def promote(ws: Workspace, rid: str, evidence: str | bytes | None, cls: str | None = None,
            about: list[str] | None = None) -> Act:
    """Verify candidate `rid`: `evidence` (bytes as read from standard input are decoded as UTF-8,
    and refused when they are not text) under its act's heading; `cls` the class the person
    judges it; `about` more anchor paths (repository-relative)."""
    rid = check_id(rid, "id", written=True)
    if cls is not None and cls not in CLASSES:
        raise refused(f"promote {rid} refused: class {cls!r} is not one of {', '.join(CLASSES)}")
    fix = f"pipe the evidence in your own words: `echo '…' | majordomus knowledge promote {rid}`"
    with ws.lock(lock_path(ws)):
        said = _screened(evidence, f"evidence for {rid}", fix).strip("\n")
        act = _finished(ws, rid, "promoted", said)
        if act is None:
            record = _reviewable(ws, rid, "promote")
            act = _apply(ws, record, "promoted", said, cls=cls, about=about)
        digest = reviews.digest(said)
        if not _logged(ws, "knowledge.promoted", rid, digest):
            ws.ledger.append("knowledge.promoted", None, id=rid, **{"class": act.cls}, status=act.status,
                             evidence_lines=len(said.splitlines()), path=ws.rel(act.path), by=act.by,
                             digest=digest)
    return act


def reject(ws: Workspace, rid: str, reason: str | None = None, by_id: str | None = None) -> Act:
    """Reject candidate `rid`: superseded by `by_id`, or for `reason` (both may be given)."""
    rid = check_id(rid, "id", written=True)
    if reason is None and by_id is None:
        raise FatalError(f"reject {rid}: say why with --reason \"…\" or name the replacement with --by ID", 2)
    fix = f"`majordomus knowledge reject {rid} --reason \"…\"` in your own words"
    with ws.lock(lock_path(ws)):
        said = _screened(reason, f"reason for rejecting {rid}", fix).strip("\n") if reason is not None \
            else f"Superseded by {by_id}."
        if by_id is not None:
            _replacement(ws, rid, by_id, "reject")
        act = _finished(ws, rid, "rejected", said)
        if act is None:
            record = _reviewable(ws, rid, "reject")
            act = _apply(ws, record, "rejected", said, replaced_by=by_id)
        digest = reviews.digest(said)
        if not _logged(ws, "knowledge.rejected", rid, digest):
            ws.ledger.append("knowledge.rejected", None, id=rid, superseded_by=by_id, status=act.status,
                             reason=reason.strip() if reason else None, path=ws.rel(act.path), by=act.by,
                             digest=digest)
    return act


def reverify(ws: Workspace, rid: str, evidence: str | bytes | None, about: list[str] | None = None) -> Act:
    """Verify `rid` again at HEAD: new evidence under its own heading (the earlier evidence stays,
    dated), a new anchor commit, and `about` added to its anchors."""
    rid = check_id(rid, "id", written=True)
    fix = f"pipe the new evidence in your own words: `echo '…' | majordomus knowledge reverify {rid}`"
    with ws.lock(lock_path(ws)):
        said = _screened(evidence, f"evidence for {rid}", fix).strip("\n")
        record = _reviewable(ws, rid, "reverify")
        act = _apply(ws, record, "reverified", said, about=about)
        ws.ledger.append("knowledge.reverified", None, id=rid, status=act.status, path=ws.rel(act.path),
                         by=act.by, digest=reviews.digest(said), evidence_lines=len(said.splitlines()))
    return act


def retire(ws: Workspace, rid: str, reason: str | None, by_id: str | None = None) -> Act:
    """Retire verified `rid`: superseded, for `reason`, by `by_id` when there is a replacement."""
    rid = check_id(rid, "id", written=True)
    fix = f"`majordomus knowledge retire {rid} --reason \"…\"` in your own words"
    with ws.lock(lock_path(ws)):
        said = _screened(reason, f"reason for retiring {rid}", fix).strip("\n")
        if by_id is not None:
            _replacement(ws, rid, by_id, "retire")
        record = _reviewable(ws, rid, "retire")
        act = _apply(ws, record, "retired", said, replaced_by=by_id)
        ws.ledger.append("knowledge.retired", None, id=rid, superseded_by=by_id, status=act.status,
                         reason=said, path=ws.rel(act.path), by=act.by, digest=reviews.digest(said))
    return act


def dispute(ws: Workspace, rid: str, reason: str | None) -> Act:
    """An agent (or anyone) says verified `rid` looks wrong, without deciding it: a ledger line
    under the open episode; every reader shows the record *disputed* until a person re-verifies or
    retires it. No file changes."""
    rid = check_id(rid, "id", written=True)
    fix = f"`majordomus knowledge dispute {rid} --reason \"…\"`: say what looks wrong"
    said = _screened(reason, f"reason for disputing {rid}", fix).strip("\n")
    record = _reviewable(ws, rid, "dispute")
    episode = episodes.current(ws)
    by = f"episode {episode}" if episode else reviewer(ws)
    ws.ledger.append("knowledge.disputed", episode, id=rid, reason=said, by=by)
    return Act(rid, record.path, "disputed", by, record.status, None)


def _replacement(ws: Workspace, rid: str, by_id: str, act: str) -> None:
    """`--by` must name another record of the store that is not itself superseded."""
    by_id = check_id(by_id, "--by id")
    if by_id == rid:
        raise refused(f"{act} {rid} refused: a record cannot supersede itself; name its replacement with --by")
    for folder in (ws.curated, ws.candidates):
        status = quick_status(folder / f"{by_id}.md")
        if status is None:
            continue
        if status == "superseded":
            raise refused(f"{act} {rid} refused: --by {by_id} is superseded itself; name the record "
                          "that replaces both")
        return
    raise unknown(f"{act} {rid}: --by {by_id} names no record in candidates/ or curated/; {LISTING}")
