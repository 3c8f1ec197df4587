"""`knowledge status`'s count of the verified records by currency, kept beside the index
(`status.currencies`, `index.kept/currencies.json`), after git's moves that change what a record's
currency is judged from without moving HEAD: the same as with the derived state deleted."""
from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from conftest import Repo, make_repo
from kbstore import anchored, build

READERS = (("knowledge", "status"), ("knowledge", "status", "--json"), ("knowledge", "stale"))


def said(repo: Repo) -> list[tuple[int, str, str]]:
    return [(p.returncode, p.stdout, p.stderr) for p in (repo.mj(*argv) for argv in READERS)]


def truth(repo: Repo) -> list[tuple[int, str, str]]:
    """What the readers print with the derived files under `.ai/local/state/` deleted."""
    state = repo.root / ".ai/local/state"
    for path in list(state.iterdir()):
        if path.name.startswith(("index.", "integrity.", "ledger.index")) or path.name.endswith(".cache.json"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    return said(repo)


def test_a_shallow_clone_deepened_counts_its_records_again(tmp_path: Path) -> None:
    """`git fetch --unshallow` brings the commit a record was verified at, HEAD unmoved: the count
    kept under HEAD must not still call it unknown (`test_git_moves` deletes only the currency cache)."""
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
    said(clone)
    time.sleep(0.1)
    before = said(clone)
    clone.git("fetch", "-q", "--unshallow")
    through = said(clone)
    fresh = truth(clone)
    assert fresh != before
    assert through == fresh

