"""Seed 000's "How to see it", end to end, through the real hooks and the real command."""
from __future__ import annotations

import json
import re

from conftest import Repo


def test_how_to_see_it(repo: Repo) -> None:
    start = repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    assert start.returncode == 0 and start.stderr == b""
    assert b"# Majordomus briefing" in start.stdout
    repo.mj("start", "a task", "--scope", "lib", check=True)
    repo.mj("decision", "add", "Tabs are refused in the parser", "--why", "two encodings of one thing",
            check=True)
    end = repo.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert end.returncode == 0 and end.stderr == b"", end.stderr

    names = sorted(p.name for p in (repo.root / ".ai/repo/knowledge/candidates").iterdir())
    assert len(names) == 2 and "README.md" in names
    (record,) = [n for n in names if n != "README.md"]
    assert re.fullmatch(r"e1-[0-9a-f]{12}\.md", record)

    history = json.loads(repo.mj("history", "--event", "knowledge.derived", "--json", check=True).stdout)
    assert [(h["episode"], h["written"]) for h in history] == [("e1", 1)]

    listed = json.loads(repo.mj("knowledge", "candidates", "--json", check=True).stdout)
    assert [(c["id"], c["class"], c["branch"]) for c in listed] == [(record[:-3], "convention", "main")]
    assert "convention" in repo.mj("knowledge", "candidates", check=True).stdout

    again = repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert "nothing changed" in again.stdout
    derived = repo.events("knowledge.derived")
    assert [d["written"] for d in derived] == [1, 0]

    # The close path: session record published, derivation before session.closed.
    order = [l["event"] for l in repo.ledger()]
    assert order.index("knowledge.derived") < order.index("session.closed")
    assert (repo.root / ".ai/repo/sessions/e1.md").is_file()
