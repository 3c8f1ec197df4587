"""The shared line budget and the character ceiling of the bounded readers."""
from __future__ import annotations

from majordomus.context.blocks import Block, Lines, allot, client_chars, fit, render


def test_allot_gives_small_lists_all_and_splits_the_rest() -> None:
    assert allot([2, 10], 6) == [2, 4]
    assert allot([10, 10], 6) == [3, 3]
    assert allot([10, 10, 1], 6) == [3, 2, 1]
    assert allot([1, 2], 40) == [1, 2]
    assert allot([5, 5], 0) == [0, 0]
    assert allot([], 10) == []


def test_a_cut_list_counts_what_it_cut_and_names_the_command() -> None:
    block = Block("Things", 2, [], [f"- {n}" for n in range(5)], "none", "things", "list-things")
    assert render([block], {0: 3}) == ("## Things\n- 0\n- 1\n… 3 more things not shown: "
                                       "`list-things` shows them all\n")
    assert render([block], {0: 5}).count("\n- ") == 5 and "more" not in render([block], {0: 5})
    assert render([Block("Things", 2, [], [], "none: `add-thing` adds one")]) == (
        "## Things\nnone: `add-thing` adds one\n")


def test_fit_stays_under_the_ceiling_and_shrinks_the_longest_list() -> None:
    long = Block("Long", 2, [], ["- " + "x" * 250 for _ in range(100)], what="long ones", more="show-long")
    short = Block("Short", 2, [], ["- s" for _ in range(5)], what="short ones", more="show-short")
    text, cut = fit([long, short], None, 10_000)
    assert cut and len(text) <= 10_000 - 200
    assert "- s\n- s\n- s\n- s\n- s\n" in text  # the short list kept whole
    assert "more long ones not shown: `show-long` shows them all" in text
    text, cut = fit([long, short], 3, 10_000)
    assert not cut and text.count("x" * 250) == 1


def test_fit_clips_a_line_and_says_where_it_is_whole() -> None:
    block = Block("One", 2, ["y" * 5_000], whole="show-it")
    text, cut = fit([block], 10, 10_000)
    assert not cut and text.endswith(" … (cut: `show-it` shows it whole)\n") and len(text) < 1_100


def test_a_list_made_as_it_is_read_makes_only_the_lines_shown() -> None:
    """The briefing's candidates at a large store: thousands of rows, a budget of a few lines.
    The text is the one a made list gives, and only the lines shown are made."""
    made: list[int] = []

    def make(n: int) -> str:
        made.append(n)
        return f"- candidate {n}"

    rows = list(range(5000))
    lazy = fit([Block("Candidates", 2, ["count"], Lines(rows, make), what="candidates", more="mj")], 12, 10_000)
    plain = fit([Block("Candidates", 2, ["count"], [f"- candidate {n}" for n in rows], what="candidates",
                       more="mj")], 12, 10_000)
    assert lazy == plain and "4989 more candidates not shown" in lazy[0]
    assert len(made) <= 2 * 12


def test_the_client_counts_utf16_code_units() -> None:
    """Claude Code counts a JavaScript string's length: one unit a BMP character, two an astral one
    (an emoji), one a lone surrogate (an undecodable byte under surrogateescape)."""
    assert client_chars("") == 0
    assert client_chars("plain ascii\n") == 12
    assert client_chars("é€ü") == 3
    assert client_chars("a😀b") == 4
    assert client_chars("\udcff😀") == 3
    text = "x" * 50 + "😀" * 7 + "ÿ" * 3
    assert client_chars(text) == len(text) + sum(1 for c in text if ord(c) > 0xFFFF) == 67


def test_the_client_count_is_the_utf16_codecs_for_every_kind_of_character() -> None:
    """Counted from UTF-8's four-byte sequences: the UTF-16 codec's count, across the planes and
    their edges, lone surrogates included."""
    points = list(range(0, 0x110000, 97)) + [0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDBFF, 0xDC00,
                                              0xDFFF, 0xE000, 0xFFFF, 0x10000, 0x10FFFF]
    text = "".join(map(chr, points))
    assert client_chars(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2
    for p in points[::50]:
        assert client_chars("a" + chr(p)) == len(("a" + chr(p)).encode("utf-16-le", "surrogatepass")) // 2
