"""A checkpoint records `changed_files`: what git says changed since the episode opened — commits,
the working tree, untracked files, the candidates and the session record included (seed 001,
Consequences)."""
from __future__ import annotations

from conftest import Repo


def _adopted(repo: Repo) -> Repo:
    """`repo` with its majordomus files committed, so only the episode's own work shows."""
    repo.git("add", "-A")
    repo.commit("adopt majordomus")
    return repo


def test_checkpoint_lists_what_changed_since_the_open(repo: Repo) -> None:
    _adopted(repo)
    repo.commit("before the episode", {"lib/old.py": "x = 1\n", "lib/gone.py": "y = 2\n"})
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    repo.commit("in the episode", {"lib/new.py": "z = 3\n"})
    (repo.root / "lib/old.py").write_text("x = 10\n", encoding="utf-8")  # modified, not staged
    repo.git("rm", "-q", "lib/gone.py")  # deleted and staged
    (repo.root / "docs/deep").mkdir(parents=True)
    (repo.root / "docs/deep/notes.md").write_text("untracked\n", encoding="utf-8")
    repo.mj("start", "parser work", check=True)
    repo.mj("decision", "add", "Tabs are refused in the parser", check=True)
    repo.mj("knowledge", "derive", check=True)
    (candidate,) = repo.candidates()

    repo.mj("checkpoint", "--note", "half way", check=True)

    (line,) = repo.events("checkpoint.recorded")
    assert line["session"] == "e1" and line["note"] == "half way"
    assert line["changed_files"] == sorted([
        "docs/deep/notes.md", "lib/gone.py", "lib/new.py", "lib/old.py",
        str(candidate.relative_to(repo.root)),
    ])
    assert "changed_total" not in line


def test_the_next_episode_s_checkpoint_lists_the_session_record(repo: Repo) -> None:
    _adopted(repo)
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    repo.mj("decision", "add", "Spaces indent the parser's tables", check=True)
    assert repo.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert repo.hook("session-start", {"session_id": "e2", "source": "startup"}).returncode == 0

    repo.mj("checkpoint", check=True)

    (line,) = repo.events("checkpoint.recorded")
    (candidate,) = repo.candidates()
    assert line["session"] == "e2"
    assert line["changed_files"] == sorted([".ai/repo/sessions/e1.md", str(candidate.relative_to(repo.root))])


def test_compaction_checkpoint_carries_changed_files(repo: Repo) -> None:
    _adopted(repo)
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    (repo.root / "notes.txt").write_text("new\n", encoding="utf-8")
    repo.mj("decision", "add", "Notes live beside the code", check=True)  # a compaction with news
    assert repo.hook("pre-compact", {"session_id": "e1", "trigger": "manual"}).returncode == 0
    (line,) = repo.events("checkpoint.recorded")  # the checkpoint comes before the derivation
    assert line["changed_files"] == ["notes.txt"]


def test_no_episode_no_comparison(repo: Repo) -> None:
    _adopted(repo)
    (repo.root / "notes.txt").write_text("new\n", encoding="utf-8")
    repo.mj("checkpoint", "--note", "by hand", check=True)
    (line,) = repo.events("checkpoint.recorded")
    assert line["session"] is None and line["changed_files"] is None


def test_a_rewritten_history_is_said_not_fatal(repo: Repo) -> None:
    _adopted(repo)
    repo.commit("to be dropped", {"a.txt": "a\n"})
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    repo.git("reset", "-q", "--hard", "HEAD~1")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    proc = repo.mj("checkpoint")
    assert proc.returncode == 0, proc.stderr
    (line,) = repo.events("checkpoint.recorded")
    assert line["changed_files"] is None
    assert "is not in this repository any more" in line["changed_error"]
