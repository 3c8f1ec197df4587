"""The shared fixtures' copies of a prepared repository are what the real commands would make."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import _TEMPLATES, _make_repo, make_repo


def _files(root: Path) -> dict[str, bytes]:
    """Every file's bytes by its path, git's index aside (it holds stat data: inodes, times)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).as_posix() != ".git/index"}


@pytest.mark.parametrize("init,capture", [(True, True), (True, False), (False, False)])
def test_a_copied_repository_is_a_fresh_one(tmp_path: Path, init: bool, capture: bool) -> None:
    make_repo(tmp_path / "first", init, capture)  # the run's template of this kind exists now
    copy = make_repo(tmp_path / "copy", init, capture)
    fresh = _make_repo(tmp_path / "fresh", init, capture)
    assert _files(copy.root) == _files(fresh.root)
    assert copy.git("ls-files", "--stage") == fresh.git("ls-files", "--stage")
    assert copy.git("status", "--porcelain", "--ignored") == fresh.git("status", "--porcelain", "--ignored")
    assert copy.git("rev-parse", "HEAD") == fresh.git("rev-parse", "HEAD")
    assert copy.git("fsck", "--strict") == ""
    folder = str(_TEMPLATES["folder"]).encode()
    named = [name for name, data in _files(copy.root).items() if folder in data]
    assert named == [], f"the copy names its template's path: {named}"
    assert all(not (copy.root / rel).is_symlink() for rel in _files(copy.root))
    executable = sorted(str(p.relative_to(copy.root)) for p in copy.root.rglob("*")
                        if p.is_file() and p.stat().st_mode & 0o111)
    assert executable == sorted(str(p.relative_to(fresh.root)) for p in fresh.root.rglob("*")
                                if p.is_file() and p.stat().st_mode & 0o111)


def test_a_changed_environment_gets_a_repository_of_its_own(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that changed the commit dates before asking for a repository (as some do) gets what
    the real commands make under them, and later tests still get theirs."""
    standard = make_repo(tmp_path / "standard")
    date = os.environ["GIT_COMMITTER_DATE"]
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-12-03T09:50:48Z")
    changed = make_repo(tmp_path / "changed")
    assert _files(changed.root) == _files(_make_repo(tmp_path / "fresh", True, True).root)
    assert changed.git("rev-parse", "HEAD") != standard.git("rev-parse", "HEAD")
    monkeypatch.setenv("GIT_COMMITTER_DATE", date)
    again = make_repo(tmp_path / "again")
    assert _files(again.root) == _files(standard.root)
