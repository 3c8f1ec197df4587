"""Issue 31 (and 28's "nothing let in"): `knowledge check` keeps the credential screen's answers
by the digest of the bytes it screened (`.ai/local/state/screen.cache.json`), so a run screens
only what changed; the cache never answers for bytes it did not screen. A secret written into a
tracked file whose size and mtime were kept is found; a cache deleted, garbled or made by another
screen changes no output."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import Repo, make_repo
from majordomus.knowledge import leaks
from majordomus.store.workspace import open_workspace

TOKEN = "github_pat_11ABCDEFG0" + "aZ9x" * 18 + "Qw"  # made up, in the shape; not live
PLAIN = "x" * len(TOKEN)  # the same length: the file keeps its size when one replaces the other
RECORD = ("---\nid: r1\nkind: knowledge/v1\nclass: convention\nstatus: verified\nepistemics: decided\n"
          "title: Deploy with {word}\ndate: '2026-03-04'\nprovenance:\n  origin: extracted\n"
          "  derived_from:\n  - session:e5\n---\nA body.\n")
SESSION = "---\nid: e5\nkind: session/v1\nbranch: feature/{word}\n---\nEpisode e5.\n"
FILES = {"record": ".ai/repo/knowledge/curated/r1.md", "session": ".ai/repo/sessions/e5.md"}


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = make_repo(tmp_path / "repo", capture=False)
    (repo.root / FILES["record"]).write_text(RECORD.format(word=PLAIN), encoding="utf-8")
    (repo.root / FILES["session"]).write_text(SESSION.format(word=PLAIN), encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=repo.root, check=True)
    return repo


def _check(repo: Repo) -> tuple[int, list[tuple[str, str]], int]:
    """(exit, (file, what) of each credential finding, files the screen read afresh)."""
    proc = repo.mj("knowledge", "check", "--json", env={"MJ_TIMING": "1"})
    found = [(f["file"], f["what"]) for f in json.loads(proc.stdout)["findings"] if "credential" in f["what"]]
    counters = proc.stderr.rsplit("MJ_TIMING knowledge check: ", 1)[1].split()
    return proc.returncode, found, int(dict(c.split("=") for c in counters)["screened"])


@pytest.mark.parametrize("where", list(FILES))
def test_a_secret_written_in_place_keeping_size_and_mtime_is_found(repo: Repo, where: str) -> None:
    code, found, screened = _check(repo)
    assert (code, found) == (0, []) and screened > 0
    assert _check(repo)[2] == 0, "a second run screens nothing it screened already"
    path = repo.root / FILES[where]
    st = path.stat()
    text = path.read_text(encoding="utf-8")
    with open(path, "r+b") as handle:  # in place: the inode is kept too
        handle.write(text.replace(PLAIN, TOKEN).encode("utf-8"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns, path.stat().st_ino) == (st.st_size, st.st_mtime_ns, st.st_ino)
    code, found, screened = _check(repo)
    assert code == 10 and screened == 1
    assert [f for f, _ in found] == [FILES[where]] and "GitHub Fine-Grained Token" in found[0][1], found


def test_the_cache_deleted_garbled_or_of_another_screen_changes_no_output(repo: Repo) -> None:
    path = repo.root / FILES["session"]
    path.write_text(SESSION.format(word=TOKEN), encoding="utf-8")
    first = repo.mj("knowledge", "check", "--json")
    assert first.returncode == 10
    cache = repo.root / ".ai/local/state" / leaks.CACHE
    assert cache.is_file()
    assert repo.mj("knowledge", "check", "--json").stdout == first.stdout  # answered by the cache
    cache.write_text("{not json", encoding="utf-8")
    assert repo.mj("knowledge", "check", "--json").stdout == first.stdout
    cache.unlink()
    assert repo.mj("knowledge", "check", "--json").stdout == first.stdout

    ws = open_workspace(repo.root)
    data = path.read_bytes()
    kept = leaks.Screen(ws)
    assert kept.text(FILES["session"], data) == "GitHub Fine-Grained Token" and kept.screened == 0
    other = leaks.Screen(ws)
    other._identity = b"another screen: other patterns, another detect-secrets"
    other.text(FILES["session"], data)
    assert other.screened == 1, "an answer of another screen stood in for this one's"


def test_the_cache_forgets_files_that_are_gone(repo: Repo) -> None:
    notes = ".ai/repo/rules/project/notes.md"
    (repo.root / notes).write_text("deploy from the release branch\n", encoding="utf-8")
    subprocess.run(["git", "add", "--", notes], cwd=repo.root, check=True)
    assert _check(repo)[0] == 0
    cache = repo.root / ".ai/local/state" / leaks.CACHE
    assert "notes.md" in cache.read_text(encoding="utf-8")
    subprocess.run(["git", "rm", "-q", "-f", "--", notes], cwd=repo.root, check=True)
    assert _check(repo)[0] == 0
    assert "notes.md" not in cache.read_text(encoding="utf-8")


def test_doctor_answers_an_unchanged_tracked_file_by_its_stat(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Doctor (`integrity.run(trusted=True)`) reads a tracked file again only when its stat is not
    the one kept beside its answer by this very screen; `knowledge check` reads it every time."""
    from majordomus.knowledge import integrity
    from majordomus.store import filecache, index

    monkeypatch.setattr(filecache, "settled", lambda st, now_ns=None: True)  # the test's files are fresh
    monkeypatch.setattr(index, "settled", lambda st, now_ns=None: True)
    read: list[str] = []
    real = leaks._bytes
    monkeypatch.setattr(leaks, "_bytes", lambda ws, rel: read.append(rel) or real(ws, rel))
    ws = open_workspace(repo.root)
    assert integrity.run(ws, trusted=True).findings == []
    assert FILES["session"] in read
    read.clear()
    assert integrity.run(ws, trusted=True).findings == []
    assert FILES["session"] not in read  # answered by its stat
    path = repo.root / FILES["session"]
    path.write_text(SESSION.format(word=TOKEN), encoding="utf-8")
    (found,) = integrity.run(ws, trusted=True).findings
    assert found.file == FILES["session"] and "GitHub Fine-Grained Token" in found.what
    assert FILES["session"] in read
    read.clear()
    assert [f.what for f in integrity.run(ws, trusted=True).findings] == [found.what]
    assert FILES["session"] not in read
    monkeypatch.setattr(leaks, "identity", lambda: b"another screen")  # its answers stand for no other
    assert [f.what for f in integrity.run(ws, trusted=True).findings] == [found.what]
    assert FILES["session"] in read
    read.clear()
    assert [f.what for f in integrity.run(ws).findings] == [found.what]
    assert FILES["session"] in read  # `knowledge check` reads every file


def test_a_record_named_with_a_credential_is_found_by_doctor_from_the_index(repo: Repo) -> None:
    named = f".ai/repo/knowledge/candidates/{TOKEN}.md"
    (repo.root / named).write_text(RECORD.replace("id: r1", f"id: {TOKEN}").replace("status: verified",
                                   "status: candidate").format(word=PLAIN), encoding="utf-8")
    subprocess.run(["git", "add", "--", named], cwd=repo.root, check=True)
    for command in (("knowledge", "check"), ("doctor",), ("doctor",)):  # doctor twice: from the view
        proc = repo.mj(*command, "--json")
        names = [f for f in json.loads(proc.stdout)["findings"] if f["field"] == "name"]
        assert [(f["file"], "GitHub Fine-Grained Token" in f["what"]) for f in names] == [(named, True)], command


def test_the_records_fields_answers_are_loaded_only_when_a_record_is_read(repo: Repo,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The fields' answers are kept apart (`screen.fields.cache.json`): doctor, reading no record,
    does not load them; a record it reads again is screened field by field as before; answers kept
    together by an earlier version are moved apart, not lost."""
    from majordomus.knowledge import integrity
    from majordomus.store import filecache, index

    monkeypatch.setattr(filecache, "settled", lambda st, now_ns=None: True)  # the test's files are fresh
    monkeypatch.setattr(index, "settled", lambda st, now_ns=None: True)
    state = repo.root / ".ai/local/state"
    assert _check(repo)[0] == 0
    assert "r1.md" in (state / leaks.FIELDS_CACHE).read_text(encoding="utf-8")
    assert "fields:" not in (state / leaks.CACHE).read_text(encoding="utf-8")
    loaded: list[str] = []
    real = leaks.FileCache
    monkeypatch.setattr(leaks, "FileCache", lambda path, *a: loaded.append(path.name) or real(path, *a))
    ws = open_workspace(repo.root)
    assert integrity.run(ws, trusted=True).findings == []
    loaded.clear()
    assert integrity.run(ws, trusted=True).findings == [] and loaded == [leaks.CACHE]
    path = repo.root / FILES["record"]
    path.write_text(RECORD.format(word=TOKEN), encoding="utf-8")
    (found,) = [f for f in integrity.run(ws, trusted=True).findings if "credential" in f.what]
    assert found.file == FILES["record"] and found.field == "title" and leaks.FIELDS_CACHE in loaded
    old = json.loads((state / leaks.CACHE).read_text(encoding="utf-8"))  # as an earlier version kept it
    old["folders"].update(json.loads((state / leaks.FIELDS_CACHE).read_text(encoding="utf-8"))["folders"])
    (state / leaks.CACHE).write_text(json.dumps(old), encoding="utf-8")
    (state / leaks.FIELDS_CACHE).unlink()
    assert [f.what for f in integrity.run(ws, trusted=True).findings if "credential" in f.what] == [found.what]
    assert "r1.md" in (state / leaks.FIELDS_CACHE).read_text(encoding="utf-8")
    assert "fields:" not in (state / leaks.CACHE).read_text(encoding="utf-8")
