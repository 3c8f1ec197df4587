"""Crashes of the acts that move records: kill -9 a `knowledge promote` and a `majordomus drain`
at many points. Afterwards no record lacks its closing front matter, no `.tmp.` file is visible
to readers, the ledger parses, no record is lost, and running the same command again completes
with exactly the records (byte for byte) an uninterrupted run writes."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path
from random import Random

from conftest import MAJORDOMUS, Repo, make_repo, published
from crashkit import assert_ledger_parses, assert_records_whole, in_streams, kill_after

PROMOTE_TRIALS = 50
DRAIN_TRIALS = 50
EVIDENCE = "the parser suite refuses tabs since the first commit\n"


def _snapshot(*folders: Path) -> dict[str, bytes]:
    return {f"{p.parent.name}/{p.name}": p.read_bytes() for folder in folders
            for p in sorted(folder.glob("*.md")) if p.name != "README.md"}


def _restore(folder: Path, files: dict[str, bytes]) -> None:
    """Make `folder` hold exactly the records in `files` (named `<folder>/<name>`)."""
    folder.mkdir(parents=True, exist_ok=True)
    for path in folder.glob("*.md"):
        if path.name != "README.md":
            path.unlink()
    for key, data in files.items():
        if key.startswith(folder.name + "/"):
            (folder / key.split("/", 1)[1]).write_bytes(data)


def _decisions(repo: Repo, episode: str, count: int) -> None:
    """`count` decisions of `episode`, the first through the command, the rest written straight."""
    repo.mj("decision", "add", "decision number 0", "--why", "crash test", check=True,
            env={"MAJORDOMUS_EPISODE": episode})
    with open(repo.root / ".ai/local/ledger.jsonl", "a", encoding="utf-8") as handle:
        for n in range(1, count):
            handle.write(json.dumps({"ts": "2026-03-04T05:06:07Z", "event": "decision.recorded",
                                     "session": episode, "task": None, "text": f"decision number {n}",
                                     "why": "crash test"}) + "\n")


def _promoted_lines(repo: Repo, rid: str, since: int) -> int:
    lines = assert_ledger_parses(repo.root / ".ai/local/ledger.jsonl")[since:]
    return sum(1 for line in lines if line["event"] == "knowledge.promoted" and line["id"] == rid)


def _timeless(record: bytes) -> bytes:
    """A reviewed record without its act's time (the act's own clock, to the second, and the
    heading that names it): what two runs of the same act have in common."""
    return re.sub(rb'"20[0-9-]{8}T[0-9:]{8}Z"|, 20[0-9-]{8}T[0-9:]{8}Z, ', b"<at>", record)


def test_killed_promotions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r")
    repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    _decisions(repo, "e1", 12)
    repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    candidates = repo.root / ".ai/repo/knowledge/candidates"
    curated = repo.root / ".ai/repo/knowledge/curated"
    ledger = repo.root / ".ai/local/ledger.jsonl"
    base = _snapshot(candidates, curated)
    base_ledger = ledger.read_bytes()
    ids = sorted(k.split("/", 1)[1][:-3] for k in base)
    assert len(ids) == 12

    def reset(curated_files: dict[str, bytes]) -> None:
        """The store and the ledger as they were before any promotion (curated/ as given)."""
        _restore(candidates, base)
        _restore(curated, curated_files)
        ledger.write_bytes(base_ledger)

    references: dict[str, bytes] = {}  # what an uninterrupted promotion of each writes, its time aside
    took = 0.0
    for rid in ids[:4]:
        reset(base)
        started = time.monotonic()
        repo.mj("knowledge", "promote", rid, "--class", "constraint", input=EVIDENCE, check=True)
        took = max(took, time.monotonic() - started)  # the kills fall within a run's length
        after = _snapshot(candidates, curated)
        # the act adds the reviewed record and leaves the candidate's file as it was
        assert after[f"candidates/{rid}.md"] == base[f"candidates/{rid}.md"]
        references[rid] = _timeless(after[f"curated/{rid}.md"])

    # killed between the record's write and its ledger line: the same command finishes it, once
    rid = ids[0]
    reset(base)
    since = len(ledger.read_text(encoding="utf-8").splitlines())
    repo.mj("knowledge", "promote", rid, "--class", "constraint", input=EVIDENCE, check=True)
    written = (curated / f"{rid}.md").read_bytes()
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    assert json.loads(lines[-1])["event"] == "knowledge.promoted"
    ledger.write_text("".join(lines[:-1]), encoding="utf-8")
    repo.mj("knowledge", "promote", rid, "--class", "constraint", input=EVIDENCE, check=True)
    assert (curated / f"{rid}.md").read_bytes() == written and _promoted_lines(repo, rid, since) == 1
    # another promotion of a verified record (other evidence) is refused: nothing moves
    before = _snapshot(candidates, curated)
    proc = repo.mj("knowledge", "promote", rid, "--class", "constraint", input="other evidence\n")
    assert proc.returncode == 4 and "its status is verified" in proc.stderr
    assert _snapshot(candidates, curated) == before

    def trial(root: Path, random: Random, tag: str) -> tuple[int, int]:
        copy = Repo(root)
        candidates, curated = root / ".ai/repo/knowledge/candidates", root / ".ai/repo/knowledge/curated"
        ledger = root / ".ai/local/ledger.jsonl"
        rid = random.choice(sorted(references))
        _restore(candidates, base)
        _restore(curated, base)
        ledger.write_bytes(base_ledger)
        since = len(base_ledger.splitlines())
        killed = kill_after([MAJORDOMUS, "knowledge", "promote", rid, "--class", "constraint"], root,
                            took * random.uniform(0.3, 1.2), stdin=EVIDENCE.encode())
        assert_records_whole(candidates)
        assert_records_whole(curated)
        assert_ledger_parses(ledger)
        assert (candidates / f"{rid}.md").read_bytes() == base[f"candidates/{rid}.md"], "the kill touched the candidate"
        written = (curated / f"{rid}.md").exists()
        if written:  # killed after the record's write: it is whole, and what an uninterrupted act writes
            assert _timeless((curated / f"{rid}.md").read_bytes()) == references[rid]
        listed = json.loads(copy.mj("knowledge", "candidates", "--json", check=True).stdout)
        assert all(not c["id"].startswith(".tmp.") for c in listed)
        # the person runs the same command again: it promotes, or finishes what the kill cut short
        again = copy.mj("knowledge", "promote", rid, "--class", "constraint", input=EVIDENCE)
        assert again.returncode == 0, again.stderr
        assert _timeless((curated / f"{rid}.md").read_bytes()) == references[rid]
        assert _promoted_lines(copy, rid, since) == 1
        assert copy.mj("knowledge", "check").returncode == 0
        return int(killed), int(written)

    killed, resumed = in_streams("promote", PROMOTE_TRIALS, repo.root, trial)
    print(f"promote: {killed} of {PROMOTE_TRIALS} killed mid-way, {resumed} after the record was written")
    assert killed >= PROMOTE_TRIALS // 4, f"only {killed} promotions were killed mid-way: widen the delays"


def test_killed_drains(tmp_path: Path) -> None:
    repo = published(tmp_path)
    for episode, count in (("t1", 12), ("t2", 8)):  # two trunk episodes fill the outbox
        repo.hook("session-start", {"session_id": episode, "source": "startup"})
        _decisions(repo, episode, count)
        end = repo.hook("session-end", {"session_id": episode, "reason": "other"})
        assert end.returncode == 0 and end.stderr == b"", end.stderr
    assert repo.git("status", "--porcelain") == ""
    outbox = repo.root / ".ai/local/state/outbox"
    sessions, candidates = repo.root / ".ai/repo/sessions", repo.root / ".ai/repo/knowledge/candidates"
    staged = _snapshot(outbox / "sessions", outbox / "candidates")
    assert len(staged) == 22
    repo.git("switch", "-q", "-c", "feature")
    tracked_before = _snapshot(sessions, candidates)
    started = time.monotonic()
    repo.mj("drain", check=True)
    took = time.monotonic() - started  # the kills fall within an uninterrupted run's length
    reference = _snapshot(sessions, candidates)
    assert {k: v for k, v in reference.items() if k not in tracked_before} == staged  # byte for byte

    def trial(root: Path, random: Random, tag: str) -> tuple[int, int]:
        copy = Repo(root)
        outbox = root / ".ai/local/state/outbox"
        sessions, candidates = root / ".ai/repo/sessions", root / ".ai/repo/knowledge/candidates"
        for key in staged:
            (root / ".ai/repo" / ("sessions" if key.startswith("sessions/") else "knowledge/candidates")
             / key.split("/", 1)[1]).unlink(missing_ok=True)
        _restore(outbox / "sessions", staged)
        _restore(outbox / "candidates", staged)
        if random.random() < 0.5:
            (root / ".ai/local/state/doit.sqlite3").unlink(missing_ok=True)
        killed = kill_after([MAJORDOMUS, "drain"], root, took * random.uniform(0.3, 1.2))
        for folder in (sessions, candidates, outbox / "sessions", outbox / "candidates"):
            assert_records_whole(folder)
        assert_ledger_parses(root / ".ai/local/ledger.jsonl")
        tracked = _snapshot(sessions, candidates)
        waiting = _snapshot(outbox / "sessions", outbox / "candidates")
        split = any(tracked.get(k) == d and waiting.get(k) == d for k, d in staged.items())
        for key, data in staged.items():  # each record is tracked or still waits, never neither
            assert tracked.get(key) == data or waiting.get(key) == data, f"{key} was lost"
            assert tracked.get(key, data) == data and waiting.get(key, data) == data
        listed = json.loads(copy.mj("knowledge", "candidates", "--json", check=True).stdout)
        assert all(not c["id"].startswith(".tmp.") for c in listed)
        copy.mj("drain", check=True)
        assert _snapshot(sessions, candidates) == reference
        assert _snapshot(outbox / "sessions", outbox / "candidates") == {}
        assert "nothing changed" in copy.mj("drain", check=True).stdout
        return int(killed), int(split)

    killed, split = in_streams("drain", DRAIN_TRIALS, repo.root, trial)
    print(f"drain: {killed} of {DRAIN_TRIALS} killed mid-way, {split} with a record both tracked and waiting")
    assert killed >= DRAIN_TRIALS // 4, f"only {killed} drains were killed mid-way: widen the delays"
    # what is not a regular file in the outbox is never carried into the tracked tree
    (outbox / "candidates" / "e9-0123456789ab.md").symlink_to("/etc/passwd")
    os.mkfifo(outbox / "sessions" / "e9.md")
    proc = subprocess.run([MAJORDOMUS, "drain"], cwd=repo.root, capture_output=True, timeout=30)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr
    assert _snapshot(sessions, candidates) == reference
    shutil.rmtree(outbox, ignore_errors=True)
