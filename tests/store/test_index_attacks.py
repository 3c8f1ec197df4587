"""Attacks on the knowledge index and the caches under `.ai/local/state/`: each reader says the same
bytes through them as from the sources alone (every cache deleted), after the sources change in
the ways people and git change them."""
from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from conftest import Repo
from kbstore import RECORD, build

KB = ".ai/repo/knowledge"
STATE = (".ai", "local", "state")
INDEX = (*STATE, "index.sqlite3")
READERS = (("knowledge", "candidates"), ("knowledge", "candidates", "--json"), ("knowledge", "status"),
           ("knowledge", "status", "--json"), ("doctor",), ("context",))
AGES = re.compile(r"\d+ (?:min|h|days?|minutes?|hours?)|\"(?:age_minutes|stale_minutes)\": \d+|\d+m\b"
                  r"|doctor: \d+ ms of a .*")


def said(repo: Repo) -> list[tuple[int, str, str]]:
    found = []
    for argv in READERS:
        proc = repo.mj(*argv)
        found.append((proc.returncode, AGES.sub("AGE", proc.stdout), AGES.sub("AGE", proc.stderr)))
    return found


def caches_only(repo: Repo) -> list[str]:
    """The derived files under `.ai/local/state/` (what may be deleted without changing an answer)."""
    state = repo.root.joinpath(*STATE)
    return sorted(p.name for p in state.iterdir() if p.name not in ("ledger.lock",)) if state.is_dir() else []


def wipe(repo: Repo) -> None:
    state = repo.root.joinpath(*STATE)
    for p in state.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif p.name != "ledger.lock":
            p.unlink()
    ledger_index = repo.root / ".ai" / "local" / "ledger.index.json"
    if ledger_index.exists():
        ledger_index.unlink()


def same(repo: Repo) -> list[tuple[int, str, str]]:
    """What the readers say through the caches (twice: the second reads what the first kept), then
    from the sources alone."""
    first = said(repo)
    time.sleep(0.1)  # past one tick of the file system's clock: what was kept now vouches for itself
    kept = said(repo)
    wipe(repo)
    fresh = said(repo)
    for argv, a, b, c in zip(READERS, first, kept, fresh):
        assert a == c, (argv, "first", a, c)
        assert b == c, (argv, "kept", b, c)
    return fresh


def _in_place(path: Path, old: str, new: str) -> None:
    """An editor writing in place: same inode, same size, the mtime put back."""
    st = path.stat()
    text = path.read_text()
    assert old in text and len(old) == len(new)
    with open(path, "r+") as handle:
        handle.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_ino == st.st_ino


def test_a_candidate_edited_in_place_with_its_mtime_put_back(repo: Repo) -> None:
    store = build(repo)
    before = same(repo)
    path = repo.root / KB / "candidates" / f"{store.lesson}.md"
    _in_place(path, "status: candidate", "status: rejected!")
    after = same(repo)
    assert after != before


def test_a_candidate_added_removed_renamed(repo: Repo) -> None:
    store = build(repo)
    same(repo)
    where = repo.root / KB / "candidates"
    os.rename(where / f"{store.lesson}.md", where / "renamed-one.md")
    same(repo)
    shutil.copy(where / "renamed-one.md", where / "copied-one.md")
    same(repo)
    (where / "renamed-one.md").unlink()
    same(repo)


def _session_branch_in_place(repo: Repo, branch: str) -> None:
    """e1's session record states `branch` instead of main, rewritten in place."""
    record = repo.root / ".ai" / "repo" / "sessions" / "e1.md"
    m = re.search(r"^branch: (\"?)main(\"?)$", record.read_text(), re.M)
    assert m
    _in_place(record, m.group(0), m.group(0).replace("main", branch))


def test_a_session_record_s_branch_edited_in_place(repo: Repo) -> None:
    build(repo)
    same(repo)
    _session_branch_in_place(repo, "mayn")
    after = same(repo)
    assert "mayn" in after[0][1] or "mayn" in after[1][1]


def test_git_stash_and_checkout_changing_records(repo: Repo) -> None:
    store = build(repo)
    repo.git("add", "-A")
    repo.commit("everything")
    same(repo)
    path = repo.root / KB / "candidates" / f"{store.lesson}.md"
    _in_place(path, "status: candidate", "status: rejected!")
    _session_branch_in_place(repo, "mayn")
    edited = same(repo)
    repo.git("stash", "-q")
    stashed = same(repo)
    assert stashed != edited
    repo.git("stash", "pop", "-q")
    assert same(repo) == edited
    repo.git("checkout", "-q", "--", ".")
    assert same(repo) == stashed


def test_git_add_and_rm_cached_change_what_is_tracked(repo: Repo) -> None:
    store = build(repo)
    first = same(repo)
    repo.git("add", "--", f"{KB}/candidates/{store.lesson}.md")
    added = same(repo)
    assert added != first
    repo.git("rm", "-q", "--cached", "--", f"{KB}/candidates/{store.lesson}.md")
    assert same(repo) == first
    repo.git("rm", "-q", "--cached", "--", f"{KB}/candidates/{store.decision}.md")
    removed = same(repo)
    assert removed != first


@pytest.mark.parametrize("how", ["empty", "truncated", "garbage", "older", "dangling-journal"])
def test_a_damaged_index_changes_no_payload(repo: Repo, how: str) -> None:
    build(repo)
    kept = same(repo)
    said(repo)
    index = repo.root.joinpath(*INDEX)
    if how == "empty":
        index.write_bytes(b"")
    elif how == "truncated":
        data = index.read_bytes()
        index.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        index.write_bytes(os.urandom(8192))
    elif how == "older":
        with sqlite3.connect(index) as db:
            db.execute("UPDATE meta SET value = '6' WHERE key = 'schema'")
    elif how == "dangling-journal":
        Path(f"{index}-journal").write_bytes(os.urandom(4096))
    damaged = said(repo)
    assert [(c, o) for c, o, _ in damaged] == [(c, o) for c, o, _ in kept]
    assert said(repo) == kept


@pytest.mark.parametrize("link", ["index", "dangling", "journal"])
def test_an_index_made_a_symlink_is_never_followed(repo: Repo, tmp_path: Path, link: str) -> None:
    """sqlite opens its files by name and follows a link: an index (or its journal) made a symbolic
    link to a file elsewhere would be written there. The link is removed, never followed, and the
    index built again in its place."""
    build(repo)
    kept = same(repo)
    index = repo.root.joinpath(*INDEX)
    elsewhere = tmp_path / "elsewhere.sqlite3"
    shutil.copy(index, elsewhere)
    outside = elsewhere.read_bytes()
    if link == "index":
        index.unlink()
        index.symlink_to(elsewhere)
    elif link == "dangling":
        index.unlink()
        index.symlink_to(tmp_path / "made-there.sqlite3")
    else:
        Path(f"{index}-journal").symlink_to(tmp_path / "made-there.sqlite3-journal")
    proc = repo.mj("knowledge", "candidates", "--json")
    assert proc.returncode == 0 and "symbolic link" in proc.stderr and "rebuilt" in proc.stderr
    assert [(c, o) for c, o, _ in said(repo)] == [(c, o) for c, o, _ in kept]
    assert elsewhere.read_bytes() == outside
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere.sqlite3", "repo"]
    assert index.is_file() and not index.is_symlink() and not os.path.lexists(f"{index}-journal")
    assert said(repo) == kept


def _ages(repo: Repo) -> list[str]:
    proc = repo.mj("knowledge", "candidates", "--json")
    assert proc.returncode == 0, proc.stderr
    return [entry.get("age_detail", "") for entry in json.loads(proc.stdout)]


@pytest.mark.xfail(strict=True, reason="the ledger's facts are checked by the last 64 bytes before their indexed "
                   "end (store/facts.py, Ledger.digest): a line rewritten in place in the middle, same length, "
                   "keeps the facts read before it (the ledger is append-only by contract; hashing it whole would "
                   "cost every reader a pass over it)")
def test_a_ledger_line_rewritten_in_place_is_seen(repo: Repo) -> None:
    build(repo)
    ledger = repo.root / ".ai" / "local" / "ledger.jsonl"
    kept = _ages(repo)
    assert any("knowledge.derived" in a for a in kept)
    data = ledger.read_bytes()
    derived = [line for line in data.split(b"\n") if b'"knowledge.derived"' in line]
    stamp = re.search(rb'"ts": ?"(\d{4})-', derived[0])
    assert stamp is not None and data.rfind(derived[0]) + len(derived[0]) < len(data) - 64
    earlier = derived[0].replace(stamp.group(0), stamp.group(0).replace(stamp.group(1), b"2001"))
    st = ledger.stat()
    with open(ledger, "r+b") as handle:  # an editor writing in place (same inode, same length)
        handle.write(data.replace(derived[0], earlier, 1))
    os.utime(ledger, ns=(st.st_atime_ns, st.st_mtime_ns))
    time.sleep(0.1)
    through = _ages(repo)
    wipe(repo)
    assert _ages(repo) == through


def test_readers_while_a_writer_writes(repo: Repo) -> None:
    """Readers run while records are written and the index is deleted under them: each answers (no
    traceback, exit 0, JSON), and what they kept meanwhile is never trusted for what changed."""
    import subprocess

    from conftest import MAJORDOMUS

    build(repo)
    where = repo.root / KB / "candidates"
    index = repo.root.joinpath(*INDEX)
    readers = [subprocess.Popen([MAJORDOMUS, *argv], cwd=repo.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
               for _ in range(3) for argv in (("knowledge", "candidates", "--json"), ("knowledge", "status", "--json"))]
    for k in range(40):
        text = RECORD.format(rid=f"race-{k % 7}", title=f"Race number {k}")
        (where / ".tmp.race").write_text(text)
        os.replace(where / ".tmp.race", where / f"race-{k % 7}.md")
        if k % 13 == 0 and index.exists():
            index.unlink()
        if k % 10 == 9:  # more readers, started mid-write
            readers += [subprocess.Popen([MAJORDOMUS, "knowledge", "candidates", "--json"], cwd=repo.root,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
    for proc in readers:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0 and "Traceback" not in err, err
        json.loads(out)
    time.sleep(0.1)
    kept = said(repo)
    assert "Race number 39" in kept[1][1]
    wipe(repo)
    assert said(repo) == kept


def test_git_pull_bringing_records_and_session_records(repo: Repo, tmp_path: Path) -> None:
    """A clone that read its store (caches kept) pulls a candidate edited, one added, one removed and a
    session record placing an episode on another branch: every reader says what the files say."""
    import subprocess

    origin = repo
    build(origin)
    origin.git("add", "-A")
    origin.commit("the store")
    subprocess.run(["git", "clone", "-q", str(origin.root), str(tmp_path / "clone")], check=True)
    clone = Repo(tmp_path / "clone")
    clone.git("config", "user.name", "Test Author")
    clone.git("config", "user.email", "author@example.invalid")
    before = same(clone)
    where = origin.root / KB / "candidates"
    names = sorted(p.name for p in where.glob("e1-*.md"))
    assert names
    path = where / names[0]
    path.write_text(path.read_text().replace("status: candidate", "status: rejected!"))
    (where / "pulled-one.md").write_text(RECORD.format(rid="pulled-one", title="Pulled in"))
    origin.git("rm", "-q", "--", f"{KB}/candidates/old-rule.md")
    record = origin.root / ".ai" / "repo" / "sessions" / "e1.md"
    record.write_text(re.sub(r"^branch: \"?main\"?$", "branch: elsewhere", record.read_text(), flags=re.M))
    origin.git("add", "-A")
    origin.commit("changed upstream")
    clone.git("pull", "-q", "--ff-only")
    pulled = same(clone)
    assert pulled != before and "Pulled in" in pulled[1][1]


def test_a_credential_written_in_place_into_a_tracked_record_is_found(repo: Repo) -> None:
    """Doctor answers a tracked file by its stat when the screen kept one: a credential written in place
    (same size, the mtime put back) is found through the caches as without them."""
    store = build(repo)
    repo.git("add", "-A")
    repo.commit("everything")
    clean = same(repo)
    path = repo.root / KB / "candidates" / f"{store.decision}.md"
    text = path.read_text()
    body = text.split("\n---\n", 1)[1]
    line = next(x for x in body.splitlines() if len(x) >= 40)
    token = "ghp_" + "x9Ab" * 9
    _in_place(path, line[:40], token)
    leaked = same(repo)
    assert leaked != clean and "ghp_" not in leaked[4][1] + leaked[4][2]
    assert any("credential" in (out + err).lower() or "secret" in (out + err).lower()
               for _, out, err in leaked[4:5])


@pytest.mark.parametrize("name", [b"caf\xc3\xa9.md", b"bad\xff.md", b"new\nline.md", b"with space.md"])
def test_a_record_file_of_an_odd_name(repo: Repo, name: bytes) -> None:
    """A file name that is not UTF-8 (or holds a newline) in a record folder: every reader answers as
    it does from the files alone, through the index as without it."""
    build(repo)
    same(repo)
    where = os.fsencode(repo.root / KB / "candidates")
    with open(os.path.join(where, name), "w") as handle:
        handle.write(RECORD.format(rid="odd-one", title="An odd name"))
    found = same(repo)
    assert all("Traceback" not in err for _, _, err in found)


@pytest.mark.xfail(strict=True, reason="a record folder of SCAN_BELOW (1000) records or more is trusted to its own "
                   "stamp (store/index.py): a record an editor rewrote in place shows its old fields until "
                   "`knowledge check` refreshes the index (the documented trade-off: one lstat a folder, not a file)")
def test_a_record_rewritten_in_place_in_a_big_folder(repo: Repo) -> None:
    build(repo)
    where = repo.root / KB / "candidates"
    for k in range(1000):
        (where / f"bulk-{k:04d}.md").write_text(RECORD.format(rid=f"bulk-{k:04d}", title=f"Bulk number {k}"))
    time.sleep(0.1)
    _ages(repo)
    time.sleep(0.1)
    _ages(repo)  # every file settled and kept
    _in_place(where / "bulk-0007.md", "Bulk number 7\"", "Bulk numbeR 7\"")
    time.sleep(0.1)
    through = [e["title"] for e in json.loads(repo.mj("knowledge", "candidates", "--json").stdout)]
    wipe(repo)
    assert [e["title"] for e in json.loads(repo.mj("knowledge", "candidates", "--json").stdout)] == through


def test_an_index_locked_by_another_process_changes_no_payload(repo: Repo) -> None:
    """A writer holding the index's lock past a reader's wait (2 s): the reader answers from the files,
    the same payload, and the ledger's facts it read first are not lost with the index."""
    build(repo)
    kept = same(repo)
    said(repo)
    holder = sqlite3.connect(repo.root.joinpath(*INDEX), isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        where = repo.root / KB / "candidates"
        (where / ".tmp.locked").write_text(RECORD.format(rid="while-locked", title="Written while locked"))
        os.replace(where / ".tmp.locked", where / "while-locked.md")
        locked = said(repo)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert all("Traceback" not in err and "internal error" not in err for _, _, err in locked)
    assert "Written while locked" in locked[1][1]
    time.sleep(0.1)
    after = said(repo)
    assert [(c, o) for c, o, _ in locked] == [(c, o) for c, o, _ in after]
    wipe(repo)
    assert said(repo) == after != kept


def test_a_reviewed_record_set_back_to_candidate_and_a_session_record_removed(repo: Repo) -> None:
    """A curated record edited in place back to status candidate (a reviewed record two clones'
    reviewers disagreed on) waits again; a session record removed places its episode from the ledger."""
    build(repo)
    same(repo)
    path = repo.root / KB / "curated" / "c-tabs.md"
    st = path.stat()
    text = path.read_text().replace("status: verified", "status: candidate")
    with open(path, "r+") as handle:
        handle.write(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    contested = same(repo)
    assert "Tabs are refused by the parser" in contested[0][1]
    (repo.root / ".ai" / "repo" / "sessions" / "e1.md").unlink()
    same(repo)


@pytest.mark.parametrize("link", ["folder", "file"])
def test_the_kept_answers_made_a_symlink_are_never_followed(repo: Repo, tmp_path: Path, link: str) -> None:
    """The answers the index keeps beside it (`index.kept/`): a folder or a file there made a symbolic
    link to elsewhere is neither read nor written through; the readers say the same."""
    build(repo)
    kept = same(repo)
    said(repo)
    folder = repo.root.joinpath(*STATE, "index.kept")
    assert folder.is_dir() and list(folder.iterdir())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    if link == "folder":
        shutil.rmtree(folder)
        folder.symlink_to(elsewhere)
    else:
        for kept_file in folder.iterdir():
            (elsewhere / kept_file.name).write_text("[]")
            kept_file.unlink()
            kept_file.symlink_to(elsewhere / kept_file.name)
    before = sorted((p.name, p.read_text()) for p in elsewhere.iterdir())
    with sqlite3.connect(repo.root.joinpath(*INDEX)) as db:  # another state: each reader keeps its answer again
        db.execute("INSERT INTO meta VALUES ('another', 'state')")
    assert said(repo) == kept
    assert said(repo) == kept
    assert sorted((p.name, p.read_text()) for p in elsewhere.iterdir()) == before


def test_the_index_switched_to_wal_under_a_long_process(repo: Repo) -> None:
    """A process that answers many calls (the MCP server) keeps its index open: another process
    switching the index to WAL (a persistent mode, in which SQLite's file change counter no longer
    moves on each write) makes the answers it kept untrustworthy, and it trusts none of them."""
    from majordomus.readers import answers
    from majordomus.store.workspace import Workspace

    build(repo)
    said(repo)
    ws = Workspace(repo.root)
    before = answers.head(ws, None)
    with sqlite3.connect(repo.root.joinpath(*INDEX)) as db:
        assert db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal"
    time.sleep(0.1)
    assert answers.head(ws, None) == before  # (kept again under the state the switch left)
    (repo.root / KB / "candidates" / "late-one.md").write_text(RECORD.format(rid="late-one", title="Late one"))
    time.sleep(0.1)
    assert "late-one" in [entry["id"] for entry in answers.head(ws, None)[0]]
    same(repo)


def test_the_index_deleted_and_built_again_under_a_long_process(repo: Repo) -> None:
    """A process that answers many calls (the MCP server) keeps the index it opened: when the file is
    deleted and another process builds a new one in its place, what it keeps is keyed by the old
    file's nonce and the new file's counter, but its writes to the file it holds fail (SQLite's
    READONLY_DBMOVED): it reads the files from then on, and never answers from what it kept."""
    from majordomus.readers import answers
    from majordomus.store.workspace import Workspace

    build(repo)
    said(repo)
    ws = Workspace(repo.root)
    before = answers.head(ws, None)
    repo.root.joinpath(*INDEX).unlink()
    repo.mj("knowledge", "candidates", "--json", check=True)  # a new index, built by another process
    time.sleep(0.1)
    assert answers.head(ws, None) == before
    (repo.root / KB / "candidates" / "late-one.md").write_text(RECORD.format(rid="late-one", title="Late one"))
    time.sleep(0.1)
    assert "late-one" in [entry["id"] for entry in answers.head(ws, None)[0]]
    same(repo)


def test_a_hostile_clone_s_committed_index_with_triggers(repo: Repo, tmp_path: Path) -> None:
    """A clone that commits its `.ai/local/state/index.sqlite3` (its .gitignore not ignoring it) with
    triggers that rewrite each row the readers write: a clone of it reads what its records say,
    never a title that is in no record of its `.ai/repo/`."""
    import subprocess

    build(repo)
    said(repo)
    with sqlite3.connect(repo.root.joinpath(*INDEX)) as db:
        for event in ("INSERT", "UPDATE"):
            db.execute(f"CREATE TRIGGER forged_{event.lower()} AFTER {event} ON files BEGIN "
                       "UPDATE files SET queue = replace(queue, 'Tabs are', 'Forged:'), "
                       "summary = replace(summary, 'Tabs are', 'Forged:'), "
                       "search = replace(search, 'Tabs are', 'Forged:') "
                       "WHERE folder = NEW.folder AND name = NEW.name; END")
    (repo.root / ".gitignore").write_text("")
    repo.git("add", "-A", "-f", "--", ".")
    repo.commit("the index too")
    assert INDEX[-1] in repo.git("ls-files", "--", ".ai/local/state")
    subprocess.run(["git", "clone", "-q", str(repo.root), str(tmp_path / "clone")], check=True)
    clone = Repo(tmp_path / "clone")
    told = said(clone)
    assert not [out for _, out, _ in told if "Forged:" in out]
    assert "Forged:" not in clone.mj("knowledge", "search", "refused", "--json").stdout
    fresh = [(code, out) for code, out, _ in same(clone)]
    assert [(code, out) for code, out, _ in told] == fresh
