"""Doctor's queue rule keeps the candidates waiting and the dates they wait from beside the
knowledge index (`validators._waiting`, `index.kept/doctor.waiting.json`) while the index and the
ledger's tail are as they were: a status edited in place, the clock moving on, a candidate no
ledger line dates, each make it say what it says without the kept answer."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Repo
from rules_helpers import append_line, rel, set_policy, stamp, write_candidate
from majordomus.rules import dispatch, validators
from majordomus.store import index
from majordomus.store.workspace import open_workspace

REVIEWED = "majordomus.candidates-reviewed"


@pytest.fixture
def read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the waiting candidates were read (not the kept answer given)."""
    calls: list[int] = []
    waiting = validators.acc.waiting

    def counted(ws: Any) -> Any:
        calls.append(1)
        return waiting(ws)

    monkeypatch.setattr(validators.acc, "waiting", counted)
    return calls


def _queue(repo: Repo, now: float | None = None) -> list[str]:
    """What doctor's queue rule finds, past one tick of the file system's clock (what the test just
    wrote vouches for itself), each run in a fresh process's state; and the same with the kept
    answers deleted."""
    time.sleep(0.06)
    found = _run(repo, now)
    kept = repo.root / ".ai/local/state/index.kept" / f"{validators._WAITING}.json"
    if kept.exists():
        kept.unlink()
    assert _run(repo, now) == found  # without the kept answer: the same (and kept again)
    return found


def _run(repo: Repo, now: float | None) -> list[str]:
    ws = open_workspace(repo.root)
    ws.warn = False
    report = dispatch.run(ws, "doctor", now=now)
    index.of(ws).close()
    index._OPEN.clear()
    return [f.what for r in report.ran if r.rule.id == REVIEWED for f in r.verdict.findings]


def _derived(repo: Repo, *paths: Path, ago: int = 3600) -> None:
    append_line(repo, "knowledge.derived", stamp(ago), "e1", episode="e1", written=len(paths), unchanged=0,
                paths=[rel(p, repo) for p in paths])


def test_a_status_edited_in_place_is_read_again(repo: Repo, read: list[int]) -> None:
    set_policy(repo, "candidates_max_files: 25", "candidates_max_files: 1")
    paths = [write_candidate(repo, f"e1-00000000000{k}") for k in range(3)]
    _derived(repo, *paths)
    append_line(repo, "session.opened", stamp(60), "e2")  # the derivation in the facts' tables
    untracked = sum("git does not track" in w for w in _queue(repo))
    assert untracked == 3 and len(read) == 2  # judged twice: with and without the kept answer
    read.clear()
    assert sum("git does not track" in w for w in _queue(repo)) == 3
    assert len(read) == 1  # the kept answer given; read once, after it was deleted
    read.clear()
    st = paths[1].stat()
    text = paths[1].read_text(encoding="utf-8")
    paths[1].write_text(text.replace("status: candidate", "status: superseded"), encoding="utf-8")
    os.utime(paths[1], ns=(st.st_atime_ns, st.st_mtime_ns))  # its folder's stamp and its mtime kept
    found = _queue(repo)
    assert len(read) == 2  # the index changed: read again
    assert sum("git does not track" in w for w in found) == 3  # the file is still there, untracked
    assert any(w.startswith("2 candidates await review") for w in found)


def test_the_minutes_waited_are_counted_at_each_run(repo: Repo, read: list[int]) -> None:
    paths = [write_candidate(repo, f"e1-00000000000{k}") for k in range(2)]
    _derived(repo, *paths, ago=3600)
    append_line(repo, "session.opened", stamp(60), "e2")
    assert not any("has waited" in w for w in _queue(repo))
    read.clear()
    later = time.time() + 10080 * 60  # a week later: both overdue
    found = [w for w in _queue(repo, later) if "has waited" in w]
    assert len(read) == 1  # the kept answer given (then read once without it)
    assert len(found) == 2 and all("measured from knowledge.derived at ledger line 1" in w for w in found)


def test_a_candidate_the_ledger_does_not_date_is_not_kept(repo: Repo, read: list[int]) -> None:
    dated = write_candidate(repo, "e1-000000000001")
    write_candidate(repo, "e1-000000000002", date="2020-01-01")  # dated by its date alone
    _derived(repo, dated)
    append_line(repo, "session.opened", stamp(60), "e2")
    found = _queue(repo)
    assert any("the record's date 2020-01-01" in w for w in found)
    assert not (repo.root / ".ai/local/state/index.kept" / f"{validators._WAITING}.json").exists()


def test_a_kept_answer_of_another_shape_is_not_given(repo: Repo, read: list[int]) -> None:
    paths = [write_candidate(repo, f"e1-00000000000{k}") for k in range(2)]
    _derived(repo, *paths)
    append_line(repo, "session.opened", stamp(60), "e2")
    found = _queue(repo)
    kept = repo.root / ".ai/local/state/index.kept" / f"{validators._WAITING}.json"
    text = kept.read_text(encoding="utf-8")
    assert '"e1-000000000000.md",' in text
    kept.write_text(text.replace('"e1-000000000000.md",', ""), encoding="utf-8")  # one name fewer
    read.clear()
    assert _run(repo, None) == found and len(read) == 1
