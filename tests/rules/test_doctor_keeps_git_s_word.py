"""Doctor keeps the part of git's word on `.ai/repo/` that is the index's own and the folders'
(`worktree.Worktree`, `.ai/local/state/integrity.worktree.json`) and asks git for the files that
differ from its index alone while the index file and every folder under `.ai/repo/` keep their
stamps: a file added to a folder, deep or not, staged, flagged not to be looked at, each give the
key and the untracked files that git's whole answer gives."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from conftest import Repo
from rules_helpers import append_line, rel, run_json, stamp, write_candidate
from majordomus.knowledge import worktree
from majordomus.store import filecache

REVIEWED = "majordomus.candidates-reviewed"


def _settle(repo: Repo) -> None:
    """Wait until git's index file was written two seconds ago (the test's files one tick ago)."""
    time.sleep(0.06)
    st = os.stat(repo.root / ".git/index")
    time.sleep(max(0.0, (max(st.st_ctime_ns, st.st_mtime_ns) + filecache.RACY_NS - time.time_ns()) / 1e9 + 0.01))


def _word(repo: Repo) -> tuple[bool, list[bytes] | None, set[str] | None]:
    """(whether the kept part was given, the key, the untracked candidates) as doctor's Worktree
    says them; each the same as git's whole answer, asked with nothing kept."""
    _settle(repo)
    state = repo.root / ".ai/local/state"
    state.mkdir(parents=True, exist_ok=True)
    kept = worktree.Worktree(repo.root, state).start()
    held = kept.held is not None
    found = kept.key(), kept.untracked(".ai/repo/knowledge/candidates")
    whole = worktree.Worktree(repo.root).start()
    assert whole.held is None
    assert (whole.key(), whole.untracked(".ai/repo/knowledge/candidates")) == found
    assert found[0] is not None
    return held, *found


def test_the_kept_part_is_given_until_the_index_or_a_folder_changes(repo: Repo) -> None:
    write_candidate(repo, "e1-000000000001")
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("records")
    (repo.root / ".ai/repo/adrs/drafts").mkdir(parents=True)  # a folder git does not know: empty
    held, _, untracked = _word(repo)
    assert not held and untracked == set()
    held, _, untracked = _word(repo)
    assert held and untracked == set()  # nothing changed: git asked for the stat'ed files alone
    loose = write_candidate(repo, "e1-000000000002")  # a folder's entry added
    held, _, untracked = _word(repo)
    assert not held and untracked == {"e1-000000000002.md"}
    (repo.root / ".ai/repo/adrs/drafts/note.md").write_text("a draft\n", encoding="utf-8")  # deep, in a
    # folder no file of git's answer names
    held, key, _ = _word(repo)
    assert not held and any(e.startswith(b"? .ai/repo/adrs/drafts/note.md") for e in key or [])
    repo.git("add", "--", rel(loose, repo))  # the index changed, no folder did
    held, _, untracked = _word(repo)
    assert not held and untracked == set()
    repo.git("update-index", "--assume-unchanged", "--", rel(loose, repo))
    held, key, _ = _word(repo)
    assert not held and any(e.startswith(b"h .ai/repo/knowledge/candidates/e1-000000000002.md") for e in key or [])
    held, key, _ = _word(repo)
    assert held and any(e.startswith(b"h .ai/repo/knowledge/candidates/e1-000000000002.md") for e in key or [])


def test_a_candidate_added_at_rest_is_named_untracked(repo: Repo) -> None:
    append_line(repo, "session.opened", stamp(3600), "e1")
    write_candidate(repo, "e1-000000000001")
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("records")
    for _ in range(2):  # the second at rest: git's word kept but the stat'ed files
        _settle(repo)
        code, data = run_json(repo, "doctor")
        assert not any("git does not track" in f["what"] for f in data["findings"])
    assert (repo.root / ".ai/local/state" / worktree.WORKTREE).exists()
    path = write_candidate(repo, "e1-000000000002")
    _settle(repo)
    code, data = run_json(repo, "doctor")
    named = [f["file"] for f in data["findings"] if "git does not track" in f["what"]]
    assert named == [rel(path, repo)]


def test_a_worktree_without_state_asks_git_whole(repo: Repo, tmp_path: Path) -> None:
    write_candidate(repo, "e1-000000000001")
    _settle(repo)
    asked = worktree.Worktree(repo.root).start()
    assert asked.held is None and asked.key() is not None
    assert subprocess.run(["git", "status"], cwd=repo.root, capture_output=True).returncode == 0
