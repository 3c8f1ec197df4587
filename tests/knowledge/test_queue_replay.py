"""Issue 25, done when: a realistic multi-episode session replayed in a real repository (a trunk
with a remote, a branch made in the middle of an episode, a failed then passing verification, a
compaction, a handover later work did, a merge, a trunk episode that stages in the outbox), with
the real hook scripts and the real CLI; then the queue and every briefing are read as the next
agent and the reviewer read them.

What it holds: the count is right on every branch (what is in the tree, attributed by where the
work was, other branches named); no record is a bare "`CMD` passes"; titles stand alone; every
record of a task cites its scope and its commits; the queue and the briefing follow the
evidence's time; a handover later work did is not repeated; no briefing repeats a line.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from conftest import Repo, published

from majordomus.store import records

FEATURE = "feature/timed"
COUNT = re.compile(r"^(\d+) candidates? awaits? review on (\S+)(?: \(([^)]*)\))?, newest first;", re.M)


def brief(repo: Repo, episode: str, source: str = "startup") -> str:
    proc = repo.hook("session-start", {"session_id": episode, "source": source})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc.stdout.decode("utf-8")


def end(repo: Repo, episode: str) -> None:
    proc = repo.hook("session-end", {"session_id": episode, "reason": "other"})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr


def count(text: str) -> tuple[int, str, str]:
    """(how many await review, on which branch, the attribution in words) the briefing says."""
    match = COUNT.search(text)
    if match is None:
        assert "no candidate awaits review on" in text, text
        return 0, "", ""
    return int(match.group(1)), match.group(2), match.group(3) or ""


def no_repeated_line(text: str) -> None:
    said = [line for line in text.splitlines() if line.strip()]
    repeated = sorted({line for line in said if said.count(line) > 1})
    assert repeated == [], repeated


def tree_records(repo: Repo) -> list[records.Record]:
    folders = (repo.root / ".ai/repo/knowledge/candidates", repo.root / ".ai/local/state/outbox/candidates")
    return [records.load(p) for folder in folders if folder.is_dir()
            for p in sorted(folder.glob("*.md")) if p.name != "README.md"]


def queue(repo: Repo) -> list[dict[str, Any]]:
    return list(json.loads(repo.mj("knowledge", "candidates", "--json", check=True).stdout))


def listed_times(text: str, by_id: dict[str, str]) -> list[str]:
    """The evidence time of each candidate the briefing lists, in the order it lists them."""
    ids = re.findall(r"^- .* \(([A-Za-z0-9._-]+-[0-9a-f]{12})[;)]", text, re.M)
    return [by_id[i] for i in ids]


def evidence_time(record: records.Record) -> str:
    found = re.findall(r"^Evidence: \S+ at (\S+Z)\.$", record.body, re.M)
    assert found, record.body
    return str(found[-1])


def test_a_realistic_session_gives_a_queue_and_briefings_worth_reading(tmp_path: Path) -> None:
    repo = published(tmp_path)
    repo.commit("the cache", {"src/timed.py": "CACHE = {}\n", "tests/test_timed.py": "def test(): pass\n"})
    repo.git("push", "-q", "origin", "main")
    scope = str(repo.root / "src/timed.py")  # as an agent types it: an absolute path of this machine

    # --- episode A opens on main and moves to a branch in its middle -------------------------
    brief(repo, "ep-a")
    repo.git("checkout", "-q", "-b", FEATURE)
    task_a = repo.mj("start", "Add a timed cache", "--scope", scope, check=True).stdout.strip()
    qid = repo.mj("question", "add", "Does max_age count from the write or from the read?", check=True).stdout.strip()
    sha_a = repo.commit("Add the timed cache", {"src/timed.py": "CACHE = {}\nMAX_AGE = 60\n"})
    repo.mj("question", "resolve", qid, "From the write: an entry expires max_age seconds after it is stored",
            check=True)
    repo.mj("decision", "add", f"Expired entries are dropped on read (see {repo.root}/src/timed.py)",
            "--why", "no background thread may touch the store", check=True)
    failed = repo.mj("finish", "--verify", "grep -q EXPIRE src/timed.py")
    assert failed.returncode == 4 and "exited 1" in failed.stderr
    (failure,) = repo.events("verification.failed")
    assert (failure["task"], failure["command"], failure["code"]) == (task_a, "grep -q EXPIRE src/timed.py", 1)
    context = repo.mj("session", "context", check=True).stdout
    assert "verification failed: `grep -q EXPIRE src/timed.py` exited 1" in context
    sha_fix = repo.commit("Expire entries on read", {"src/timed.py": "CACHE = {}\nMAX_AGE = 60\nEXPIRE = True\n"})
    repo.mj("finish", "--verify", "grep -q EXPIRE src/timed.py", check=True)
    repo.mj("handover", "--next", "Extract the max_age check", check=True)
    end(repo, "ep-a")

    after_a = tree_records(repo)
    assert len(after_a) == 2  # the answer and the decision; the passing run is evidence on both
    assert count(brief(repo, "ep-b")) == (2, FEATURE, "")  # the work moved here: counted here

    # --- episode B: does what the handover asked, a compaction, a blocked task ----------------
    task_b = repo.mj("start", "Extract the max_age check", "--scope", "src/timed.py", check=True).stdout.strip()
    sha_b = repo.commit("Extract expired()", {"src/timed.py": "def expired(age):\n    return age > 60\n"})
    repo.mj("decision", "add", "max_age is checked in expired() alone", check=True)
    repo.mj("finish", "--verify", "grep -q EXPIRE src/timed.py || grep -q expired src/timed.py", check=True)
    repo.mj("question", "add", "Should the cache be thread-safe?", check=True)
    repo.mj("start", "Make the cache thread-safe", "--scope", "src/timed.py", check=True)
    repo.mj("decision", "add", "The store owns the lock", "--why", "the cache is one of its readers", check=True)
    assert repo.hook("pre-compact", {"session_id": "ep-b", "trigger": "auto"}).returncode == 0
    compacted = brief(repo, "ep-b", "compact")
    no_repeated_line(compacted)
    assert compacted.count("Should the cache be thread-safe?") == 1
    assert compacted.count("The store owns the lock") == 1 and compacted.count("Make the cache thread-safe") == 1
    assert ".ai/repo/knowledge/candidates/" not in compacted  # the derivation's files are not the worker's
    assert "Next Action: Extract the max_age check" not in compacted  # its task finished since
    repo.mj("finish", "--outcome", "blocked", "--reason", "The store owns the lock: the cache cannot take it\n"
            "Taking it here would deadlock the store's own readers.", check=True)
    end(repo, "ep-b")

    on_feature = brief(repo, "ep-c")
    no_repeated_line(on_feature)
    here = tree_records(repo)
    assert count(on_feature) == (len(here), FEATURE, "") and len(here) == 4
    assert "Extract the max_age check" not in on_feature  # the handover's task was done by ep-b
    assert "Next Action" not in on_feature
    by_id = {r.meta["id"]: evidence_time(r) for r in here}
    times = listed_times(on_feature, by_id)
    assert len(times) == 4 and times == sorted(times, reverse=True)  # newest evidence first
    end(repo, "ep-c")

    # --- the records, as a reviewer opens them --------------------------------------------------
    for record in here:
        meta, body = record.meta, record.body
        title = meta["title"]
        assert not re.search(r"`.*` passes", title) and "?" not in title and len(title) <= 80, title
        assert str(repo.root) not in body + title and str(Path.home()) not in body + title
        refs = meta["provenance"]["derived_from"]
        assert {"type": "relates_to", "target": "file:src/timed.py"} in meta.get("relations", []), meta
        # every task but the blocked one made commits: its records cite them
        assert any(r.startswith("commit:") for r in refs) == (title != "The store owns the lock"), refs
    by_title = {r.meta["title"]: r for r in here}
    answer = by_title["From the write: an entry expires max_age seconds after it is stored"]
    assert "Question: Does max_age count from the write or from the read?" in answer.body
    decision = by_title["Expired entries are dropped on read (see src/timed.py)"]
    assert decision.meta["provenance"]["derived_from"][-3:] == [
        "test:grep -q EXPIRE src/timed.py", f"commit:{sha_a}", f"commit:{sha_fix}"]
    assert f"- {sha_fix[:12]} Expire entries on read" in decision.body
    assert f"passed at commit {sha_fix[:12]}" in decision.body
    extracted = by_title["max_age is checked in expired() alone"]
    assert f"commit:{sha_b}" in extracted.meta["provenance"]["derived_from"] and f"task:{task_b}" not in str(answer.meta)
    lock = by_title["The store owns the lock"]  # the decision and its task's lesson: one record
    assert "Task Make the cache thread-safe finished blocked." in lock.body
    assert "Taking it here would deadlock the store's own readers." in lock.body
    assert not any(r.meta["class"] == "lesson" for r in here)
    assert repo.mj("knowledge", "check").returncode == 0

    # --- the pull request: the branch's records are committed and merged into main ------------
    repo.git("add", "-A", ".ai/repo")
    repo.commit("majordomus: session records and candidates")
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--no-ff", "-m", "Merge feature/timed", FEATURE)
    on_main = brief(repo, "ep-d")
    no_repeated_line(on_main)
    assert count(on_main) == (4, "main", f"4 from branch {FEATURE}")
    assert all(item["branch"] == FEATURE for item in queue(repo))

    # --- a trunk episode: its record waits in the outbox, and is counted on main ---------------
    repo.mj("decision", "add", "Releases are cut from main only", check=True)
    end(repo, "ep-d")
    assert len(list((repo.root / ".ai/local/state/outbox/candidates").glob("*.md"))) == 1
    trunk = brief(repo, "ep-e")
    no_repeated_line(trunk)
    assert count(trunk) == (5, "main", f"1 from this branch, 4 from branch {FEATURE}")
    assert re.search(r"^- Releases are cut from main only \(ep-d-[0-9a-f]{12}; in the outbox\)$", trunk, re.M)
    everything = tree_records(repo)
    times = listed_times(trunk, {r.meta["id"]: evidence_time(r) for r in everything})
    assert times == sorted(times, reverse=True)
    end(repo, "ep-e")

    # the review queue is in the order of the evidence where its review ages tie
    listed = [item for item in queue(repo) if item["this_branch"] is False]
    stamps = [evidence_time(records.load(repo.root / item["path"])) for item in listed]
    assert stamps == sorted(stamps)
