"""Bounded text for the readers an agent reads: the briefing and the working context.

A document is a list of `Block`s: a heading, fixed lines, and at most one list of items. The
lists share a line budget (`allot`), and `fit` shrinks them further until the text stays under a
character ceiling. A list that is cut says how many items it cut and the command that shows them
all, so a trimmed document never hides that it was trimmed.

Every heading, line and item is one line of the text: a newline inside one becomes a space, and
every other control character is escaped (`base.output.line`), so stored text (a decision, a
commit subject, a handover) can neither forge a line nor send the terminal an escape sequence.
"""
from __future__ import annotations

from collections.abc import Sequence

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.output import line as one_line

if TYPE_CHECKING:  # the start path imports this module, and no `typing`
    from collections.abc import Callable
    from typing import Any

CEILING = 10_000  # Claude Code cuts hook context above this to a short preview
ITEM_CHARS = 300  # one list item, at most
LINE_CHARS = 1_000  # one fixed line (a task title, a handover's Next Action), at most


def heading(episode: str, source: str) -> str:
    """The start briefing's heading: the one line that names the episode and how it started."""
    return f"Majordomus briefing: episode {episode} ({source})"


def client_chars(text: str) -> int:
    """`text`'s length as Claude Code counts it: a JavaScript string's, in UTF-16 code units (a
    character outside the Basic Multilingual Plane, an emoji, counts twice). Counted by the codec,
    not a loop over the characters: the start counts its whole briefing (up to 10,000 of them).
    A character outside the plane is a four-byte sequence in UTF-8 (lead byte F0 to F4), a lone
    surrogate three bytes and one unit: UTF-8 is the interpreter's own codec, no module to import
    for UTF-16's."""
    if text.isascii():
        return len(text)
    data = text.encode("utf-8", "surrogatepass")
    return len(text) + sum(data.count(lead) for lead in (0xF0, 0xF1, 0xF2, 0xF3, 0xF4))


def single(text: str) -> str:
    """`text` as one line: newlines become spaces, other control characters are escaped."""
    return one_line(" ".join(text.split("\n")))


def clip(text: str, limit: int, whole: str = "") -> str:
    """`text` on one line, cut to `limit` characters; a cut says so (and where to read it whole)."""
    text = single(text)
    if len(text) <= limit:
        return text
    tail = f" … (cut: `{whole}` shows it whole)" if whole else " … (cut)"
    return text[: max(limit - len(tail), 0)].rstrip() + tail


class Lines(Sequence[str]):
    """A list's lines, each made when it is read: of thousands of rows the budget shows a few,
    and the rest are only counted, so their lines are never made. With `many`, a slice's lines
    are made by one call of it (the rows' values asked for at once), each as `make` makes it."""

    __slots__ = ("rows", "make", "many")

    def __init__(self, rows: Sequence[Any], make: Callable[[Any], str],
                 many: Callable[[Sequence[Any]], list[str]] | None = None) -> None:
        self.rows, self.make, self.many = rows, make, many

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: Any) -> Any:  # an int: a line; a slice: a list of them
        if isinstance(index, slice):
            if self.many is not None:
                return self.many(self.rows[index])
            return [self.make(row) for row in self.rows[index]]
        return self.make(self.rows[index])


class Block:
    """One section: a heading, fixed lines, and a list the budget may cut."""

    __slots__ = ("heading", "level", "lines", "items", "empty", "what", "more", "indent", "whole", "budgeted")

    def __init__(self, heading: str | None = None, level: int = 2, lines: list[str] | None = None,
                 items: Sequence[str] | None = None, empty: str | None = None, what: str = "more",
                 more: str = "", indent: str = "", whole: str = "", budgeted: bool = True) -> None:
        self.heading, self.level = heading, level
        self.lines = lines if lines is not None else []  # fixed lines, printed whole (clipped)
        self.items: Sequence[str] = items if items is not None else []  # the bounded list
        self.empty = empty  # printed instead of the list when it has no item
        self.what = what  # "open questions": what a cut line counts
        self.more = more  # the command that shows the whole list
        self.indent = indent
        self.whole = whole  # the command that shows a clipped line whole (default: `more`)
        self.budgeted = budgeted  # False: the line budget never cuts this list (the character ceiling may)

    def cut_line(self, hidden: int) -> str:
        where = f": `{self.more}` shows them all" if self.more else ""
        return f"{self.indent}… {hidden} more {self.what} not shown{where}"


def render(blocks: list[Block], caps: dict[int, int] | None = None, bounded: bool = False) -> str:
    """The blocks as text; `caps[i]` bounds block i's list to that many lines, cut line included.
    `bounded` clips each line (a reader that prints everything leaves them whole)."""
    out: list[str] = []
    for index, block in enumerate(blocks):
        if block.heading:
            if out and out[-1] != "":
                out.append("")
            out.append("#" * block.level + " " + single(block.heading))
        whole = block.whole or block.more
        out += [clip(line, LINE_CHARS, whole) if bounded else single(line) for line in block.lines]
        if block.items:
            cap = (caps or {}).get(index)
            shown = block.items if cap is None or len(block.items) <= cap else block.items[: max(cap - 1, 0)]
            out += [clip(item, ITEM_CHARS, whole) if bounded else single(item) for item in shown]
            if len(shown) < len(block.items):
                out.append(block.cut_line(len(block.items) - len(shown)))
        elif block.empty:
            out.append(block.empty)
    return "\n".join(out) + "\n"


def allot(sizes: list[int], budget: int) -> list[int]:
    """Share `budget` lines among lists of `sizes`: a small list keeps all it needs, the large
    ones split the rest evenly (earlier lists take the odd lines)."""
    caps = [0] * len(sizes)
    pending = sorted(range(len(sizes)), key=lambda i: (sizes[i], i))
    left = budget
    while pending:
        share = left // len(pending)
        index = pending[0]
        if sizes[index] <= share:
            caps[index] = sizes[index]
            left -= sizes[index]
            pending.pop(0)
            continue
        extra = left - share * len(pending)
        for rank, i in enumerate(sorted(pending)):
            caps[i] = share + (1 if rank < extra else 0)
        break
    return caps


def fit(blocks: list[Block], budget: int | None, ceiling: int) -> tuple[str, bool]:
    """Render `blocks` with their budgeted lists sharing `budget` lines (None: unbounded), then
    shrink the longest list until the text is under `ceiling` characters. Returns the text and
    whether the ceiling (not the budget) cut anything."""
    lists = [i for i, b in enumerate(blocks) if b.items]
    caps: dict[int, int] = {}
    if budget is not None:
        shared = [i for i in lists if blocks[i].budgeted]
        caps = dict(zip(shared, allot([len(blocks[i].items) for i in shared], budget)))
    text = render(blocks, caps, bounded=True)
    ceiling_cut = False
    room = ceiling - 200  # the closing note must fit too
    while len(text) > room:
        shown = {i: min(caps.get(i, len(blocks[i].items)), len(blocks[i].items)) for i in lists}
        weight = {i: sum(len(x) for x in blocks[i].items[: shown[i]]) for i in lists if shown[i] > 0}
        if not weight:
            break
        largest = max(weight, key=lambda i: (weight[i], -i))
        caps[largest] = shown[largest] // 2 if shown[largest] > 1 else 0
        ceiling_cut = True
        text = render(blocks, caps, bounded=True)
    if len(text) > room:  # only fixed lines are left: cut at a line boundary
        text = text[:room].rsplit("\n", 1)[0] + "\n"
        ceiling_cut = True
    return text, ceiling_cut
