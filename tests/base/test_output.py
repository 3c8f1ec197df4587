"""`escape` and `line` return a text with nothing to escape as it is, without compiling a pattern:
the start hook escapes its whole briefing, which holds non-ASCII text (an ellipsis, a dash)."""
from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from majordomus.base import output


def test_every_character_escaped_is_one_isprintable_refuses() -> None:
    for pattern in (output._CONTROL, output._CONTROL_OR_NEWLINE):
        compiled = re.compile(pattern)
        assert [c for c in map(chr, range(0x110000)) if compiled.match(c) and c.isprintable()] == []


def test_printable_text_is_returned_as_is_and_the_rest_escaped() -> None:
    text = "# Briefing — episode é1\n\t`majordomus decision add \"…\"` 😀\n"
    assert output.escape(text) is text
    assert output.escape("a\x1b[31mb\u202ec\nd") == "a\\u001b[31mb\\u202ec\nd"
    assert output.escape("no\xa0break") == "no\xa0break"  # refused by isprintable, kept by the pattern
    assert output.line("é—1") == "é—1"
    assert output.line("a\nb\u2028c") == "a\\nb\\u2028c"


# `indented` is `json.dumps(indent=2, ensure_ascii=False)`'s text, faster: the same for any value
class _Text(str):
    pass


_leaves = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
           | st.sampled_from(["\x7f", "\u2028", "a\"b\\c", "\x00\n\t", "é😀", "\ud800"])
           | st.builds(_Text, st.text(max_size=4)))
_values = st.recursive(_leaves, lambda inner: (st.lists(inner, max_size=4) | st.lists(st.text(max_size=6), max_size=3)
                                               | st.tuples(inner, inner)
                                               | st.dictionaries(st.text(max_size=5), inner, max_size=4)
                                               | st.dictionaries(st.none() | st.booleans() | st.integers()
                                                                 | st.floats(), inner, max_size=3)),
                       max_leaves=24)


@settings(max_examples=600, deadline=None)
@given(_values)
def test_indented_is_json_s_own_text(value: object) -> None:
    """`indented` (what `--json` prints, the MCP and HTTP answers) is `json.dumps(indent=2,
    ensure_ascii=False)`, byte for byte: strings of any script, controls and quotes, empty and
    nested containers, tuples, keys that are not text, subclasses, NaN and the infinities, and
    refusals alike."""
    try:
        expected: object = json.dumps(value, indent=2, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        expected = type(exc)
    try:
        found: object = output.indented(value)
    except (TypeError, ValueError) as exc:
        found = type(exc)
    assert found == expected


def test_indented_refuses_what_json_refuses() -> None:
    cycle: list[object] = []
    cycle.append(cycle)
    with pytest.raises(ValueError, match="Circular reference"):
        output.indented(cycle)
    for value in ({"a": {1, 2}}, [object()], [{"a": object()}], {"k": {(1, 2): 3, "x": [4]}}):
        with pytest.raises(TypeError):
            output.indented(value)


def test_json_text_has_del_and_the_c1_controls_escaped_whatever_else_it_holds() -> None:
    plain = '{"a": "b"}'
    assert output.raw_in_json(plain) is plain
    assert output.raw_in_json('"a\x7fb"') == '"a\\u007fb"'  # ASCII, DEL in it
    assert output.raw_in_json('"é\x85\x7f😀"') == '"é\\u0085\\u007f😀"'
    assert output.raw_in_json('"é😀"') == '"é😀"'
