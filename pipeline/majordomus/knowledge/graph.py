"""The knowledge graph, read from the records' front matter: `derived_from`, `relations` and
`superseded_by`. A record is the node `knowledge:<id>` on both sides of an edge: a relation's
`knowledge:<id>` target, or a `superseded_by` id. A target only the ledger or git can resolve
(`session:`, `decision:`, `task:`, `commit:`, `file:`, `issue:`, `test:`) is external to the graph:
it is listed as external and never reported as dangling — resolving it is the integrity check's
job. Only a record-to-record edge can dangle: a target that names no record in the store.

The graph admits exactly what the schema admits (both read the allow-list generated from the
proto): a reference the schema refuses — `knowledge:` in `derived_from`, which names ledger
objects and commits only, or a `question:` — is drawn as `refused`, never as an edge between
records.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from majordomus.base.errors import unknown
from majordomus.base.ids import check_id
from majordomus.store import listing as kstore
from majordomus.store.records import RELATION_TARGET, reference_problem
from majordomus.store.workspace import Workspace

TYPES = ("derived_from", "relates_to", "superseded_by")
NODE = "knowledge"


class Edge(NamedTuple):  # a NamedTuple: `dataclasses` costs a reader ~15 ms of imports
    source: str  # knowledge:<id>
    type: str
    target: str  # knowledge:<id>, or the external reference as written
    kind: str  # record | external | dangling | refused

    def as_dict(self) -> dict[str, str]:
        return {"from": self.source, "type": self.type, "to": self.target, "target": self.kind}


def _node(value: str, field: str | None) -> tuple[str | None, bool]:
    """(`knowledge:<id>` when `value` names a record, else None; whether the schema refuses it).
    `field`: the allow-list's name of the field (`relations.target`), None for derived_from, or
    `superseded_by`, whose value is a bare id."""
    if field == "superseded_by":
        return f"{NODE}:{value}", False
    if reference_problem(value, field):
        return None, True
    prefix, _, rest = value.partition(":")
    return (f"{NODE}:{rest}" if prefix == NODE else None), False


def _targets(meta: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """(edge type, target, the field as the allow-list names it) of every edge of a record."""
    found: list[tuple[str, str, str | None]] = []
    prov = meta.get("provenance")
    refs = prov.get("derived_from") if isinstance(prov, dict) else None
    for ref in refs if isinstance(refs, list) else []:
        if isinstance(ref, str) and ref:
            found.append(("derived_from", ref, None))
    rels = meta.get("relations")
    for rel in rels if isinstance(rels, list) else []:
        if isinstance(rel, dict) and isinstance(rel.get("target"), str) and rel["target"]:
            found.append((str(rel.get("type") or "relates_to"), rel["target"], RELATION_TARGET))
    later = meta.get("superseded_by")
    for target in later if isinstance(later, list) else [later]:
        if isinstance(target, str) and target:
            found.append(("superseded_by", target, "superseded_by"))
    return found


def graph(ws: Workspace) -> tuple[list[str], list[Edge], list[dict[str, str]]]:
    """(nodes, edges, unreadable files): every record read once."""
    listed = kstore.listing(ws)
    nodes = sorted({f"{NODE}:{e.id}" for e in listed.entries})
    known = set(nodes)
    edges: list[Edge] = []
    unreadable: list[dict[str, str]] = []
    for entry, meta in kstore.readable(ws, listed, unreadable):
        source = f"{NODE}:{entry.id}"
        for kind, target, field in _targets(meta):
            node, refused = _node(target, field)
            if refused:
                edges.append(Edge(source, kind, target, "refused"))
            elif node is None:
                edges.append(Edge(source, kind, target, "external"))
            else:
                edges.append(Edge(source, kind, node, "record" if node in known else "dangling"))
    edges.sort(key=lambda e: (e.source, TYPES.index(e.type) if e.type in TYPES else 99, e.type, e.target))
    return nodes, edges, unreadable


def edges(ws: Workspace, type: str | None = None, id: str | None = None) -> dict[str, Any]:  # noqa: A002
    """The graph, filtered to one edge type and to the edges touching one record."""

    nodes, found, unreadable = graph(ws)
    if id is not None:
        node = f"{NODE}:{check_id(id, 'id')}"
        if node not in nodes:
            raise unknown(f"no knowledge record {id!r} under candidates/ or curated/: "
                          "`majordomus knowledge edges` lists the graph")
        found = [e for e in found if node in (e.source, e.target)]
        nodes = sorted({node, *(e.source for e in found),
                        *(e.target for e in found if e.kind == "record")})
    if type is not None:
        found = [e for e in found if e.type == type]
    return {"nodes": nodes, "edges": [e.as_dict() for e in found],
            "dangling": sum(1 for e in found if e.kind == "dangling"), "unreadable": unreadable}
