"""The compiled quick check says "valid" only where jsonschema, through pipeline.schema, does."""
from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from majordomus.store import schemafast
from majordomus.store.schema import record_problems

VALID: dict[str, Any] = {
    "id": "e1-0123456789ab", "kind": "knowledge/v1", "class": "convention", "status": "candidate",
    "epistemics": "decided", "title": "Tabs are refused", "date": "2026-01-02",
    "provenance": {"origin": "extracted", "derived_from": ["session:e1", "decision:t-1"]},
    "relations": [{"type": "relates_to", "target": "file:README.md"}],
}
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=12),
    st.sampled_from(["", "candidate", "verified", "knowledge/v1", "2026-02-30", "2026-01-02", "question:q",
                     "task:none", "session:e1", "../x", "e1-x", "relates_to", "fact", "authored", "a\n"]),
    st.lists(st.sampled_from(["session:e1", "question:q", "x", "file:a"]), max_size=3),
    st.just({}), st.just([]), st.just({"type": "relates_to", "target": "file:a", "extra": 1}),
)
PATHS = st.sampled_from([("id",), ("kind",), ("class",), ("status",), ("epistemics",), ("title",), ("date",),
                         ("description",), ("superseded_by",), ("bogus",), ("provenance",),
                         ("provenance", "origin"), ("provenance", "derived_from"), ("provenance", "extra"),
                         ("relations",), ("relations", 0), ("relations", 0, "type"), ("relations", 0, "target")])


def test_the_committed_schema_compiles() -> None:
    check = schemafast.compiled()
    assert check is not None and check(VALID) and record_problems(VALID) == []


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.tuples(PATHS, st.one_of(VALUES, st.just("__delete__"))), max_size=3))
def test_quick_valid_implies_valid(changes: list[tuple[tuple[Any, ...], Any]]) -> None:
    meta = copy.deepcopy(VALID)
    for path, value in changes:
        node: Any = meta
        try:
            for step in path[:-1]:
                node = node[step]
            if value == "__delete__":
                del node[path[-1]]
            else:
                node[path[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    check = schemafast.compiled()
    assert check is not None
    if check(meta):
        assert record_problems(meta) == [], meta
    assert schemafast.problems(meta) == record_problems(meta)
