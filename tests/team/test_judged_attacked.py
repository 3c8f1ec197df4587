"""Doctor's kept judgement (`integrity._Judged`, `.ai/local/state/integrity.judged.json`) under
git's settings and layouts that hide a file's change from git's word on `.ai/repo/`
(`git.as_held`): after each, doctor prints what it prints with `.ai/local/state/` deleted."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from conftest import Repo
from rules_helpers import OLD, append_line, write_candidate
from majordomus.store import filecache


def _settle(repo: Repo) -> None:
    """Past one tick of the file system's clock, and two seconds past git's last index write."""
    time.sleep(0.06)
    st = os.stat(repo.root / ".git/index")
    time.sleep(max(0.0, (max(st.st_ctime_ns, st.st_mtime_ns) + filecache.RACY_NS - time.time_ns()) / 1e9 + 0.01))


def _doctor(repo: Repo) -> tuple[int, str, str]:
    _settle(repo)
    proc = repo.mj("doctor", "--json")
    data = json.loads(proc.stdout)
    for entry in data.get("rules", ()):
        entry.pop("ms", None)
    data.pop("timings", None)
    return proc.returncode, json.dumps(data.get("findings"), sort_keys=True), re.sub(r"\d+ ms of", "ms of", proc.stderr)


def _truth(repo: Repo) -> tuple[int, str, str]:
    """Doctor's output with the derived state deleted."""
    shutil.rmtree(repo.root / ".ai/local/state")
    return _doctor(repo)


def _in_place(path: Path, old: str, new: str) -> None:
    """`old` replaced by `new` in the file itself (an editor writing in place: the folder's stamp kept)."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    with open(path, "r+", encoding="utf-8") as handle:
        handle.write(text.replace(old, new))
        handle.truncate()


def _judged_then_edited(repo: Repo, path: Path) -> None:
    """Doctor judges twice (the second from what it kept), the record is edited in place into one
    doctor finds wrong; then doctor says what it says with its state deleted."""
    first = _doctor(repo)
    assert _doctor(repo) == first
    _in_place(path, "status: candidate", "status: verified")
    through = _doctor(repo)
    truth = _truth(repo)
    assert truth != first
    assert through == truth


def test_an_untracked_record_git_folds_into_a_tracked_name_is_judged_again(repo: Repo) -> None:
    """With `core.ignorecase` set (a repository copied from a case-insensitive disk), git does not
    list an untracked `E1-….md` beside a tracked `e1-….md`: its edits in place are seen only by
    its own stamp."""
    append_line(repo, "session.opened", OLD, "e1")
    write_candidate(repo, "e0-000000000001")
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("records")
    repo.git("config", "core.ignorecase", "true")
    folder = repo.root / ".ai/repo/knowledge/candidates"
    upper = write_candidate(repo, "e1-000000000001", file_name="E0-000000000001")
    assert upper.parent == folder
    _judged_then_edited(repo, upper)


def test_a_record_folder_that_is_another_repository_is_judged_again(repo: Repo) -> None:
    """A candidates folder holding a `.git` (made a repository of its own): git lists the folder as
    one untracked entry, and a record edited in place in it leaves the folder's stamp."""
    append_line(repo, "session.opened", OLD, "e1")
    path = write_candidate(repo, "e1-000000000001")
    subprocess.run(["git", "init", "-q", str(path.parent)], check=True)
    _judged_then_edited(repo, path)


def test_a_record_folder_that_is_a_submodule_is_judged_again(repo: Repo, tmp_path: Path) -> None:
    """The candidates folder kept as a submodule (shared between projects): git's index holds one
    entry for it, as its commit, and says nothing of a file changed inside it."""
    append_line(repo, "session.opened", OLD, "e1")
    path = write_candidate(repo, "e1-000000000001")
    shared = Repo(tmp_path / "shared")
    shared.root.mkdir()
    shared.git("init", "-q", "-b", "main")
    shutil.copy(path, shared.root / path.name)
    shared.commit("a record", {})
    shared.git("add", "-A")
    shared.commit("a record")
    folder = path.parent
    shutil.rmtree(folder)
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(shared.root),
             folder.relative_to(repo.root).as_posix())
    repo.commit("the candidates from the shared store")
    assert (folder / path.name).is_file()
    _judged_then_edited(repo, path)


def test_a_store_that_is_a_submodule_is_judged_again(repo: Repo, tmp_path: Path) -> None:
    """`.ai` kept as a submodule (the store shared between projects, the local state beside it
    untracked): git asked of `.ai/repo/` in the project names nothing at all."""
    append_line(repo, "session.opened", OLD, "e1")
    path = write_candidate(repo, "e1-000000000001")
    shared = Repo(tmp_path / "shared")
    shutil.copytree(repo.root / ".ai", shared.root, ignore=shutil.ignore_patterns("local"))
    shared.git("init", "-q", "-b", "main")
    shared.git("add", "-A")
    shared.commit("the store")
    local = tmp_path / "local"
    os.rename(repo.root / ".ai/local", local)
    repo.git("rm", "-r", "-q", "--cached", ".ai")
    shutil.rmtree(repo.root / ".ai")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(shared.root), ".ai")
    repo.commit("the store from the shared one")
    os.rename(local, repo.root / ".ai/local")
    assert path.is_file()
    _judged_then_edited(repo, path)
