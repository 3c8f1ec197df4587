"""The queue's cache is derived from the files and never a second source of truth: whatever happens
to a candidate or a session record (written anew, edited in place at the same size, replaced by a
link, deleted), the queue read through the cache is the queue read from the files."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from conftest import Repo, make_repo
from majordomus.knowledge import queue
from majordomus.store import filecache, records
from majordomus.store import index as store_index
from majordomus.store.workspace import Workspace

RECORD = """---
id: {rid}
kind: knowledge/v1
class: {cls}
status: {status}
epistemics: decided
title: "{title}"
date: "2026-01-02"
provenance:
  origin: extracted
  derived_from:
    - "session:{episode}"
---
body
"""
SESSION = '---\nid: "{episode}"\nkind: session/v1\nbranch: "{branch}"\n---\n'
IDS = ("c1", "c2", "c3")
EPISODES = ("e1", "e2")


def _uncached(ws: Workspace) -> list[Any]:
    """The queue as the files say it, without the cache."""
    raw = queue.fronts(ws.candidates)
    branches = queue.episode_branches(ws, {e for *_, e in raw if e}, {}, cache=None)
    return sorted((rid, {k: f[k] for k in ("class", "status", "title") if k in f}, e, branches.get(e) if e else None)
                  for rid, _, f, e in raw)


def _cached(ws: Workspace) -> list[Any]:
    return sorted((c.id, {k: v for k, v in (("class", c.cls), ("status", c.status), ("title", c.title)) if v},
                   c.episode, c.branch)
                  for c in queue.waiting(ws, ledger_branches={}))


def _tick(path: Path, n: int) -> None:
    """A later modification time, as a clock that moved on would give (ns apart on some file
    systems, a few ms on others)."""
    st_ = path.stat()
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 10_000_000 * (n + 1)))


ACTIONS = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(IDS), st.sampled_from(("candidate", "superseded")),
              st.sampled_from(("fact", "lesson")), st.sampled_from(("T one", "T two")), st.sampled_from(EPISODES)),
    st.tuples(st.just("inplace"), st.sampled_from(IDS), st.sampled_from(("status", "title", "class"))),
    st.tuples(st.just("delete"), st.sampled_from(IDS)),
    st.tuples(st.just("link"), st.sampled_from(IDS)),
    st.tuples(st.just("session"), st.sampled_from(EPISODES), st.sampled_from(("main", "topic"))),
    st.tuples(st.just("garble"),),
    st.tuples(st.just("read"),),
)


def _act(ws: Workspace, action: tuple[Any, ...], n: int) -> None:
    kind = action[0]
    folder = ws.candidates
    if kind == "write":
        _, rid, status, cls, title, episode = action
        tmp = folder / f".tmp.{rid}"
        tmp.write_text(RECORD.format(rid=rid, status=status, cls=cls, title=title, episode=episode))
        os.replace(tmp, folder / f"{rid}.md")  # as every writer of ours does
    elif kind == "inplace":  # an editor that writes in place: same inode, same size
        path = folder / f"{action[1]}.md"
        if path.is_file() and not path.is_symlink():
            text = path.read_text()
            swaps = {"status": (("candidate", "superseded"), ("superseded", "candidate")),
                     "title": (("T one", "T won"), ("T two", "T too")),
                     "class": (("fact", "lore"), ("lesson", "lessen"))}[action[2]]
            for old, new in swaps:
                if old in text:
                    text = text.replace(old, new + " " * (len(old) - len(new)), 1) if len(new) < len(old) \
                        else text.replace(old, new, 1)
                    break
            with open(path, "r+") as handle:
                handle.write(text)
                handle.truncate()
            _tick(path, n)
            # a write in place keeps the folder's stamp: `knowledge check` refreshes the index's rows
            store_index.of(ws).refresh([folder])
    elif kind == "delete":
        (folder / f"{action[1]}.md").unlink(missing_ok=True)
    elif kind == "link":
        path = folder / f"{action[1]}.md"
        path.unlink(missing_ok=True)
        target = folder.parent / f"elsewhere-{action[1]}.md"
        target.write_text(RECORD.format(rid=action[1], status="candidate", cls="fact", title="linked", episode="e1"))
        path.symlink_to(target)
    elif kind == "session":
        _, episode, branch = action
        path = ws.sessions / f"{episode}.md"
        path.write_text(SESSION.format(episode=episode, branch=branch))
        _tick(path, n)
    elif kind == "garble":
        cache = ws.state / store_index.FILE
        if cache.exists():
            cache.write_bytes(cache.read_bytes()[: len(cache.read_bytes()) // 2])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("queue"), capture=False)


@given(actions=st.lists(ACTIONS, max_size=25))
def test_the_queue_through_its_cache_is_the_queue_of_the_files(
        store: Repo, monkeypatch: pytest.MonkeyPatch, actions: list[tuple[Any, ...]]) -> None:
    monkeypatch.setattr(filecache, "RACY_NS", 0)  # trust every stat at once: the stat key is what is tested
    ws = Workspace(store.root)
    store_index.of(ws).close()
    store_index._OPEN.clear()  # an index a garbled file made unusable in an earlier example is opened anew
    for path in [*ws.candidates.glob("*.md"), *ws.sessions.glob("e*.md"), ws.state / store_index.FILE]:
        if path.name != "README.md":
            path.unlink(missing_ok=True)
    for n, action in enumerate(actions):
        _act(ws, action, n)
        assert _cached(ws) == _uncached(ws)
        # the briefing's queue, counted and ordered from the index's columns, each entry made whole
        briefed = queue.briefed(ws, ledger_branches={})
        # None: the index a garbled file made unusable to this process (the briefing reads the files)
        assert briefed is not None or ("garble",) in actions[:n + 1]
        assert briefed is None or [queue.whole(ws, w) for w in briefed] == queue.waiting(ws, ledger_branches={})
        # and made whole at once, a screenful's front matter asked of the index in one query (`wholes`)
        assert briefed is None or queue.wholes(ws, briefed) == queue.waiting(ws, ledger_branches={})
        assert briefed is None or queue.wholes(ws, briefed[1::2]) == queue.waiting(ws, ledger_branches={})[1::2]
        assert briefed is None or [(w.id, w.episode, w.branch, w.when) for w in briefed] == [
            (c.id, c.episode, c.branch, c.when) for c in queue.waiting(ws, ledger_branches={})]
        assert queue.status_names(ws, ws.candidates) == {p.name: records.quick_status(p)
                                                          for p in records.files(ws.candidates)}
        counted: dict[str, int] = {}
        for p in records.files(ws.candidates):
            status = records.quick_status(p) or "unreadable"
            counted[status] = counted.get(status, 0) + 1
        assert queue.status_counts(ws)["candidates"] == dict(sorted(counted.items()))


def test_statuses_counted_by_the_index_are_those_of_the_files(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A candidate with a reviewed record beside it counts as reviewed, one without a status or
    unreadable (an empty status too, though it keeps it name by name) as unreadable; the same with the index, without it
    and name by name."""
    ws = Workspace(repo.root)
    for rid, status in (("c1", "candidate"), ("c2", "candidate"), ("c3", "superseded"), ("c4", '""'),
                        ("c5", "candidate")):
        (ws.candidates / f"{rid}.md").write_text(
            RECORD.format(rid=rid, status=status, cls="fact", title="T", episode="e1"))
    (ws.candidates / "c6.md").write_text("no front matter\n")
    (ws.candidates / "c7.md").write_text(RECORD.replace("status: {status}\n", "").format(
        rid="c7", cls="fact", title="T", episode="e1"))
    (ws.curated / "c2.md").write_text(RECORD.format(rid="c2", status="verified", cls="fact", title="T", episode="e1"))
    (ws.curated / "c3.md").write_text(RECORD.format(rid="c3", status="superseded", cls="fact", title="T",
                                                    episode="e1"))
    expected = {"candidates": {"candidate": 2, "reviewed": 1, "superseded": 1, "unreadable": 3},
                "curated": {"superseded": 1, "verified": 1}}
    names = {"c1.md": "candidate", "c2.md": "reviewed", "c3.md": "superseded", "c4.md": "", "c5.md": "candidate",
             "c6.md": None, "c7.md": None}
    for _ in range(2):  # the index built, then as kept
        assert queue.status_counts(ws) == expected
        assert {k: v for k, v in queue.status_names(ws, ws.candidates).items() if k != "README.md"} == names
    store_index.of(ws).close()
    monkeypatch.setattr(store_index.Index, "db", lambda self: None)
    assert queue.status_counts(ws) == expected
    assert {k: v for k, v in queue.status_names(ws, ws.candidates).items() if k != "README.md"} == names


def test_an_edit_within_one_clock_tick_is_seen(repo: Repo) -> None:
    """Two writes in place, same size, same modification time: the second is still read, because
    a file that changed in the last two seconds is never trusted to its stat."""
    ws = Workspace(repo.root)
    path = ws.candidates / "c1.md"
    path.write_text(RECORD.format(rid="c1", status="candidate", cls="fact", title="T one", episode="e1"))
    stamp = path.stat().st_mtime_ns
    assert [c.title for c in queue.waiting(ws)] == ["T one"]
    with open(path, "r+") as handle:
        handle.write(path.read_text().replace("T one", "T won"))
    os.utime(path, ns=(stamp, stamp))
    assert [c.title for c in queue.waiting(ws)] == ["T won"]


def test_an_unchanged_file_is_not_read_again(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace(repo.root)
    for n in range(5):
        (ws.candidates / f"c{n}.md").write_text(
            RECORD.format(rid=f"c{n}", status="candidate", cls="fact", title=f"T {n}", episode="e1"))
        (ws.sessions / "e1.md").write_text(SESSION.format(episode="e1", branch="main"))
    monkeypatch.setattr(filecache, "RACY_NS", 0)
    first = queue.waiting(ws)
    read: list[Path] = []
    front, branch = queue._front, queue._record_branch
    monkeypatch.setattr(queue, "_front", lambda p, *head: read.append(Path(p)) or front(p, *head))
    monkeypatch.setattr(queue, "_record_branch", lambda p: read.append(p) or branch(p))
    assert queue.waiting(ws) == first and read == []
    assert {c.branch for c in first} == {"main"}
    (ws.candidates / "new.tmp").write_text(  # written as every writer of ours does: temp + rename
        RECORD.format(rid="c2", status="superseded", cls="fact", title="T 2", episode="e1"))
    os.replace(ws.candidates / "new.tmp", ws.candidates / "c2.md")
    assert [c.id for c in queue.waiting(ws)] == ["c0", "c1", "c3", "c4"] and read == [ws.candidates / "c2.md"]


def test_a_file_too_fresh_for_its_stat_is_read_each_time(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Written in the last two seconds, a record is never answered by its stamp: it is read again
    by every reader until it settles, so other bytes of the same size are seen at once."""
    ws = Workspace(repo.root)
    for n in range(3):
        (ws.candidates / f"c{n}.md").write_text(
            RECORD.format(rid=f"c{n}", status="candidate", cls="fact", title=f"T {n}", episode="e1"))
    monkeypatch.setattr(filecache, "RACY_NS", 10**15)  # every file is too fresh for its stat
    monkeypatch.setattr(filecache, "FINE_NS", 10**15)
    first = queue.waiting(ws)
    parsed: list[str] = []
    front = queue._front
    monkeypatch.setattr(queue, "_front", lambda p, *head: parsed.append(Path(p).name) or front(p, *head))
    assert queue.waiting(ws) == first and parsed == ["c0.md", "c1.md", "c2.md"]
    (ws.candidates / "c1.md").write_text(  # same length, other bytes, written in place
        RECORD.format(rid="c1", status="candidate", cls="fact", title="U 1", episode="e1"))
    assert [c.title for c in queue.waiting(ws)] == ["T 0", "U 1", "T 2"]


@given(st.lists(st.one_of(
    st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,130}\Z"),  # ids, and a few a character too long
    st.text(alphabet="ab.-_\n/\u0663\u00e9 9", max_size=6),  # a newline, a slash, a non-ASCII digit, nothing
), max_size=12))
@example(["e1", "a\nb"])  # two ids to a pattern over lines, one name to `ID_PATTERN`
@example(["e1", "e2", ""])
def test_the_episodes_checked_at_once_are_those_each_check_passes(names: list[str]) -> None:
    """`episode_branches` checks every episode the queue names with one pattern over them all; any
    name holding a newline or failing alone must leave exactly the names `ID_PATTERN` passes."""
    from majordomus.base.ids import ID_PATTERN

    assert queue._ids(set(names)) == sorted(n for n in set(names) if ID_PATTERN.match(n))
