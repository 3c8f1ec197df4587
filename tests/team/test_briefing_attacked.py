"""The start's prebuilt briefing (`context/prebuilt.py`) under this checkout's git settings that
make git's status trust less of a file's stat: after an edit git's status cannot see, the start
prints what it prints with the derived state deleted."""
from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from conftest import Repo
from test_clone_caches import AGES
from kbstore import KB, build
from rules_helpers import OLD, append_line, write_candidate


def _start(repo: Repo, episode: str) -> str:
    time.sleep(2.1)  # every write above vouches for itself
    proc = repo.hook("session-start", {"session_id": episode, "source": "startup", "cwd": str(repo.root)})
    assert proc.returncode == 0, proc.stderr
    return AGES.sub("AGE", proc.stdout.decode())  # a minute's tick between two starts


def test_a_record_edited_where_git_trusts_no_ctime_is_briefed_as_it_is(repo: Repo) -> None:
    build(repo)
    repo.git("add", "-A")
    repo.commit("the store")
    repo.git("config", "core.trustctime", "false")
    repo.git("config", "core.checkStat", "minimal")
    record = repo.root / KB / "curated/c-tabs.md"
    old = time.time_ns() - 3600 * 10**9
    os.utime(record, ns=(old, old))
    repo.git("update-index", "--refresh")
    first = _start(repo, "e7")
    assert "Tabs are refused by the parser" in first
    assert _start(repo, "e8").split("\n", 1)[1] == first.split("\n", 1)[1]  # but the heading, which names the episode
    st = record.stat()
    text = record.read_text(encoding="utf-8")
    with open(record, "r+", encoding="utf-8") as handle:
        handle.write(text.replace("Tabs are refused by the parser", "Tabs are welcome in the parser"))
    os.utime(record, ns=(st.st_atime_ns, st.st_mtime_ns))
    through = _start(repo, "e9")
    (repo.root / ".ai/local/state/briefing.prebuilt.json").unlink()
    truth = _start(repo, "e9")
    assert "Tabs are welcome" in truth
    assert through == truth


def test_an_untracked_record_git_folds_into_a_tracked_name_is_briefed_as_it_is(repo: Repo) -> None:
    """With `core.ignorecase` set, git's status does not name an untracked `E1-….md` beside a
    tracked `e1-….md`: its edits in place are seen only by its own stamp."""
    append_line(repo, "session.opened", OLD, "e1")
    write_candidate(repo, "e1-000000000001")
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("records")
    repo.git("config", "core.ignorecase", "true")
    upper = write_candidate(repo, "e1-000000000002", file_name="E1-000000000001")
    first = _start(repo, "e7")
    assert "A decision of e1-000000000002" in first, first
    assert _start(repo, "e8").split("\n", 1)[1] == first.split("\n", 1)[1]  # but the heading, which names the episode
    text = upper.read_text(encoding="utf-8")
    with open(upper, "r+", encoding="utf-8") as handle:
        handle.write(text.replace("A decision of e1-000000000002", "A decision of e1-00000000000X"))
    through = _start(repo, "e9")
    (repo.root / ".ai/local/state/briefing.prebuilt.json").unlink()
    truth = _start(repo, "e9")
    assert through == truth


def _candidates_in_a_submodule(repo: Repo, tmp_path: Path, whole_store: bool) -> Path:
    """A candidate in the candidates folder kept as a submodule (`whole_store`: `.ai` is one)."""
    append_line(repo, "session.opened", OLD, "e1")
    path = write_candidate(repo, "e1-000000000001")
    shared = Repo(tmp_path / "shared")
    place = repo.root / ".ai" if whole_store else path.parent
    shutil.copytree(place, shared.root, ignore=shutil.ignore_patterns("local"))
    shared.git("init", "-q", "-b", "main")
    shared.git("add", "-A")
    shared.commit("the store")
    local = tmp_path / "local"
    if whole_store:
        os.rename(repo.root / ".ai/local", local)
    repo.git("rm", "-r", "-q", "--cached", "--ignore-unmatch", place.relative_to(repo.root).as_posix())
    shutil.rmtree(place)
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(shared.root),
             place.relative_to(repo.root).as_posix())
    repo.commit("the store from the shared one")
    if whole_store:
        os.rename(local, repo.root / ".ai/local")
    assert path.is_file()
    return path


@pytest.mark.parametrize("whole_store", [False, True])
def test_a_record_in_a_submodule_is_briefed_as_it_is(repo: Repo, tmp_path: Path, whole_store: bool) -> None:
    """git's status names a submodule once, as one path, however often a file in it changes again:
    the second edit left every stamp the briefing kept as it was."""
    path = _candidates_in_a_submodule(repo, tmp_path, whole_store)
    first = _start(repo, "e7")
    assert "A decision of e1-000000000001" in first, first
    for title in ("e1-00000000000X", "e1-00000000000Y"):  # the second edit: the submodule already changed
        text = path.read_text(encoding="utf-8")
        with open(path, "r+", encoding="utf-8") as handle:
            handle.write(re.sub(r"A decision of e1-\w+", f"A decision of {title}", text))
        through = _start(repo, "e9")
        (repo.root / ".ai/local/state/briefing.prebuilt.json").unlink(missing_ok=True)
        truth = _start(repo, "e9")
        assert title in truth
        assert through == truth
