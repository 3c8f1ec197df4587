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
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from majordomus.base import fsio, git
from majordomus.knowledge import known
from majordomus.knowledge.known import Known
from majordomus.knowledge.verdict import STATES, Currency, disputes, fix, judged
from majordomus.store.workspace import Workspace

CACHE = "currency.cache.json"
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_VERSION = 3
_KNOWN = ("current", "may_be_stale")  # states computed from a walk, so extended by the next one


def _key(rec: Known) -> str:
    return "\x1f".join(rec.anchors) + "\x1e" + "\x1f".join(rec.verified_at)


class Cached(NamedTuple):
    """The cache file: the HEAD it holds for, each record's key (its anchors and verification
    commits), and the entries of those that are not simply current at their newest verification
    (the rest, most records, are implicit: `Currency.settled`)."""

    head: str | None
    keys: dict[str, str]
    odd: dict[str, list[Any]]


def _load(ws: Workspace) -> Cached:
    try:
        data = json.loads(fsio.read_regular(ws.state / CACHE, 1 << 28))
    except (OSError, ValueError):
        return Cached(None, {}, {})
    if not isinstance(data, dict) or data.get("v") != _VERSION or not isinstance(data.get("keys"), dict) \
            or not isinstance(data.get("odd"), dict) or not _SHA.fullmatch(str(data.get("head"))) \
            or not all(_entry_ok(e) for e in data["odd"].values()):
        return Cached(None, {}, {})  # a cache that is not what this module writes is not read
    return Cached(data["head"], data["keys"], data["odd"])


def _entry_ok(entry: Any) -> bool:
    """Whether a cached entry has the shape `Currency.entry` writes (a hand edit, another version's
    file or a truncated one is not trusted: the whole cache is then recomputed)."""
    return (type(entry) is list and len(entry) == 7 and entry[0] in STATES and type(entry[2]) is dict
            and (entry[4] is None or type(entry[4]) is list and len(entry[4]) == 2)
            and type(entry[3]) is int and type(entry[6]) is int and type(entry[5]) is str)


def _save(ws: Workspace, cached: Cached) -> None:
    try:
        fsio.atomic_write(ws.state / CACHE, json.dumps({"v": _VERSION, **cached._asdict()}, sort_keys=True,
                                                       separators=(",", ":")), root=ws.root)
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
    cached = _load(ws)
    keys = {r.id: _key(r) for r in anchored}
    fresh, later = [], []
    for rec in anchored:
        if cached.keys.get(rec.id) == keys[rec.id]:
            if cached.head == head:
                continue
            kept = cached.odd.get(rec.id)
            if kept is None or kept[0] in _KNOWN:
                later.append((rec, kept))
                continue
        fresh.append(rec)
    odd = {rid: entry for rid, entry in cached.odd.items() if rid in keys and cached.keys.get(rid) == keys[rid]}
    if fresh or later:
        by_id = {r.id: r for r in anchored}
        for rid, entry in judged(ws.root, head, fresh, later, cached.head or "").items():
            if entry == Currency.settled(by_id[rid]).entry():
                odd.pop(rid, None)
            else:
                odd[rid] = entry
        _save(ws, Cached(head, keys, odd))
    for rec in anchored:
        kept = odd.get(rec.id)
        out[rec.id] = Currency.from_entry(kept) if kept is not None else Currency.settled(rec)
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
