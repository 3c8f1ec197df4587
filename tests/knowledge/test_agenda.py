"""The review order read from the ledger's facts (the knowledge index): whichever lines name which
files, and however the ledger was rewritten between two reads, the order and the ages are those a
read of every `knowledge.derived` line gives."""
from __future__ import annotations

import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import make_repo
from majordomus.knowledge import agenda, queue
from majordomus.store.workspace import Workspace

RECORD = """---
id: {rid}
kind: knowledge/v1
class: convention
status: candidate
epistemics: decided
title: "Record {rid}"
date: "2026-01-0{day}"
provenance:
  origin: extracted
  derived_from:
    - "session:{episode}"
---
Record {rid}.
"""
IDS = ("e1-aaaaaaaaaaaa", "e1-bbbbbbbbbbbb", "e2-cccccccccccc", "e2-dddddddddddd", "e3-eeeeeeeeeeee")
# A knowledge.derived line: its second, and the candidates (and other files) it names.
DERIVED = st.tuples(st.integers(0, 59), st.lists(st.sampled_from(IDS + ("README", "e9-ffffffffffff")),
                                                 max_size=3))


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    repo = make_repo(tmp_path_factory.mktemp("agenda") / "repo")
    for day, rid in enumerate(IDS, 1):
        (repo.root / f".ai/repo/knowledge/candidates/{rid}.md").write_text(
            RECORD.format(rid=rid, day=day, episode=rid.split("-")[0]), encoding="utf-8")
    return Workspace(repo.root)


@given(lines=st.lists(DERIVED, max_size=8), size=st.integers(1, len(IDS)))
def test_the_queue_orders_as_a_read_of_every_derived_line(store: Workspace, lines: list[tuple[int, list[str]]],
                                                             size: int) -> None:
    store.ledger.path.write_text("", encoding="utf-8")
    for second, named in lines:
        store.ledger.append("knowledge.derived", "e1", written=len(named),
                            paths=[f".ai/repo/knowledge/candidates/{n}.md" for n in named])
        data = store.ledger.path.read_bytes()  # the stamp decides the age: the last line's second
        head, _, last = data[:-1].rpartition(b"\n")
        last = re.sub(rb'(T\d\d:\d\d:)\d\d(Z")', rb"\g<1>%02d\2" % second, last, count=1)
        store.ledger.path.write_bytes((head + b"\n" if head else b"") + last + b"\n")
    # the seconds were set by rewriting the file in place, which no writer does: the ledger is then
    # replaced as a trim replaces it (a new file), so the index reads it again from its start
    scratch = store.ledger.path.with_name("ledger.jsonl.new")
    scratch.write_bytes(store.ledger.path.read_bytes())
    os.replace(scratch, store.ledger.path)
    waiting = queue.waiting(store, paths=[store.candidates / f"{rid}.md" for rid in IDS[:size]])
    every = agenda.ordered(store, waiting, "main", lines=store.ledger.events("knowledge.derived"), now=1e10)
    assert agenda.ordered(store, waiting, "main", now=1e10) == every
