"""`known.relates` (through `known.Changes`) answers as its definition does, pair by pair: the
path a record names, one under the folder it names, or (an untracked folder, named with its `/`)
a path inside that folder; and `known.ordered` puts those records first within their class."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from majordomus.knowledge import known

SEGMENTS = st.sampled_from(("", "a", "b", "ab", "a.py"))
PATHS = st.lists(SEGMENTS, min_size=1, max_size=4).map("/".join)


def _definition(targets: tuple[str, ...], changed: frozenset[str]) -> bool:
    """What a record relating to a changed path means, one target against one path at a time."""
    stripped = [p.rstrip("/") for p in targets]
    return any(path == t or path.startswith(t + "/") or (path.endswith("/") and t.startswith(path))
               for path in changed for t in stripped)


def _record(rid: str, cls: str, paths: tuple[str, ...], date: str = "2026-01-01") -> known.Known:
    return known.Known(rid, cls, f"title {rid}", date, paths)


@given(st.lists(PATHS, max_size=3).map(tuple), st.frozensets(PATHS, max_size=6))
def test_relates_as_its_definition_says(targets: tuple[str, ...], changed: frozenset[str]) -> None:
    assert known.relates(_record("r", "fact", targets), changed) == _definition(targets, changed)


def test_each_way_a_record_relates() -> None:
    cases = [
        (("src/x.py",), {"src/x.py"}, True),  # the path it names
        (("src/",), {"src/x.py"}, True),  # one under the folder it names
        (("src",), {"src/deep/x.py"}, True),
        (("src/deep/x.py",), {"src/"}, True),  # inside an untracked folder
        (("src/deep/x.py",), {"src/deep/"}, True),
        (("src/deep",), {"src/deep/"}, True),
        (("src/x.py",), {"src/x.pyc", "sr/", "src"}, False),  # a prefix of text, not of a path
        (("src/",), {"srcs/x.py"}, False),
        (("src/x.py",), set(), False),
        ((), {"src/x.py"}, False),
    ]
    for targets, changed, expected in cases:
        assert known.relates(_record("r", "fact", targets), changed) is expected, (targets, changed)


def test_within_a_class_the_related_records_come_first() -> None:
    records = [_record("c-new", "constraint", ("lib/a.py",), "2026-09-01"),
               _record("c-old", "constraint", ("lib/",), "2026-01-01"),
               _record("f-new", "fact", (), "2026-09-01"),
               _record("f-old", "fact", ("docs/x.md",), "2026-01-01")]
    assert [r.id for r in known.ordered(records)] == ["c-new", "c-old", "f-new", "f-old"]
    assert [r.id for r in known.ordered(records, frozenset({"lib/b.py", "docs/"}))] == \
        ["c-old", "c-new", "f-old", "f-new"]
