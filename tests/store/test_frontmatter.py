"""The fast front-matter reader answers what the YAML loader answers, or nothing."""
from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from majordomus.store import frontmatter, records
from majordomus.base import yamlio

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
WORD = st.from_regex(r"[A-Za-z][A-Za-z0-9_./: -]{0,12}", fullmatch=True)


def _agree(front: str) -> dict[str, Any] | None:
    fast = frontmatter.load(front)
    try:
        slow = yamlio.load(front)
    except yamlio.YamlError:
        slow = None
        assert fast is None
    if fast is not None:
        assert fast == slow
    return fast


@settings(max_examples=150, deadline=None)
@given(title=TEXT, refs=st.lists(st.one_of(TEXT, WORD), max_size=4), cls=WORD, date=st.one_of(TEXT, WORD),
       rels=st.lists(st.tuples(WORD, st.one_of(TEXT, WORD)), max_size=3))
def test_the_one_writer_is_read_back_by_yaml_and_the_fast_reader(title: str, refs: list[str], cls: str,
                                                                  date: str, rels: list[tuple[str, str]]) -> None:
    meta: dict[str, Any] = {"id": "e1-0123456789ab", "kind": "knowledge/v1", "class": cls, "status": "candidate",
                            "epistemics": "decided", "title": title, "date": date,
                            "provenance": {"origin": "extracted", "derived_from": refs or ["session:e1"]},
                            "relations": [{"type": t, "target": v} for t, v in rels], "superseded_by": date}
    if not rels:
        del meta["relations"]
    composed = records.compose(meta, "body\n")
    front = yamlio.split_front_matter(composed)
    assert front is not None and front[1] == "body\n"
    assert yamlio.load(front[0]) == meta  # what YAML reads is what was written
    assert _agree(front[0]) in (None, meta)


@pytest.mark.parametrize("front", [
    "id: a\nid: b\n",  # duplicate key
    "title: 12\n", "title: 2026-01-02\n", "title: yes\n", "on: x\n", "title: a # c\n",
    "title: \"a\\x41\"\n", "title: \"\\ud83d\\ude00\"\n", "title: [a, b]\n", "title: |\n  block\n",
    "provenance:\n  deep:\n    deeper: x\n", "description:\ntitle: x\n", "title: 'it''s'\n",
    "relations:\n- type: relates_to\n  target: file:a\n- type: relates_to\n  target: 'file:b'\n",
    "provenance:\n  origin: extracted\n  derived_from:\n  - session:e1\n  - \"task:t\"\n",
    "provenance:\n  origin: extracted\n  derived_from:\n    - session:e1\nstatus: candidate\n",
    "title: \"a\\/b\"\n", "title: a b\n", "title: a  b \n", "title: a :b\n", "title: a: b\n", "title: \"tab\\there\"\n", "  title: x\n", "title: x\n  extra: y\n",
])
def test_edge_cases_agree_with_yaml(front: str) -> None:
    _agree(front)


@settings(max_examples=300, deadline=None)
@given(word=st.from_regex(r"[0-9][A-Za-z0-9_.:+ eE-]{0,12}", fullmatch=True))
def test_a_plain_word_beginning_with_a_digit_reads_as_yaml_reads_it(word: str) -> None:
    _agree(f"id: {word}\nrefs:\n- {word}\n")


@pytest.mark.parametrize("word", ["0a1b-2c", "021ff254-2a98-4620-a349-57030a479b26-e10e97115402", "1e5", "1E-5",
                                  "0x1f", "0b101", "0b12", "0xag", "0b7c-1", "0x1f-2", "0b", "0x", "0B1", "0o17", "07", "12", "1-2-3", "2025-01-07", "2025-1-7a", "9-"])
def test_a_digit_word_is_read_without_yaml_when_it_can_only_be_a_string(word: str) -> None:
    fast = _agree(f"id: {word}\n")
    strings = ("0a1b-2c", "0o17", "0b12", "0xag", "0b7c-1", "0x1f-2", "0B1", "021ff254-2a98-4620-a349-57030a479b26-e10e97115402", "1e5", "1E-5", "2025-1-7a")
    assert (fast == {"id": word}) == (word in strings)
    # the one writer still quotes it: what it writes does not change
    front = yamlio.split_front_matter(records.compose({"id": word}, ""))
    assert front is not None and front[0] == f'id: "{word}"\n'


def test_the_subset_is_read() -> None:
    assert frontmatter.load("title: 'it''s'\nstatus: candidate\n") == {"title": "it's", "status": "candidate"}
    # a plain decimal integer is the int YAML reads (a review's `seen`); other numbers are outside
    assert frontmatter.load("title: 12\n") == {"title": 12} and frontmatter.load("a: 1\na: 2\n") is None
    assert frontmatter.load("title: 012\n") is None and frontmatter.load("title: 1.5\n") is None


def test_what_the_deriver_and_the_acts_write_is_read_without_yaml() -> None:
    meta = {"id": "e1-0123456789ab", "kind": "knowledge/v1", "class": "convention", "status": "candidate",
            "epistemics": "decided", "title": "Tabs: refused \"always\" é", "date": "2026-01-02",
            "provenance": {"origin": "extracted", "derived_from": ["session:e1", "decision:t-1"]},
            "relations": [{"type": "relates_to", "target": "file:a b.md"}]}
    front = yamlio.split_front_matter(records.compose(meta, "b\n"))
    assert front is not None and frontmatter.load(front[0]) == yamlio.load(front[0]) == meta
    composed = yamlio.split_front_matter(records.compose(dict(meta, status="verified"), "b\n"))
    assert composed is not None and frontmatter.load(composed[0]) == dict(meta, status="verified")


def test_a_hand_edited_front_matter_reads_the_same_everywhere(tmp_path: Any) -> None:
    """A comment is valid YAML: the one reader goes to full YAML for it, not to a regex."""
    path = tmp_path / "e1-0123456789ab.md"
    path.write_text("---\nid: e1-0123456789ab\nstatus: candidate  # awaiting review\ntitle: T\n---\nbody\n",
                    encoding="utf-8")
    assert records.quick_status(path) == "candidate"
    assert records.front(path) == {"id": "e1-0123456789ab", "status": "candidate", "title": "T"}
    assert records.load(path).meta == records.front(path)


@settings(max_examples=100, deadline=None)
@given(seen=st.integers(min_value=0, max_value=10**6), by=TEXT, digest=st.from_regex(r"[0-9a-f]{12}", fullmatch=True),
       anchors=st.lists(WORD, max_size=3))
def test_reviews_and_anchors_are_read_alike_by_yaml_and_the_fast_reader(seen: int, by: str, digest: str,
                                                                        anchors: list[str]) -> None:
    """A reviewed record stays on the fast path: `seen` is the integer YAML reads, a digest of
    digits alone a string."""
    meta: dict[str, Any] = {"id": "e1-0123456789ab", "kind": "knowledge/v1", "status": "verified",
                            "provenance": {"origin": "extracted", "derived_from": ["session:e1"],
                                           "commits": [{"sha": "a" * 40, "subject": by, "authored": "2026-01-02T03:04:05Z"}]},
                            "anchors": anchors or ["src/x.py"],
                            "reviews": [{"act": "promoted", "at": "2026-12-02T10:00:00Z", "by": by or "x",
                                         "commit": "b" * 40, "seen": seen, "digest": digest}]}
    composed = records.compose(meta, "body\n")
    front = composed.split("---\n")[1]
    fast = _agree(front)
    assert fast is not None and fast["reviews"][0]["seen"] == seen and fast["reviews"][0]["digest"] == digest
