"""`Ledger.reversed_lines`: the ledger newest first, read from its end in blocks."""
from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from majordomus.store.ledger import Ledger

LINE = st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), max_size=30)


@given(st.lists(LINE, max_size=40), st.integers(1, 64), st.booleans())
def test_reversed_lines_are_the_lines_newest_first(tmp_path_factory, lines: list[str], block: int,  # type: ignore[no-untyped-def]
                                                   trailing: bool) -> None:
    folder: Path = tmp_path_factory.mktemp("ledger")
    ledger = Ledger(folder)
    data = "\n".join(lines) + ("\n" if trailing and lines else "")
    ledger.path.write_bytes(data.encode("utf-8"))
    expected = [l for l in reversed(data.split("\n")) if l.strip()]
    assert list(ledger.reversed_lines(block=block)) == expected


def test_a_missing_ledger_has_no_lines(tmp_path: Path) -> None:
    assert list(Ledger(tmp_path).reversed_lines()) == []
