"""`majordomus knowledge search`: the records of both folders whose title or body holds every word
of a text, for the agent and for the person. Words are matched case-insensitively as substrings;
an empty text matches every record, so `--status verified` alone lists what the repository knows.

The files are those the source classes list (one git call, kept in the knowledge index while its
inputs are unchanged); what is matched of each (title, class, status, date, the body and the title
casefolded) is kept in the index (`store/index.py`), which hands over only the records whose kept
text holds every word, and a record that cannot be read is passed over
(`majordomus knowledge check` names it).
"""
from __future__ import annotations

import json
import re
from operator import itemgetter, or_
from pathlib import Path

from majordomus.base.errors import refused
from majordomus.base.lean import TYPE_CHECKING
from majordomus.knowledge.known import CLASS_ORDER, text_of
from majordomus.store import index as store_index
from majordomus.store import listing as store
from majordomus.store import records
from majordomus.store.listing import Entry
from majordomus.store.workspace import Workspace

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    from typing import Any

STATUSES = records.STATUSES
VERSION = 2  # of what the index keeps for the search (`_read`)


def search(ws: Workspace, text: str = "", cls: str | None = None, status: str | None = None) -> list[dict[str, Any]]:
    """The records matching `text` (every word, in the title or the body), of class `cls` and
    status `status` when given: those with every word in the title first, then by class (what
    binds first), newest, id."""
    if status is not None and status not in STATUSES:
        raise refused(f"status {status!r} refused: use one of {', '.join(STATUSES)}")
    words = [w.casefold() for w in text.split()]
    rank = {c: i for i, c in enumerate(CLASS_ORDER)}
    # (whether not every word is in the title, the class's rank, date, id, hit): the hits are sorted
    # by id, then newest first, then those with every word in the title first and by class
    ranked: list[tuple[bool, int, str, str, dict[str, Any]]] = []
    match = _match(words)
    for entry, read in _candidates(ws, match):
        if read is None:
            continue
        title, rec_cls, rec_status, date, folded_body, folded_title = read
        if (cls is not None and rec_cls != cls) or (status is not None and rec_status != status):
            continue
        if words:
            titled = [w in folded_title for w in words]
            bodied = [w in folded_body for w in words]
            if False in map(or_, titled, bodied):  # a word in neither
                continue
            matched = ["title"] * (True in titled) + ["body"] * (True in bodied)
        else:
            titled, matched = [False], []
        ranked.append((False in titled, rank.get(rec_cls, len(rank)), date, entry.id,
                       {"id": entry.id, "source": entry.source, "status": rec_status, "class": rec_cls,
                        "title": title, "date": date, "path": entry.rel, "tracked": entry.tracked,
                        "matched": matched}))
    ranked.sort(key=itemgetter(3))
    ranked.sort(key=itemgetter(2), reverse=True)
    ranked.sort(key=itemgetter(0, 1))
    return [hit for *_, hit in ranked]


def _candidates(ws: Workspace, match: tuple[str, list[str]] | None) -> list[tuple[Entry, Any]]:
    """The readable entries of the listing with what the search keeps of each (`_read`), those
    whose kept value fails `match` left out: from git's listing joined with the kept values in the
    knowledge index (only the entries that may match are made), else from the listing."""
    found = store.matched(ws, "search", VERSION, _read, match)
    if found is not None:
        return found
    entries = [(e, *e.split()) for e in store.listing(ws).entries if e.readable]
    by_folder: dict[str, list[str]] = {}
    for _, folder, name in entries:
        by_folder.setdefault(folder, []).append(name)
    index = store_index.of(ws)
    kept = {folder: dict(index.view(Path(folder), "search", VERSION, _read, only=names, match=match))
            for folder, names in by_folder.items()}
    return [(entry, kept[folder][name]) for entry, folder, name in entries if name in kept[folder]]


def _match(words: list[str]) -> tuple[str, list[str]] | None:
    """The condition on a kept value's JSON text (`_read`'s list, as the index writes it: no ASCII
    escapes, no spaces) that every record matching `words` meets, so the index hands over those
    alone, to be matched here: a text's JSON is its characters' JSON one after the other, so a word
    of the casefolded body or title is in the kept text as the word's JSON. `GLOB '*word*'` (its
    `*`, `?` and `[` in brackets), not `instr`: sqlite finds the word's first character with
    `strcspn` (~0.6 of the time at 20,000 records). None without words."""
    if not words:
        return None
    return (" AND ".join("search GLOB ?" for _ in words),
            ["*" + re.sub(r"[*?[]", r"[\g<0>]", json.dumps(w, ensure_ascii=False)[1:-1]) + "*" for w in words])


def _read(path: str) -> list[str] | None:
    """What the search keeps of a record: [title, class, status, date, the body casefolded, the
    title casefolded], or None when it cannot be read as one."""
    try:
        record = records.load(Path(path))
    except (OSError, records.RecordError):
        return None
    meta = record.meta
    title = " ".join(text_of(meta.get("title")).split())
    return [title, text_of(meta.get("class")), text_of(meta.get("status")), text_of(meta.get("date")),
            record.body.casefold(), title.casefold()]
