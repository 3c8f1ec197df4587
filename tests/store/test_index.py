"""The knowledge index (`store/index.py`) is derived, never a source: every reader says the same
bytes with it, without it (deleted) and with it garbled, after records are added, acted on,
edited by hand, and after git brings other records (a checkout, a merge as a pull makes)."""
from __future__ import annotations

import json
import os
import re
import sqlite3
import time
from typing import Any

import pytest

from conftest import Repo
from majordomus.knowledge import queue
from majordomus.store import filecache
from majordomus.store import index as store_index
from majordomus.store.workspace import Workspace
from kbstore import RECORD, build

READERS = (("knowledge", "candidates", "--json"), ("knowledge", "status", "--json"),
           ("knowledge", "search", "--json"), ("knowledge", "search", "tabs"), ("context",))
INDEX = (".ai", "local", "state", "index.sqlite3")
KB_FOLDER = ".ai/repo/knowledge"


def _steady(value: Any) -> Any:
    """A reader's JSON without what the clock moves (how many minutes an entry waited)."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in ("age_minutes", "age_detail", "stale_minutes")}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def outputs(repo: Repo) -> list[Any]:
    found = []
    for argv in READERS:
        proc = repo.mj(*argv)
        out = _steady(json.loads(proc.stdout)) if "--json" in argv and proc.returncode == 0 else proc.stdout
        found.append((proc.returncode, out))
    return found


def same_without_index(repo: Repo) -> list[Any]:
    """The readers' outputs through the index, then with the index deleted: the same."""
    built = outputs(repo)
    kept = outputs(repo)
    index = repo.root.joinpath(*INDEX)
    assert index.is_file()
    index.unlink()
    assert outputs(repo) == kept == built
    return kept


def _write(repo: Repo, folder: str, rid: str, title: str) -> None:
    """As every writer of ours (and git) does: a temporary file renamed into place."""
    where = repo.root / ".ai" / "repo" / "knowledge" / folder
    (where / f".tmp.{rid}").write_text(RECORD.format(rid=rid, title=title))
    os.replace(where / f".tmp.{rid}", where / f"{rid}.md")


def test_every_reader_says_the_same_with_and_without_the_index(repo: Repo) -> None:
    store = build(repo)
    first = same_without_index(repo)
    _write(repo, "candidates", "added-one", "Tabs are added")
    added = same_without_index(repo)
    assert added != first and "added-one" in json.dumps(added)
    repo.mj("knowledge", "promote", store.decision, input="reviewed\n", check=True)  # an act
    acted = same_without_index(repo)
    assert acted != added
    _write(repo, "candidates", "added-one", "Tabs are edited by hand")  # a hand edit through a rename
    edited = same_without_index(repo)
    assert "Tabs are edited by hand" in json.dumps(edited)


def test_git_bringing_other_records_is_seen(repo: Repo) -> None:
    build(repo)
    repo.git("add", "-A")
    repo.commit("the store")
    repo.git("checkout", "-q", "-b", "other")
    _write(repo, "candidates", "on-other", "Tabs on the other branch")
    repo.git("add", "-A")
    repo.commit("a record on other")
    on_other = same_without_index(repo)
    repo.git("checkout", "-q", "main")
    on_main = same_without_index(repo)
    assert "on-other" in json.dumps(on_other) and "on-other" not in json.dumps(on_main)
    repo.git("merge", "-q", "--ff-only", "other")  # what a pull does once it fetched
    pulled = same_without_index(repo)
    assert "on-other" in json.dumps(pulled)


def test_a_garbled_index_is_rebuilt_with_one_line(repo: Repo) -> None:
    build(repo)
    kept = outputs(repo)
    index = repo.root.joinpath(*INDEX)
    index.write_bytes(b"not an index at all" * 100)
    proc = repo.mj("knowledge", "candidates", "--json")
    assert proc.stderr.count("knowledge index") == 1 and "rebuilt" in proc.stderr
    assert outputs(repo) == kept
    assert repo.mj("knowledge", "candidates", "--json").stderr == proc.stderr.replace(
        proc.stderr.splitlines()[0] + "\n", "", 1)  # said once: the next reader finds it sound


def test_a_kept_value_that_is_not_one_json_value_is_not_trusted(repo: Repo) -> None:
    """A view's kept values are decoded together, in one `json.loads`: a value that is not one
    JSON value (written by no reader of ours) costs the index, never a neighbouring row its answer."""
    build(repo)
    kept = outputs(repo)
    assert outputs(repo) == kept  # by now every settled record's values are kept
    with sqlite3.connect(repo.root.joinpath(*INDEX)) as db:
        changed = db.execute("UPDATE files SET queue = '1,2' WHERE queue IS NOT NULL").rowcount
    assert changed > 0
    assert outputs(repo) == kept


def test_a_record_rewritten_in_place_is_caught_up_by_a_refresh(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A big folder is trusted to its stamp (SCAN_BELOW lowered to 0 here): what an editor rewrote in
    place is caught up by `refresh`, which `knowledge check` runs; a small one is seen at once."""
    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    ws = Workspace(repo.root)
    _write(repo, "candidates", "in-place", "Tabs before")
    assert [c.title for c in queue.waiting(ws)] == ["Tabs before"]
    path = ws.candidates / "in-place.md"
    with open(path, "r+") as handle:  # an editor writing in place: the folder's stamp stays
        handle.write(RECORD.format(rid="in-place", title="Tabs after!"))
    assert [c.title for c in queue.waiting(ws)] == ["Tabs after!"]  # a small folder: each file checked
    monkeypatch.setattr(store_index, "SCAN_BELOW", 0)
    with open(path, "r+") as handle:
        handle.write(RECORD.format(rid="in-place", title="Tabs later"))
    store_index.of(ws).refresh([ws.candidates])
    assert [c.title for c in queue.waiting(ws)] == ["Tabs later"]


def _human(repo: Repo) -> tuple[int, list[str], str]:
    """`knowledge candidates` as a person reads it, the WAITING cell aside (the clock moves it)."""
    proc = repo.mj("knowledge", "candidates")
    rows = [re.sub(r"  \d+ (?:min|h|days)  ", "  ", line) for line in proc.stdout.splitlines()]
    return proc.returncode, rows, proc.stderr


def test_the_head_of_the_queue_ordered_in_the_index_is_the_files_own(repo: Repo) -> None:
    """`knowledge candidates` filters, counts and orders the queue in the index (the columns kept
    beside each record's values) and decodes only the rows it shows: the rows of a read of every
    file, after a candidate is added, edited out of the queue, or reviewed (its record beside it)."""
    build(repo)
    for k in range(3):
        _write(repo, "candidates", f"e9-{k:012d}", f"Tabs number {k}")

    def same() -> tuple[int, list[str], str]:
        kept = _human(repo)
        repo.root.joinpath(*INDEX).unlink()
        assert _human(repo) == kept
        return kept

    first = same()
    assert sum("Tabs number" in row for row in first[1]) == 3
    _write(repo, "candidates", "e9-000000000001", "Tabs number 1")
    path = repo.root / KB_FOLDER / "candidates" / "e9-000000000001.md"
    text = path.read_text().replace("status: candidate", "status: superseded")
    (path.parent / ".tmp.x").write_text(text)
    os.replace(path.parent / ".tmp.x", path)  # out of the queue, through a rename
    edited = same()
    assert not any("Tabs number 1" in row for row in edited[1]) and len(edited[1]) == len(first[1]) - 1
    curated = repo.root / KB_FOLDER / "curated"
    (curated / ".tmp.y").write_text(RECORD.format(rid="e9-000000000002", title="Tabs number 2").replace(
        "status: candidate", "status: verified"))
    os.replace(curated / ".tmp.y", curated / "e9-000000000002.md")  # reviewed: its record beside it
    reviewed = same()
    assert not any("Tabs number 2" in row for row in reviewed[1]) and len(reviewed[1]) == len(edited[1]) - 1


def test_the_queue_follows_git_s_listing_kept_in_the_index(repo: Repo) -> None:
    """What git lists of the queue (tracked or not, ignored or not) is kept in the index with the
    stamps of what the listing depends on: a `git add` and an ignore rule show at once."""
    build(repo)
    for k in range(3):
        _write(repo, "candidates", f"e9-{k:012d}", f"Tabs number {k}")

    def same() -> tuple[int, list[str], str]:
        kept = _human(repo)
        assert _human(repo) == kept
        repo.root.joinpath(*INDEX).unlink()
        assert _human(repo) == kept
        return kept

    first = same()
    assert "4 candidate(s) not tracked by git" in first[2]
    repo.git("add", f"{KB_FOLDER}/candidates/e9-000000000000.md")
    added = same()
    assert "3 candidate(s) not tracked by git" in added[2] and "e9-000000000000" not in added[2]
    (repo.root / ".gitignore").write_text("e9-000000000001.md\n")
    ignored = same()
    assert not any("Tabs number 1" in row for row in ignored[1]) and len(ignored[1]) == len(added[1]) - 1


def test_a_session_record_placing_the_queue_elsewhere_is_seen(repo: Repo) -> None:
    """The branch each candidate is placed on comes from its episode's session record, kept in the
    index: a record rewritten (as a close writes it: a rename) to close on another branch moves its
    candidates there, through the index as without it."""
    build(repo)
    record = repo.root / ".ai" / "repo" / "sessions" / "e1.md"
    first = _human(repo)
    assert first[1] and all(" main " in row for row in first[1][1:])
    text = record.read_text()
    assert re.search(r"^branch: \"?main\"?$", text, re.M)
    (record.parent / ".tmp.e1").write_text(re.sub(r"^branch: \"?main\"?$", "branch: \"elsewhere\"", text, flags=re.M))
    os.replace(record.parent / ".tmp.e1", record)
    moved = _human(repo)
    assert moved[1][1:] and all(" elsewhere " in row for row in moved[1][1:])
    repo.root.joinpath(*INDEX).unlink()
    assert _human(repo) == moved


def test_a_session_record_edited_in_place_in_a_trusted_folder_is_caught_up_by_knowledge_check(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of 1,000 session records or more is trusted to its stamp, which an edit in place
    (same inode) leaves as it was; `knowledge check`, the pre-commit gate that reads every session
    record anyway, catches the branch it states up, as it does the record folders."""
    build(repo)
    monkeypatch.setattr(store_index, "SCAN_BELOW", 0)  # every folder trusted to its stamp, as a big one is
    time.sleep(filecache.FINE_NS / 1e9 + 0.02)  # the folders' stamps vouch for what build wrote
    assert repo.mj("knowledge", "candidates").returncode == 0  # the index built, git's listing in it

    def branch() -> set[str | None]:
        rows = queue.listed_rows(Workspace(repo.root))
        assert rows
        return {row[10] for row in rows if row[2] == "e1"}

    assert branch() == {"main"}
    record = repo.root / ".ai" / "repo" / "sessions" / "e1.md"
    text = record.read_text()
    before = record.stat()
    record.write_text(re.sub(r"^branch: \"?main\"?$", "branch: \"elsewhere\"", text, flags=re.M))
    os.utime(record, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert record.stat().st_ino == before.st_ino
    assert branch() == {"main"}  # trusted to the folder's stamp: not seen yet
    assert repo.mj("knowledge", "check").returncode in (0, 10)
    assert branch() == {"elsewhere"}


def test_status_counted_in_the_index_is_the_files_own(repo: Repo) -> None:
    """`knowledge status` counts the store in the index (git's listing as rows, each record's kept
    summary): the same answer as from every file, with a record that cannot be read, one git tracks
    that is missing from the tree, and after a record's status changes."""
    build(repo)
    where = repo.root / KB_FOLDER / "candidates"
    (where / ".tmp.bad").write_text("---\nid: broken\nstatus: [candidate\n---\nNo front matter.\n")
    os.replace(where / ".tmp.bad", where / "broken.md")
    repo.commit("two more", {f"{KB_FOLDER}/curated/gone.md": RECORD.format(rid="gone", title="Gone")})
    (repo.root / KB_FOLDER / "curated" / "gone.md").unlink()

    def status() -> Any:
        proc = repo.mj("knowledge", "status", "--json")
        assert proc.returncode == 0, proc.stderr
        return _steady(json.loads(proc.stdout))

    def same() -> Any:
        kept = status()
        assert status() == kept
        repo.root.joinpath(*INDEX).unlink()
        assert status() == kept
        return kept

    first = same()
    assert sorted(u["id"] for u in first["unreadable"]) == ["broken", "gone"]
    _write(repo, "candidates", "added-one", "Tabs are added")
    added = same()
    assert added["by_status"]["candidate"] == first["by_status"]["candidate"] + 1
    assert added["queue"]["length"] == first["queue"]["length"] + 1
    assert f"{KB_FOLDER}/candidates/added-one.md" in added["untracked"]
    _write(repo, "candidates", "broken", "Broken no more")  # every entry readable: the untracked counted alone
    _write(repo, "curated", "gone", "Gone no more")
    _write(repo, "candidates", "aaa-first", "Tabs first")
    mended = same()
    assert mended["unreadable"] == [] and mended["records"] == added["records"] + 1
    assert mended["untracked"][:2] == [f"{KB_FOLDER}/candidates/aaa-first.md", f"{KB_FOLDER}/candidates/added-one.md"]


def test_a_view_kept_without_its_columns_is_read_again_before_a_query(repo: Repo) -> None:
    """A reader that keeps the queue's values but not their columns (one that gives `view` no `keys`)
    leaves the columns empty: the queue's query reads those files again, never trusts an empty one."""
    build(repo)
    kept = _human(repo)
    assert len(kept[1]) > 1
    repo.root.joinpath(*INDEX).unlink()
    ws = Workspace(repo.root)
    index = store_index.Index(ws.root, ws.state)
    assert [n for n, _ in index.view(ws.candidates, "queue", queue._VERSION, queue._read)]
    index.close()
    with sqlite3.connect(repo.root.joinpath(*INDEX)) as db:
        assert db.execute("SELECT count(*) FROM files WHERE queue IS NOT NULL AND q_live IS NULL").fetchone()[0] > 0
    assert _human(repo) == kept


def _counted(read: list[str]) -> store_index.Reader:
    """A view's reader that says which files it read (their titles, from the file itself)."""
    def title(path: str) -> str:
        read.append(os.path.basename(path))
        with open(path, encoding="utf-8") as handle:
            return re.findall(r'^title: "(.*)"$', handle.read(), re.M)[0]
    return title


def test_a_check_that_finds_nothing_changed_writes_nothing(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder checked file by file (doctor's integrity view) whose files all kept their stamps is
    answered without a write; an edit in place, a file added and one removed are each seen."""
    monkeypatch.setattr(filecache, "RACY_NS", 0)  # the test's files are fresh: let them vouch for themselves
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    for rid in ("one", "two", "three"):
        _write(repo, "candidates", rid, f"Tabs {rid}")
    ws = Workspace(repo.root)
    index = store_index.Index(ws.root, ws.state)
    read: list[str] = []
    titles = index.view(ws.candidates, "search", "t1", _counted(read), each=True)
    assert titles == [("one.md", "Tabs one"), ("three.md", "Tabs three"), ("two.md", "Tabs two")]
    db = index.db()
    assert db is not None
    written, read[:] = db.total_changes, []
    assert index.view(ws.candidates, "search", "t1", _counted(read), each=True) == titles
    assert index.names(ws.candidates) == ["one.md", "three.md", "two.md"]
    assert read == [] and db.total_changes == written  # nothing read, nothing written
    with open(ws.candidates / "two.md", "r+", encoding="utf-8") as handle:  # the folder's stamp stays
        handle.write(RECORD.format(rid="two", title="Tabs 2!"))
    _write(repo, "candidates", "four", "Tabs four")
    (ws.candidates / "one.md").unlink()
    assert index.view(ws.candidates, "search", "t1", _counted(read), each=True) == [
        ("four.md", "Tabs four"), ("three.md", "Tabs three"), ("two.md", "Tabs 2!")]
    assert sorted(read) == ["four.md", "two.md"] and db.total_changes > written
    index.close()


def test_a_file_too_recent_to_vouch_for_itself_is_read_each_time(repo: Repo) -> None:
    """A file changed within one tick of the file system's clock (here: just now) is read by every
    check, its value never trusted, however many checks find it unchanged."""
    _write(repo, "candidates", "fresh", "Tabs fresh")
    ws = Workspace(repo.root)
    index = store_index.Index(ws.root, ws.state)
    read: list[str] = []
    for each in (True, False, True):
        assert index.view(ws.candidates, "search", "t1", _counted(read), each=each) == [("fresh.md", "Tabs fresh")]
    assert read == ["fresh.md"] * 3
    index.close()


def test_a_file_dated_past_64_bits_of_nanoseconds_is_kept_and_checked(repo: Repo,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A stamp is kept as 32 bytes; a modification time past 2262 (beyond 64 bits of nanoseconds, where
    the file system keeps it) is kept as text instead, and the file is checked the same."""
    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    _write(repo, "candidates", "future", "Tabs ahead")
    path = repo.root / KB_FOLDER / "candidates" / "future.md"
    os.utime(path, ns=(0, 2**63 + 10**9))
    ws = Workspace(repo.root)
    index = store_index.Index(ws.root, ws.state)
    read: list[str] = []
    for _ in range(2):
        assert index.view(ws.candidates, "search", "t1", _counted(read), each=True) == [("future.md", "Tabs ahead")]
    assert read == ["future.md"]  # kept by its stamp
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(RECORD.format(rid="future", title="Tabs later"))
    os.utime(path, ns=(0, 2**63 + 10**9))  # the same time again: the size and change time tell
    assert index.view(ws.candidates, "search", "t1", _counted(read), each=True) == [("future.md", "Tabs later")]
    assert read == ["future.md"] * 2
    index.close()


def _queue_with_four_more(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """The built store and four candidates more, no input too recent to vouch for itself (the
    index answers)."""
    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    build(repo)
    for k in range(4):
        _write(repo, "candidates", f"e9-{k:012d}", f"Tabs number {k}")
    return Workspace(repo.root)


def test_the_head_cut_in_sql_is_the_head_of_the_whole_queue(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`knowledge candidates` without --all orders and cuts the queue in SQL (`agenda.head`): each
    head is the first rows of the whole queue ordered in Python, with the same count and the same
    untracked candidates, through the index and without it."""
    from majordomus.base import git
    from majordomus.knowledge import agenda
    from majordomus.readers import answers

    ws = _queue_with_four_more(repo, monkeypatch)
    whole, total, untracked = answers.head(ws, None)
    assert total == len(whole) > 4 and untracked
    cut = agenda.head(ws, git.branch(ws.root), 1)
    assert cut is not None and cut[1] == total  # SQL cut it: the index answered
    for limit in range(1, total + 2):
        got = answers.head(ws, limit)
        assert _steady(got[0]) == _steady(whole[:limit]) and got[1:] == (total, untracked)
    repo.root.joinpath(*INDEX).unlink()
    store_index._OPEN.clear()  # this process opened it: the next read finds none
    assert _steady(answers.head(Workspace(repo.root), 3)[0]) == _steady(whole[:3])


def test_the_whole_queue_decodes_the_values_its_query_brought(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--json` lists every entry of the queue with its title and class from the value the queue's
    query brings with each row (`LISTED_KEPT`): a title edited in place is the new one, and a kept
    value that is not JSON leaves its entries to the files, whose answer is the same."""
    from majordomus.readers import answers

    ws = _queue_with_four_more(repo, monkeypatch)
    whole = answers.head(ws, None)
    assert {"Tabs number 2"} <= {e["title"] for e in whole[0]}
    assert {tuple(e) for e in whole[0]} == {("id", "title", "class", "branch", "age_minutes", "age_source", "age_detail",
                                             "this_branch", "episode", "path", "tracked")}  # the keys, in --json's order
    _write(repo, "candidates", "e9-000000000002", "Spaces number 2")
    edited = answers.head(ws, None)
    assert "Spaces number 2" in {e["title"] for e in edited[0]} and "Tabs number 2" not in {e["title"] for e in edited[0]}
    db = sqlite3.connect(repo.root.joinpath(*INDEX))
    with db:
        changed = db.execute("UPDATE files SET queue = '[{\"title\": \"forged\"' WHERE name = 'e9-000000000001.md'").rowcount
    db.close()
    assert changed == 1
    garbled = answers.head(ws, None)
    assert _steady(garbled[0]) == _steady(edited[0]) and garbled[1:] == edited[1:]
    repo.root.joinpath(*INDEX).unlink()
    store_index._OPEN.clear()  # this process opened it: the next read finds none
    without = answers.head(Workspace(repo.root), None)
    assert _steady(without[0]) == _steady(edited[0]) and without[1:] == edited[1:]


def test_a_folder_is_trusted_to_its_stamp_from_scan_below_records(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound is exact (the count stops at it): a folder of SCAN_BELOW - 1 records is checked
    file by file (a rewrite in place seen at once), one of SCAN_BELOW is trusted to its stamp."""
    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    ws = Workspace(repo.root)
    for k in range(3):
        _write(repo, "candidates", f"e9-{k:012d}", f"Tabs number {k}")
    assert "Tabs number 0" in [c.title for c in queue.waiting(ws)]
    db = sqlite3.connect(repo.root.joinpath(*INDEX))
    (kept,) = db.execute("SELECT count(*) FROM files WHERE folder = ?", (f"{KB_FOLDER}/candidates",)).fetchone()
    db.close()
    path = ws.candidates / "e9-000000000000.md"
    monkeypatch.setattr(store_index, "SCAN_BELOW", kept + 1)
    with open(path, "r+") as handle:  # an editor writing in place: the folder's stamp stays
        handle.write(RECORD.format(rid="e9-000000000000", title="Tabs seen!"))
    assert "Tabs seen!" in [c.title for c in queue.waiting(ws)]
    monkeypatch.setattr(store_index, "SCAN_BELOW", kept)
    with open(path, "r+") as handle:
        handle.write(RECORD.format(rid="e9-000000000000", title="Tabs unseen"))
    assert "Tabs seen!" in [c.title for c in queue.waiting(ws)]  # trusted to the folder's stamp


def test_the_listing_read_from_the_listed_table_is_git_s_listing(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`listing` takes the files from the `listed` table when it holds git's listing as of now
    (parsed once, when it was kept): the same entries as git's output parsed again, tracked or
    not, a reviewed record hiding its candidate; and git's again once an input changed."""
    from majordomus.store import listing

    store = build(repo)
    repo.mj("knowledge", "promote", store.decision, input="reviewed\n", check=True)
    _write(repo, "candidates", "added-one", "Tabs are added")
    time.sleep(2.1)  # every input settled: the listing is kept
    ws = Workspace(repo.root)
    listing.listing(ws)
    assert store_index.of(ws).listed_files(*_listed_key(ws)) is not None
    from_table = listing.listing(ws)
    monkeypatch.setattr(store_index.Index, "listed_files", lambda *_: None)
    from_git = listing.listing(ws)
    assert from_table == from_git and any(not e.tracked for e in from_git.entries)
    assert [e.id for e in from_git.entries].count(store.decision) == 1
    monkeypatch.undo()
    _write(repo, "candidates", "added-two", "Tabs are added again")
    assert "added-two" in [e.id for e in listing.listing(ws).entries]


def _listed_key(ws: Workspace) -> tuple[object, list[object]]:
    from majordomus.store import listing

    specs = listing.pathspecs(ws)
    return sorted(specs.items()), listing._inputs(ws, listing._folders(ws, specs))


def test_a_held_run_checks_a_folder_file_by_file_once(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Held for a run of the rules (`hold`), a folder checked file by file is not listed again by the
    run's later readers (an edit in place after it waits for the next run), and each is again once
    released; a lost index forgets what the run held."""
    from majordomus.store import records

    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    for rid in ("one", "two"):
        _write(repo, "candidates", rid, f"Tabs {rid}")
    ws = Workspace(repo.root)
    index = store_index.Index(ws.root, ws.state)
    listed: list[str] = []
    stats = records.stats
    monkeypatch.setattr(records, "stats", lambda folder: listed.append(folder.name) or stats(folder))
    read: list[str] = []
    assert index.view(ws.candidates, "search", "t1", _counted(read), each=True) == [
        ("one.md", "Tabs one"), ("two.md", "Tabs two")]
    listed[:] = []
    index.hold()
    assert index.names(ws.candidates) == ["one.md", "two.md"]  # a folder below SCAN_BELOW: file by file
    with open(ws.candidates / "two.md", "r+", encoding="utf-8") as handle:  # the folder's stamp stays
        handle.write(RECORD.format(rid="two", title="Tabs 2!"))
    assert index.view(ws.candidates, "search", "t1", _counted(read), each=True) == [
        ("one.md", "Tabs one"), ("two.md", "Tabs two")]  # as the run's first check found it
    assert index.names(ws.curated) == [] and listed == ["candidates", "curated"]
    index.release()
    assert index.view(ws.candidates, "search", "t1", _counted(read), each=True) == [
        ("one.md", "Tabs one"), ("two.md", "Tabs 2!")]
    assert index.names(ws.candidates) == ["one.md", "two.md"]
    assert listed == ["candidates", "curated", "candidates", "candidates"]
    index.hold()
    index.names(ws.candidates)
    index._lost()
    assert index._held == set()
    index.release()
    index.close()


def test_a_view_of_a_few_names_is_the_whole_view_s_rows_of_them(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`view` with up to FEW names looks them up in SQL: the rows the whole view gives them, a name
    not in the folder left out, whether the values are kept or read now."""
    from majordomus.store import listing, records

    build(repo)
    ws = Workspace(repo.root)
    folder = ws.knowledge / "candidates"
    names = records.names(folder)
    some = [names[-1], names[0], "nothing-here.md"]
    index = store_index.of(ws)
    for _ in range(2):  # read now, then kept
        few = index.view(folder, "summary", listing.SUMMARY, listing._summary, only=some)
        whole = dict(index.view(folder, "summary", listing.SUMMARY, listing._summary))
        with monkeypatch.context() as patched:
            patched.setattr(store_index, "FEW", 0)
            assert few == index.view(folder, "summary", listing.SUMMARY, listing._summary, only=some)
        assert few == [(n, whole[n]) for n in sorted(some) if n in whole] and len(few) == 2


def test_an_answer_kept_beside_the_index_is_answered_while_nothing_writes_to_it(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`rows(..., kept=name)` keeps its answer beside the index (KEPT) with the index's state: asked
    again of an index nothing wrote to, the kept answer is answered (a forged one here, to see it);
    after any write to the index (another connection's, a record added) or in an index built
    again, the query's own."""
    ws = _queue_with_four_more(repo, monkeypatch)
    sources = [([ws.candidates, ws.curated], "queue", queue._VERSION, queue._read, queue._keys)]
    sql = ["SELECT name, q_when FROM files WHERE folder = :folder0 AND q_live = 1 ORDER BY name"]
    path = repo.root.joinpath(*INDEX)

    def ask() -> list[tuple[Any, ...]]:
        found = store_index.of(ws).rows(sources, sql, {}, kept="asked")
        assert found is not None
        return found[0]

    def forge() -> Any:
        (kept,) = (ws.state / store_index.KEPT).iterdir()
        key, answers = json.loads(kept.read_text())
        kept.write_text(json.dumps([key, [[["forged.md", "x"], *answers[0]]]]))
        return kept, key, answers

    first = ask()
    assert ("e9-000000000003.md", first[-1][1]) in first and ask() == first
    kept, key, answers = forge()
    assert ask() == [("forged.md", "x"), *first]  # kept while nothing wrote
    for shape in (5, [5], [[5]], [["no", "rows"], 7]):  # its key, not the shape `keep` wrote: asked again
        kept.write_text(json.dumps([key, shape]))
        assert ask() == first
    forge()
    db = sqlite3.connect(path)
    with db:
        db.execute("UPDATE files SET q_when = 'y' WHERE name = 'e9-000000000003.md'")
    db.close()
    assert ask() == [row if row[0] != "e9-000000000003.md" else (row[0], "y") for row in first]
    _write(repo, "candidates", "e9-000000000009", "Tabs number 9")
    assert "e9-000000000009.md" in {name for name, _ in ask()}
    assert ask() == ask()
    kept, key, answers = forge()
    store_index.of(ws).close()
    store_index._OPEN.clear()
    path.unlink()
    assert "forged.md" not in {name for name, _ in ask()}  # built again: another nonce
    with open(path, "rb") as handle:
        counter = int.from_bytes(handle.read(28)[24:], "big")
    queries, (nonce, *_) = json.loads(key)
    kept.write_text(json.dumps([json.dumps([queries, [nonce, counter]], separators=(",", ":")),
                                [[["forged.md", "x"], *answers[0]]]]))
    assert "forged.md" not in {name for name, _ in ask()}


def test_the_queue_s_ages_kept_beside_the_index_are_the_files_own(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`agenda.ages` (what `knowledge status` counts and ages) keeps its answer beside the index when
    the ledger dated every entry, and answers from it (a forged id here, to see it) while the index
    and the ledger's tail are as they were; a kept file not of its shape, a record renamed into place:
    the index's queries again. An entry the ledger does not date is dated from the files and the
    answer is not kept."""
    from majordomus.knowledge import agenda

    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    build(repo)
    ws = Workspace(repo.root)
    kept = ws.state / store_index.KEPT / "ages.json"

    def asked() -> list[Any]:
        found = agenda.ages(ws)
        assert found is not None
        return sorted(found)

    first = asked()
    assert len(first) == 2 and all(age is not None and age.source == "ledger" for _, age in first)
    assert kept.is_file() and asked() == first
    key, (distinct, ids, which) = json.loads(kept.read_text())
    kept.write_text(json.dumps([key, [distinct, ["forged", *ids[1:]], which]]))
    assert "forged" in {rid for rid, _ in asked()}  # kept while nothing wrote
    for shape in ([distinct, ids], [distinct, ids, which[:-1]], [[[1, 2]], ids, which], [distinct, [5, *ids[1:]], which], 5):
        kept.write_text(json.dumps([key, shape]))
        assert asked() == first  # its key, not the shape `ages` keeps: asked again
    kept.write_text(json.dumps([key, [distinct, ["forged", *ids[1:]], which]]))
    _write(repo, "candidates", "e9-000000000003", "Tabs by hand")  # renamed into place, no ledger line dates it
    added = asked()
    assert "forged" not in {rid for rid, _ in added} and len(added) == 3
    assert dict(added)["e9-000000000003"].source == "date"
    assert json.loads(kept.read_text())[0] == key  # an entry the files date: not kept again
    os.unlink(ws.candidates / "e9-000000000003.md")
    assert asked() == first and json.loads(kept.read_text())[0] != key


def test_the_currencies_kept_beside_the_index_follow_the_records_head_and_disputes(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`knowledge status`'s count of the verified records by currency is kept beside the index and
    answered from it (a forged one here, to see it) while the index, HEAD and the ledger's disputes
    are as they were; a kept file not of its shape, a commit changing an anchored path, a dispute, a
    record added: judged again."""
    from kbstore import anchored, curated
    from majordomus.readers import status

    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    build(repo)
    sha = repo.commit("the parser", {"src/parser.py": "x = 1\n"})
    anchored(repo, "c-anch", ("src/parser.py",), sha)
    kept = repo.root.joinpath(*INDEX[:-1], store_index.KEPT, "currencies.json")

    def asked() -> dict[str, Any]:
        return status.currencies(Workspace(repo.root))  # a Workspace asks git's refs once

    first = asked()  # the curated records' view filled: a write, so nothing kept
    assert first == {"current": 2, "may_be_stale": 0, "unknown": 0, "disputed": 0, "attention": []}
    assert not kept.exists() and asked() == first and kept.is_file() and asked() == first
    key, answer = json.loads(kept.read_text())
    kept.write_text(json.dumps([key, {**answer, "attention": ["forged"]}]))
    assert asked()["attention"] == ["forged"]  # kept while nothing moved
    for shape in ({**answer, "current": "2"}, {**answer, "attention": [5]}, {"current": 2}, [answer], 5):
        kept.write_text(json.dumps([key, shape]))
        assert asked() == first  # its key, not the shape `currencies` keeps: judged again
    kept.write_text(json.dumps([key, {**answer, "attention": ["forged"]}]))
    repo.commit("the parser takes tabs", {"src/parser.py": "x = 2\n"})  # HEAD moves, the anchored path changed
    moved = asked()
    assert moved == {"current": 1, "may_be_stale": 1, "unknown": 0, "disputed": 0, "attention": ["c-anch"]}
    assert asked() == moved
    repo.mj("knowledge", "dispute", "c-tabs", "--reason", "the parser takes tabs now", check=True)
    disputed = asked()
    assert disputed == {"current": 0, "may_be_stale": 1, "unknown": 0, "disputed": 1, "attention": ["c-anch", "c-tabs"]}
    assert asked() == disputed
    time.sleep(0.05)  # past the kernel's coarse clock: the folder's time moves (no settling tick here)
    curated(repo, "c-more", "constraint", "One more")  # a record added
    assert asked() == {**disputed, "current": 1} == asked()


def test_the_queue_s_bytes_kept_beside_the_index_are_the_files_own_at_each_read_s_clock(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`answers.encoded` (`candidates --json`, the MCP server's line of the queue) keeps the bytes it
    wrote beside the index under the whole queue's key, each entry's minutes cut out, and answers
    from them (a forged title here, to see it) while the index, the branch and the ledger's tail are
    as they were, each age counted at the read's clock; a kept file not of `keep_bytes`' shape, a
    record renamed into place or another branch: the files' queue. A title holding the mark's
    digits is written as JSON writes it, and its bytes are not kept."""
    from majordomus.base import git
    from majordomus.readers import answers, mcp_stdio
    from majordomus.readers.cli import _text

    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    build(repo)  # two candidates derived by an episode: dated by the ledger, placed by its record
    ws = Workspace(repo.root)
    kept = ws.state / store_index.KEPT / "queue.text.bin"
    clock = [time.time()]
    monkeypatch.setattr(time, "time", lambda: clock[0])

    def files() -> bytes:  # the queue of the files, as `emit_json` prints it
        value = answers._head(ws, None, git.branch(ws.root))[0]
        return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()

    def line() -> bytes:  # the MCP server's line of the queue, as `encode` writes the answer of the files
        value = {"result": answers._head(ws, None, git.branch(ws.root))[0]}
        return mcp_stdio.encode({"jsonrpc": "2.0", "id": 7, "result": {"content": [
            {"type": "text", "text": json.dumps(value, indent=2, ensure_ascii=False)}],
            "structuredContent": value, "isError": False}})

    def asked() -> Any:  # as the command line prints it
        found = answers.encoded(ws, "queue.text", _text, 1)
        return found if type(found) is bytes else _text(found)

    def served() -> bytes:  # as the MCP server writes it (`call_tool`, `_called`)
        found = answers.encoded(ws, "queue.mcp", mcp_stdio._both, 2)
        return b"".join(mcp_stdio._called(7, found if type(found) is bytes else {"result": found}))

    truth = files()
    assert asked() == truth and kept.is_file() and asked() == truth
    assert served() == line() == served()
    clock[0] += 3 * 3600 + 7  # three hours on: every age counted again
    later = files()
    assert later != truth and asked() == later and served() == line()
    data = kept.read_bytes()
    assert b"Tabs" in data
    kept.write_bytes(data.replace(b"Tabs", b"Tubs"))  # forged, the pieces' lengths as they were
    assert b"Tubs" in asked() and asked().replace(b"Tubs", b"Tabs") == later
    head, _, blob = data.partition(b"\n")
    key, (starts, lengths) = json.loads(head)
    for shape in ([starts], [starts, lengths[:-1]], [starts, [-1, *lengths[1:]]], [starts[:-1], lengths], 5):
        kept.write_bytes(json.dumps([key, shape]).encode() + b"\n" + blob)
        assert asked() == later  # its key, not `keep_bytes`' shape or its pieces: asked again
    repo.git("branch", "elsewhere")
    repo.git("symbolic-ref", "HEAD", "refs/heads/elsewhere")  # another branch, git's index untouched
    assert asked() == files() != later and asked() == files()
    repo.git("symbolic-ref", "HEAD", "refs/heads/main")
    _write(repo, "candidates", "e9-000000000003", "Tabs by hand")  # renamed into place
    assert b"Tabs by hand" in asked() and asked() == files() and served() == line()
    marked = f"Marked {answers._MARKED} in a title"
    assert repo.hook("session-start", {"session_id": "m1", "source": "startup"}).returncode == 0
    repo.mj("decision", "add", marked, "--why", "a title of its own", env={"MAJORDOMUS_EPISODE": "m1"}, check=True)
    assert repo.hook("session-end", {"session_id": "m1", "reason": "other"}).returncode == 0
    repo.mj("knowledge", "candidates", "--json", check=True)  # the index brought up to date
    kept.unlink()
    assert type(answers.encoded(ws, "queue.text", _text, 1)) is list  # the entries, for the caller to write
    assert asked() == files() and marked.encode() in asked() and served() == line()
    assert not kept.exists() and (ws.state / store_index.KEPT / "queue.json").is_file()


def test_the_whole_queue_kept_beside_the_index_is_the_files_own(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--json` (answers.head of the whole queue) keeps the queue it ordered and decoded beside the
    index (`agenda.whole`) when the index answered all of it, and answers from it, its ages counted
    now, while the index, the branch and the ledger's tail are as they were: a forged one here, to
    see it is answered; after a record renamed into place, another branch checked out or an entry
    the ledger does not date, the queue of the files (`answers._head`)."""
    from majordomus.base import git
    from majordomus.readers import answers

    monkeypatch.setattr(filecache, "RACY_NS", 0)
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    store = build(repo)  # two candidates derived by an episode: dated by the ledger, placed by its record
    ws = Workspace(repo.root)
    kept = ws.state / store_index.KEPT / "queue.json"

    def files() -> Any:
        found = answers._head(ws, None, git.branch(ws.root))
        return _steady(found[0]), found[1:]

    def files_now() -> Any:
        return answers._head(ws, None, git.branch(ws.root))[0]

    def asked() -> Any:
        found = answers.head(ws, None)
        return _steady(found[0]), found[1:]

    truth = files()  # first: it writes what it reads of the records (another state of the index)
    first = asked()
    assert kept.is_file() and asked() == first == truth and first[1][0] == 2
    key, (entries, total, untracked) = json.loads(kept.read_text())
    entries[0][1] = "forged"
    kept.write_text(json.dumps([key, [entries, total, untracked]]))
    assert answers.head(ws, None)[0][0]["title"] == "forged"
    for shape in ([entries, total], [[["too", "short"]], total, untracked], 5):  # its key, not `keep`'s shape
        kept.write_text(json.dumps([key, shape]))
        assert asked() == truth
    kept.write_text(json.dumps([key, [entries, total, untracked]]))
    ages = [e["age_minutes"] for e in answers.head(ws, None)[0]]  # counted now (a minute may turn between)
    assert all(0 <= b - a <= 1 for a, b in zip(ages, [e["age_minutes"] for e in files_now()]))
    repo.git("branch", "elsewhere")
    repo.git("symbolic-ref", "HEAD", "refs/heads/elsewhere")  # another branch, git's index untouched
    moved = asked()
    assert "forged" not in json.dumps(moved) and moved != first and moved == files() and asked() == moved
    repo.git("symbolic-ref", "HEAD", "refs/heads/main")
    assert asked() == first
    path = ws.candidates / f"{store.decision}.md"
    text = path.read_text()
    assert 'title: "' in text
    (ws.candidates / ".tmp.edit").write_text(text.replace('title: "', 'title: "Edited: ', 1))
    os.replace(ws.candidates / ".tmp.edit", path)
    edited = asked()
    assert "Edited: " in json.dumps(edited) and edited == files() and asked() == edited
    _write(repo, "candidates", "e9-000000000003", "Tabs by hand")  # no ledger line dates it: its date does
    added = asked()
    assert added == files() and asked() == added and "e9-000000000003" in json.dumps(added)
