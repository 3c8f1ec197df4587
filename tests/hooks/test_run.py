"""The hook scripts, fed real JSON on stdin: they never block the provider and never lose a
failure."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from conftest import MAJORDOMUS, PROJECT, Repo, make_repo


def test_start_opens_and_briefs(repo: Repo, tmp_path: Path) -> None:
    env_file = tmp_path / "claude.env"
    proc = repo.hook("session-start", {"session_id": "abc-123", "source": "startup", "cwd": str(repo.root)},
                     env={"CLAUDE_ENV_FILE": str(env_file)})
    assert proc.returncode == 0 and proc.stderr == b""
    assert proc.stdout.decode().startswith("# Majordomus briefing")
    assert env_file.read_text() == "export MAJORDOMUS_EPISODE=abc-123\n"
    (opened,) = repo.events("session.opened")
    assert opened["session"] == "abc-123" and opened["branch"] == "main" and len(opened["head"]) == 40
    snapshots = list((repo.root / ".ai/local/session-contexts").glob("*--abc-123.md"))
    assert len(snapshots) == 1


def test_resume_does_not_reopen(episode: Repo) -> None:
    proc = episode.hook("session-start", {"session_id": "e1", "source": "resume"})
    assert proc.returncode == 0
    assert len(episode.events("session.opened")) == 1
    assert [l["source"] for l in episode.events("session.resumed")] == ["resume"]


@pytest.mark.parametrize("raw, why", [
    (b"", "stdin is empty"),
    (b"not json", "stdin is not JSON"),
    (b"[1, 2]", "not an object"),
    (b'{"source": "startup"}', "no session_id"),
    (b'{"session_id": 7}', "no session_id"),
    (b'{"session_id": "../../etc"}', "session_id"),
    (b'{"session_id": "a/b"}', "session_id"),
    (b'{"session_id": "-rf"}', "session_id"),
    (b"{" * 5000, "stdin is not JSON"),
    (b'{"session_id": "' + b"x" * (2 << 20) + b'"}', "more than a hook payload"),
])
@pytest.mark.parametrize("hook", ["session-start", "session-end", "pre-compact"])
def test_bad_input_is_recorded_never_a_traceback(repo: Repo, hook: str, raw: bytes, why: str) -> None:
    proc = repo.hook(hook, None, raw=raw)
    assert proc.returncode == 0
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and why in err and "Traceback" not in err
    (failed,) = repo.events("provider.event.failed")
    assert failed["hook"] == hook and why in failed["error"]
    assert not repo.events("session.opened")
    assert not list((repo.root / ".ai").rglob("etc*"))


def test_close_of_an_episode_not_open_is_recorded(repo: Repo) -> None:
    proc = repo.hook("session-end", {"session_id": "never", "reason": "other"})
    assert proc.returncode == 0
    assert "not open" in proc.stderr.decode()
    assert [l["episode"] for l in repo.events("session.refused")] == ["never"]
    assert not repo.events("session.closed")
    assert [l["hook"] for l in repo.events("provider.event.failed")] == ["session-end"]


def test_start_while_another_is_open_keeps_both(episode: Repo) -> None:
    episode.hook("session-start", {"session_id": "e2", "source": "startup"})
    (second,) = [l for l in episode.events("session.opened") if l["session"] == "e2"]
    assert second["others_open"] == ["e1"]
    # the newest opened is the open episode for commands without $MAJORDOMUS_EPISODE ...
    episode.mj("decision", "add", "for e2", check=True)
    # ... and $MAJORDOMUS_EPISODE stamps another session's commands with its own episode
    episode.mj("decision", "add", "for e1", env={"MAJORDOMUS_EPISODE": "e1"}, check=True)
    stamps = {l["text"]: l["session"] for l in episode.events("decision.recorded")}
    assert stamps == {"for e2": "e2", "for e1": "e1"}
    for ep in ("e1", "e2"):
        assert episode.hook("session-end", {"session_id": ep, "reason": "other"}).returncode == 0
    assert sorted(l["episode"] for l in episode.events("knowledge.derived")) == ["e1", "e2"]


def test_uninitialised_repository_says_one_line(bare_repo: Repo) -> None:
    hooks = bare_repo.root / ".claude/hooks"
    hooks.mkdir(parents=True)
    source = PROJECT / "templates/hooks/majordomus-session-start"
    shutil.copy(source, hooks / source.name)
    proc = bare_repo.hook("session-start", {"session_id": "e1"})
    assert proc.returncode == 0
    assert b"not initialised" in proc.stderr and proc.stderr.count(b"\n") == 1
    assert not (bare_repo.root / ".ai").exists()


def test_hook_without_majordomus_exits_zero(repo: Repo) -> None:
    env = {"PATH": "/usr/bin:/bin", "CLAUDE_PROJECT_DIR": str(repo.root)}
    script = repo.root / ".claude/hooks/majordomus-session-start"
    import subprocess

    proc = subprocess.run([str(script)], input=b'{"session_id":"e1"}', capture_output=True,
                          env={**env, "HOME": os.environ["HOME"]})
    assert proc.returncode == 0
    assert b"not found on PATH or in .venv" in proc.stderr
    assert not repo.events("session.opened")


def test_hook_acts_on_the_repository_its_script_belongs_to(tmp_path: Path) -> None:
    """The payload's cwd names where the agent stands, which may be another checkout: the hook
    script is the repository's own, and so is the episode (without a script, the cwd decides:
    tests/robustness/test_closes.py)."""
    one = make_repo(tmp_path / "one")
    two = make_repo(tmp_path / "two")
    proc = one.hook("session-start", {"session_id": "e1", "cwd": str(two.root / "README.md").rsplit("/", 1)[0]})
    assert proc.returncode == 0
    assert one.events("session.opened") and not two.events("session.opened")


def test_failed_derivation_is_reported_and_the_close_still_happens(episode: Repo) -> None:
    episode.mj("decision", "add", "a decision", check=True)
    template = episode.root / ".ai/local/state"
    (template / "doit.sqlite3").mkdir()  # a folder where doit's dep file goes: not a cache to rebuild
    proc = episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert proc.returncode == 0
    assert b"derivation failed" in proc.stderr
    assert proc.stderr.count(b"\n") == 1 and b"Traceback" not in proc.stderr  # doit's report stays inside
    assert episode.events("session.closed")
    assert any("derivation failed" in l["error"] for l in episode.events("provider.event.failed"))
    assert json.loads(json.dumps(episode.ledger()))  # the ledger still parses


def test_the_hook_script_finds_its_repository_however_it_is_called(repo: Repo, tmp_path: Path) -> None:
    """By its absolute path, by a relative one, by its bare name from its own folder: each finds
    the repository two folders up and majordomus on PATH, with no other program on PATH (the
    script's folder is the shell's own `${0%/*}`, not a `dirname` process: git and majordomus
    alone on PATH)."""
    import subprocess

    only = tmp_path / "bin"
    only.mkdir()
    (only / "majordomus").symlink_to(MAJORDOMUS)
    (only / "git").symlink_to(shutil.which("git") or "git")
    env = {"PATH": str(only), "HOME": os.environ["HOME"]}
    script = repo.root / ".claude/hooks/majordomus-session-start"
    calls = [([str(script)], repo.root), (["/bin/sh", ".claude/hooks/majordomus-session-start"], repo.root),
             (["/bin/sh", "majordomus-session-start"], script.parent)]
    for n, (argv, cwd) in enumerate(calls):
        proc = subprocess.run(argv, cwd=cwd, input=json.dumps({"session_id": f"e{n}"}).encode(),
                              capture_output=True, env=env)
        assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
        assert proc.stdout.startswith(f"# Majordomus briefing: episode e{n}".encode())
    assert [e["episode"] for e in repo.events("session.opened")] == ["e0", "e1", "e2"]
