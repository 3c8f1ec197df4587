"""Answers that were wrong without any error: a record cites what the episode did, and says so
when it cannot tell."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import Repo, make_repo, published


def records(repo: Repo) -> list[str]:
    return [p.read_text(encoding="utf-8") for p in repo.candidates()]


def commits_cited(text: str) -> set[str]:
    return {line.strip().strip('"- ')[len("commit:"):] for line in text.splitlines() if '"commit:' in line}


def test_a_non_ascii_decision_record_name_is_cited_as_it_is(tmp_path: Path) -> None:
    """git C-quotes such a path (`"\\303\\251"`) unless read with -z; the record must name the real
    file, so that `knowledge check` resolves it."""
    repo = make_repo(tmp_path / "repo")
    repo.hook("session-start", {"session_id": "e1", "cwd": str(repo.root)})
    sha = repo.commit("adr", {".ai/repo/adrs/0002-décision née.md": "# é\n", ".ai/repo/rules/project/tab\there.yaml": "x\n"})
    repo.mj("decision", "add", "we decide in French", check=True)
    repo.hook("session-end", {"session_id": "e1", "cwd": str(repo.root)})
    [text] = records(repo)
    assert commits_cited(text) == {sha}
    assert 'target: "file:.ai/repo/adrs/0002-décision née.md"' in text, text
    check = repo.mj("knowledge", "check")
    assert check.returncode == 0, check.stdout + check.stderr


def colleague(repo: Repo, tmp_path: Path) -> Repo:
    clone = Repo(tmp_path / "colleague")
    subprocess.run(["git", "clone", "-q", str(tmp_path / "remote.git"), str(clone.root)], check=True)
    return clone


def test_commits_pulled_in_are_not_cited_as_the_episodes(tmp_path: Path) -> None:
    repo = published(tmp_path)
    repo.git("checkout", "-q", "-b", "feature")
    repo.git("push", "-q", "-u", "origin", "feature")
    other = colleague(repo, tmp_path)
    other.git("checkout", "-q", "feature")
    repo.hook("session-start", {"session_id": "e1", "cwd": str(repo.root)})
    mine = repo.commit("my adr", {".ai/repo/adrs/0001-mine.md": "# mine\n"})
    theirs = other.commit("their adr", {".ai/repo/adrs/0002-theirs.md": "# theirs\n"})
    other.git("push", "-q")
    repo.git("pull", "-q", "--rebase")
    mine = repo.git("rev-parse", "HEAD").strip()  # rebased onto theirs: a new commit, still mine
    assert repo.git("rev-parse", "HEAD~1").strip() == theirs
    repo.mj("decision", "add", "a decision after the pull", check=True)
    repo.hook("session-end", {"session_id": "e1", "cwd": str(repo.root)})
    [text] = records(repo)
    assert commits_cited(text) == {mine}, text
    assert "0001-mine.md" in text and "0002-theirs.md" not in text
    derived = repo.events("knowledge.derived")[-1]
    assert "1 commit(s) since the open not made in this checkout" in derived["provenance"]

    # A fast-forward pull alone: nothing of it is the episode's
    repo.hook("session-start", {"session_id": "e2", "cwd": str(repo.root)})
    repo.git("push", "-q")
    other.git("pull", "-q", "--rebase")
    other.commit("their rule", {".ai/repo/rules/project/theirs.yaml": "x\n"})
    other.git("push", "-q")
    repo.git("pull", "-q", "--ff-only")
    repo.mj("decision", "add", "a decision after a fast-forward", check=True)
    out = repo.mj("knowledge", "derive", "--episode", "e2", check=True).stdout
    assert "not made in this checkout" in out
    [text] = [t for t in records(repo) if "fast-forward" in t]
    assert commits_cited(text) == set() and "theirs.yaml" not in text


def test_a_gone_open_head_is_said_not_silently_dropped(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.commit("work in progress")
    repo.hook("session-start", {"session_id": "e1", "cwd": str(repo.root)})
    opened = repo.events("session.opened")[-1]["head"]
    repo.git("commit", "-q", "--amend", "--allow-empty", "-m", "work, amended")
    repo.commit("adr", {".ai/repo/adrs/0001-x.md": "# x\n"})
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    assert repo.git("cat-file", "-t", opened, check=False) == ""
    repo.mj("decision", "add", "decided after an amend", check=True)
    out = repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert "commit provenance:" in out.stdout and opened[:12] in out.stdout, out.stdout
    assert "no longer in this repository" in repo.events("knowledge.derived")[-1]["provenance"]
    dry = json.loads(repo.mj("knowledge", "derive", "--episode", "e1", "--dry-run", "--json", check=True).stdout)
    assert "no longer in this repository" in dry["provenance"]
