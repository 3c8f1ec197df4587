"""git's own moves under what the readers keep: each reader prints what it prints once the
derived files under `.ai/local/state/` are deleted."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from conftest import Repo, make_repo
from kbstore import anchored, build

READERS = (("knowledge", "stale"), ("knowledge", "record", "kb-a"), ("knowledge", "status"),
           ("knowledge", "status", "--json"))


def said(repo: Repo) -> list[tuple[int, str, str]]:
    return [(p.returncode, p.stdout, p.stderr) for p in (repo.mj(*argv) for argv in READERS)]


def test_a_shallow_clone_deepened_judges_its_records_again(tmp_path: Path) -> None:
    """A shallow clone lacks the commit a record was verified at: its currency is unknown, and
    `currency.cache.json` keeps that at HEAD. `git fetch --unshallow` brings the commit without
    moving HEAD: the record may be stale now, and the kept walks must not say unknown."""
    repo = make_repo(tmp_path / "repo")
    build(repo)
    anchor = repo.commit("a source file", {"src/a.py": "a = 1\n"})
    anchored(repo, "kb-a", ("src/a.py",), anchor, title="Module a keeps its state in one place")
    repo.git("add", "-A")
    repo.commit("kb-a")
    repo.commit("a changed", {"src/a.py": "a = 2\n"})
    repo.commit("b", {"src/b.py": "b = 1\n"})
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", str(tmp_path / "clone")], check=True)
    clone = Repo(tmp_path / "clone")
    fresh = _fetched(clone, "--unshallow")
    assert "kb-a: may be stale: src/a.py modified" in fresh[0][1]


def test_a_fetch_bringing_a_verification_commit_judges_its_record_again(tmp_path: Path) -> None:
    """A record verified at a commit this clone does not have (made elsewhere, not fetched yet) is
    unknown; once a fetch brings the commit (HEAD does not move), it is judged from the commit."""
    repo = make_repo(tmp_path / "repo")
    build(repo)
    repo.git("add", "-A")
    repo.commit("a source file", {"src/a.py": "a = 1\n"})
    subprocess.run(["git", "clone", "-q", str(repo.root), str(tmp_path / "clone")], check=True)
    clone = Repo(tmp_path / "clone")
    elsewhere = repo.commit("verified elsewhere", {"src/b.py": "b = 1\n"})
    anchored(clone, "kb-a", ("src/a.py",), elsewhere, title="Module a keeps its state in one place")
    clone.git("add", "-A")
    clone.commit("kb-a")
    fresh = _fetched(clone, "origin")
    assert "this clone does not have" not in fresh[1][2]


def _fetched(clone: Repo, *fetch: str) -> list[tuple[int, str, str]]:
    """What the readers say after `git fetch -q *fetch`, once their kept walks said the clone lacks
    the verification commit: the same through what they kept (`currency.cache.json`, `knowledge
    status`' kept currencies beside the index) as with the derived files deleted."""
    said(clone)
    time.sleep(0.1)  # past one tick of the file system's clock
    before = said(clone)
    assert "this clone does not have" in before[1][2]
    clone.git("fetch", "-q", *fetch)
    through = said(clone)
    state = clone.root / ".ai/local/state"
    for path in list(state.iterdir()):
        if path.name.startswith(("index.", "integrity.", "ledger.index")) or path.name.endswith(".cache.json"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    fresh = said(clone)
    assert fresh != before and through == fresh
    return fresh
