"""The command line by hand: sessions, tasks, history, refusals with one line naming the fix."""
from __future__ import annotations

import json

from conftest import Repo


def test_session_start_and_close_by_hand(repo: Repo) -> None:
    opened = repo.mj("session", "start", "--id", "m1", check=True)
    assert "episode m1 opened" in opened.stderr and "# Majordomus briefing" in opened.stdout
    repo.mj("decision", "add", "by hand", check=True)
    closed = json.loads(repo.mj("session", "close", "--json", check=True).stdout)
    assert closed["episode"] == "m1" and len(closed["written"]) == 1
    assert closed["session_record"] == ".ai/repo/sessions/m1.md"
    record = (repo.root / ".ai/repo/sessions/m1.md").read_text()
    assert 'branch: "main"' in record and "head_open: \"" in record
    again = repo.mj("session", "close", "--id", "m1")
    assert again.returncode == 3 and "not open" in again.stderr


def test_other_episodes_do_not_make_a_derivation_stale(episode: Repo) -> None:
    episode.mj("decision", "add", "in e1", check=True)
    assert "wrote 1" in episode.mj("knowledge", "derive", check=True).stdout
    episode.hook("session-start", {"session_id": "e2", "source": "startup"})
    episode.mj("decision", "add", "in e2", check=True)
    episode.mj("checkpoint", "--note", "e2 goes on", check=True)
    out = episode.mj("knowledge", "derive", "--episode", "e1", check=True).stdout
    assert out.startswith("derive e1: nothing changed")


def test_one_task_at_a_time(episode: Repo) -> None:
    task = episode.mj("start", "first", check=True).stdout.strip()
    second = episode.mj("start", "second")
    assert second.returncode == 4 and "majordomus finish" in second.stderr and task in second.stderr
    assert episode.mj("finish", "--outcome", "completed", check=True).returncode == 0
    assert episode.mj("start", "second").returncode == 0


def test_a_bare_finish_is_refused_off_a_terminal_and_asked_at_one(episode: Repo) -> None:
    """An outcome nobody stated is not evidence: refused (exit 2, naming --outcome) where no one
    can be asked; at a terminal, asked for (and a reason for any outcome but completed)."""
    import os
    import pty
    import subprocess

    task = episode.mj("start", "first", check=True).stdout.strip()
    bare = episode.mj("finish")
    assert bare.returncode == 2 and "--outcome" in bare.stderr and "no_match" in bare.stderr
    assert len(bare.stderr.strip().splitlines()) == 1 and episode.events("task.finished") == []
    help_text = episode.mj("finish", "--help").stdout
    assert "no_match (the premise did not hold" in " ".join(help_text.split())
    main, child = pty.openpty()
    from conftest import MAJORDOMUS

    proc = subprocess.Popen([MAJORDOMUS, "finish"], cwd=episode.root, stdin=child, stdout=subprocess.PIPE,
                            stderr=child)
    os.close(child)
    os.write(main, b"maybe\nno_match\nthe parser has no such option\n")
    assert proc.wait(timeout=60) == 0
    os.close(main)
    (line,) = episode.events("task.finished")
    assert (line["task"], line["outcome"], line["reason"]) == (task, "no_match", "the parser has no such option")


def test_refusals_are_one_line(episode: Repo) -> None:
    for args, code, fix in ((["decision", "add", "  "], 4, "decision add"),
                            (["finish"], 3, "majordomus start"),
                            (["knowledge", "derive", "--episode", "../x"], 4, "id"),
                            (["history", "--event", "no.such"], 2, "one of")):
        proc = episode.mj(*args)
        assert proc.returncode == code, (args, proc.stderr)
        assert proc.stderr.count("\n") == 1 and fix in proc.stderr, proc.stderr


def test_no_open_episode_names_the_fix(repo: Repo) -> None:
    proc = repo.mj("knowledge", "derive")
    assert proc.returncode == 3 and "majordomus session start" in proc.stderr


def test_history_filters(episode: Repo) -> None:
    episode.mj("decision", "add", "d1", check=True)
    episode.mj("checkpoint", check=True)
    lines = json.loads(episode.mj("history", "--event", "decision.recorded", "--json", check=True).stdout)
    assert [l["text"] for l in lines] == ["d1"]
    mine = json.loads(episode.mj("history", "--episode", "e1", "--json", check=True).stdout)
    assert [l["event"] for l in mine] == ["session.opened", "decision.recorded", "checkpoint.recorded"]
    text = episode.mj("history", "--limit", "1", check=True).stdout
    assert text.count("\n") == 1 and "checkpoint.recorded" in text


def test_help_lists_every_command(repo: Repo) -> None:
    out = repo.mj("--help").stdout
    for command in ("init", "capture", "session", "start", "finish", "decision", "question", "checkpoint",
                    "handover", "history", "knowledge"):
        assert command in out
    assert repo.mj().returncode == 2
