"""The one listing of a record folder (`records.names`, `records.stats`): regular `*.md` files, never
a README contract, a `.tmp.` leftover, a link, a pipe or a folder; the stats are the files' own."""
from __future__ import annotations

import os
from pathlib import Path

from majordomus.store import records


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / ".ai" / "repo" / "knowledge" / "candidates"
    folder.mkdir(parents=True)
    for name in ("b.md", "a.md", "README.md", ".tmp.x.md", "notes.txt"):
        (folder / name).write_text(name, encoding="utf-8")
    (folder / "sub.md").mkdir()
    os.symlink(folder / "a.md", folder / "link.md")
    os.mkfifo(folder / "pipe.md")
    return folder


def test_the_stats_are_the_record_files_own(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    strays: list[str] = []
    assert records.names(folder, strays) == ["a.md", "b.md"] and strays == ["link.md", "pipe.md"]
    found = sorted(records.stats(folder))
    assert [name for name, _ in found] == ["a.md", "b.md"]
    for name, st in found:
        assert st is not None and (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (
            lambda s: (s.st_ino, s.st_size, s.st_mtime_ns, s.st_ctime_ns))(os.lstat(folder / name))


def test_a_folder_reached_through_a_link_or_missing_lists_nothing(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    linked = folder.parent / "curated"
    os.symlink(folder, linked)
    assert records.stats(linked) == [] and records.names(linked) == []
    assert records.stats(folder.parent / "missing") == [] and records.names(folder / "a.md") == []
