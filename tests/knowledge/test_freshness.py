"""knowledge-observed judges the newest close: a resumed episode whose newest span closed with no
derivation is a stopped writer, even though its first span was derived."""
from __future__ import annotations

import json
import time

from conftest import Repo
from lifecycle import end, start, stamp


def _knowledge_on_end(repo: Repo, value: str) -> None:
    path = repo.root / ".ai/repo/policy.yaml"
    text = path.read_text(encoding="utf-8")
    for old in ('"on"', '"off"'):
        text = text.replace(f"knowledge_on_end: {old}", f'knowledge_on_end: "{value}"')
    path.write_text(text, encoding="utf-8")


def _closes_an_hour_ago(repo: Repo) -> None:
    """Move every session.closed line an hour back: past session.freshness.stale_minutes (30)."""
    path = repo.root / ".ai/local/ledger.jsonl"
    lines = []
    for text in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        if line["event"] == "session.closed":
            line["ts"] = stamp(time.time() - 3600)
            text = json.dumps(line, separators=(",", ":"))
        lines.append(text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _observed(repo: Repo) -> str:
    return next(l for l in repo.mj("doctor").stdout.splitlines() if "knowledge-observed" in l)


def test_the_newest_close_of_a_resumed_episode_is_judged(repo: Repo) -> None:
    start(repo, "e1")
    repo.mj("decision", "add", "One", check=True)
    end(repo, "e1")
    _closes_an_hour_ago(repo)
    assert "fresh: the newest closed episode e1 was derived" in _observed(repo)

    _knowledge_on_end(repo, "off")  # the second span closes without a derivation: the writer stopped
    start(repo, "e1", "resume")
    repo.mj("decision", "add", "Two", check=True)
    end(repo, "e1")
    _closes_an_hour_ago(repo)
    line = _observed(repo)
    assert line.startswith("ERROR majordomus.knowledge-observed: stopped writer: episode e1 closed"), line
    assert repo.mj("doctor").returncode == 10

    # the remedy the finding names ends it
    repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert "fresh: the newest closed episode e1 was derived" in _observed(repo)
