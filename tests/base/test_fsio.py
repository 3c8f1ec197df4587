"""The one reader never goes through a symbolic link inside a repository: not at the file (as
before), nor at any folder above it from `.ai` down; a link above the repository is the user's."""
from __future__ import annotations

import errno
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
