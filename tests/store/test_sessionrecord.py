"""The session record's text functions: a span is added after what a record holds, and nothing
of it is rewritten; `extends` tells a grown record from a conflicting one."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from majordomus.store import sessionrecord as sr

SHA = st.text("0123456789abcdef", min_size=40, max_size=40)
TS = st.builds(lambda d, s: f"2026-{d:02d}-01T00:00:{s:02d}Z", st.integers(1, 12), st.integers(0, 59))
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
SPAN = st.builds(sr.Span, TS, st.sampled_from(["startup", "resume", "late-end", "fork"]),
                 st.one_of(st.none(), TEXT), st.one_of(st.none(), SHA), TS,
                 st.one_of(TEXT, st.sampled_from(["other", "orphaned"])), st.one_of(st.none(), SHA),
                 branch_close=st.one_of(st.none(), TEXT))


@given(st.lists(SPAN, min_size=1, max_size=5, unique_by=lambda s: s.opened))
def test_adding_spans_one_by_one_only_grows_the_record(spans: list[sr.Span]) -> None:
    text = sr.render("e1", spans[:1])
    for index, span in enumerate(spans[1:], 2):
        grown = sr.add_span(text, "e1", span)
        assert sr.extends(text, grown) and not sr.extends(grown, text)
        old, new = text.splitlines(), grown.splitlines()
        rest = iter(new)
        assert all(line in rest for line in old)  # old is a subsequence of new: no line lost or changed
        moved = 1 if span.branch_close and span.branch_close != span.branch else 0  # closed on another branch
        assert len(new) == len(old) + (10 if index == 2 else 9) + moved
        assert sr.span_count(grown) == index
        text = grown
    assert text == sr.render("e1", spans)  # the same bytes as a record rendered whole
    closes = [s.branch_close for s in spans if s.branch_close and s.branch_close != s.branch]
    assert text.count("branch_close: ") == len(closes)
    if spans[-1].reason in ("other", "orphaned"):
        assert sr.last_reason(text) == spans[-1].reason


def test_a_span_closed_again_replaces_only_itself() -> None:
    a = sr.Span("2026-01-01T00:00:00Z", "startup", "main", "a" * 40, "2026-01-01T01:00:00Z", "other", "b" * 40)
    b = sr.Span("2026-01-02T00:00:00Z", "resume", "main", "b" * 40, "2026-01-02T01:00:00Z", "other", "c" * 40)
    b_again = sr.Span(b.opened, "resume", "main", "b" * 40, "2026-01-02T02:00:00Z", "clear", "d" * 40)
    two = sr.add_span(sr.render("e1", [a]), "e1", b)
    assert sr.add_span(two, "e1", b_again) == sr.render("e1", [a, b_again])
    a_again = sr.Span(a.opened, "startup", "main", "a" * 40, "2026-01-01T03:00:00Z", "clear", "e" * 40)
    assert sr.add_span(sr.render("e1", [a]), "e1", a_again) == sr.render("e1", [a_again])


def test_spans_opened_in_the_same_second_are_told_apart_by_what_was_listed() -> None:
    """A resume within the second of the first span's open (a fast client, a test): the opening
    stamps match, and only `listed` (spans the record held when this one opened) tells a new span
    from a close run again."""
    a = sr.Span("2026-01-01T00:00:00Z", "startup", "main", "a" * 40, "2026-01-01T00:00:00Z", "other", "a" * 40)
    b = sr.Span(a.opened, "resume", "main", "a" * 40, "2026-01-01T00:00:00Z", "other", "b" * 40)
    one = sr.render("e1", [a])
    two = sr.add_span(one, "e1", b, listed=1)
    assert two == sr.render("e1", [a, b]) and sr.span_count(two) == 2
    b_again = sr.Span(b.opened, "resume", "main", "a" * 40, "2026-01-01T00:00:01Z", "clear", "c" * 40)
    assert sr.add_span(two, "e1", b_again, listed=1) == sr.render("e1", [a, b_again])
    assert sr.add_span(one, "e1", b) == sr.render("e1", [b])  # without `listed`: taken for a rerun


def test_what_is_not_a_record_is_replaced_and_extends_nothing() -> None:
    a = sr.Span("2026-01-01T00:00:00Z", "startup", None, None, "2026-01-01T01:00:00Z", "other", None)
    assert sr.add_span("", "e1", a) == sr.render("e1", [a])
    assert sr.add_span("hand-written notes\n", "e1", a) == sr.render("e1", [a])
    assert not sr.extends("hand-written notes\n", sr.render("e1", [a]))
    other = sr.render("e1", [sr.Span("2026-01-01T00:00:00Z", "startup", None, None, "2026-01-01T01:00:00Z",
                                     "clear", None)])
    assert not sr.extends(sr.render("e1", [a]), other) and not sr.extends(other, sr.render("e1", [a]))
