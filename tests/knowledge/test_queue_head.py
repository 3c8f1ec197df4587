"""The head of the review queue ordered and cut in SQL (`queue.HEADED`, `agenda.head`): over random
indexes (episodes an id or not, session records stating a branch or not, in sessions/ or the
outbox's, entries the ledger dates or not, ties of age and of evidence time, names that are not
`<id>.md`), every entry SQL places is where Python places it, the head SQL cuts is the first of the
entries it places in Python's order, and every other entry comes back for Python to order."""
from __future__ import annotations

import sqlite3
from types import SimpleNamespace
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from majordomus.knowledge import agenda, queue
from majordomus.knowledge.accumulation import Age
from majordomus.store import facts, index

FOLDERS = {"folder0": "k/candidates", "folder1": "k/curated", "folder2": "sessions", "folder3": "outbox/sessions"}
EPISODES = st.sampled_from(["e1", "e2", "E-3", "e.4", "e1", "e2", "-e5", "e 6", "é7", "", "e1\n", "e" * 128, "e" * 129, None])
BRANCHES = st.sampled_from(["main", "dev", "é", "", None])
NAMES = st.sampled_from(["a", "a-b", "a.b", "a_b", "b", "B", "é", "a0", "zz", "a-", "c", "d", "e"])
ENTRY = st.tuples(st.sampled_from(["k/candidates", "k/candidates", "k/curated"]), NAMES,
                  st.sampled_from([".md", ".md", ".md", ".txt", ""]), EPISODES,
                  st.sampled_from(["2026-01-01", "2026-01-01T00:00:00Z", "2026-01-02"]),
                  st.sampled_from(["candidates", "candidates", "candidates", "candidates", "curated", "rejected"]), st.booleans(),
                  st.sampled_from([None, 1.0, 2.0, 2.0, 2.5, 2.5]))
RECORD = st.tuples(st.sampled_from(["sessions", "outbox/sessions"]), EPISODES.filter(bool),
                   st.sampled_from([True, True, False]), BRANCHES)


def _db(entries: list[tuple[Any, ...]], records: list[tuple[Any, ...]]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    for create in index._TABLES + facts._CREATE:
        db.execute(create)
    for folder, name, ext, episode, when, source, tracked, since in entries:
        db.execute("INSERT OR IGNORE INTO files (folder, name, q_live, q_episode, q_when) VALUES (?, ?, 1, ?, ?)",
                   (folder, name + ext, episode, when))
        db.execute("INSERT OR IGNORE INTO listed VALUES (?, ?, ?, ?)", (source, folder, name + ext, int(tracked)))
        if since is not None:
            db.execute("INSERT OR IGNORE INTO derived VALUES (?, 'ts', 1, ?)", (name + ext, since))
    for folder, episode, named, branch in records:
        db.execute("INSERT OR IGNORE INTO files (folder, name, b_named, b_branch) VALUES (?, ?, ?, ?)",
                   (folder, episode + ".md", int(named), branch if named else None))
    return db


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(ENTRY, min_size=3, max_size=16), records=st.lists(RECORD, min_size=2, max_size=10),
       branch=BRANCHES, limit=st.integers(1, 6), opened=st.dictionaries(EPISODES.filter(bool), BRANCHES))
@example(entries=[("k/candidates", n, ".md", "e1", "2026-01-01", "candidates", True, 1.0) for n in ("a", "a-b")],
         records=[("sessions", "e1", True, "main")], branch="main", limit=2, opened={})  # ids, not names, order
def test_the_head_sql_cuts_is_python_s_order(entries: list[tuple[Any, ...]], records: list[tuple[Any, ...]],
                                             branch: str | None, limit: int, opened: dict[str, str | None]) -> None:
    db = _db(entries, records)
    listed = db.execute(queue.LISTED, FOLDERS).fetchall()
    headed = db.execute(queue.HEADED, {**FOLDERS, "branch": branch, "limit": limit}).fetchall()
    # Python's placing (`queue.branches_of`, the ledger's opening from `opened`) and key (`agenda.ranked`)
    ws = SimpleNamespace(ledger=SimpleNamespace(opened_branches=lambda es: {e: opened[e] for e in es if e in opened}))
    branches = queue.branches_of(ws, [(r[2], *r[9:13]) for r in listed])  # type: ignore[arg-type]
    keyed = {}
    for folder, name, episode, when, ts, number, since, source, tracked, *_ in listed:
        row = agenda.Row(folder + "/" + name, name[:-3] if name.endswith(".md") else name.rpartition(".")[0] or name,
                         episode, when, None if since is None else Age(since, "ledger", ""), tracked=bool(tracked),
                         source=source)
        keyed[(folder, name)] = agenda._key(branch, row, branches.get(episode) if episode else None)
    every = db.execute(queue.HEADED, {**FOLDERS, "branch": branch, "limit": len(listed) + 1}).fetchall()
    placed = {(r[0], r[1]): r[13] for r in every if r[13] is not None}
    for (folder, name), group in placed.items():  # SQL places an entry where Python does, dated by the ledger
        assert keyed[(folder, name)][0] == group and keyed[(folder, name)][1] == 0 and name.endswith(".md")
    cut = [r for r in headed if r[14] is not None]
    assert [(r[0], r[1]) for r in cut] == sorted(placed, key=keyed.__getitem__)[:limit]
    assert all(r[14] == len(placed) for r in cut)
    rest = {(r[0], r[1]) for r in headed if r[14] is None}
    assert rest == {(r[0], r[1]) for r in listed if (r[0], r[1]) not in placed or not r[8]}
    for folder, name, episode, _, _, _, since, source, *_ in listed:  # and gives up only where it must
        stated = episode and db.execute("SELECT 1 FROM files WHERE folder IN ('sessions', 'outbox/sessions') "
                                         "AND name = ? AND b_named = 1", (episode + ".md",)).fetchall()
        if (source == "candidates" and since is not None and name.endswith(".md") and
                (not episode or (queue.ID_PATTERN.match(episode) and stated))):
            assert (folder, name) in placed
