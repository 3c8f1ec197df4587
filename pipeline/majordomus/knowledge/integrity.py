"""The integrity validator (`majordomus knowledge check`, rule `majordomus.knowledge-integrity`).

Every record under candidates/ and curated/ is read once (under doctor, only those whose stamp
changed: the others' local checks are the index's integrity view, see `run`). Local checks (schema,
id = file name, status rules, transcript markers, the credential screen) run per record; references are collected, then resolved all
at once: one pass over the ledger, one listing of the tracked session records, one
`git cat-file --batch-check` for every commit, one `git ls-files` (`git.Listing`, shared with the
credential screen and, under doctor, with the queue's rule) for every file (and one
`git log --all` only for paths the tree no longer holds). The cost grows with the store, never
with records × references.

Resolution: `session:E` by a ledger line of E or `.ai/repo/sessions/E.md`; `task:T` and
`decision:T` by a ledger line naming task T, or, when the record's own episode is vouched for
by its tracked session record but absent from this ledger (trimmed, or another checkout's),
by that record; `commit:` in git; `file:` in the tree or its history; `issue:` and `test:` are
external and checked for form only.
"""
from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from majordomus import __version__
from majordomus.base import fsio, git
from majordomus.base.errors import FatalError
from majordomus.base.credentials import credential_in
from majordomus.base.findings import Finding
from majordomus.base.ids import ID_PATTERN
from majordomus.base.transcript import marker_in
from majordomus.knowledge import leaks
from majordomus.knowledge.references import Cites, Resolver, Sessions
from majordomus.knowledge.worktree import Worktree
from majordomus.store import index, records
from majordomus.store.facts import Facts
from majordomus.store.filecache import content_digest, stamp
from majordomus.store.workspace import Workspace
from majordomus.base.lean import pattern

RULE = "majordomus.knowledge-integrity"
RECORD_PREFIX = "knowledge"  # knowledge:<id> names a record of the store: resolved against its ids
VIEW_VERSION = 3  # of `_local`'s answer: raise it when what it keeps or finds changes
# what `_local` leaves out of its answer when it is empty, as most records' are: the index keeps
# 20,000 answers at a million ledger lines, and doctor decodes them all on every run
_EMPTY_LEFT_OUT = ("findings", "name", "to_records", "cited")
JUDGED = "integrity.judged.json"  # doctor's judgement of the record folders, under state (`_Judged`)
LEDGER_GROWN = 1 << 20  # a kept judgement holds over at most this many bytes appended to the ledger
_REJECTED = pattern(r"(?m)^# Rejected[ \t]*\n(?=[\s\S]*\S)")


class Report:
    """The check's findings and counters (a plain class: no `dataclasses` import for doctor)."""

    __slots__ = ("findings", "counters", "timing")

    def __init__(self, timing: bool = False) -> None:
        self.findings: list[Finding] = []
        self.counters: dict[str, Any] = {}
        self.timing = timing


def check(ws: Workspace, facts: Facts | None = None, trusted: bool = False,
          listing: git.Listing | None = None, sessions: Sessions | None = None,
          worktree: Worktree | None = None) -> list[Finding]:
    """Every finding about the knowledge store of `ws` (the rule's entry point); `facts`: the
    ledger's, when the caller has read them; `trusted`: see `run`; `listing`: git's, when the
    caller shares one; `sessions`: the sessions folder's entries, when the caller lists it once;
    `worktree`: git's word on the files, when the caller asked it ahead (`Worktree.start`)."""
    return run(ws, facts, trusted, listing, sessions, worktree).findings


def run(ws: Workspace, facts: Facts | None = None, trusted: bool = False,
        listing: git.Listing | None = None, sessions: Sessions | None = None,
        worktree: Worktree | None = None) -> Report:
    """The check, with its counters (printed on stderr under MJ_TIMING=1). `trusted` (doctor):
    what each record file holds is taken from the index's integrity view while the file keeps its
    stamp (one `lstat` a file, `Index.view(each=True)`), and read again when it changed; without
    it (`knowledge check`, the pre-commit gate) every record is read and parsed."""

    report = Report(timing=os.environ.get("MJ_TIMING") == "1")
    started = time.perf_counter()
    out = report.findings

    def finding(rel: str, fld: str | None, what: str, fix: str, blocking: bool = True) -> None:
        out.append(Finding(RULE, what, fix, blocking, rel, fld, "majordomus knowledge check"))

    version = f"{VIEW_VERSION}:{leaks.screen_key()}"  # another screen is another view
    listing = listing if listing is not None else git.Listing(ws.root)
    resolver = Resolver(ws, facts, listing, sessions)
    judged = _Judged.of(ws, version, facts, worktree or Worktree(ws.root, ws.state).start()) if trusted else None
    if judged is not None and judged.holds(ws, resolver):  # nothing it was made of changed: its findings
        judged.findings(finding)
        report.counters = {"findings": len(out), "judged": 1,
                           "ms_total": round((time.perf_counter() - started) * 1000, 1)}
        return report
    screen = leaks.Screen(ws, trusted)
    seen: list[tuple[str, dict[str, Any]]] = []  # (rel, what `_local` made of its file)
    for folder_name, folder in (("candidates", ws.candidates), ("curated", ws.curated)):
        prefix = ws.rel(folder) + "/"
        try:
            fsio.confined(folder, folder=True)
        except OSError as exc:  # the folder, or one above it, is a link: never listed, never read
            finding(ws.rel(folder), None, f"{exc.strerror}: its records are never read",
                    "replace the link with a real folder holding the records")
            continue
        read = partial(_local, folder_name, prefix, screen)
        if trusted:  # the view's scan lists the regular files: the folder is not scanned twice
            view = index.of(ws).view(folder, "integrity", version, read, each=True)
            strays = records.strays(folder, {name for name, _ in view})
            kept = [(prefix + name, got) for name, got in view]
            screen.unchanged(ws.rel(folder), (name for name, _ in view))
        else:
            strays = []
            names = records.names(folder, strays)  # names, not paths: 20,000 Path objects cost 0.2 s
            where = os.fspath(folder) + os.sep
            kept = [(prefix + name, read(where + name)) for name in names]
        for name in strays:
            finding(prefix + name, None, "not a regular file (a symbolic link, a pipe): "
                    "never read, never followed", "replace it with the record's own file, or remove it")
        for rel, got in kept:
            for fld, what, fix, blocking in got.get("findings", ()):
                finding(rel, fld, what, fix, blocking)
        seen += kept
    read_done = time.perf_counter()

    parsed = [(rel, got) for rel, got in seen if got.get("parsed")]
    by_id: dict[str, list[str]] = {}
    cites: list[Cites] = []  # each record's references, with its episodes: resolved together
    supersessions: list[tuple[str, str, str]] = []  # (rel, own id, superseded_by)
    to_records: list[tuple[str, str, str]] = []  # (rel, field, knowledge:<id>): resolved in the store
    for rel, got in parsed:  # what most records hold is looked up, what few hold asked for
        rid = got.get("id")
        if isinstance(rid, str):
            by_id.setdefault(rid, []).append(rel)
        if got.get("by"):
            supersessions.append((rel, str(rid), got["by"]))
        if "to_records" in got:
            to_records += [(rel, fld, ref) for fld, ref in got["to_records"]]
        if got.get("refs"):
            cites.append(Cites(rel, got["refs"], got.get("episodes", ())))
    leaks.screen(ws, {rel: got.get("name") for rel, got in parsed}, finding, listing, screen)  # every other
    # tracked file, and the names of all
    screen.save()
    checked = time.perf_counter()

    for rid, rels in by_id.items():
        if len(rels) > 1 and not _reviewed_candidate(rels):  # an act leaves the candidate beside its
            # reviewed record
            for rel in rels:
                others = ", ".join(r for r in rels if r != rel)
                finding(rel, "id", f"id {rid!r} is also the id of {others}",
                        "keep one record under that id: remove or re-id the others")
    for rel, rid, by in supersessions:
        if by == rid:
            finding(rel, "superseded_by", "a record cannot supersede itself", "name the replacing record")
        elif by not in by_id:
            finding(rel, "superseded_by", f"superseded_by {by!r} names no record in candidates/ or curated/",
                    "name an existing record id, or `majordomus knowledge candidates` to find one")

    for rel, fld, ref in to_records:
        if ref.partition(":")[2] not in by_id:
            finding(rel, fld, f"{ref} does not resolve: no record with that id in candidates/ or curated/",
                    "name an existing record id (`majordomus knowledge candidates` lists the candidates), "
                    "or remove the relation")
    unresolved = resolver.unresolved(cites)
    cited = {rel: got.get("cited", {}) for rel, got in parsed} if any(
        r.ref.startswith("commit:") for r, _ in unresolved) else {}  # the words of commits this clone lacks
    rewritten = resolver.rewritten([(r, cited.get(r.rel, {}).get(r.ref[7:])) for r, _ in unresolved
                                    if r.ref.startswith("commit:")])
    for r, why in unresolved:
        if r.ref.startswith("commit:") and why.startswith("no such commit"):  # the record travelled, the commit
            # did not: nobody can fix that in their commit
            note = cited.get(r.rel, {}).get(r.ref[7:])
            found = rewritten.get(r.ref[7:])
            said = f" ({note.get('subject')!r})" if note and note.get("subject") else ""
            if found:
                what = f"{r.ref}{said} was rewritten (a rebase or an amend): it is {found[:12]} now"
            else:
                what = (f"{r.ref}{said} is not in this clone: rebased, amended, squash-merged or never "
                        "merged; the record keeps what it was in words")
            finding(r.rel, r.field, what, "nothing to do in this commit; a person may cite the new commit "
                    "when they next review the record", blocking=False)
            continue
        finding(r.rel, r.field, f"{r.ref} does not resolve: {why}",
                "correct the reference, or remove it if the evidence is gone")
    if judged is not None:
        judged.keep(ws, resolver, out, unresolved, cites)
    done = time.perf_counter()
    report.counters = {
        "records": len(parsed), "references": sum(len(c.refs) for c in cites), "commit_refs": resolver.commit_refs,
        "file_refs": resolver.file_refs, "ledger_lines": resolver.ledger_lines,
        "git_processes": resolver.git_processes, "screened": screen.screened, "findings": len(out),
        "ms_read": round((read_done - started) * 1000, 1), "ms_local": round((checked - read_done) * 1000, 1),
        "ms_resolve": round((done - checked) * 1000, 1), "ms_total": round((done - started) * 1000, 1),
    }
    return report


class _Judged:
    """Doctor's judgement (`run(trusted=True)`), kept in `JUDGED` with what it was made of: git's
    index and what git says differs from it under `.ai/repo/` (`Worktree`), the record folders'
    and the sessions folder's stamps (a name added, removed or renamed, a pipe git does not list),
    the AGENTS.md block, the screen's identity, the ledger (the same file, grown or not) and the
    cited commits and the cited files only history holds, asked again (the index holds the rest).
    While none of them changed, the findings are the kept ones: no record file, session record or
    answer is looked at, no reference resolved. A judgement that found a commit or a file this
    clone does not hold is not kept."""

    __slots__ = ("key", "ledger", "kept")

    def __init__(self, key: str, ledger: list[Any]) -> None:
        self.key = key
        self.ledger = ledger  # the ledger as the facts read it (`Ledger.tail_stamp`'s form)
        self.kept: dict[str, Any] | None = None

    @classmethod
    def of(cls, ws: Workspace, version: str, facts: Facts | None, worktree: Worktree) -> _Judged | None:
        """What a judgement made now would be made of (None: nothing can be kept: git or the
        facts cannot be used, a folder is linked, a stamp is too recent to vouch for itself)."""
        head = facts.head if facts is not None and facts.db is not None else {}
        check = str(head.get("check", ""))
        if not all(type(head.get(k)) is int for k in ("dev", "ino", "size")) or ":" not in check:
            return None
        parts = worktree.key()
        if parts is None:
            return None
        parts.insert(0, f"{version}:{__version__}".encode("utf-8"))  # another release may judge otherwise
        if ws.holds_a_repository():
            return None  # another repository's files: git's word is on the folder
        for folder in (ws.candidates, ws.curated, ws.sessions):
            try:
                fsio.confined(folder, folder=True)
            except OSError:
                return None
            st = stamp(folder)
            if st == []:
                return None
            parts.append(f"{ws.rel(folder)}\0{st}".encode("utf-8", "surrogateescape"))
        block = leaks.agents_block(ws)
        parts.append(b"AGENTS.md\0" + (content_digest(block).encode() if block else b"-"))
        return cls(content_digest(b"\0".join(parts)), [head["dev"], head["ino"], head["size"], check.partition(":")[2]])

    def holds(self, ws: Workspace, resolver: Resolver) -> bool:
        """Whether the judgement kept was made of what this one would be."""
        try:
            kept = json.loads(fsio.read_regular(ws.state / JUDGED))
        except (OSError, ValueError):
            return False
        if not (isinstance(kept, dict) and kept.get("key") == self.key and _shaped(kept)):
            return False
        grown = ws.ledger.appended_since(kept["ledger"], LEDGER_GROWN)
        if grown is None or grown and kept.get("exact"):  # a trim, a rewrite; or lines that may resolve
            return False
        commits, files = set(kept["commits"]), set(kept["files"])
        if commits and resolver._commits(commits) != commits or files and resolver._files(files) != files:
            return False
        self.kept = kept
        return True

    def findings(self, finding: Callable[..., None]) -> None:
        """The kept findings, in their order."""
        assert self.kept is not None
        for rel, fld, what, fix, blocking in self.kept["found"]:
            finding(rel, fld, what, fix, blocking)

    def keep(self, ws: Workspace, resolver: Resolver, found: list[Finding], unresolved: list[tuple[Any, str]],
             cites: list[Cites]) -> None:
        """Keep this judgement and its findings."""
        if any(r.ref.startswith(("commit:", "file:")) for r, _ in unresolved):
            return  # judged with `git log`: asked again each time
        refs = {ref for c in cites for _, ref in c.refs}
        files = {r[5:] for r in refs if r.startswith("file:")}
        files -= resolver.in_tree(files)  # git's index, which the key names, holds these: asked again only
        # those history holds
        # lines appended may resolve a reference, or open an episode that vouched for a task
        exact = resolver.doubted or bool(resolver.facts is not None and resolver.facts.tail.lines)
        value = {"key": self.key, "ledger": self.ledger, "exact": exact,
                 "commits": sorted(r[7:] for r in refs if r.startswith("commit:")),
                 "files": sorted(files),
                 "found": [[f.file, f.field, f.what, f.fix, f.blocking] for f in found]}
        try:
            fsio.atomic_write(ws.state / JUDGED, json.dumps(value, separators=(",", ":"), ensure_ascii=False)
                              .encode("utf-8", "surrogateescape"), root=ws.root)
        except (OSError, ValueError, UnicodeError, FatalError):  # a full disk, a link there: judged each time
            pass


def _shaped(kept: dict[str, Any]) -> bool:
    """Whether a kept judgement has the shape `_Judged.keep` writes."""
    found = kept.get("found")
    return (isinstance(kept.get("ledger"), list) and isinstance(kept.get("commits"), list)
            and isinstance(kept.get("files"), list) and isinstance(found, list)
            and all(isinstance(f, list) and len(f) == 5 for f in found))


def _local(folder_name: str, prefix: str, screen: leaks.Screen, path: str) -> dict[str, Any]:
    """What the check makes of one record file on its own (JSON, the index's integrity view): its
    findings as [field, what, fix, blocking], and what the checks across records need (its id, the
    record it is superseded by, its references, its cited commits); what is empty of
    `_EMPTY_LEFT_OUT` is left out."""

    # imported by the first record read: doctor, whose view is kept, reads none on most runs
    from majordomus.knowledge import reviews
    from majordomus.store.schemafast import problems as record_problems

    name = path.rpartition(os.sep)[2]
    rel = prefix + name
    found: list[list[Any]] = []

    def finding(fld: str | None, what: str, fix: str, blocking: bool = True) -> None:
        found.append([fld, what, fix, blocking])

    try:
        rec, raw = _load(Path(path), rel)
    except records.RecordError as exc:
        finding(None, f"does not parse: {exc}", "repair the front matter by hand "
                "(`---`, YAML keys, `---`, then the body)")
        return {"parsed": False, "findings": found}
    got: dict[str, Any] = {"parsed": True, "findings": found, "name": credential_in(rel)}  # the name's, for
    # the screen of tracked files (`leaks.screen`)
    meta, stem = rec.meta, rec.path.stem
    schema_fields = set()
    for fld, message in record_problems(meta):
        schema_fields.add(fld)
        finding(fld, f"not valid knowledge/v1: {message}",
                "edit the record so it validates against schemas/knowledge.v1.schema.json")
    rid = meta.get("id")
    if isinstance(rid, str):
        got["id"] = rid
        if "id" in schema_fields:
            pass  # the schema finding names it already
        elif not ID_PATTERN.match(rid) or ".." in rid:
            finding("id", f"id {rid!r} is not an admissible id (letters, digits, '.', '_', '-'; "
                    "no '..'; a letter or digit first)", "give the record an id that is also a safe file name")
        elif rid != stem:
            finding("id", f"id {rid!r} differs from the file name {stem!r}",
                    f"rename the file to {rid}.md or set `id: {stem}`")
    status = meta.get("status")
    prov = meta.get("provenance") if isinstance(meta.get("provenance"), dict) else {}
    if status == "verified" and not (prov.get("origin") and rec.derived_from):
        finding("provenance", "a verified record carries no provenance (origin and derived_from)",
                "add provenance.derived_from naming its evidence; `majordomus knowledge promote` writes it")
    if folder_name == "candidates" and status == "verified":
        finding("status", "a candidate claims verified: only promotion writes verified",
                f"set `status: candidate`, then `majordomus knowledge promote {stem} < evidence`")
    acts = reviews.items(meta)
    outcome = reviews.settle(acts)
    if outcome.status and status != outcome.status:
        finding("status", f"status {status!r} contradicts its review acts, which add up to "
                f"{outcome.status!r}", "undo the hand edit, or act: `majordomus knowledge promote|reject|"
                "reverify|retire`")
    if outcome.replaced_by and meta.get("superseded_by") != outcome.replaced_by:
        finding("superseded_by", f"superseded_by does not name {outcome.replaced_by}, the record "
                "its review acts name", f"set `superseded_by: {outcome.replaced_by}`")
    if acts and status == "candidate":
        contested = outcome.contested
        if contested:
            finding("reviews", "reviewers disagree: " + "; ".join(reviews.describe(a) for a in contested)
                    + " (acts made on two clones, neither seeing the other)",
                    f"settle it with one more act: `majordomus knowledge promote {stem} < evidence` or "
                    f"`majordomus knowledge reject {stem} --reason …`", blocking=False)
    if status == "superseded":
        by = meta.get("superseded_by")
        if isinstance(by, str) and by:
            got["by"] = by
        elif not (_REJECTED().search(rec.body) or any(a.get("act") in ("rejected", "retired") for a in acts)):
            finding("superseded_by", "superseded, but names no superseded_by and records no "
                    "rejection", f"`majordomus knowledge reject {stem} --reason \"…\"`, or add "
                    "superseded_by: <id>")
    for fld in ("title", "description"):
        marker = marker_in(meta[fld]) if isinstance(meta.get(fld), str) else None
        if marker:
            finding(fld, f"carries the transcript marker {marker!r}",
                    f"restate the {fld} in your own words, without the marker")
    marker = marker_in(rec.body)
    if marker:
        finding("body", f"carries the transcript marker {marker!r}",
                "restate the body in your own words, without the marker")
    for fld, secret in screen.fields(rel, raw, partial(_texts, meta, rec.body)):
        # the kind, never the secret: the finding is printed and may be pasted
        finding(fld, f"carries a credential ({secret}) in a tracked record",
                "remove it from the record (and from git's history, then revoke it: it "
                "may have been pushed)")
    got["episodes"] = [r[8:] for r in rec.derived_from if r.startswith("session:")]
    refs, to_records = got["refs"], got["to_records"] = [], []
    for fld, ref, kind in _references(meta):
        if fld in schema_fields:
            continue  # the schema finding names it already
        problem = records.reference_problem(ref, kind)
        if problem:
            finding(fld, f"not a reference: {problem}", "write PREFIX:TARGET with an admitted prefix")
        elif ref.startswith(f"{RECORD_PREFIX}:"):
            to_records.append([fld, ref])
        else:
            refs.append([fld, ref])
    got["cited"] = {sha: {k: _plain(note.get(k)) for k in ("subject", "authored")}
                    for sha, note in _cited(meta).items()}
    for key in _EMPTY_LEFT_OUT:
        if not got[key]:
            del got[key]
    return got


def _reviewed_candidate(rels: list[str]) -> bool:
    """One id's files are a candidate and its reviewed record: what every act leaves."""
    return len(rels) == 2 and {rel.rsplit("/", 2)[-2] for rel in rels} == {"candidates", "curated"}


def _cited(meta: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The record's cited commits in words (provenance.commits), by sha."""
    prov = meta.get("provenance")
    found = prov.get("commits") if isinstance(prov, dict) else None
    return {str(c.get("sha")): c for c in found if isinstance(c, dict)} if isinstance(found, list) else {}


def _plain(value: Any) -> Any:
    """`value` as JSON keeps it (a YAML date becomes its text): the view keeps it as it is read."""
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


def _load(path: Path, rel: str) -> tuple[Any, bytes]:
    """A record, through the one front-matter reader, and the bytes it was read from."""
    try:
        data = fsio.read_bytes(path)
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise records.RecordError(f"{rel}: not UTF-8 text") from None
    except OSError as exc:
        raise records.RecordError(f"{rel}: unreadable ({exc.strerror or exc})") from None
    meta, body = records.parse(text, rel)
    return records.Record(path, meta, body), data


def _texts(meta: dict[str, Any], body: str) -> list[tuple[str, Any]]:
    """(field, text) of what the credential screen reads in a parsed record."""
    return [("title", meta.get("title")), ("description", meta.get("description")), ("body", body),
            ("front matter", _other_texts(meta))]


def _other_texts(meta: Any) -> str:
    """Every string of a record's front matter but its title and description, one a line."""
    found: list[str] = []
    stack = [v for k, v in meta.items() if k not in ("title", "description")] if isinstance(meta, dict) else []
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return "\n".join(found)


def _references(meta: dict[str, Any]) -> list[tuple[str, Any, str | None]]:
    """(field path, reference, the field as the allow-list names it) of every derived_from entry
    and relation target."""
    found: list[tuple[str, Any, str | None]] = []
    prov = meta.get("provenance")
    refs = prov.get("derived_from") if isinstance(prov, dict) else None
    if isinstance(refs, list):
        found += [(f"provenance.derived_from[{i}]", ref, None) for i, ref in enumerate(refs)]
    rels = meta.get("relations")
    if isinstance(rels, list):
        found += [(f"relations[{i}].target", rel.get("target"), records.RELATION_TARGET)
                  for i, rel in enumerate(rels) if isinstance(rel, dict)]
    return found
