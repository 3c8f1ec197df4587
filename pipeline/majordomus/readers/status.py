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

from majordomus.base.lean import TYPE_CHECKING
from majordomus.knowledge import accumulation, agenda, currency, freshness
from majordomus.knowledge import queue as candidates
from majordomus.store import index as store_index
from majordomus.store import listing as kstore
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    from typing import Any


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def status(ws: Workspace, now: float | None = None) -> dict[str, Any]:
    """The status answer (its JSON Schema is declared in `pipeline.knowledge_base`)."""

    now = time.time() if now is None else now
    tally = kstore.tally(ws)  # counted in the knowledge index, else below from every entry
    facts = accumulation.facts(ws)  # the ledger's facts, from the knowledge index: no pass over it
    aged = agenda.ages(ws) if tally is not None else None
    if tally is None or aged is None:
        tally, queue = _counted(ws, facts)
    else:
        queue = aged
    verdict = freshness.judge(ws, facts.freshness_lines(), now=now)
    max_age = int(ws.policy["knowledge.candidate_max_age_minutes"])
    max_files = int(ws.policy["knowledge.candidates_max_files"])
    # oldest first, then by id, then as listed (tuples compared natively: no key called an entry)
    ages = sorted((-max(0.0, (now - age.since) / 60.0), rid, i, age)
                  for i, (rid, age) in enumerate(queue) if age is not None)
    oldest = None
    if ages:
        minutes, rid, _, age = ages[0]
        minutes = -minutes
        oldest = {"id": rid, "age_minutes": int(minutes), "since": _iso(age.since), "source": age.source,
                  "detail": age.detail}
    last = verdict.last_derived
    return {
        "records": tally.records,
        "by_status": dict(sorted(tally.by_status.items())),
        "by_class": dict(sorted(tally.by_class.items())),
        "by_source": dict(sorted(tally.by_source.items())),
        "unreadable": tally.unreadable,
        "untracked": tally.untracked,
        "queue": {
            "length": len(queue),
            "max_files": max_files,
            "over_cap": len(queue) > max_files,
            "max_age_minutes": max_age,
            "oldest": oldest,
            "overdue": [rid for minutes, rid, _, _ in ages if -minutes > max_age],
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


def _counted(ws: Workspace, facts: Any) -> tuple[kstore.Tally, list[tuple[str, accumulation.Age | None]]]:
    """The store's tally and (id, review age) of each candidate waiting for review, from every entry
    of git's listing and every record's summary: what the knowledge index answers when it can."""
    listed = kstore.listing(ws)
    by_status: Counter[str] = Counter()
    by_class: Counter[str] = Counter()
    unreadable: list[dict[str, str]] = []
    for _entry, status_of, class_of in kstore.summaries(ws, listed, unreadable):
        by_status[status_of] += 1
        by_class[class_of] += 1
    tally = kstore.Tally(len(listed.entries), {name: len(listed.of(name)) for name in {e.source for e in listed.entries}},
                         dict(by_status), dict(by_class), [e.rel for e in listed.untracked], unreadable)
    paths = {e.file: e for e in listed.of("candidates") if e.readable}
    folder = os.fspath(ws.candidates)
    rows = agenda.dated(ws, paths) if all(e.split()[0] == folder for e in paths.values()) else None
    if rows is not None:
        return tally, [(r.id, r.age) for r in rows]
    queue = candidates.waiting(ws, paths=list(paths))
    measured = accumulation.review_ages(ws, [c.path for c in queue], found=facts)
    return tally, [(c.id, measured.get(c.path)) for c in queue]


def currencies(ws: Workspace) -> dict[str, Any]:
    """The verified records counted by currency, and those that may be stale or are disputed: kept
    beside the index (`_KEPT`) under what it depends on (`_judged`) while that holds."""
    key = _judged(ws)
    if key is not None:
        kept: dict[str, Any] = store_index.of(ws).kept(_KEPT, key)
        if _counts_fit(kept) and not currency.arrived(ws, kept["by"]):  # a fetch brought none of the
            # verification commits it was judged without, a prune removed none it had (HEAD unmoved)
            return {name: kept[name] for name in (*_STATES, "attention")}
    found, states, by = currency.judged(ws)
    counts = Counter("disputed" if s.dispute is not None else s.state for s in states.values())
    answer = {**{name: counts.get(name, 0) for name in _STATES},
              "attention": [r.id for r in found if states[r.id].stale or states[r.id].dispute is not None]}
    if key is not None and _judged(ws) == key:  # nothing wrote to the index while it was read
        store_index.of(ws).keep(_KEPT, key, {**answer, "by": by})
    return answer


_KEPT = "currencies"  # `currencies`' answer, kept beside the index (`Index.keep`)
_JUDGED = 4  # of what `_judged` keys and `currencies` keeps: raise it when they change
_STATES = ("current", "may_be_stale", "unknown", "disputed")


def _judged(ws: Workspace) -> list[Any] | None:
    """What `currencies` depends on: the index's state once the ledger's facts and the curated
    folder's rows are brought up to date (the verified records' fields, the disputes the facts
    keep; a value the view has yet to keep is a write, after which the state differs), the facts'
    tail's disputes, and git's history as the currencies read it (`currency.history`: the versions
    of what reads them, HEAD, the shallow cut, grafts and replace refs). None when the index or git
    cannot tell."""
    found = accumulation.facts(ws)  # first: brings the ledger's facts in the index up to date
    if found.db is None:
        return None
    index = store_index.of(ws)
    index.check(ws.curated)  # a file too recent to vouch for itself is written again each check: no state holds
    written = index.written()
    history = currency.history(ws)
    if written is None or history is None:
        return None
    return [_JUDGED, written, history, [list(d) for d in found.tail.disputes]]


def _counts_fit(kept: Any) -> bool:
    """Whether `kept` is an answer of `currencies` (a kept file not of that shape: judged again)."""
    return type(kept) is dict and list(kept) == [*_STATES, "attention", "by"] and all(
        type(kept[name]) is int for name in _STATES) and type(kept["attention"]) is list and set(
        map(type, kept["attention"])) <= {str} and type(kept["by"]) is list and len(kept["by"]) == 2 and all(
        type(e) is list and set(map(type, e)) <= {str} for e in kept["by"])


def _count(value: Any) -> int:
    """A count from a ledger line: a whole number, or 0 when the line carries none (or junk)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
