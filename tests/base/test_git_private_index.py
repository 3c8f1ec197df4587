"""The start's `git status` runs on a private copy of git's index (`git.private_index`) that keeps
git's untracked cache: in every change a checkout goes through, its answer is the bytes `git
status` gives on the real index, and nothing is written outside `.ai/local/`."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from majordomus.base import git


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}).stdout


def _plain(root: Path) -> str:
    """`STATUS` on the real index, as a person's git answers it (no copy, no untracked cache)."""
    return git.spawn(root, "-c", "core.quotePath=false", *git.STATUS).wait()[1]


def _private(root: Path) -> str:
    asked = git.ask_status(root)
    assert asked.args[:len(git._PRIVATE)] == git._PRIVATE, "the status did not run on the copy"
    code, out, _ = asked.wait()
    assert code == 0
    return out


def _git_folder(root: Path) -> dict[str, tuple[int, int, bytes]]:
    """Every file of the git folder but the index git itself rewrites: its stat and bytes."""
    found = {}
    for top, _, files in os.walk(root / ".git"):
        for name in files:
            where = Path(top, name)
            st = where.lstat()
            found[str(where)] = (st.st_mtime_ns, st.st_size, where.read_bytes())
    return found


def _agrees(root: Path) -> None:
    """The copy answers what the real index answers, twice (the second on a kept untracked cache),
    and `git.status` parses that answer."""
    before_index = (root / ".git" / "index").stat()
    plain = _plain(root)
    assert _private(root) == plain
    assert _private(root) == plain
    assert git.status(root) == git.parse_status(root, plain)
    after_index = (root / ".git" / "index").stat()
    assert (before_index.st_ino, before_index.st_mtime_ns) == (after_index.st_ino, after_index.st_mtime_ns)


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".ai" / "local" / "state").mkdir(parents=True)
    (root / "src" / "old").mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".ai/local/\n*.log\n")
    (root / "src" / "old" / "a.txt").write_text("one\n")
    (root / "src" / "b.txt").write_text("two\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "one")
    return root


def test_the_private_index_answers_what_the_real_one_does_through_a_checkouts_changes(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _agrees(root)
    copies = [p.name for p in (root / ".ai" / "local" / "state").iterdir()]
    assert len(copies) == 1 and copies[0].startswith("git-index.")
    (root / "src" / "old" / "new.txt").write_text("untracked in an old folder\n")
    _agrees(root)
    (root / "src" / "old" / "deeper").mkdir()
    (root / "src" / "old" / "deeper" / "c.txt").write_text("an untracked folder\n")
    _agrees(root)
    (root / "src" / "old" / "x.log").write_text("ignored\n")
    _agrees(root)
    (root / ".gitignore").write_text(".ai/local/\n")  # an ignore rule removed: x.log shows
    _agrees(root)
    (root / "src" / "old" / ".gitignore").write_text("new.txt\n")  # a folder's own rule hides one
    _agrees(root)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("deeper/\n")
    _agrees(root)
    (root / "src" / "old" / ".gitignore").write_text("x.log\n")  # the folder's rule changed in place
    _agrees(root)
    _git(root, "add", "src/old/new.txt")  # staging
    _agrees(root)
    _git(root, "reset", "-q", "src/old/new.txt")  # unstaging
    _agrees(root)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "two")
    _agrees(root)
    (root / "src" / "old" / "new.txt").unlink()  # a tracked file deleted
    _agrees(root)
    _git(root, "checkout", "-q", "--", "src/old/new.txt")
    _agrees(root)
    _git(root, "switch", "-q", "-c", "side", "HEAD~1")  # a checkout
    _agrees(root)
    (root / "src" / "side.txt").write_text("side\n")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "side")
    _git(root, "rebase", "-q", "main", env={"GIT_EDITOR": "true"})  # a rebase
    _agrees(root)
    _git(root, "switch", "-q", "main")
    _agrees(root)
    assert len([p for p in (root / ".ai" / "local" / "state").iterdir() if p.name.startswith("git-index.")]) == 1


def test_an_edit_in_place_with_the_same_size_and_second_is_seen(tmp_path: Path) -> None:
    """Git's racy-entry case: a tracked file rewritten with as many bytes, its modification time
    set back to the one the index holds, in the second the index was written. The copy keeps the
    real index's modification time, so git checks that entry's bytes on the copy too. (Once git
    has rewritten the copy, a later second, an edit can no longer carry the entry's time unless
    the clock goes back: the real index, rewritten by a person's own `git status`, is the same.)"""
    root = _repo(tmp_path)
    target = root / "src" / "b.txt"
    when = 1_700_000_000
    os.utime(target, (when, when))
    _git(root, "add", "src/b.txt")
    os.utime(root / ".git" / "index", (when, when))  # the index written in that same second
    assert git.private_index(root) is not None  # copied now, before the edit
    target.write_text("TWO\n")  # same size
    os.utime(target, (when, when))
    plain = _plain(root)
    assert "src/b.txt" in plain
    assert _private(root) == plain


def test_the_copy_kept_by_the_untracked_cache_is_written_and_the_git_folder_is_not(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    _git(root, "status")  # a person's status: git's own index refresh, before we look
    before = _git_folder(root)
    _agrees(root)
    (root / "src" / "old" / "new.txt").write_text("untracked\n")
    _agrees(root)
    assert _git_folder(root) == before
    copy = git.private_index(root)
    assert copy is not None and copy.parent == root / ".ai" / "local" / "state"
    assert b"UNTR" in copy.read_bytes()  # git's untracked cache, in the copy alone
    assert b"UNTR" not in (root / ".git" / "index").read_bytes()


def test_a_copy_git_cannot_read_falls_back_to_the_real_index(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "src" / "c.txt").write_text("three\n")
    copy = git.private_index(root)
    assert copy is not None
    copy.write_bytes(b"DIRC garbage")  # same name: still taken for the real index's copy
    assert git.status(root) == git.parse_status(root, _plain(root))


def test_no_copy_without_a_state_folder_or_with_submodules(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".gitmodules").write_text("")
    assert git.private_index(root) is None
    assert git.status(root) == git.parse_status(root, _plain(root))
    (root / ".gitmodules").unlink()
    (root / ".ai" / "local" / "state").rmdir()
    assert git.private_index(root) is None
    assert not (root / ".ai" / "local" / "state").exists()
