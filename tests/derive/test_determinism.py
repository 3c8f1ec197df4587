"""Same ledger, same git: same bytes, in any repository, timezone or locale."""
from __future__ import annotations

import shutil
from pathlib import Path

from conftest import Repo, make_repo


def _record_episode(repo: Repo) -> None:
    repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    repo.mj("start", "a task", "--scope", "lib", check=True)
    repo.mj("decision", "add", 'Tabs are "refused": # yes', "--why", "two encodings\nof one thing", check=True)
    repo.mj("decision", "add", "Kein Tabulator — ever", check=True)


def test_same_ledger_two_repositories_two_locales_same_bytes(tmp_path: Path) -> None:
    first = make_repo(tmp_path / "first")
    _record_episode(first)
    outputs = []
    for name, env in (("utc", {"TZ": "UTC", "LANG": "C", "LC_ALL": "C"}),
                      ("tokyo", {"TZ": "Asia/Tokyo", "LANG": "de_DE.UTF-8", "LC_ALL": "de_DE.UTF-8"}),
                      ("honolulu", {"TZ": "Pacific/Honolulu", "LANG": "tr_TR.UTF-8", "LC_ALL": "tr_TR.UTF-8"})):
        other = make_repo(tmp_path / name)
        shutil.copy(first.root / ".ai/local/ledger.jsonl", other.root / ".ai/local/ledger.jsonl")
        other.mj("knowledge", "derive", "--episode", "e1", env=env, check=True)
        outputs.append({p.name: p.read_bytes() for p in other.candidates()})
    assert len(outputs[0]) == 2
    assert outputs[0] == outputs[1] == outputs[2]


def test_rederive_rewrites_the_same_file_byte_for_byte(episode: Repo) -> None:
    episode.mj("decision", "add", "one decision", check=True)
    episode.mj("knowledge", "derive", check=True)
    (path,) = episode.candidates()
    before = path.read_bytes()
    path.unlink()
    out = episode.mj("knowledge", "derive", check=True).stdout
    assert "wrote 1" in out and path.read_bytes() == before
    assert "nothing changed" in episode.mj("knowledge", "derive", check=True).stdout


def test_decision_outside_a_task_derives_from_the_session_alone(episode: Repo) -> None:
    episode.mj("decision", "add", "no task here", check=True)
    episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    (path,) = episode.candidates()
    text = path.read_text()
    assert '    - "session:e1"\n---' in text and "decision:" not in text


def test_the_record_is_exactly_this(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    repo.mj("decision", "add", "Tabs are refused in the parser", "--why", "two encodings of one thing", check=True)
    repo.mj("knowledge", "derive", check=True)
    (path,) = repo.candidates()
    ts = repo.events("decision.recorded")[0]["ts"]
    day = ts[:10]
    assert path.read_text() == f"""---
id: {path.stem}
kind: knowledge/v1
class: convention
status: candidate
epistemics: decided
title: "Tabs are refused in the parser"
date: "{day}"
provenance:
  origin: extracted
  derived_from:
    - "session:e1"
---
Tabs are refused in the parser

Why: two encodings of one thing

Evidence: decision.recorded at {ts}.
"""
