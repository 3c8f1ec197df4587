"""Is a verified record still current? Judged at read time from git, for every reader of verified
knowledge (docs/CURRENCY.md).

A record's anchor commit is the commit of its newest verification (a review `promoted` or
`reverified`) that this clone has. It *may be stale* when one of its anchored paths was modified,
deleted or renamed by a commit after the anchor commit up to HEAD; it is *current* when none was
(and always when it has no anchored paths); *unknown* when no verification commit is here (rebased
away, a shallow clone) or its anchor is not in HEAD's history; *disputed* when a
`knowledge.disputed` ledger line names it after its newest review.

Cost: one `git.history` walk from the oldest anchor commit to HEAD (`knowledge/anchored.py`)
answers every record, after one `git.present` of the verification commits. What the walk found is
kept in `.ai/local/state/currency.cache.json`, once for all records: the commits that touched an
anchored path, each anchored path's changes, and the ancestry of the verification commits and of
HEAD. At the same HEAD a read is that file (a few hundred kilobytes at 20,000 records) and a few
integer operations a record; after HEAD moved forward, one `git.history` of the new commits alone
extends it; a record whose anchored paths or verification commits it has not seen, or a HEAD that
is not a descendant of the cached one, has it rebuilt. The file names the folder it was written
in (`filecache.home`): a clone knows its own commits, never the inode of this checkout's
`.ai/local/state/`, so walks a repository commits there are never believed.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING, json, pattern
from majordomus.base import fsio, git
from majordomus.knowledge import known
from majordomus.knowledge.anchored import Walk
from majordomus.knowledge.known import Known
from majordomus.knowledge.verdict import Currency, Walked, disputes, fix, walked
from majordomus.store.filecache import home, stamp
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:
    from typing import Any

CACHE = "currency.cache.json"
_VERSION = 6
_SHA = pattern(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def _load(ws: Workspace, head: str) -> tuple[Walked, bool] | None:
    """The cached walks and whether they were extended: to `head` when they were made at an ancestor
    of it; None when there are none to trust (missing, another version's, a hand edit) or HEAD moved
    otherwise, or when git's history here grew under it: the clone was deepened (`.git/shallow`'s
    stamp moved) or now has a verification commit it did not have (a fetch): HEAD did not move,
    the answers did."""
    try:
        data = json.loads(fsio.read_regular(ws.state / CACHE, 1 << 28))
        if not isinstance(data, dict) or data.get("v") != _VERSION or data.get("home") != home(ws.state):
            return None
        if data.get("cut") != _cut(ws):
            return None
        walks = [Walk.from_kept(w) for w in data["walks"]]
        cached = Walked(walks, frozenset(map(str, data["paths"])), frozenset(map(str, data["gone"])),
                        frozenset(map(str, data["away"])))
        was = str(data["head"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if (cached.gone or cached.away) and git.present(ws.root, sorted(cached.gone | cached.away)).keys() != cached.away:
        return None  # a commit it did not have is here now, or one it had outside HEAD's history is gone (a
        # branch deleted and pruned): judged afresh
    if was == head:
        return cached, False
    if not walks or not _SHA().fullmatch(was):
        return None
    logged = git.history(ws.root, was, head)  # the new commits alone
    if not logged or was not in {p for c in logged for p in c.parents}:
        return None  # HEAD is not a descendant of the cached one (a reset, a rebase): walk afresh
    for walk in walks:
        if not walk.extend(logged, outside=False):
            return None
        walk.head = head
    return cached, True


def _cut(ws: Workspace) -> list[Any] | None:
    """The stamps of what the history git walks from HEAD depends on besides its commits
    (`git.history_files`: a shallow clone's cut, grafts, replace refs): a deepening fetch or a `git
    replace` moves one, HEAD unmoved. None when the git folder is not found or a stamp is too
    recent to vouch for itself (then nothing kept under it holds)."""
    files = git.history_files(ws.root)
    stamps = [stamp(f) for f in files] if files is not None else None
    return None if stamps is None or [] in stamps else stamps


def _save(ws: Workspace, head: str, found: Walked, records: list[Known]) -> None:
    keep = {c for r in records for c in r.verified_at}
    cut = _cut(ws)
    if cut is None:
        return  # what the walks saw cannot be vouched for: not kept
    data = {"v": _VERSION, "home": home(ws.state), "cut": cut,
            "head": head, "paths": sorted(found.paths), "gone": sorted(found.gone),
            "away": sorted(found.away), "walks": [w.kept(keep) for w in found.walks]}
    try:
        fsio.atomic_write(ws.state / CACHE, json.dumps(data, sort_keys=True, separators=(",", ":")), root=ws.root)
    except OSError:
        pass  # a cache that cannot be written costs time, never an answer


def of(ws: Workspace, found: Iterable[Known], save: bool = True) -> dict[str, Currency]:
    """Every record of `found` (verified records) with its currency, by id. `save`: False when
    `found` is not every verified record, so the cache of their walks is read, never cut to
    those of `found`."""
    return _of(ws, list(found), save)[0]


def _of(ws: Workspace, found: list[Known], save: bool) -> tuple[dict[str, Currency], Walked | None]:
    """`of`'s answer, and the walks it was judged from (None: none was needed or git could not say)."""
    states, by = _judge(ws, found, save)
    marks = disputes(ws, {r.id: r.reviewed_at for r in found}) if found else {}
    return {rid: state.disputed(*marks[rid]) if rid in marks else state for rid, state in states.items()}, by


def _judge(ws: Workspace, found: list[Known], save: bool) -> tuple[dict[str, Currency], Walked | None]:
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
        return out, None
    try:
        head = ws.refs().head.sha
    except (OSError, git.GitError) as exc:
        return {**out, **{r.id: Currency.unknown(None, f"git could not be asked ({exc})") for r in anchored}}, None
    if head is None:
        return {**out, **{r.id: Currency.unknown(None, "this repository has no commit") for r in anchored}}, None
    loaded = _load(ws, head)
    if loaded is not None:
        cached, extended = loaded
        same: dict[tuple[tuple[str, ...], tuple[str, ...]], Currency | None] = {}  # records verified together
        for rec in anchored:
            key = (rec.verified_at, rec.anchors)
            state = same[key] if key in same else same.setdefault(key, cached.judge(rec))
            if state is None:  # a path or a commit this cache was not walked for: walk afresh
                break
            out[rec.id] = state
        else:
            if extended and save:
                _save(ws, head, cached, anchored)
            return out, cached
    walked_now = walked(ws.root, head, anchored)
    if save:
        _save(ws, head, walked_now, anchored)
    for rec in anchored:
        state = walked_now.judge(rec)
        out[rec.id] = state if state is not None else Currency.unknown(None, "git could not place its commit")
    return out, walked_now


def verified(ws: Workspace) -> tuple[list[Known], dict[str, Currency]]:
    """The verified records (as `known.verified` reads them) and the currency of each."""
    found, states, _ = judged(ws)
    return found, states


def judged(ws: Workspace) -> tuple[list[Known], dict[str, Currency], list[list[str]]]:
    """`verified`'s answer, and the commits it was judged by besides HEAD's history: [those of the
    verification commits this clone does not have, those it has outside HEAD's history]: an answer
    kept under `history` holds while `arrived` says these are as they were."""
    found = known.verified(ws.curated, ws)
    states, by = _of(ws, found, True)
    return found, states, [sorted(by.gone), sorted(by.away)] if by is not None else [[], []]


def among(ws: Workspace, ids: Iterable[str]) -> dict[str, Currency]:
    """The currency of the verified records of the curated folder named `ids`, by id, each judged
    as `verified` judges it among all of them (as `one`): the other records are not read."""
    return of(ws, known.verified(ws.curated, ws, only=[rid + ".md" for rid in ids]), save=False)


def one(ws: Workspace, path: Path) -> Currency | None:
    """The currency of the record at `path` (`knowledge record`), judged as `verified` judges it
    among all of them; None when it is not a verified record."""
    rec = known.one(path)
    return of(ws, [rec], save=False)[rec.id] if rec is not None else None


def arrived(ws: Workspace, by: list[list[str]]) -> bool:
    """Whether this clone's commits are no longer those a judgement (`judged`) was made `by`
    ([the verification commits it did not have, those it had outside HEAD's history]): a fetch
    brought one of the first, a prune took one of the second, HEAD unmoved (one git call, only
    while there is one of either)."""
    gone, away = by
    return bool(gone or away) and git.present(ws.root, gone + away).keys() != set(away)


def history(ws: Workspace) -> list[Any] | None:
    """What the currencies of the verified records depend on besides the records and the ledger's
    disputes: the versions of what reads and judges them, HEAD (each is judged from git's history
    up to it) and the stamps of what that history depends on besides its commits (`_cut`: a shallow
    clone's cut, grafts, replace refs). None when git cannot say or a stamp is too recent to vouch
    for itself."""
    try:
        head = ws.refs().head.sha
    except (OSError, git.GitError):
        return None
    cut = _cut(ws)
    return None if head is None or cut is None else [known._VERSION, _VERSION, head, cut]


def attention(ws: Workspace) -> list[tuple[Known, Currency]]:
    """The verified records that may be stale or are disputed, by id: what `knowledge stale`, the
    rule `knowledge-stale` and the review's second queue name."""
    found, states = verified(ws)
    return [(r, states[r.id]) for r in found if states[r.id].stale or states[r.id].dispute is not None]


def listed(rec: Known, state: Currency) -> dict[str, Any]:
    """One record of `knowledge stale --json`: its id, title and class, its currency, the fix."""
    return {"id": rec.id, "title": rec.title, "class": rec.cls, **state.as_dict(), "fix": fix(rec.id)}
