"""majordomus.knowledge-stale: advisory under doctor and watch, never run by check; each finding
names the record, what changed, and the command that re-verifies it."""
from __future__ import annotations

from conftest import Repo
from kbstore import anchored
from rules_helpers import run_json

RULE = "majordomus.knowledge-stale"


def test_a_stale_record_warns_under_doctor_and_watch_and_never_blocks_check(repo: Repo) -> None:
    at = repo.commit("code", {"src/a.py": "a = 1\n", "src/b.py": "b = 1\n"})
    anchored(repo, "r-stale", ("src/a.py",), at, title="A is one")
    anchored(repo, "r-fine", ("src/b.py",), at, title="B is one")
    repo.git("rm", "-q", "src/a.py")
    gone = repo.commit("drop a")
    code, data = run_json(repo, "doctor")
    (finding,) = [f for f in data["findings"] if f["rule"] == RULE]
    assert finding["blocking"] is False
    assert finding["what"] == (f'r-stale (constraint: A is one) may be stale: src/a.py deleted in 1 commit since '
                               f'{at[:7]}, the newest {gone[:7]} "drop a"')
    assert finding["fix"] == "majordomus knowledge reverify r-stale < evidence"
    assert finding["file"] == ".ai/repo/knowledge/curated/r-stale.md"
    doctor = repo.mj("doctor")
    assert f"WARN {RULE}: .ai/repo/knowledge/curated/r-stale.md: r-stale (constraint: A is one)" in doctor.stdout
    watch = repo.mj("watch")
    assert watch.returncode == 11 and f"WARN {RULE}" in watch.stdout
    check = repo.mj("check")
    assert check.returncode == 0 and RULE not in check.stdout


def test_nothing_stale_passes_and_says_what_it_judged(repo: Repo) -> None:
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    anchored(repo, "r-fine", ("src/a.py",), at)
    anchored(repo, "r-elsewhere", ("src/a.py",), "d" * 40)
    code, data = run_json(repo, "watch")
    assert code == 0 and data["findings"] == []
    doctor = repo.mj("doctor").stdout
    assert ("majordomus.knowledge-stale: 2 verified record(s), none may be stale or is disputed (1 unknown on "
            "this clone: `majordomus knowledge status`)") in doctor
