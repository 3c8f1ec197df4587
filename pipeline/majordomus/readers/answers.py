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
    from collections.abc import Callable
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
    from majordomus.store import index as store_index

    branch = git.branch(ws.root)
    whole = agenda.whole(ws, branch) if limit is None else None
    if whole is not None:  # the whole queue as kept while the index is as it was: its ages counted now
        kept = store_index.of(ws).kept(_KEPT, whole)
        if kept is not None:
            now = time.time()
            try:
                return [{"id": rid, "title": title, "class": cls, "branch": on,
                         "age_minutes": int(max(0.0, now - since) // 60) if since is not None else None,
                         "age_source": source, "age_detail": detail, "this_branch": here, "episode": episode,
                         "path": path, "tracked": tracked}
                        for rid, title, cls, on, since, source, detail, here, episode, path, tracked in kept[0]
                        ], int(kept[1]), list(kept[2])
            except (TypeError, ValueError, IndexError, KeyError):  # not the shape `keep` wrote: asked again
                pass
    cut = agenda.head(ws, branch, limit) if limit is not None else None  # ordered and cut in SQL
    texts: dict[str, str | None] | None = {} if cut is None else None  # every entry's kept value, in one pass
    records: list[tuple[Any, ...]] = []
    ranked = agenda.ranked(ws, branch, texts, records) if cut is None else cut[0]
    if ranked is None:  # no index (or a source class beyond the two folders): every entry read
        return _head(ws, limit, branch)
    ordered = agenda.shown(ws, ranked if limit is None else ranked[:limit], branch, texts=texts)
    total, untracked = (len(ranked), [r for r, _ in ranked if not r.tracked]) if cut is None else cut[1:]
    # `shown` keeps `ranked`'s order, an entry each; the keys as `Waiting.as_dict` orders them
    found = [{"id": c.id, "title": c.title, "class": c.cls, "branch": c.branch, "age_minutes": w.minutes,
              "age_source": w.age.source if w.age else None, "age_detail": w.age.detail if w.age else None,
              "this_branch": w.here, "episode": c.episode, "path": row.rel, "tracked": row.tracked}
             for w, (row, _) in zip(ordered, ranked) for c in (w.candidate,)]
    if whole is not None and texts is not None and agenda.pure(ranked, records, texts) \
            and agenda.whole(ws, branch) == whole:  # nothing wrote to the index while it was read
        store_index.of(ws).keep(_KEPT, whole, [[
            [e["id"], e["title"], e["class"], e["branch"], w.age.since if w.age else None, e["age_source"],
             e["age_detail"], e["this_branch"], e["episode"], e["path"], e["tracked"]]
            for e, w in zip(found, ordered)], total, [r.rel for r in untracked]])
    return found, total, [r.rel for r in untracked]


_KEPT = "queue"  # the whole queue, kept beside the index (`Index.keep`) under `agenda.whole`


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
