"""The verified records read through their cache (`known.cache.json`) are the records the files
hold, whatever happens to a curated record (written anew, edited in place at the same size,
superseded, replaced by a link, deleted, the cache garbled); and an unchanged file is not read
again."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import Repo, make_repo
from majordomus.knowledge import known
from majordomus.store import filecache
from majordomus.store import index as store_index
from majordomus.store.workspace import Workspace

RECORD = """---
id: {rid}
kind: knowledge/v1
class: {cls}
status: {status}
epistemics: decided
title: "{title}"
date: "2026-01-0{day}"
provenance:
  origin: authored
  derived_from:
    - "session:e1"
relations:
  - type: relates_to
    target: "file:{path}"
---
body
"""
IDS = ("k1", "k2", "k3")


def _write(folder: Path, rid: str, status: str = "verified", cls: str = "fact", title: str = "T one",
           day: int = 1, path: str = "src/a.py") -> None:
    tmp = folder / f".tmp.{rid}"
    tmp.write_text(RECORD.format(rid=rid, status=status, cls=cls, title=title, day=day, path=path))
    os.replace(tmp, folder / f"{rid}.md")  # as every writer of ours does


ACTIONS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(IDS), st.sampled_from(("verified", "superseded")),
              st.sampled_from(("fact", "lesson")), st.sampled_from(("T one", "T two")), st.integers(1, 9),
              st.sampled_from(("src/a.py", "docs/"))),
    st.tuples(st.just("inplace"), st.sampled_from(IDS), st.sampled_from(("status", "title", "class", "path"))),
    st.tuples(st.just("delete"), st.sampled_from(IDS)),
    st.tuples(st.just("link"), st.sampled_from(IDS)),
    st.tuples(st.just("garble"),),
)


def _act(ws: Workspace, action: tuple[Any, ...], n: int) -> None:
    kind, folder = action[0], ws.curated
    if kind == "write":
        _write(folder, *action[1:])
    elif kind == "inplace":  # an editor that writes in place: same inode, same size
        path = folder / f"{action[1]}.md"
        if path.is_file() and not path.is_symlink():
            text = path.read_text()
            swaps = {"status": (("verified", "superseded"), ("superseded", "verifiedx")),
                     "title": (("T one", "T won"), ("T two", "T too")),
                     "class": (("fact", "lore"), ("lesson", "lessen")),
                     "path": (("src/a.py", "src/b.py"), ("docs/", "doc2/"))}[action[2]]
            for old, new in swaps:
                if old in text:
                    text = text.replace(old, new.ljust(len(old)) if len(new) < len(old) else new, 1)
                    break
            with open(path, "r+") as handle:
                handle.write(text)
                handle.truncate()
            st_ = path.stat()  # a later modification time, as a clock that moved on would give
            os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 10_000_000 * (n + 1)))
            # a write in place keeps the folder's stamp: `knowledge check` refreshes the index's rows
            store_index.of(ws).refresh([folder])
    elif kind == "delete":
        (folder / f"{action[1]}.md").unlink(missing_ok=True)
    elif kind == "link":
        path = folder / f"{action[1]}.md"
        path.unlink(missing_ok=True)
        target = folder.parent / f"elsewhere-{action[1]}.md"
        target.write_text(RECORD.format(rid=action[1], status="verified", cls="fact", title="linked", day=1,
                                        path="x"))
        path.symlink_to(target)
    elif kind == "garble":
        cache = ws.state / store_index.FILE
        if cache.exists():
            cache.write_bytes(cache.read_bytes()[: len(cache.read_bytes()) // 2])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("known"), capture=False)


@given(actions=st.lists(ACTIONS, max_size=25))
def test_the_verified_records_through_their_cache_are_those_of_the_files(
        store: Repo, monkeypatch: pytest.MonkeyPatch, actions: list[tuple[Any, ...]]) -> None:
    monkeypatch.setattr(filecache, "RACY_NS", 0)  # trust every stat at once: the stat key is what is tested
    ws = Workspace(store.root)
    for path in [*ws.curated.glob("*.md"), ws.state / store_index.FILE]:
        if path.name != "README.md":
            path.unlink(missing_ok=True)
    for n, action in enumerate(actions):
        _act(ws, action, n)
        assert known.verified(ws.curated, ws) == known.verified(ws.curated)


def test_an_unchanged_file_is_not_read_again(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(repo.root)
    for n in range(5):
        _write(ws.curated, f"k{n}", title=f"T {n}")
    monkeypatch.setattr(filecache, "RACY_NS", 0)
    first = known.verified(ws.curated, ws)
    assert [r.title for r in first] == [f"T {n}" for n in range(5)]
    read: list[Path] = []
    reader = known._read
    monkeypatch.setattr(known, "_read", lambda p: read.append(p) or reader(p))
    assert known.verified(ws.curated, ws) == first and read == []
    _write(ws.curated, "k2", status="superseded", title="T 2")
    assert [r.id for r in known.verified(ws.curated, ws)] == ["k0", "k1", "k3", "k4"]
    assert read == [ws.curated / "k2.md"]


def test_the_verified_list_is_read_from_its_own_index(repo: Repo, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The verified list's kept values are read from the index `files_known_text` (folder, name,
    stamp and the list's value), not from the rows, which hold every view's JSON; an index kept by
    the version before it (schema 11, without it) is rebuilt, and answers the same."""
    import sqlite3

    ws = Workspace(repo.root)
    for n in range(5):
        _write(ws.curated, f"k{n}", title=f"T {n}", status="superseded" if n == 3 else "verified")
    monkeypatch.setattr(filecache, "RACY_NS", 0)
    expected = known.verified(ws.curated)
    assert known.verified(ws.curated, ws) == expected and len(expected) == 4
    store_index.of(ws).close()
    store_index._OPEN.clear()
    with sqlite3.connect(ws.state / store_index.FILE) as db:
        db.execute("DROP INDEX files_known_text")
        db.execute("UPDATE meta SET value = '11' WHERE key = 'schema'")
    db.close()
    assert known.verified(ws.curated, ws) == expected
    assert "was of another version: rebuilt it" in capsys.readouterr().err
    db = store_index.of(ws).db()
    assert db is not None
    statements: list[str] = []
    db.set_trace_callback(statements.append)
    assert known.verified(ws.curated, ws) == expected
    reads = [s for s in statements if s.startswith("SELECT name, stamp, known")]
    assert reads and all("INDEXED BY files_known_text" in s for s in reads)
