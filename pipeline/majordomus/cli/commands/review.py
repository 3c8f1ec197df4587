"""majordomus knowledge promote | reject | reverify | retire | dispute | check: the review acts and the
integrity validator."""
from __future__ import annotations

import sys
from collections.abc import Callable

from majordomus.base.errors import BLOCKING, OK, FatalError
from majordomus.base.output import emit_json, say, show
from majordomus.cli.commands import Subparsers
from majordomus.context import prebuilt
from majordomus.knowledge import integrity, review
from majordomus.store import anchors
from majordomus.store import index as store_index
from majordomus.store.records import CLASSES
from majordomus.store.workspace import Workspace, open_workspace


def review_verbs(verbs: Subparsers) -> None:
    """Add the acts and the check to `majordomus knowledge`'s verbs."""

    p = verbs.add_parser("promote", help="promote candidates to verified, evidence on stdin",
                         description="Verify each candidate named: it moves to curated/ with status "
                         "verified, the evidence read from standard input under its act's heading, the "
                         "commit it was verified at (HEAD) and its anchor paths (the files its evidence "
                         "names, and each --about). The move is staged, as `git mv` would. Refused (exit 4, "
                         "nothing moved): empty evidence, a transcript marker, a credential, a record that "
                         "is not a candidate; an unknown id exits 3.")
    p.add_argument("ids", nargs="+", metavar="ID", help="the candidates' ids (file names without .md)")
    p.add_argument("--class", dest="cls", choices=CLASSES, help="the class you judge it to be")
    p.add_argument("--about", action="append", default=[], metavar="PATH",
                   help="a file the record is about (repeatable; repository-relative or from here)")
    p.set_defaults(handler=lambda a: promote(a.ids, a.cls, a.about))
    r = verbs.add_parser("reject", help="reject candidates (superseded, with a reason or a replacement)",
                         description="Reject each candidate named: it moves to curated/ as superseded, "
                         "the reason under its act's heading, superseded_by naming the record that "
                         "replaces it with --by. The move is staged.")
    r.add_argument("ids", nargs="+", metavar="ID", help="the candidates' ids")
    r.add_argument("--reason", help="why it is rejected, in your words")
    r.add_argument("--by", dest="by_id", metavar="ID", help="the record that replaces it")
    r.set_defaults(handler=lambda a: reject(a.ids, a.reason, a.by_id))
    v = verbs.add_parser("reverify", help="verify a verified record again at HEAD, evidence on stdin",
                         description="Add new evidence to a verified record (the earlier evidence stays, "
                         "dated) and anchor it at HEAD: it is current again until its anchored files "
                         "change. --about adds anchor paths. Staged.")
    v.add_argument("ids", nargs="+", metavar="ID")
    v.add_argument("--about", action="append", default=[], metavar="PATH",
                   help="a file the record is about (repeatable)")
    v.set_defaults(handler=lambda a: reverify(a.ids, a.about))
    t = verbs.add_parser("retire", help="retire a verified record (verified -> superseded)",
                         description="A verified record is no longer true: superseded, for --reason, "
                         "by --by ID when another record replaces it. Staged.")
    t.add_argument("ids", nargs="+", metavar="ID")
    t.add_argument("--reason", required=True, help="why it no longer holds")
    t.add_argument("--by", dest="by_id", metavar="ID", help="the record that replaces it")
    t.set_defaults(handler=lambda a: retire(a.ids, a.reason, a.by_id))
    d = verbs.add_parser("dispute", help="say a verified record looks wrong, without deciding it",
                         description="For an agent (or anyone) that finds a verified record wrong: a "
                         "ledger line; every reader marks the record disputed until a person re-verifies "
                         "or retires it. No file changes.")
    d.add_argument("id")
    d.add_argument("--reason", required=True, help="what looks wrong, and why")
    d.set_defaults(handler=lambda a: dispute(a.id, a.reason))
    c = verbs.add_parser("check", help="validate every record (exit 10 on a blocking finding)",
                         description="The integrity validator: schema, ids, statuses, transcript markers, "
                         "and every reference resolved against the ledger, the session records and git.")
    c.add_argument("--json", action="store_true")
    c.set_defaults(handler=lambda a: check(a.json))


def _evidence() -> bytes:
    if sys.stdin is None or sys.stdin.isatty():
        say("reading the evidence from standard input (end it with Ctrl-D)")
    return sys.stdin.buffer.read() if sys.stdin is not None else b""  # bytes: checked as text there


def _told(ws: Workspace, act: review.Act, what: str) -> None:
    show(ws.rel(act.path) + "\n")
    staged = "staged" if act.staged is None else f"not staged ({act.staged})"
    if act.status == "candidate":
        what += ", but reviewers disagree: it waits for one more act (`majordomus knowledge record " \
                f"{act.id}` shows both)"
    say(f"{act.id} {what} by {act.by}: {ws.rel(act.path)} {staged}; "
        "`git commit` records it for the team")


def _each(ws: Workspace, ids: list[str], do: Callable[[str], review.Act], what: str) -> int:
    """Act on each id; a refusal of one is said and the others go on; the worst exit is returned.
    The next start's briefing is composed after the acts (`context/prebuilt.py`), when one was done:
    a refused act writes nothing."""
    worst = OK
    acted = False
    try:
        for rid in ids:
            try:
                act = do(rid)
            except FatalError as exc:
                if len(ids) == 1:
                    raise
                say(f"{rid}: {exc.message}")
                worst = max(worst, exc.code)
                continue
            acted = True
            _told(ws, act, what)
    finally:
        if acted:
            prebuilt.refresh(ws)
    return worst


def promote(ids: list[str], cls: str | None, about: list[str]) -> int:
    """`knowledge promote ID… [--class C] [--about PATH]… < evidence`."""
    ws = open_workspace()
    paths = anchors.anchors(ws.root, about) if about else None
    evidence = _evidence()
    return _each(ws, ids, lambda rid: review.promote(ws, rid, evidence, cls, paths), "promoted")


def reject(ids: list[str], reason: str | None, by_id: str | None) -> int:
    """`knowledge reject ID… --reason "…" [--by OTHER]`."""
    ws = open_workspace()
    what = f"superseded by {by_id}" if by_id else "rejected"
    return _each(ws, ids, lambda rid: review.reject(ws, rid, reason, by_id), what)


def reverify(ids: list[str], about: list[str]) -> int:
    """`knowledge reverify ID… [--about PATH]… < evidence`."""
    ws = open_workspace()
    paths = anchors.anchors(ws.root, about) if about else None
    evidence = _evidence()
    return _each(ws, ids, lambda rid: review.reverify(ws, rid, evidence, paths), "re-verified")


def retire(ids: list[str], reason: str, by_id: str | None) -> int:
    """`knowledge retire ID… --reason "…" [--by OTHER]`."""
    ws = open_workspace()
    what = f"retired, superseded by {by_id}" if by_id else "retired"
    return _each(ws, ids, lambda rid: review.retire(ws, rid, reason, by_id), what)


def dispute(rid: str, reason: str) -> int:
    """`knowledge dispute ID --reason "…"`."""
    ws = open_workspace()
    act = review.dispute(ws, rid, reason)
    prebuilt.refresh(ws)
    say(f"{rid} disputed by {act.by}: every reader marks it until a person runs `majordomus knowledge "
        f"reverify {rid} < evidence` or `majordomus knowledge retire {rid} --reason …`")
    return OK


def check(as_json: bool) -> int:
    """`knowledge check [--json]`: exit 10 when any finding is blocking, 0 otherwise."""

    ws = open_workspace()
    report = integrity.run(ws)
    # it read every record and session record: one rewritten in place (its folder's stamp
    # unchanged) is caught up, the branch a session record places the queue on too
    store_index.of(ws).refresh([ws.candidates, ws.curated, ws.outbox / "candidates",
                                ws.sessions, ws.outbox / "sessions"])
    blocking = sum(1 for f in report.findings if f.blocking)
    if as_json:
        emit_json({"records": report.counters.get("records", 0), "blocking": blocking,
                   "findings": [f.as_dict() for f in report.findings]})
    else:
        for finding in report.findings:
            show(finding.line() + "\n")
        say(f"knowledge check: {report.counters.get('records', 0)} records, "
            f"{report.counters.get('references', 0)} references, {len(report.findings)} findings "
            f"({blocking} blocking)")
    if report.timing:
        say("MJ_TIMING knowledge check: " + " ".join(f"{k}={v}" for k, v in report.counters.items()))
    return BLOCKING if blocking else OK
