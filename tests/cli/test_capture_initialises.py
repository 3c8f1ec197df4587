"""`majordomus capture install` in a repository never initialised initialises it first, and says so,
so seed 000's "How to see it" runs word for word from its first line."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import MAJORDOMUS, Repo, make_repo


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(root).parts}


def test_seed_000_how_to_see_it_word_for_word(bare_repo: Repo) -> None:
    repo = bare_repo
    proc = repo.mj("capture", "install")
    assert proc.returncode == 0, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first == f"{repo.root} is not initialised for majordomus: running `majordomus init` first"
    assert "wrote     .ai/repo/policy.yaml" in proc.stderr
    assert "hooks installed" in proc.stderr

    start = repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    assert start.returncode == 0 and not start.stderr, start.stderr
    repo.mj("start", "a task", "--scope", "lib", check=True)
    repo.mj("decision", "add", "Tabs are refused in the parser", "--why", "two encodings of one thing", check=True)
    end = repo.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert end.returncode == 0 and not end.stderr, end.stderr
    names = sorted(p.name for p in (repo.root / ".ai/repo/knowledge/candidates").iterdir())
    assert len(names) == 2 and names[0] == "README.md" and names[1].startswith("e1-")
    (line,) = repo.events("knowledge.derived")
    assert (line["episode"], line["written"]) == ("e1", 1)
    listed = repo.mj("knowledge", "candidates", check=True).stdout
    assert names[1][:-3] in listed and "convention" in listed and "main" in listed


def test_the_tree_is_what_init_then_capture_install_lays(tmp_path: Path) -> None:
    by_hand = make_repo(tmp_path / "a")  # init, then capture install
    at_once = make_repo(tmp_path / "b", init=False, capture=False)
    at_once.mj("capture", "install", check=True)
    assert _files(at_once.root) == _files(by_hand.root)
    again = at_once.mj("capture", "install", check=True)  # initialised now: nothing said about init
    assert "not initialised" not in again.stderr
    assert _files(at_once.root) == _files(by_hand.root)


def test_outside_a_git_repository_it_still_refuses(tmp_path: Path) -> None:
    proc = subprocess.run([MAJORDOMUS, "capture", "install"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 5 and "git init" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_hooks_registered_after_initialising(bare_repo: Repo) -> None:
    bare_repo.mj("capture", "install", check=True)
    settings = json.loads((bare_repo.root / ".claude/settings.json").read_text(encoding="utf-8"))
    assert set(settings["hooks"]) == {"SessionStart", "SessionEnd", "PreCompact", "Stop"}
    assert (bare_repo.root / ".ai/local").is_dir() and ".ai/local/" in (bare_repo.root / ".gitignore").read_text()
