"""`majordomus knowledge export --agents-md [FILE]`: the verified records as one marker-delimited
block of `AGENTS.md`, the file Codex, Cursor, Gemini CLI, Copilot, Amp, Aider and others read.

Only a person runs it (no hook does). The block is deterministic (the records in the briefing's
class order, newest first, nothing of the clock, the working tree or the machine), bounded to
MAX_CHARS, and written only when its bytes change. It holds one line per record: a title, class
or file name cannot write a line of its own, inside the block or out (`_one`). Everything outside the two marker lines is
kept byte for byte; a file without the markers gets the block appended; a file whose markers do
not make one pair is refused, untouched.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from majordomus.base.credentials import withheld
from majordomus.base.errors import refused
from majordomus.base.fsio import atomic_write, read_regular
from majordomus.base.output import line as one_line
from majordomus.knowledge import currency, known
from majordomus.knowledge.verdict import Currency, fix
from majordomus.store.workspace import Workspace

BEGIN = "<!-- majordomus:knowledge:begin -->"
END = "<!-- majordomus:knowledge:end -->"
MAX_CHARS = 8_000  # the whole block, markers included
TITLE_CHARS = 160
COMMAND = "majordomus knowledge export --agents-md"
ALL_OF_THEM = "majordomus knowledge search --status verified"


class Exported(NamedTuple):
    path: Path
    written: bool  # False: the file already held these bytes
    shown: int
    total: int


def _one(text: str) -> str:
    """A value as one line of the block: every control character, line or paragraph separator
    and bidirectional control escaped (`output.line`), and what could read as an HTML comment,
    a marker look-alike, defused (`<!--` and `-->` as entities), so no title or file name can
    end the block, start another, or hide text in it."""
    return one_line(text).replace("<!--", "&lt;!--").replace("-->", "--&gt;")


def _title(text: str) -> str:
    # never written raw; a title carrying a credential (a hand edit the writers never saw) withheld
    text = _one(withheld(text) or "(untitled)")
    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 2].rstrip() + " …"


def _mark(rid: str, states: dict[str, Currency]) -> str:
    """What an export line adds for a record that may be stale or is disputed: why, and the fix."""
    state = states.get(rid)
    if state is None or not (state.stale or state.dispute is not None):
        return ""
    return f" — {one_line(state.reason)}; `{fix(rid)}` re-verifies it"


def block(records: list[known.Known], states: dict[str, Currency] | None = None) -> tuple[str, int]:
    """The block (markers included, newline-terminated) and how many records it lists; a record
    that may be stale or is disputed (`states`) is marked so, with what changed."""
    head = [BEGIN,
            f"<!-- Written by `{COMMAND}` from .ai/repo/knowledge/curated/; the next export replaces "
            "everything between these two markers. -->",
            "## What this repository knows", "",
            "Verified records, each promoted by a person with evidence: constraints first, then "
            "conventions, lessons, facts, memories; newest first within a class. "
            "`majordomus knowledge record ID` prints one whole.", ""]
    if any(_mark(r.id, states or {}) for r in records):
        head[-2] += (" A record marked \"may be stale\" is about files that changed since a person verified "
                     "it; one marked \"disputed\", one an agent found wrong since.")
    ordered = known.ordered(records)
    lines = [f"- {_one(r.cls)}: {_title(r.title)} (`{_one(r.id)}`){_mark(r.id, states or {})}" for r in ordered]
    if not lines:
        lines = ["No verified record yet: a person promotes a reviewed candidate with "
                 "`majordomus knowledge promote ID`."]
    size = sum(len(x) + 1 for x in head) + len(END) + 1
    shown: list[str] = []
    for n, line in enumerate(lines):
        hidden = len(lines) - n - 1
        cut = f"- … {hidden} more verified records not exported: `{ALL_OF_THEM}` lists them all"
        need = len(line) + 1 + (len(cut) + 1 if hidden else 0)
        if size + need > MAX_CHARS:
            shown.append(f"- … {len(lines) - n} more verified records not exported: `{ALL_OF_THEM}` "
                         "lists them all")
            break
        shown.append(line)
        size += len(line) + 1
    count = min(len(ordered), sum(1 for line in shown if not line.startswith("- … ")))
    return "\n".join(head + shown + [END]) + "\n", count


def merge(existing: str, new_block: str, where: str) -> str:
    """`existing` with its marker block replaced by `new_block` (appended when it has none)."""
    lines = existing.split("\n")  # a line ends at a newline only, as every reader of Markdown says
    lines = [part + "\n" for part in lines[:-1]] + ([lines[-1]] if lines[-1] else [])
    begins = [i for i, line in enumerate(lines) if line.strip() == BEGIN]
    ends = [i for i, line in enumerate(lines) if line.strip() == END]
    if not begins and not ends:
        if not existing:
            return new_block
        return existing + ("" if existing.endswith("\n") else "\n") + "\n" + new_block
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise refused(f"{where} holds {len(begins)} begin and {len(ends)} end marker line(s) of majordomus's "
                      "block, not one pair in order: leave one pair (or none), then rerun "
                      f"`{COMMAND}`")
    before, after = "".join(lines[: begins[0]]), "".join(lines[ends[0] + 1:])
    if not lines[ends[0]].endswith("\n") and after == "":
        new_block = new_block[:-1]  # the file ended at the marker: so does it again
    return before + new_block + after


def target_path(ws: Workspace, file: str | None) -> Path:
    """The file to write: AGENTS.md at the root by default; a real path inside the repository,
    never through a symbolic link, never a folder."""
    path = ws.root / "AGENTS.md" if file is None else Path(os.path.abspath(file))
    root = os.path.realpath(ws.root)
    parent = os.path.realpath(path.parent)
    if not (parent == root or parent.startswith(root + os.sep)):
        raise refused(f"{file} is outside the repository {ws.root}: give a path inside it (default AGENTS.md)")
    if os.path.islink(path):
        raise refused(f"{file} is a symbolic link: export writes a real file; give its target or remove the link")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise refused(f"{file} is not a regular file: give a file path (default AGENTS.md)")
    return ws.root / os.path.relpath(parent, root) / path.name


def export(ws: Workspace, file: str | None = None) -> Exported:
    """Write the verified records into the block of `file` (default AGENTS.md)."""
    path = target_path(ws, file)
    records = known.verified(ws.curated, ws)
    text, shown = block(records, currency.of(ws, records))
    try:
        existing = read_regular(path).decode("utf-8")
    except FileNotFoundError:
        existing = ""
    except UnicodeDecodeError:
        raise refused(f"{ws.rel(path)} is not UTF-8 text: fix its encoding, then rerun `{COMMAND}`") from None
    merged = merge(existing, text, ws.rel(path))
    if merged == existing and existing:
        return Exported(path, False, shown, len(records))
    atomic_write(path, merged, root=ws.root)
    return Exported(path, True, shown, len(records))
