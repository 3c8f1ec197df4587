"""majordomus knowledge promote | reject | check: the review acts and the integrity validator."""
from __future__ import annotations

import sys

from majordomus.base.errors import BLOCKING, OK
from majordomus.base.output import emit_json, say, show
from majordomus.cli.commands import Subparsers
from majordomus.knowledge import integrity, review
from majordomus.store.records import CLASSES
from majordomus.store.workspace import open_workspace


def review_verbs(verbs: Subparsers) -> None:
    """Add the acts and the check to `majordomus knowledge`'s verbs."""

    p = verbs.add_parser("promote", help="promote a candidate to verified, evidence on stdin",
                         description="Move a candidate to curated/ with status verified; the evidence "
                         "read from standard input is kept under '# Evidence'. Refused (exit 4, nothing "
                         "moved): empty evidence, a transcript marker, an id that is not a candidate.")
    p.add_argument("id", help="the candidate's id (its file name without .md)")
    p.add_argument("--class", dest="cls", choices=CLASSES, help="the class you judge it to be")
    p.set_defaults(handler=lambda a: promote(a.id, a.cls))
    r = verbs.add_parser("reject", help="reject a candidate (superseded, with a reason or a replacement)",
                         description="Rewrite a candidate in place as superseded: the reason under "
                         "'# Rejected', and/or superseded_by naming the record that replaces it.")
    r.add_argument("id", help="the candidate's id")
    r.add_argument("--reason", help="why it is rejected, in your words")
    r.add_argument("--by", dest="by_id", metavar="ID", help="the record that replaces it")
    r.set_defaults(handler=lambda a: reject(a.id, a.reason, a.by_id))
    c = verbs.add_parser("check", help="validate every record (exit 10 on a blocking finding)",
                         description="The integrity validator: schema, ids, statuses, transcript markers, "
                         "and every reference resolved against the ledger, the session records and git.")
    c.add_argument("--json", action="store_true")
    c.set_defaults(handler=lambda a: check(a.json))


def promote(rid: str, cls: str | None) -> int:
    """`knowledge promote ID [--class C] < evidence`."""

    ws = open_workspace()
    if sys.stdin is None or sys.stdin.isatty():
        say("reading the evidence from standard input (end it with Ctrl-D)")
    evidence = sys.stdin.buffer.read() if sys.stdin is not None else b""  # bytes: checked as text there
    act = review.promote(ws, rid, evidence, cls)
    under = f"episode {act.episode}" if act.episode else "terminal (no episode open)"
    show(ws.rel(act.path) + "\n")
    say(f"promoted {act.id} to {ws.rel(act.path)} (verified, under {under})")
    return OK


def reject(rid: str, reason: str | None, by_id: str | None) -> int:
    """`knowledge reject ID --reason "…" [--by OTHER]`."""

    ws = open_workspace()
    act = review.reject(ws, rid, reason, by_id)
    what = f"superseded by {by_id}" if by_id else "rejected"
    show(ws.rel(act.path) + "\n")
    say(f"{act.id} {what} in place ({ws.rel(act.path)})")
    return OK


def check(as_json: bool) -> int:
    """`knowledge check [--json]`: exit 10 when any finding is blocking, 0 otherwise."""

    ws = open_workspace()
    report = integrity.run(ws)
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
