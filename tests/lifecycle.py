"""Helpers for the episode-lifecycle tests: the real hook scripts, and an episode made old on disk."""
from __future__ import annotations

import json
import time
from pathlib import Path

from conftest import Repo


def start(repo: Repo, episode: str, source: str = "startup", env: dict[str, str] | None = None) -> str:
    proc = repo.hook("session-start", {"session_id": episode, "source": source, "cwd": str(repo.root)}, env=env)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc.stdout.decode()


def end(repo: Repo, episode: str, reason: str = "other") -> None:
    proc = repo.hook("session-end", {"session_id": episode, "reason": reason, "cwd": str(repo.root)})
    assert proc.returncode == 0 and proc.stdout == b"" and proc.stderr == b"", proc.stderr


def stamp(epoch: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def age(repo: Repo, episode: str, minutes: float) -> str:
    """Make `episode` look `minutes` old: its open record's opening and every ledger line stamped
    with it move back in time (the ledger stays in time order: the aged lines are its oldest)."""
    when = stamp(time.time() - minutes * 60)
    record = repo.root / ".ai/local/state/episodes" / f"{episode}.json"
    data = json.loads(record.read_text(encoding="utf-8"))
    old_opened = data["opened"]
    data["opened"] = when
    record.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    ledger = repo.root / ".ai/local/ledger.jsonl"
    mine, others = [], []
    for text in ledger.read_text(encoding="utf-8").splitlines():
        line = json.loads(text)
        if line.get("session") == episode:
            line["ts"] = when
            mine.append(json.dumps(line, separators=(",", ":")))
        else:
            others.append(text)
    ledger.write_text("\n".join(mine + others) + "\n", encoding="utf-8")
    contexts = repo.root / ".ai/local/session-contexts"
    for snap in contexts.glob(f"*--{episode}.md"):  # the snapshot is named by the opening time
        snap.rename(contexts / f"{when.replace('-', '').replace(':', '')}--{episode}.md")
    assert old_opened
    return when


def session_record(repo: Repo, episode: str) -> Path:
    return repo.root / ".ai/repo/sessions" / f"{episode}.md"
