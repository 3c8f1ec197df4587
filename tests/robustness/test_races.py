"""Races: session-start and session-end hooks for eight episodes and eight `decision add`
writers on one repository at once, repeated. No ledger line lost or torn, every closed episode
has its `knowledge.derived`, doit's dep file still opens, no record half written."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from conftest import MAJORDOMUS, Repo

ROUNDS = 3
WIDTH = 8


def _spawn(repo: Repo, argv: list[str], stdin: bytes | None, env: dict[str, str]) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, cwd=repo.root, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    proc.stdin.write(stdin or b"")
    proc.stdin.close()
    return proc


def _wait_all(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        assert proc.stderr is not None
        err = proc.stderr.read()
        assert proc.wait(timeout=180) == 0, err
        assert b"Traceback" not in err and b"failed" not in err, err


def test_hooks_and_writers_racing(repo: Repo) -> None:
    env = dict(os.environ, PATH=f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ['PATH']}")
    hooks = repo.root / ".claude/hooks"
    expected_decisions = 0
    closed: list[str] = []
    for rnd in range(ROUNDS):
        episodes = [f"race{rnd}-{n}" for n in range(WIDTH)]
        _wait_all([_spawn(repo, [str(hooks / "majordomus-session-start")],
                          json.dumps({"session_id": ep, "source": "startup"}).encode(), env)
                   for ep in episodes])
        writers = [_spawn(repo, [MAJORDOMUS, "decision", "add", f"decision of {ep}", "--why", "race"], None,
                          dict(env, MAJORDOMUS_EPISODE=ep)) for ep in episodes]
        _wait_all(writers)
        expected_decisions += WIDTH
        _wait_all([_spawn(repo, [str(hooks / "majordomus-session-end")],
                          json.dumps({"session_id": ep, "reason": "other"}).encode(), env)
                   for ep in episodes])
        closed += episodes

    raw = (repo.root / ".ai/local/ledger.jsonl").read_text(encoding="utf-8").splitlines()
    lines = [json.loads(line) for line in raw]  # none torn
    by_event: dict[str, list[dict[str, object]]] = {}
    for line in lines:
        by_event.setdefault(str(line["event"]), []).append(line)
    assert len(by_event["session.opened"]) == len(closed)
    assert len(by_event["decision.recorded"]) == expected_decisions
    assert sorted(str(l["episode"]) for l in by_event["session.closed"]) == sorted(closed)
    derived = {str(l["episode"]): l["written"] for l in by_event["knowledge.derived"]}
    assert derived == {ep: 1 for ep in closed}
    assert "provider.event.failed" not in by_event
    # each decision was stamped with its own episode and became that episode's one record
    for line in by_event["decision.recorded"]:
        assert line["text"] == f"decision of {line['session']}"
    records = repo.candidates()
    assert len(records) == len(closed)
    for path in records:
        text = path.read_text(encoding="utf-8")
        assert text.startswith("---\n") and text.count("\n---\n") == 1 and text.endswith("\n")
    assert not list((repo.root / ".ai").rglob(".tmp.*"))
    with sqlite3.connect(repo.root / ".ai/local/state/doit.sqlite3") as db:
        assert db.execute("pragma integrity_check").fetchone() == ("ok",)
    for ep in closed[:3]:
        assert "nothing changed" in repo.mj("knowledge", "derive", "--episode", ep, check=True).stdout
