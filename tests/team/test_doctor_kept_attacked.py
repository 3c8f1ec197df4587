"""Doctor's kept answers of the ninth step (`doctor.waiting.json`, `doctor.attention.json`,
`integrity.worktree.json`) under git's moves and the ledger's changes that alter what they were
judged from: after each, doctor prints what it prints with `.ai/local/state/` deleted."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import Repo
from kbstore import anchored
from rules_helpers import append_line, rel, set_policy, stamp, write_candidate
from majordomus.store import filecache


def _settle(repo: Repo) -> None:
    """Past one tick of the file system's clock, and two seconds past git's last index write."""
    time.sleep(0.06)
    st = os.stat(repo.root / ".git/index")
    time.sleep(max(0.0, (max(st.st_ctime_ns, st.st_mtime_ns) + filecache.RACY_NS - time.time_ns()) / 1e9 + 0.01))


def _doctor(repo: Repo) -> tuple[int, str, str, str]:
    _settle(repo)
    text = repo.mj("doctor")
    proc = repo.mj("doctor", "--json")
    data = json.loads(proc.stdout)
    for entry in data.get("rules", ()):
        entry.pop("ms", None)
    data.pop("timings", None)
    masked = re.sub(r"\d+ ms", "N ms", text.stdout)
    return proc.returncode, json.dumps(data.get("findings"), sort_keys=True), masked, \
        re.sub(r"\d+ ms of", "ms of", proc.stderr)


def _truth(repo: Repo) -> tuple[int, str, str, str]:
    """Doctor's output with the derived state deleted."""
    shutil.rmtree(repo.root / ".ai/local/state")
    return _doctor(repo)


def _judged_as_fresh(repo: Repo, read: Callable[[], object], first: object) -> None:
    """`read` now (through the kept answers) says what it says with the derived state deleted,
    and that differs from `first`, what it said before the change under test."""
    through = read()
    shutil.rmtree(repo.root / ".ai/local/state")
    truth = read()
    assert truth != first
    assert through == truth


def _record(repo: Repo, at: str, newer: str) -> None:
    """The record `r-one`, anchored to `src/a.py` at `at` and reverified at `newer`, committed."""
    anchored(repo, "r-one", ("src/a.py",), at, title="A is one",
             more=({"act": "reverified", "at": "2026-01-03T10:00:00Z", "by": "Bo", "commit": newer, "seen": 0,
                    "digest": "0a1b2c3d4e5f"},))
    append_line(repo, "session.opened", stamp(60), "e1")
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("record")


def _status(repo: Repo) -> list[tuple[int, str, str]]:
    _settle(repo)
    return [(p.returncode, p.stdout, p.stderr) for p in (repo.mj("knowledge", "status", "--json"),
                                                         repo.mj("knowledge", "status"))]


@pytest.mark.parametrize("reader", [_doctor, _status], ids=["doctor", "knowledge status"])
def test_a_fetch_bringing_a_newer_verification_commit_is_judged(
        repo: Repo, tmp_path: Path, reader: Callable[[Repo], object]) -> None:
    """A record reverified at a commit this clone lacks is judged from its older verification; a
    fetch brings the newer one, made after the anchored file changed (may be stale -> current), HEAD
    and the record unmoved. The currency cache re-asks the commits it lacked (eighth step); doctor's
    kept answer (`doctor.attention.json`) and `knowledge status`'s kept count of the verified records
    by currency (`status.currencies`, `index.kept/currencies.json`) must too."""
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    repo.commit("a is two", {"src/a.py": "a = 2\n"})
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", f"file://{repo.root}", str(other)], check=True)
    Repo(other).git("checkout", "-q", "-b", "side")
    newer = Repo(other).commit("side work", {"src/b.py": "b = 1\n"})
    _record(repo, at, newer)
    first = reader(repo)
    assert reader(repo) == first
    repo.git("fetch", "-q", str(other), "side:refs/remotes/other/side")
    _judged_as_fresh(repo, lambda: reader(repo), first)


def _reverified_on_a_side_branch(repo: Repo) -> str:
    """A record anchored at a commit in HEAD's history (its file changed since) and reverified at
    a commit of a side branch HEAD does not hold, committed; the side branch's commit."""
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    repo.commit("a is two", {"src/a.py": "a = 2\n"})
    repo.git("checkout", "-q", "-b", "side")
    newer = repo.commit("side work", {"src/b.py": "b = 1\n"})
    repo.git("checkout", "-q", "-")
    _record(repo, at, newer)
    return newer


def _prune_the_side_branch(repo: Repo) -> None:
    """The side branch deleted and its commits pruned away (a squash merge's aftermath)."""
    repo.git("branch", "-q", "-D", "side")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")


def test_a_verification_commit_pruned_away_is_judged(repo: Repo, tmp_path: Path) -> None:
    """A record reverified on a branch since deleted (a squash merge's): its newest verification
    commit is here but not in HEAD's history (unknown); `git gc --prune=now` removes it, and the
    record is judged from its older verification in HEAD's history, HEAD and the record unmoved."""
    newer = _reverified_on_a_side_branch(repo)
    first = _doctor(repo)
    assert _doctor(repo) == first
    _prune_the_side_branch(repo)
    assert repo.git("cat-file", "-t", newer, check=False).strip() != "commit"
    through = _doctor(repo)
    truth = _truth(repo)
    assert truth != first
    assert through == truth


def test_knowledge_stale_and_status_after_a_verification_commit_pruned_away(repo: Repo) -> None:
    """The same prune under `knowledge stale` (the currency cache alone, `currency.cache.json`) and
    `knowledge status`'s kept count."""
    _reverified_on_a_side_branch(repo)

    def said() -> list[tuple[int, str, str]]:
        _settle(repo)
        return [(p.returncode, p.stdout, p.stderr) for p in (repo.mj("knowledge", "stale"),
                                                             repo.mj("knowledge", "status", "--json"))]
    first = said()
    assert said() == first
    _prune_the_side_branch(repo)
    _judged_as_fresh(repo, said, first)


def _queued(repo: Repo, count: int = 3, ago: int = 3600) -> list[Path]:
    """`count` candidates, tracked and committed, dated by one `knowledge.derived` line `ago`
    seconds back (the queue's rule keeps its answer: every entry dated by the ledger)."""
    set_policy(repo, "candidate_max_age_minutes: 10080", "candidate_max_age_minutes: 30")
    paths = [write_candidate(repo, f"e1-00000000000{k}") for k in range(count)]
    append_line(repo, "knowledge.derived", stamp(ago), "e1", episode="e1", written=count, unchanged=0,
                paths=[rel(p, repo) for p in paths])
    append_line(repo, "session.opened", stamp(60), "e2")
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("candidates")
    return paths


def test_guard_an_untracked_candidate_stashed_and_popped(repo: Repo) -> None:
    """Guard (no defect found): `git stash -u` takes an untracked candidate away and `stash pop`
    brings it back; git's word on `.ai/repo/` kept (integrity.worktree.json) follows each."""
    _queued(repo)
    write_candidate(repo, "e3-000000000001")
    first = _doctor(repo)
    assert _doctor(repo) == first and "git does not track this candidate" in first[2]
    repo.git("stash", "-q", "-u")
    through = _doctor(repo)
    assert through == _truth(repo) != first
    assert _doctor(repo) == through
    repo.git("stash", "pop", "-q")
    through = _doctor(repo)
    assert through == _truth(repo)
    assert "git does not track this candidate" in through[2]


def test_guard_a_candidate_rejected_in_another_clone_and_pulled(repo: Repo, tmp_path: Path) -> None:
    """Guard (no defect found): a review act made in another clone arrives by `git pull`: the
    queue's kept answer (doctor.waiting.json) follows the candidate out of the queue."""
    _queued(repo)
    other = Repo(tmp_path / "other")
    subprocess.run(["git", "clone", "-q", f"file://{repo.root}", str(other.root)], check=True)
    first = _doctor(repo)
    assert _doctor(repo) == first and "3 candidates have waited" in first[2]
    other.mj("knowledge", "reject", "e1-000000000001", "--reason", "not a decision", check=True)
    other.git("add", "-A", "--", ".ai/repo")
    other.git("commit", "-q", "-m", "reject")
    repo.git("pull", "-q", "--no-rebase", str(other.root), "HEAD")
    through = _doctor(repo)
    assert through == _truth(repo) != first


def test_guard_the_queue_s_ages_under_another_timezone_and_a_clock_set_back(repo: Repo) -> None:
    """Guard (no defect found): the dates kept are the ledger's (UTC); the minutes are counted at
    each run, so TZ changed between runs and a clock set back (a candidate dated in the future)
    print what doctor prints with its state deleted."""
    _queued(repo, ago=-7200)  # dated two hours ahead: a clock set back since
    first = _doctor(repo)
    env = {**os.environ, "TZ": "Pacific/Kiritimati"}
    _settle(repo)
    kept = repo.mj("doctor", env=env)
    shutil.rmtree(repo.root / ".ai/local/state")
    fresh = repo.mj("doctor", env=env)
    assert (kept.returncode, re.sub(r"\d+ ms", "N ms", kept.stdout)) == \
        (fresh.returncode, re.sub(r"\d+ ms", "N ms", fresh.stdout))
    assert _doctor(repo) == first


def test_guard_the_ledger_trimmed_under_the_kept_queue(repo: Repo) -> None:
    """Guard (no defect found): the ledger replaced by a trim (a new file without its oldest lines,
    as `Ledger.trim` writes it) dates the candidates from a later line, at another line number:
    the kept queue (keyed by the index's state, which the facts' rebuild moves) is not given."""
    paths = _queued(repo, ago=7200)
    append_line(repo, "knowledge.derived", stamp(600), "e2", episode="e2", written=len(paths), unchanged=0,
                paths=[rel(p, repo) for p in paths])
    first = _doctor(repo)
    assert _doctor(repo) == first and "3 candidates have waited" in first[2]
    ledger = repo.root / ".ai/local/ledger.jsonl"
    lines = ledger.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if '"e1"' not in line]
    assert len(kept) < len(lines)
    trimmed = ledger.with_name("ledger.jsonl.tmp")
    trimmed.write_text("".join(kept), encoding="utf-8")
    os.replace(trimmed, ledger)
    through = _doctor(repo)
    assert through == _truth(repo) != first


@pytest.mark.parametrize("reader", [_doctor, _status], ids=["doctor", "knowledge status"])
@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
def test_a_replace_ref_under_the_kept_currencies(repo: Repo, packed: bool, reader: Callable[[Repo], object]) -> None:
    """`git replace` of a record's verification commit by one whose file is as HEAD has it: git's
    log (and so a fresh read) then finds the file unchanged since, HEAD unmoved (may be stale ->
    current). The currency cache and
    the kept answers are keyed by the replace refs' folder and, while it names one, `packed-refs`
    (`git.history_files`), loose or packed."""
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    two = repo.commit("a is two", {"src/a.py": "a = 2\n"})
    anchored(repo, "r-one", ("src/a.py",), at, title="A is one")
    append_line(repo, "session.opened", stamp(60), "e1")
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("record")
    first = reader(repo)
    assert reader(repo) == first
    tree = repo.git("rev-parse", f"{two}^{{tree}}").strip()  # the verification commit replaced by one
    # whose file is already as HEAD has it: the record is current now, as a fresh read says
    repo.git("replace", "-f", at, repo.git("commit-tree", tree, "-p", f"{at}^", "-m", "code").strip())
    if packed:
        repo.git("pack-refs", "--all")
        folder = repo.root / ".git/refs/replace"
        if folder.exists():  # left empty by this git; a clone's fetched replace refs are packed alone
            folder.rmdir()
        assert f" refs/replace/{at}" in (repo.root / ".git/packed-refs").read_text(encoding="ascii")
    _judged_as_fresh(repo, lambda: reader(repo), first)


def test_the_candidates_waiting_none_overdue_are_counted(repo: Repo) -> None:
    """With candidates waiting, none overdue and every record tracked, doctor's queue rule says how
    many wait, from the kept answer and without it (6559c46 let the loop over the untracked
    records rebind the waiting names: '0 candidate(s) await review')."""
    _queued(repo, ago=600)
    said = [_doctor(repo)[2], _doctor(repo)[2], _truth(repo)[2]]
    assert all("3 candidate(s) await review, none overdue" in text for text in said)
