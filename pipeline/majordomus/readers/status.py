"""`knowledge_base.status`: counts by status and class, the review queue and its age, the last
derivation, and whether the writer is fresh — from the store git lists, the ledger's facts (the knowledge index),
the policy, and `pipeline.freshness.judge`, the judgement the rule knowledge-observed makes.

Review age is the age of the queue entry, not of the evidence (seed 001), measured by
`pipeline.accumulation.review_ages` — the same measure the rule candidates-reviewed takes — and
the answer says which source it used (ledger, commit or date).
"""
from __future__ import annotations

import os
import time
from collections import Counter
from typing import Any

from majordomus.knowledge import accumulation, agenda, currency, freshness
from majordomus.knowledge import queue as candidates
from majordomus.store import listing as kstore
from majordomus.store.workspace import Workspace


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def status(ws: Workspace, now: float | None = None) -> dict[str, Any]:
    """The status answer (its JSON Schema is declared in `pipeline.knowledge_base`)."""

    now = time.time() if now is None else now
    listed = kstore.listing(ws)
    by_status: Counter[str] = Counter()
    by_class: Counter[str] = Counter()
    unreadable: list[dict[str, str]] = []
    for _entry, status_of, class_of in kstore.summaries(ws, listed, unreadable):
        by_status[status_of] += 1
        by_class[class_of] += 1

    facts = accumulation.facts(ws)  # the ledger's facts, from the knowledge index: no pass over it
    verdict = freshness.judge(ws, facts.freshness_lines(), now=now)
    queue = _waiting(ws, listed, facts)
    max_age = int(ws.policy["knowledge.candidate_max_age_minutes"])
    max_files = int(ws.policy["knowledge.candidates_max_files"])
    ages = sorted(((max(0.0, (now - age.since) / 60.0), rid, age) for rid, age in queue if age is not None),
                  key=lambda a: (-a[0], a[1]))
    oldest = None
    if ages:
        minutes, rid, age = ages[0]
        oldest = {"id": rid, "age_minutes": int(minutes), "since": _iso(age.since), "source": age.source,
                  "detail": age.detail}
    last = verdict.last_derived
    return {
        "records": len(listed.entries),
        "by_status": dict(sorted(by_status.items())),
        "by_class": dict(sorted(by_class.items())),
        "by_source": {name: len(listed.of(name)) for name in sorted({e.source for e in listed.entries})},
        "unreadable": unreadable,
        "untracked": [e.rel for e in listed.untracked],
        "queue": {
            "length": len(queue),
            "max_files": max_files,
            "over_cap": len(queue) > max_files,
            "max_age_minutes": max_age,
            "oldest": oldest,
            "overdue": [rid for minutes, rid, _ in ages if minutes > max_age],
        },
        "last_derivation": None if last is None else {
            "ts": last.ts, "episode": last.get("episode") if isinstance(last.get("episode"), str) else None,
            "written": _count(last.get("written")), "unchanged": _count(last.get("unchanged")),
            "skipped": _count(last.get("skipped"))},
        "writer": {"judged": verdict.judged, "fresh": verdict.fresh, "reason": verdict.reason,
                   "episode": verdict.episode,
                   "stale_minutes": int(ws.policy["session.freshness.stale_minutes"])},
        "currency": currencies(ws),
    }


def _waiting(ws: Workspace, listed: kstore.Store, facts: Any) -> list[tuple[str, accumulation.Age | None]]:
    """(id, review age) of each candidate of candidates/ waiting for review: counted in the knowledge
    index (no record's values decoded, no branch placed), else read from the files."""
    paths = {e.file: e for e in listed.of("candidates") if e.readable}
    folder = os.fspath(ws.candidates)
    rows = agenda.dated(ws, paths) if all(e.split()[0] == folder for e in paths.values()) else None
    if rows is not None:
        return [(r.id, r.age) for r in rows]
    queue = candidates.waiting(ws, paths=list(paths))
    measured = accumulation.review_ages(ws, [c.path for c in queue], found=facts)
    return [(c.id, measured.get(c.path)) for c in queue]


def currencies(ws: Workspace) -> dict[str, Any]:
    """The verified records counted by currency, and those that may be stale or are disputed."""
    found, states = currency.verified(ws)
    counts = Counter("disputed" if s.dispute is not None else s.state for s in states.values())
    return {**{name: counts.get(name, 0) for name in ("current", "may_be_stale", "unknown", "disputed")},
            "attention": [r.id for r in found if states[r.id].stale or states[r.id].dispute is not None]}


def _count(value: Any) -> int:
    """A count from a ledger line: a whole number, or 0 when the line carries none (or junk)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
