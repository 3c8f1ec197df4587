"""The one reader never goes through a symbolic link inside a repository: not at the file (as
before), nor at any folder above it from `.ai` down; a link above the repository is the user's."""
from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from majordomus.base import fsio


def _store(root: Path) -> Path:
    folder = root / ".ai" / "repo" / "knowledge" / "curated"
    folder.mkdir(parents=True)
    (folder / "r-1.md").write_text("mine\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("linked", [".ai", ".ai/repo", ".ai/repo/knowledge", ".ai/repo/knowledge/curated"])
def test_a_read_through_a_linked_folder_is_refused(tmp_path: Path, linked: str) -> None:
    root = tmp_path / "repo"
    _store(root)
    elsewhere = _store(tmp_path / "elsewhere")
    (elsewhere / "r-1.md").write_text("not mine\n", encoding="utf-8")
    target = tmp_path / "elsewhere" / linked
    real = root / linked
    real.rename(real.with_name(real.name + ".away"))
    real.symlink_to(target, target_is_directory=True)
    path = root / ".ai/repo/knowledge/curated/r-1.md"
    assert path.read_text(encoding="utf-8") == "not mine\n"  # the link leads out
    with pytest.raises(OSError) as refused:
        fsio.read_regular(path)
    assert refused.value.errno == errno.ELOOP and linked in str(refused.value)
    with pytest.raises(OSError):
        fsio.confined(path.parent, folder=True)


def test_a_link_above_the_repository_is_the_users_own(tmp_path: Path) -> None:
    _store(tmp_path / "real" / "repo")
    (tmp_path / "home").symlink_to(tmp_path / "real", target_is_directory=True)
    path = tmp_path / "home" / "repo" / ".ai/repo/knowledge/curated/r-1.md"
    assert fsio.read_regular(path) == b"mine\n"
    assert fsio.read_text(path) == "mine\n"


def test_sweep_tmp_removes_only_old_temp_files(tmp_path: Path) -> None:
    """Leftovers of interrupted writes older than the cutoff go; young ones (a live writer's),
    records, and a folder that only looks like a leftover stay."""
    old, young = tmp_path / f"{fsio.TMP_PREFIX}a.md.1", tmp_path / f"{fsio.TMP_PREFIX}b.md.2"
    for p in (old, young, tmp_path / "r.md"):
        p.write_text("x", encoding="utf-8")
    (tmp_path / f"{fsio.TMP_PREFIX}dir").mkdir()
    os.utime(old, (1_000_000_000, 1_000_000_000))
    os.utime(tmp_path / f"{fsio.TMP_PREFIX}dir", (1_000_000_000, 1_000_000_000))
    assert fsio.sweep_tmp(tmp_path) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([young.name, "r.md", f"{fsio.TMP_PREFIX}dir"])
    assert fsio.sweep_tmp(tmp_path / "missing") == 0
