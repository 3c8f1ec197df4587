"""`majordomus knowledge export --agents-md [FILE]`: one marker-delimited block of verified records,
deterministic, size-capped, idempotent; text outside the markers never touched."""
from __future__ import annotations

import os
from pathlib import Path

from conftest import Repo
from kbstore import curated

from majordomus.knowledge.export import BEGIN, END, MAX_CHARS


def export(repo: Repo, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    proc = repo.mj("knowledge", "export", "--agents-md", *args, env=env)
    return proc.returncode, proc.stderr


def block_of(text: str) -> str:
    return text[text.index(BEGIN): text.index(END) + len(END) + 1]


def test_writes_the_block_then_changes_nothing(repo: Repo) -> None:
    curated(repo, "b-conv", "convention", "Names are nouns", "2026-02-01")
    curated(repo, "a-cons", "constraint", "Tabs are refused in the parser", "2026-01-01")
    curated(repo, "c-gone", "constraint", "An old rule", "2026-03-01", status="superseded")
    code, said = export(repo)
    agents = repo.root / "AGENTS.md"
    text = agents.read_text(encoding="utf-8")
    assert code == 0 and said.startswith("wrote AGENTS.md: 2 of 2 verified records")
    assert text.startswith(BEGIN + "\n") and text.endswith(END + "\n")
    items = [line for line in text.splitlines() if line.startswith("- ")]
    assert items == ["- constraint: Tabs are refused in the parser (`a-cons`)",
                     "- convention: Names are nouns (`b-conv`)"]
    before = agents.stat().st_mtime_ns
    code, said = export(repo)
    assert code == 0 and said.startswith("unchanged AGENTS.md") and agents.read_text(encoding="utf-8") == text
    assert agents.stat().st_mtime_ns == before


def test_text_outside_the_markers_is_kept_byte_for_byte(repo: Repo) -> None:
    agents = repo.root / "AGENTS.md"
    head = "# Working here\r\n\r\nBuild with `make`.\r\n\r\n"
    tail = "\r\n## Notes by hand\r\nno trailing newline"
    agents.write_bytes((head + BEGIN + "\nstale\n" + END + "\n" + tail).encode("utf-8"))
    curated(repo, "a-cons", "constraint", "Tabs are refused in the parser")
    assert export(repo)[0] == 0
    data = agents.read_bytes().decode("utf-8")
    assert data.startswith(head) and data.endswith("\n" + tail) and "stale" not in data
    assert "Tabs are refused in the parser" in block_of(data)

    plain = repo.root / "docs" / "AGENTS.md"
    plain.parent.mkdir()
    plain.write_text("# Docs agents\n\nno newline at the end", encoding="utf-8")
    assert export(repo, "docs/AGENTS.md")[0] == 0
    appended = plain.read_text(encoding="utf-8")
    assert appended.startswith("# Docs agents\n\nno newline at the end\n\n" + BEGIN + "\n")
    assert export(repo, "docs/AGENTS.md")[1].startswith("unchanged docs/AGENTS.md")


def test_deterministic_whatever_the_clock_zone_or_locale(repo: Repo) -> None:
    for n in range(12):
        curated(repo, f"rec-{n:02d}", ("constraint", "lesson", "fact")[n % 3], f"Record {n} — café", f"2026-01-{n + 1:02d}")
    export(repo, env={"TZ": "Pacific/Kiritimati", "LANG": "C", "LC_ALL": "C"})
    first = (repo.root / "AGENTS.md").read_bytes()
    (repo.root / "AGENTS.md").unlink()
    (repo.root / "src").mkdir()
    (repo.root / "src" / "dirty.py").write_text("x\n", encoding="utf-8")  # a working tree change changes nothing
    export(repo, env={"TZ": "America/Adak", "LANG": "tr_TR.UTF-8", "LC_ALL": "tr_TR.UTF-8"})
    assert (repo.root / "AGENTS.md").read_bytes() == first


def test_capped_in_size_with_a_cut_line(repo: Repo) -> None:
    for n in range(500):
        curated(repo, f"rec-{n:03d}", "convention", f"Synthetic verified record {n} " + "long " * 60, "2026-01-02")
    code, said = export(repo)
    text = (repo.root / "AGENTS.md").read_text(encoding="utf-8")
    assert code == 0 and len(text) <= MAX_CHARS
    last = [line for line in text.splitlines() if line.startswith("- ")][-1]
    shown = len([line for line in text.splitlines() if line.startswith("- convention")])
    assert last == (f"- … {500 - shown} more verified records not exported: "
                    "`majordomus knowledge search --status verified` lists them all")
    assert f"{shown} of 500 verified records" in said and shown > 10


def test_refusals_touch_nothing(repo: Repo, tmp_path: Path) -> None:
    agents = repo.root / "AGENTS.md"
    broken = f"# x\n{BEGIN}\nhalf a block\n"
    agents.write_text(broken, encoding="utf-8")
    code, said = export(repo)
    assert code == 4 and "1 begin and 0 end marker" in said and agents.read_text(encoding="utf-8") == broken
    agents.write_text(f"{END}\n{BEGIN}\n", encoding="utf-8")
    assert export(repo)[0] == 4
    outside = tmp_path / "elsewhere.md"
    code, said = export(repo, str(outside))
    assert code == 4 and "outside the repository" in said and not outside.exists()
    agents.unlink()
    target = repo.root / "real.md"
    target.write_text("mine\n", encoding="utf-8")
    os.symlink(target, agents)
    code, said = export(repo)
    assert code == 4 and "symbolic link" in said and target.read_text(encoding="utf-8") == "mine\n"
    (repo.root / "folder.md").mkdir()
    assert export(repo, "folder.md")[0] == 4
