"""Crashes: kill -9 a derivation and a retention trim at many points. Afterwards no record lacks
its closing front matter, no `.tmp.` file is visible to readers, the ledger parses, and the next
run completes with exactly the records an uninterrupted run would write."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from random import Random

from conftest import MAJORDOMUS, Repo, make_repo
from crashkit import assert_ledger_parses, assert_records_whole, in_streams, kill_after

from majordomus.store.ledger import SLACK

DERIVE_TRIALS = 60
TRIM_TRIALS = 40


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.glob("*.md") if p.name != "README.md"}


def test_killed_derivations(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    repo.mj("decision", "add", "decision number 0", "--why", "crash test", check=True)
    ledger = repo.root / ".ai/local/ledger.jsonl"
    with open(ledger, "a", encoding="utf-8") as handle:  # the rest written straight, for speed
        for n in range(1, 40):
            handle.write(json.dumps({"ts": "2026-03-04T05:06:07Z", "event": "decision.recorded",
                                     "session": "e1", "task": None, "text": f"decision number {n}",
                                     "why": "crash test"}) + "\n")
    candidates = repo.root / ".ai/repo/knowledge/candidates"
    started = time.monotonic()
    repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    took = time.monotonic() - started  # the kills fall within an uninterrupted run's length
    reference = _snapshot(candidates)
    assert len(reference) == 40

    def trial(root: Path, random: Random, tag: str) -> tuple[int]:
        copy = Repo(root)
        candidates, dep = root / ".ai/repo/knowledge/candidates", root / ".ai/local/state/doit.sqlite3"
        for path in candidates.glob("e1-*.md"):
            path.unlink()
        if random.random() < 0.5:
            dep.unlink(missing_ok=True)
        killed = kill_after([MAJORDOMUS, "knowledge", "derive", "--episode", "e1"], root,
                            took * random.uniform(0.1, 1.1))
        assert_records_whole(candidates)
        assert_ledger_parses(root / ".ai/local/ledger.jsonl")
        listed = json.loads(copy.mj("knowledge", "candidates", "--json", check=True).stdout)
        assert all(not c["id"].startswith(".tmp.") for c in listed)
        copy.mj("knowledge", "derive", "--episode", "e1", check=True)
        assert _snapshot(candidates) == reference
        return (int(killed),)

    (killed,) = in_streams("derive", DERIVE_TRIALS, repo.root, trial)
    assert killed >= DERIVE_TRIALS // 3, f"only {killed} runs were killed mid-way: widen the delays"


def test_killed_retention_trims(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    policy = repo.root / ".ai/repo/policy.yaml"
    policy.write_text(policy.read_text().replace("retention_lines: 50000", "retention_lines: 3000"))
    ledger = repo.root / ".ai/local/ledger.jsonl"
    with open(ledger, "a", encoding="utf-8") as handle:  # over the cap by more than its margin
        for n in range(3000 + 3000 // SLACK + 100):
            handle.write(json.dumps({"ts": "2026-03-04T05:06:07Z", "event": "checkpoint.recorded",
                                     "session": "old", "note": f"fill.{n}"}) + "\n")
    repo.mj("session", "start", "--id", "measured", check=True)
    started = time.monotonic()
    repo.mj("session", "close", "--id", "measured", check=True)
    took = time.monotonic() - started  # a close that trims: the kills fall within its length
    assert len(ledger.read_text(encoding="utf-8").splitlines()) <= 3000 + 3000 // SLACK

    def trial(root: Path, random: Random, tag: str) -> tuple[int]:
        copy = Repo(root)
        ledger = root / ".ai/local/ledger.jsonl"
        with open(ledger, "a", encoding="utf-8") as handle:
            for n in range(400):
                handle.write(json.dumps({"ts": "2026-03-04T05:06:07Z", "event": "checkpoint.recorded",
                                         "session": f"old{tag}", "note": f"{tag}.{n}"}) + "\n")
        before = ledger.read_text(encoding="utf-8").splitlines()
        ep = f"t{tag}"
        copy.mj("session", "start", "--id", ep, check=True)
        killed = kill_after([MAJORDOMUS, "session", "close", "--id", ep], root, took * random.uniform(0.1, 1.1),
                            dict(os.environ))
        assert_ledger_parses(ledger)
        after = ledger.read_text(encoding="utf-8").splitlines()
        # what survives is whole lines, in order: a suffix of what was there, then what was added
        old = set(before)
        kept = next((i for i, line in enumerate(after) if line not in old), len(after))
        assert kept > 0 and after[:kept] == before[len(before) - kept:]
        if (root / ".ai/local/state/episodes" / f"{ep}.json").exists():
            copy.mj("session", "close", "--id", ep, check=True)
        # a kill after session.closed but before the trim leaves the cap to the next close, which
        # trims once the ledger is over the cap by its margin (a tenth): 400 lines a trial are
        copy.mj("session", "start", "--id", f"{ep}-next", check=True)
        copy.mj("session", "close", "--id", f"{ep}-next", check=True)
        assert len(ledger.read_text(encoding="utf-8").splitlines()) <= 3000 + 3000 // SLACK
        assert not list(ledger.parent.glob(".tmp.*")), "a completed trim sweeps a killed one's leftover"
        return (int(killed),)

    (killed,) = in_streams("trim", TRIM_TRIALS, repo.root, trial)
    assert killed >= TRIM_TRIALS // 4, f"only {killed} closes were killed mid-way"
