"""One episode, one task: what is one stays one when several processes act on it at once (two
end hooks of one episode, a client and a person both closing it, agents starting tasks).

Each race is gated: the ledger's lock is held while the processes start, so each runs up to its
first lock and waits there; then all go at once. Without a lock of its own, every one of them has
already read "not open" / "no active task" by then."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import MAJORDOMUS, Repo, make_repo
from crashkit import held, queued

GUARD_S = 300


def at_once(repo: Repo, commands: list[list[str]], env: dict[str, str] | None = None) -> list[tuple[int, str]]:
    """Start every command behind the held ledger lock, let them all go; (exit code, stderr) of each."""
    full = dict(os.environ, **(env or {}))
    state = repo.root / ".ai/local/state"
    with held(state / "ledger.lock"):
        procs = [subprocess.Popen([MAJORDOMUS, *c], cwd=repo.root, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True, env=full) for c in commands]
        queued(procs, state)
    return [(p.wait(timeout=GUARD_S), p.stderr.read() if p.stderr else "") for p in procs]


def test_concurrent_closes_and_opens_of_one_episode_are_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    opens = at_once(repo, [["session", "start", "--id", "e1"]] * 4)
    assert all(code == 0 for code, _ in opens), opens
    mine = [l["event"] for l in repo.ledger() if l["session"] == "e1"]
    assert mine.count("session.opened") == 1 and mine.count("session.resumed") == 3, mine
    repo.mj("decision", "add", "the decision", env={"MAJORDOMUS_EPISODE": "e1"}, check=True)
    closes = at_once(repo, [["session", "close", "--id", "e1"]] * 4)
    assert sorted(code for code, _ in closes) == [0, 3, 3, 3], closes
    mine = [l for l in repo.ledger() if l.get("episode") == "e1" or l["session"] == "e1"]
    assert [l["event"] for l in mine].count("session.closed") == 1, mine
    derived = [l for l in mine if l["event"] == "knowledge.derived"]
    assert len(derived) == 1 and derived[0]["written"] == 1, derived
    assert len(repo.candidates()) == 1
    assert not list((repo.root / ".ai/local/state/episodes").glob("*.lock"))  # a close leaves no lock behind


def test_one_task_at_a_time_holds_under_concurrency(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    starts = at_once(repo, [["start", f"task {i}"] for i in range(6)])
    assert sorted(code for code, _ in starts) == [0, 4, 4, 4, 4, 4], starts
    assert len(repo.events("task.started")) == 1
    finishes = at_once(repo, [["finish", "--outcome", "failed", "--reason", f"reason {i}"] for i in range(3)])
    assert sorted(code for code, _ in finishes) == [0, 3, 3], finishes
    assert len(repo.events("task.finished")) == 1
