"""`escape` and `line` return a text with nothing to escape as it is, without compiling a pattern:
the start hook escapes its whole briefing, which holds non-ASCII text (an ellipsis, a dash)."""
from __future__ import annotations

import re

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
