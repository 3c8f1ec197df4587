"""One finding over many files is one finding: doctor's text for 33 untracked files is a bounded
number of lines with their count and one command for them all (its JSON keeps every finding);
so are many overdue candidates. Two or fewer stay as they are."""
from __future__ import annotations

import pytest
from conftest import Repo
from rules_helpers import append_line, findings_of, rel, run_json, set_policy, stamp, write_candidate

REVIEWED = "majordomus.candidates-reviewed"
UNTRACKED = "git does not track this candidate"


def test_33_untracked_files_are_one_finding_with_one_command(repo: Repo) -> None:
    ids = [f"e2-{n:012d}" for n in range(33)]
    for rid in ids:
        write_candidate(repo, rid, date=stamp()[:10])
    proc = repo.mj("doctor")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) <= 20, proc.stdout  # was 3 lines a file: 107 for 33
    heads = [line for line in lines if UNTRACKED in line]
    assert heads == [f"WARN {REVIEWED}: .ai/repo/knowledge/candidates/: {UNTRACKED}: a record git does not hold "
                     f"is discovered by nothing and reviewed by nobody (33 files: {ids[0]}.md, {ids[1]}.md, "
                     f"{ids[2]}.md and 30 more)"]
    at = lines.index(heads[0])
    assert lines[at + 1] == "  reproduce: git status --short -- .ai/repo/knowledge/candidates/"
    assert lines[at + 2] == "  fix: git add .ai/repo/knowledge/candidates/ && git commit (beside its session record)"
    # the one command is real: run, it leaves nothing untracked to report
    repo.git("add", ".ai/repo/knowledge/candidates/")
    assert UNTRACKED not in repo.mj("doctor").stdout


def test_two_untracked_files_are_two_findings(repo: Repo) -> None:
    paths = [write_candidate(repo, f"e2-{n:012d}", date=stamp()[:10]) for n in range(2)]
    text = repo.mj("doctor").stdout
    assert [line for line in text.splitlines() if UNTRACKED in line] == [
        f"WARN {REVIEWED}: {rel(p, repo)}: {UNTRACKED}: a record git does not hold is discovered by nothing "
        "and reviewed by nobody" for p in paths]
    code, data = run_json(repo, "doctor")
    assert len([f for f in findings_of(data, REVIEWED) if UNTRACKED in f["what"]]) == 2


def test_the_json_keeps_each_file(repo: Repo) -> None:
    for n in range(5):
        write_candidate(repo, f"e2-{n:012d}", date=stamp()[:10])
    code, data = run_json(repo, "doctor")
    files = sorted(f["file"] for f in findings_of(data, REVIEWED) if UNTRACKED in f["what"])
    assert files == [f".ai/repo/knowledge/candidates/e2-{n:012d}.md" for n in range(5)]


@pytest.mark.parametrize("count", [2, 4])
def test_many_overdue_candidates_are_one_finding_naming_the_oldest(repo: Repo, count: int) -> None:
    for n in range(count):
        path = write_candidate(repo, f"e3-{n:012d}", date="2020-01-01")
        append_line(repo, "knowledge.derived", stamp(3600 * (n + 1)), "e3", episode="e3", written=1,
                    unchanged=0, paths=[rel(path, repo)])
    repo.git("add", "-A", ".ai/repo/knowledge/candidates")
    repo.commit("candidates")
    set_policy(repo, "candidate_max_age_minutes: 10080", "candidate_max_age_minutes: 30")
    code, data = run_json(repo, "doctor")
    overdue = [f for f in findings_of(data, REVIEWED) if "waited" in f["what"]]
    if count < 3:
        assert [f["file"] for f in overdue] == [f".ai/repo/knowledge/candidates/e3-{n:012d}.md" for n in range(count)]
        return
    (finding,) = overdue
    oldest = f"e3-{count - 1:012d}"
    assert finding["what"].startswith(f"{count} candidates have waited longer than "
                                      f"knowledge.candidate_max_age_minutes (30) for review; the oldest, {oldest}, "
                                      f"{count} h (measured from knowledge.derived"), finding
    assert finding["fix"] == "review them: `majordomus knowledge review` walks the queue"
    assert finding["file"] == ".ai/repo/knowledge/candidates/"
