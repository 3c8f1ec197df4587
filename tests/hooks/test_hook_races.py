"""Hooks racing on one repository: no record lost, doit's dep file intact."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

from conftest import MAJORDOMUS, Repo


def test_eight_end_hooks_at_once(repo: Repo) -> None:
    episodes = [f"r{n}" for n in range(8)]
    for ep in episodes:
        assert repo.hook("session-start", {"session_id": ep, "source": "startup"}).returncode == 0
        for d in range(3):
            repo.mj("decision", "add", f"decision {d} of {ep}", env={"MAJORDOMUS_EPISODE": ep}, check=True)
    env = dict(os.environ, PATH=f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ['PATH']}")
    procs = [subprocess.Popen([str(repo.root / ".claude/hooks/majordomus-session-end")], cwd=repo.root,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
             for _ in episodes]
    for proc, ep in zip(procs, episodes):
        proc.stdin.write(json.dumps({"session_id": ep, "reason": "other"}).encode())  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
    for proc in procs:
        err = proc.stderr.read()  # type: ignore[union-attr]
        proc.stdout.read()  # type: ignore[union-attr]
        assert proc.wait(timeout=120) == 0 and err == b"", err
    derived = {l["episode"]: l["written"] for l in repo.events("knowledge.derived")}
    assert derived == {ep: 3 for ep in episodes}
    assert sorted(l["episode"] for l in repo.events("session.closed")) == episodes
    assert len(repo.candidates()) == 24
    for path in repo.candidates():
        assert path.read_text().count("\n---\n") == 1  # whole: closing front matter present
    leftovers = [p for p in (repo.root / ".ai").rglob(".tmp.*")]
    assert leftovers == []
    # an episode's first derivation runs without doit (tasks/derive.py `first`): its dep file,
    # where one exists, is whole
    dep = repo.root / ".ai/local/state/doit.sqlite3"
    if dep.exists():
        with sqlite3.connect(dep) as db:
            assert db.execute("pragma integrity_check").fetchone() == ("ok",)
    # and every record is up to date afterwards: re-deriving any episode changes nothing
    for ep in episodes[:2]:
        assert "nothing changed" in repo.mj("knowledge", "derive", "--episode", ep, check=True).stdout
