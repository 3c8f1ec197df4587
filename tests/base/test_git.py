"""`git.branch` reads HEAD's file instead of starting git: in every state a checkout can be in, it
answers what git's own `head` answers."""
from __future__ import annotations

import subprocess
from pathlib import Path

from majordomus.base import git


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout


def _agrees(root: Path) -> str | None:
    answer = git.branch(root)
    assert answer == git.head(root).branch
    return answer


def test_the_branch_read_from_head_is_gits_own_answer(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "trunk")
    assert _agrees(root) == "trunk"  # before the first commit
    _git(root, "commit", "-q", "--allow-empty", "-m", "one")
    _git(root, "switch", "-q", "-c", "feature/ünï")
    assert _agrees(root) == "feature/ünï"
    sha = _git(root, "rev-parse", "HEAD").strip()
    _git(root, "switch", "-q", "--detach", sha)
    assert _agrees(root) is None
    _git(root, "switch", "-q", "trunk")
    _git(root, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"))
    assert _agrees(tmp_path / "side") == "side"  # `.git` is a `gitdir:` file there
    assert _agrees(root) == "trunk"


def test_a_head_file_of_another_shape_is_asked_of_git(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "commit", "-q", "--allow-empty", "-m", "one")
    _git(root, "symbolic-ref", "HEAD", "refs/remotes/origin/main")  # not a branch of ours
    assert git.branch(root) == git.head(root).branch
