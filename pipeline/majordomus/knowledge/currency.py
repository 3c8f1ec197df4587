"""Is a verified record still current? Judged at read time from git, for every reader of verified
knowledge (docs/CURRENCY.md).

A record's anchor commit is the commit of its newest verification (a review `promoted` or
`reverified`) that this clone has. It *may be stale* when one of its anchored paths was modified,
deleted or renamed by a commit after the anchor commit up to HEAD; it is *current* when none was
(and always when it has no anchored paths); *unknown* when no verification commit is here (rebased
away, a shallow clone) or its anchor is not in HEAD's history; *disputed* when a
`knowledge.disputed` ledger line names it after its newest review.

Cost: one `git.history` walk from the oldest anchor commit to HEAD (`knowledge/anchored.py`)
answers every record, after one `git.present` of the verification commits. The answer is kept in
`.ai/local/state/currency.cache.json` with the HEAD it holds for: at the same HEAD and the same
anchors a read is a file read; after new commits only those are walked (from the cached HEAD).
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from majordomus.base import fsio, git
from majordomus.knowledge import known
from majordomus.knowledge.known import Known
from majordomus.knowledge.verdict import Currency, disputes, fix, judged
from majordomus.store.workspace import Workspace

CACHE = "currency.cache.json"
_VERSION = 1
_KNOWN = ("current", "may_be_stale")  # states computed from a walk, so extended by the next one


def _key(rec: Known) -> str:
    return "\x1f".join(rec.anchors) + "\x1e" + "\x1f".join(rec.verified_at)


def _load(ws: Workspace) -> tuple[str | None, dict[str, list[Any]]]:
    try:
        data = json.loads(fsio.read_regular(ws.state / CACHE, 1 << 28))
    except (OSError, ValueError):
        return None, {}
    if not isinstance(data, dict) or data.get("v") != _VERSION or not isinstance(data.get("records"), dict):
        return None, {}
    head = data.get("head")
    return head if isinstance(head, str) else None, data["records"]


def _save(ws: Workspace, head: str, entries: dict[str, list[Any]]) -> None:
    try:
        fsio.atomic_write(ws.state / CACHE, json.dumps({"v": _VERSION, "head": head, "records": entries},
                                                       sort_keys=True, separators=(",", ":")), root=ws.root)
    except OSError:
        pass  # a cache that cannot be written costs time, never an answer


def of(ws: Workspace, found: Iterable[Known]) -> dict[str, Currency]:
    """Every record of `found` (verified records) with its currency, by id."""
    found = list(found)
    states = _judge(ws, found)
    marks = disputes(ws, {r.id: r.reviewed_at for r in found}) if found else {}
    return {rid: state.disputed(*marks[rid]) if rid in marks else state for rid, state in states.items()}


def _judge(ws: Workspace, found: list[Known]) -> dict[str, Currency]:
    out: dict[str, Currency] = {}
    anchored = []
    for rec in found:
        if not rec.anchors:
            out[rec.id] = Currency.unanchored()
        elif not rec.verified_at:
            out[rec.id] = Currency.unknown(None, "no review records the commit it was verified at")
        else:
            anchored.append(rec)
    if not anchored:
        return out
    try:
        head = ws.refs().head.sha
    except (OSError, git.GitError) as exc:
        return {**out, **{r.id: Currency.unknown(None, f"git could not be asked ({exc})") for r in anchored}}
    if head is None:
        return {**out, **{r.id: Currency.unknown(None, "this repository has no commit") for r in anchored}}
    cached_head, cached = _load(ws)
    entries: dict[str, list[Any]] = {}
    fresh, later = [], []
    for rec in anchored:
        hit = cached.get(rec.id)
        if isinstance(hit, list) and len(hit) == 2 and hit[0] == _key(rec) and isinstance(hit[1], dict):
            if cached_head == head:
                entries[rec.id] = hit
                continue
            if hit[1].get("state") in _KNOWN:
                later.append((rec, hit[1]))
                continue
        fresh.append(rec)
    if fresh or later:
        by_id = {r.id: r for r in anchored}
        for rid, state in judged(ws.root, head, fresh, later, cached_head or "").items():
            entries[rid] = [_key(by_id[rid]), state]
        _save(ws, head, entries)
    for rec in anchored:
        out[rec.id] = Currency.from_entry(entries[rec.id][1])
    return out



def verified(ws: Workspace) -> tuple[list[Known], dict[str, Currency]]:
    """The verified records (as `known.verified` reads them) and the currency of each."""
    found = known.verified(ws.curated, ws)
    return found, of(ws, found)


def attention(ws: Workspace) -> list[tuple[Known, Currency]]:
    """The verified records that may be stale or are disputed, by id: what `knowledge stale`, the
    rule `knowledge-stale` and the review's second queue name."""
    found, states = verified(ws)
    return [(r, states[r.id]) for r in found if states[r.id].stale or states[r.id].dispute is not None]


def listed(rec: Known, state: Currency) -> dict[str, Any]:
    """One record of `knowledge stale --json`: its id, title and class, its currency, the fix."""
    return {"id": rec.id, "title": rec.title, "class": rec.cls, **state.as_dict(), "fix": fix(rec.id)}
