"""`knowledge_base.status`: counts by status and class, the review queue and its age, the last
derivation, and whether the writer is fresh — from the store git lists, the ledger (one pass),
the policy, and `pipeline.freshness.judge`, the judgement the rule knowledge-observed makes.

Review age is the age of the queue entry, not of the evidence (seed 001): measured from the
oldest `knowledge.derived` line whose `paths` name the file, else from the commit that added
the file, else from the record's `date` — and the answer says which source it used.
"""
from __future__ import annotations

import calendar
import time
from collections import Counter
from typing import Any

from pipeline.readers import store as kstore
from pipeline.workspace import Workspace


def _epoch(ts: str, fmt: str = "%Y-%m-%dT%H:%M:%SZ") -> float | None:
    try:
        return float(calendar.timegm(time.strptime(ts, fmt)))
    except (ValueError, TypeError):
        return None


def _iso(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def derived_at(lines: list[Any]) -> dict[str, float]:
    """File name -> time of the oldest knowledge.derived line whose `paths` name it. Matched by
    file name, because the outbox move changes the folder and never the name (the id)."""
    found: dict[str, float] = {}
    for line in lines:
        if line.event != "knowledge.derived":
            continue
        paths = line.get("paths")
        when = _epoch(line.ts)
        if not isinstance(paths, list) or when is None:
            continue
        for path in paths:
            if isinstance(path, str):
                found.setdefault(path.rsplit("/", 1)[-1], when)
    return found


def added_at(ws: Workspace, pathspec: str) -> dict[str, float]:
    """File name -> commit time of the commit that added it: one `git log` for the whole class."""
    from pipeline import git

    out = git.run(ws.root, "log", "--diff-filter=A", "--no-renames", "--format=%x1e%ct",
                  "--name-only", "--", pathspec, check=False)
    found: dict[str, float] = {}
    for chunk in out.split("\x1e")[1:]:  # newest first: the last word on a name is its oldest add
        head, *names = [l for l in chunk.splitlines() if l.strip()]
        for name in names:
            found[name.rsplit("/", 1)[-1]] = float(head)
    return found


def queue_age(name: str, record_date: Any, derived: dict[str, float], added: dict[str, float],
              now: float) -> tuple[float, str, str] | None:
    """(minutes waiting, since when, which source) for one candidate file, or None."""
    for source, table in (("ledger", derived), ("commit", added)):
        if name in table:
            return max(0.0, (now - table[name]) / 60.0), _iso(table[name]), source
    when = _epoch(str(record_date)[:10], "%Y-%m-%d") if record_date else None
    if when is None:
        return None
    return max(0.0, (now - when) / 60.0), _iso(when), "date"


def ledger_lines(ws: Workspace) -> list[Any]:
    """The session.closed and knowledge.derived lines, in order: one pass, a substring pre-filter
    before any JSON is parsed."""
    from pipeline.ledger import parse_line

    found = []
    for number, text in ws.ledger.raw_lines():
        if '"session.closed"' in text or '"knowledge.derived"' in text:
            line = parse_line(number, text)
            if line is not None and line.event in ("session.closed", "knowledge.derived"):
                found.append(line)
    return found


def status(ws: Workspace, now: float | None = None) -> dict[str, Any]:
    """The status answer (its JSON Schema is declared in `pipeline.knowledge_base`)."""
    from pipeline import candidates, freshness, records

    now = time.time() if now is None else now
    listed = kstore.listing(ws)
    by_status: Counter[str] = Counter()
    by_class: Counter[str] = Counter()
    dates: dict[Any, Any] = {}
    unreadable = []
    for entry in listed.entries:
        try:
            meta = kstore.load(ws, entry).meta
        except records.RecordError as exc:
            unreadable.append({"id": entry.id, "path": entry.rel, "problem": str(exc)})
            continue
        by_status[str(meta.get("status", "(none)"))] += 1
        by_class[str(meta.get("class", "(none)"))] += 1
        dates[entry.path] = meta.get("date")

    lines = ledger_lines(ws)
    verdict = freshness.judge(ws, lines, now=now)
    paths = [e.path for e in listed.of("candidates") if e.readable]
    queue = candidates.waiting(ws, paths=paths)
    spec = kstore.pathspecs(ws).get("candidates")
    derived = derived_at(lines)
    added = added_at(ws, spec) if spec and queue else {}
    max_age = int(ws.policy["knowledge.candidate_max_age_minutes"])
    max_files = int(ws.policy["knowledge.candidates_max_files"])
    ages = []
    for item in queue:
        age = queue_age(item.path.name, dates.get(item.path), derived, added, now)
        if age is not None:
            ages.append((age, item.id))
    ages.sort(key=lambda a: (-a[0][0], a[1]))
    oldest = None
    if ages:
        (minutes, since, source), rid = ages[0]
        oldest = {"id": rid, "age_minutes": int(minutes), "since": since, "source": source}
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
            "overdue": [rid for (minutes, _, _), rid in ages if minutes > max_age],
        },
        "last_derivation": None if last is None else {
            "ts": last.ts, "episode": last.get("episode"), "written": last.get("written", 0),
            "unchanged": last.get("unchanged", 0), "skipped": last.get("skipped", 0)},
        "writer": {"judged": verdict.judged, "fresh": verdict.fresh, "reason": verdict.reason,
                   "episode": verdict.episode,
                   "stale_minutes": int(ws.policy["session.freshness.stale_minutes"])},
    }
