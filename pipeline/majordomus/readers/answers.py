"""The answers of the reader capabilities `readers/knowledge_base.py` declares: one handler per
verb, each reading through the module that owns the thing read, and `call`, which checks the
arguments against the declaration and runs the handler. Apart from the declarations so that what
only describes the readers (`majordomus openapi`, the MCP tool list, the command line's parsers)
does not import what answers them."""
from __future__ import annotations

import time

from majordomus.base.errors import REFUSED, FatalError
from majordomus.base.lean import TYPE_CHECKING

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    from collections.abc import Callable, Sequence
    from typing import Any

    from majordomus.readers.knowledge_base import Capability
    from majordomus.store.workspace import Workspace

# Each handler imports what it reads when it is called: a process that answers one reader (the
# command line's `knowledge status`, an MCP server's first call) imports that reader's modules only.


def candidates(ws: Workspace) -> list[dict[str, Any]]:
    """The review queue in review order (this branch first, oldest review age first): candidates
    with status candidate, with their branch, how long each has waited and from what, and whether
    git tracks them (an untracked one is listed and flagged: it is reviewed nowhere else)."""
    return head(ws, None)[0]


def head(ws: Workspace, limit: int | None) -> tuple[list[dict[str, Any]], int, list[str]]:
    """`candidates`, its first `limit` entries (all with None), with how many wait and the paths
    of those git does not track, in review order: the queue is counted and ordered in the knowledge
    index, and only the entries shown are decoded."""
    from majordomus.base import git
    from majordomus.knowledge import agenda

    branch = git.branch(ws.root)
    if limit is None:
        rows, total, untracked, _ = _whole(ws, branch, agenda.whole(ws, branch))
        if rows is None:  # no index (or a source class beyond the two folders): every entry read
            return _head(ws, None, branch)
        return _dicts(rows, time.time()), total, untracked
    cut = agenda.head(ws, branch, limit)  # ordered and cut in SQL
    if cut is None:
        return _head(ws, limit, branch)
    ranked, total, aside = cut
    return _dicts(_rows(agenda.shown(ws, ranked, branch), ranked), time.time()), total, [r.rel for r in aside]


_KEPT = "queue"  # the whole queue, kept beside the index (`Index.keep`) under `agenda.whole`
_SINCE = 4  # the place of an entry's review age's start in a row of `_whole` (its age_minutes' in a dict)


def _whole(ws: Workspace, branch: str | None, whole: list[Any] | None
           ) -> tuple[list[list[Any]] | None, int, list[str], bool]:
    """The whole queue in review order as rows (`_rows`: when each entry's age began, not its
    minutes), how many wait, the paths of those git does not track, and whether the rows are the
    queue `whole` (`agenda.whole`) says, kept under it: from the index, or kept as the index was.
    None for the rows without the index: `_head` answers."""
    from majordomus.knowledge import agenda
    from majordomus.store import index as store_index

    if whole is not None:  # the whole queue as kept while the index is as it was
        kept = store_index.of(ws).kept(_KEPT, whole)
        try:
            if _fits(kept[0]):
                return kept[0], int(kept[1]), list(kept[2]), True
        except (TypeError, ValueError, IndexError, KeyError):  # not the shape `keep` wrote: asked again
            pass
    texts: dict[str, str | None] = {}  # every entry's kept value, in one pass
    records: list[tuple[Any, ...]] = []
    ranked = agenda.ranked(ws, branch, texts, records)
    if ranked is None:
        return None, 0, [], False
    rows = _rows(agenda.shown(ws, ranked, branch, texts=texts), ranked)
    untracked = [r.rel for r, _ in ranked if not r.tracked]
    ours = whole is not None and agenda.pure(ranked, records, texts) and agenda.whole(ws, branch) == whole
    if ours:  # nothing wrote to the index while it was read
        store_index.of(ws).keep(_KEPT, whole, [rows, len(ranked), untracked])
    return rows, len(ranked), untracked, ours


def _rows(ordered: list[Any], ranked: Sequence[tuple[Any, Any]]) -> list[list[Any]]:
    """`shown`'s entries (`ranked`'s rows, in order) as rows: a dict's values, in `Waiting.as_dict`'s
    order, the start of the entry's review age in place of its minutes."""
    # `shown` keeps `ranked`'s order, an entry each
    return [[c.id, c.title, c.cls, c.branch, w.age.since if w.age else None, w.age.source if w.age else None,
             w.age.detail if w.age else None, w.here, c.episode, row.rel, row.tracked]
            for w, (row, _) in zip(ordered, ranked) for c in (w.candidate,)]


def _fits(rows: Any) -> bool:
    """Whether `rows` are rows as `_rows` makes them (a kept file not of that shape is asked again)."""
    return type(rows) is list and all(type(r) is list and len(r) == 11 and (
        r[_SINCE] is None or type(r[_SINCE]) in (int, float)) for r in rows)


def _dicts(rows: list[list[Any]], now: float | None) -> list[dict[str, Any]]:
    """`candidates`' entries of `rows` (`_rows`), each one's minutes waited counted at `now`; with
    None, each age_minutes `_MARK` (`encoded`)."""
    return [{"id": rid, "title": title, "class": cls, "branch": on,
             "age_minutes": _MARKED if now is None else
             int(max(0.0, now - since) // 60) if since is not None else None,
             "age_source": source, "age_detail": detail, "this_branch": here, "episode": episode,
             "path": path, "tracked": tracked}
            for rid, title, cls, on, since, source, detail, here, episode, path, tracked in rows]


_MARKED = -7303957717161520341  # an age_minutes no entry has: where `encoded` writes each one's minutes
_MARK = b"%d" % _MARKED
_ENCODED = 1  # of the bytes `encoded` keeps: raise it when an encoder it is given changes


def encoded(ws: Workspace, name: str, encode: Callable[[list[dict[str, Any]]], bytes | None], times: int
            ) -> bytes | list[dict[str, Any]]:
    """`candidates` as `encode` writes it (the MCP server's line, the command line's `--json`),
    else (`encode` answers None, or writes the mark another number of times) the entries for the
    caller to write. The bytes are kept beside the index (`Index.keep_bytes`, as `name`) under the
    key the whole queue is kept under (`agenda.whole`), with when each entry's review age began and
    where its minutes go: a reader asking again of an index nothing wrote to reads one file and
    writes each entry's minutes into it, counted now; nothing is decoded or encoded. `times`: how
    many times `encode` writes each entry's age_minutes (`_MARKED`, as JSON writes an int)."""
    from majordomus.base import git
    from majordomus.knowledge import agenda
    from majordomus.store import index as store_index

    branch = git.branch(ws.root)
    whole = agenda.whole(ws, branch)
    key = None if whole is None else [name, _ENCODED, *whole]
    kept = None if key is None else store_index.of(ws).kept_bytes(name, key)
    if kept is not None and _holes(kept[0]):
        (starts, lengths), blob = kept
        cut = _pieces(blob, lengths)
        if cut is not None and len(cut) == len(starts) * times + 1:
            return _filled(cut, starts, times, time.time())
    rows, _, _, ours = _whole(ws, branch, whole)
    if rows is None:
        return _head(ws, None, branch)[0]
    line = encode(_dicts(rows, None)) if rows else None
    pieces = None if line is None else line.split(_MARK)
    if line is None or pieces is None or len(pieces) != len(rows) * times + 1:
        return _dicts(rows, time.time())
    starts = [row[_SINCE] for row in rows]
    if ours and key is not None:
        store_index.of(ws).keep_bytes(name, key, [starts, list(map(len, pieces))], [line])
    return _filled(pieces, starts, times, time.time())


def _holes(value: Any) -> bool:
    """Whether `value` is what `encoded` keeps beside its bytes: [each entry's start, each piece's length]."""
    return type(value) is list and len(value) == 2 and type(value[0]) is list and type(value[1]) is list \
        and all(s is None or type(s) in (int, float) for s in value[0]) and all(type(n) is int for n in value[1])


def _pieces(blob: memoryview, lengths: list[int]) -> list[memoryview] | None:
    """`blob` cut at each mark, as `bytes.split` would (pieces `lengths` long), not copied; None
    when the lengths do not cut it so."""
    pieces, at, size = [], 0, len(_MARK)
    for n in lengths:
        if n < 0:
            return None
        pieces.append(blob[at:at + n])
        at += n + size
    return pieces if at - size == len(blob) else None


def _filled(pieces: Sequence[bytes | memoryview], starts: list[float | None], times: int, now: float) -> bytes:
    """`pieces` joined by the minutes waited at `now` since the start of each entry's review age
    (`starts`, in order, `times` over: one fewer than the pieces)."""
    ages = [b"null" if since is None else b"%d" % int(max(0.0, now - since) // 60) for since in starts] * times
    out: list[bytes | memoryview] = [b""] * (len(pieces) + len(ages))
    out[0::2], out[1::2] = pieces, ages
    return b"".join(out)


def _head(ws: Workspace, limit: int | None, branch: str | None) -> tuple[list[dict[str, Any]], int, list[str]]:
    """`head` from the files and git's listing, every entry read and ordered."""
    from majordomus.knowledge import agenda, queue
    from majordomus.store import listing as store

    listed = store.listing(ws)
    entries = {e.file: e for e in listed.of("candidates") if e.readable}
    # a reviewed record back at `candidate` (two clones' reviewers disagreed) waits for a person too
    contested = store.Store(tuple(listed.of("curated")))
    entries.update({e.file: e for e, status, _ in store.summaries(ws, contested, []) if status == "candidate"})
    waiting = queue.waiting(ws, paths=list(entries))
    ordered = agenda.ordered(ws, waiting, branch) if waiting else []
    untracked = [entries[w.candidate.path].rel for w in ordered if not entries[w.candidate.path].tracked]
    return [{"id": w.candidate.id, "title": w.candidate.title, "class": w.candidate.cls,
             "branch": w.candidate.branch, **w.as_dict(), "episode": w.candidate.episode,
             "path": entries[w.candidate.path].rel, "tracked": entries[w.candidate.path].tracked}
            for w in (ordered if limit is None else ordered[:limit])], len(ordered), untracked


def record(ws: Workspace, id: str) -> dict[str, Any]:  # noqa: A002 - the parameter's declared name
    """One record, parsed, looked up among the files the source classes list."""
    from majordomus.base import git
    from majordomus.base.errors import unknown
    from majordomus.base.ids import check_id
    from majordomus.knowledge import agenda, currency, provenance, queue
    from majordomus.store import listing as store
    from majordomus.store import records

    check_id(id, "id")
    entry = store.find(ws, id)
    if entry is None:
        raise unknown(f"no knowledge record {id!r} under candidates/ or curated/: "
                      "`majordomus knowledge candidates` lists the candidates")
    meta: Any = None
    body: str | None = None
    problem: str | None = None
    try:
        loaded = store.load(ws, entry)
        meta, body = store.jsonable(loaded.meta), loaded.body
    except records.RecordError as exc:
        problem = f"{exc} (run `majordomus knowledge check`)"
    refs = [r.as_dict() for r in provenance.resolve(ws, meta)] if isinstance(meta, dict) else []
    review = None
    if entry.source == "candidates" and isinstance(meta, dict) and meta.get("status", "candidate") == "candidate":
        (one,) = queue.waiting(ws, paths=[entry.file]) or (None,)
        if one is not None:
            (w,) = agenda.ordered(ws, [one], git.branch(ws.root))
            review = {**w.as_dict(), "branch": one.branch, "episode": one.episode}
    state = None
    if entry.source == "curated" and isinstance(meta, dict) and meta.get("status") == "verified":
        state = currency.one(ws, entry.path)
    return {"id": entry.id, "source": entry.source, "path": entry.rel, "tracked": entry.tracked,
            "meta": meta, "body": body, "problem": problem, "references": refs, "review": review,
            "currency": state.as_dict() if state is not None else None}


def status(ws: Workspace) -> dict[str, Any]:
    """Counts, queue, last derivation, writer freshness."""
    from majordomus.readers.status import status as answer

    return answer(ws)


def search(ws: Workspace, text: str = "", **filters: str) -> list[dict[str, Any]]:
    """Records of both folders whose title or body holds every word of `text`, a verified one with
    its currency."""
    from majordomus.knowledge.search import search as find_records

    hits = find_records(ws, text, filters.get("class"), filters.get("status"))
    judged = {h["id"] for h in hits if h["status"] == "verified" and h["source"] == "curated"}
    states = {}
    if judged:  # the verified hits alone judged (as among all of them), the other records not read
        from majordomus.knowledge import currency

        states = currency.among(ws, judged)
    for hit in hits:
        state = states.get(hit["id"]) if hit["status"] == "verified" and hit["source"] == "curated" else None
        hit["currency"] = state.as_dict() if state is not None else None
    return hits


# handler(ws, **parameters) -> a value the capability's result schema admits, by verb
HANDLERS: dict[str, Callable[..., Any]] = {"candidates": candidates, "record": record, "status": status,
                                           "search": search}


def call(ws: Workspace, capability: Capability, arguments: dict[str, Any]) -> Any:
    """Run `capability` with `arguments` checked against its declared parameters."""
    declared = {p.name: p for p in capability.parameters}
    extra = sorted(set(arguments) - set(declared))
    if extra:
        raise FatalError(f"{capability.name} takes no parameter {', '.join(map(repr, extra))} "
                         f"(its parameters: {', '.join(declared) or 'none'})", REFUSED)
    for param in capability.parameters:
        value = arguments.get(param.name)
        if value is None and param.required:
            raise FatalError(f"{capability.name} needs the parameter {param.name!r} ({param.summary})", REFUSED)
        if value is not None and param.schema.get("type") == "string" and not isinstance(value, str):
            raise FatalError(f"{capability.name}: {param.name} must be a string, not {value!r}", REFUSED)
        if value is not None and "enum" in param.schema and value not in param.schema["enum"]:
            raise FatalError(f"{capability.name}: {param.name} {value!r} refused: use one of "
                             f"{', '.join(param.schema['enum'])}", REFUSED)
    return HANDLERS[capability.verb](ws, **{k: v for k, v in arguments.items() if v is not None})
