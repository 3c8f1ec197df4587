"""The one open path (session/start.py) through the real hook scripts: a resume of a closed
episode opens a new span; a start closes the episodes whose end never came."""
from __future__ import annotations

import time

from conftest import Repo
from lifecycle import age, end, session_record, start


def test_a_resume_of_a_closed_episode_opens_a_new_span(repo: Repo) -> None:
    start(repo, "e1")
    end(repo, "e1")
    briefing = start(repo, "e1", "resume")
    assert briefing.startswith("# Majordomus briefing: episode e1 (resume)")
    opened = repo.events("session.opened")
    assert [l["source"] for l in opened] == ["startup", "resume"]
    assert not repo.events("session.resumed")
    assert (repo.root / ".ai/local/state/episodes/e1.json").exists()
    assert len(list((repo.root / ".ai/local/session-contexts").glob("*--e1.md"))) == 2  # one snapshot a span
    # the second span's is numbered (a resume may open in the first span's second) and is the one named
    newest = repo.mj("session", "context", "--path", "--episode", "e1", check=True).stdout.strip()
    assert newest.endswith("-2--e1.md") and [l.get("span") for l in opened] == [None, 2], newest
    proc = repo.mj("session", "context", "--json", check=True)
    assert '"state": "open"' in proc.stdout


def test_a_resume_of_an_open_episode_goes_on_in_the_same_span(episode: Repo) -> None:
    start(episode, "e1", "compact")
    start(episode, "e1", "resume")
    assert len(episode.events("session.opened")) == 1
    assert [l["source"] for l in episode.events("session.resumed")] == ["compact", "resume"]


def test_the_cli_says_a_closed_episode_was_reopened(repo: Repo) -> None:
    repo.mj("session", "start", "--id", "m1", check=True)
    repo.mj("session", "close", check=True)
    proc = repo.mj("session", "start", "--id", "m1", "--source", "resume", check=True)
    assert "episode m1 reopened (a new span)" in proc.stderr


def test_a_start_closes_an_orphaned_episode_through_the_one_close_path(repo: Repo) -> None:
    start(repo, "e0")
    repo.mj("decision", "add", "Decided before the end never came", env={"MAJORDOMUS_EPISODE": "e0"},
            check=True)
    age(repo, "e0", 1441)

    briefing = start(repo, "e1")  # stderr is empty: start() asserts it

    assert briefing.startswith("# Majordomus briefing: episode e1 (startup)")
    assert not (repo.root / ".ai/local/state/episodes/e0.json").exists()
    lines = repo.ledger()
    derived = [i for i, l in enumerate(lines) if l["event"] == "knowledge.derived" and l["episode"] == "e0"]
    closed = [i for i, l in enumerate(lines) if l["event"] == "session.closed" and l["session"] == "e0"]
    opened = [i for i, l in enumerate(lines) if l["event"] == "session.opened" and l["session"] == "e1"]
    assert len(derived) == len(closed) == 1 and derived[0] < closed[0] < opened[0]
    close = lines[closed[0]]
    assert close["reason"] == "orphaned" and close["orphan_after_minutes"] == 1440 and close["swept_by"] == "e1"
    assert 'reason: "orphaned"\n' in session_record(repo, "e0").read_text(encoding="utf-8")
    [candidate] = repo.candidates()
    assert "Decided before the end never came" in candidate.read_text(encoding="utf-8")
    # the current episode is the one that started, not the orphan
    repo.mj("decision", "add", "after", check=True)
    assert repo.events("decision.recorded")[-1]["session"] == "e1"


def test_an_episode_quiet_for_less_than_the_policy_stays_open(repo: Repo) -> None:
    start(repo, "e0")
    age(repo, "e0", 1430)
    start(repo, "e1")
    assert not repo.events("session.closed")
    assert (repo.root / ".ai/local/state/episodes/e0.json").exists()


def test_a_recent_ledger_line_keeps_an_old_episode_open(repo: Repo) -> None:
    """Opened two days ago, but it recorded a decision a minute ago: not an orphan."""
    start(repo, "e0")
    age(repo, "e0", 2 * 1440)
    repo.mj("decision", "add", "still here", env={"MAJORDOMUS_EPISODE": "e0"}, check=True)
    start(repo, "e1")
    assert not repo.events("session.closed")


def test_the_starting_episode_is_never_swept(repo: Repo) -> None:
    """A resume of an episode quiet for days is that episode going on, not an orphan."""
    start(repo, "e0")
    age(repo, "e0", 3 * 1440)
    start(repo, "e0", "resume")
    assert not repo.events("session.closed")
    assert [l["source"] for l in repo.events("session.resumed")] == ["resume"]


def test_orphan_after_minutes_zero_never_sweeps(repo: Repo) -> None:
    policy = repo.root / ".ai/repo/policy.yaml"
    text = policy.read_text(encoding="utf-8")
    assert "  orphan_after_minutes: 1440" in text
    policy.write_text(text.replace("  orphan_after_minutes: 1440", "  orphan_after_minutes: 0"), encoding="utf-8")
    start(repo, "e0")
    age(repo, "e0", 10 * 1440)
    start(repo, "e1")
    assert not repo.events("session.closed")


def test_a_resume_of_a_swept_episode_is_a_new_span(repo: Repo) -> None:
    start(repo, "e0")
    age(repo, "e0", 1500)
    start(repo, "e1")
    start(repo, "e0", "resume")
    end(repo, "e0")
    text = session_record(repo, "e0").read_text(encoding="utf-8")
    assert 'reason: "orphaned"\n' in text and '    source: "resume"\n' in text and "  - span: 2\n" in text
    assert not repo.events("provider.event.failed")


def test_a_failed_orphan_close_is_reported_and_the_start_goes_on(repo: Repo) -> None:
    start(repo, "e0")
    repo.mj("decision", "add", "x", env={"MAJORDOMUS_EPISODE": "e0"}, check=True)
    age(repo, "e0", 1500)
    folder = repo.root / ".ai/repo/knowledge/candidates"
    folder.rename(repo.root / "aside")
    folder.write_text("in the way\n", encoding="utf-8")
    proc = repo.hook("session-start", {"session_id": "e1", "source": "startup"})
    assert proc.returncode == 0
    assert proc.stdout.decode().startswith("# Majordomus briefing: episode e1 (startup)")
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "orphaned episode e0" in err and "is a file where a folder belongs" in err
    assert [l["reason"] for l in repo.events("session.closed")] == ["orphaned"]
    assert [l["hook"] for l in repo.events("provider.event.failed")] == ["session-start"]


def test_doctor_names_an_open_episode_past_the_orphan_age(repo: Repo) -> None:
    start(repo, "e0")
    proc = repo.mj("doctor")
    assert "e0" not in proc.stdout
    age(repo, "e0", 1500)
    proc = repo.mj("doctor")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [note] = [l for l in proc.stdout.splitlines() if "doctor.episodes" in l]
    assert "e0" in note and "session.orphan_after_minutes (1440)" in note
    assert "majordomus session close --id e0 --reason orphaned" in proc.stdout
    repo.mj("session", "close", "--id", "e0", "--reason", "orphaned", check=True)
    assert "doctor.episodes" not in repo.mj("doctor").stdout


def test_the_sweep_reads_the_ledger_from_its_end_only(repo: Repo) -> None:
    """A line stamped recently but written long ago (before older lines) is never reached: the
    reading stops at the first line older than the window, so it cannot keep e0 open."""
    start(repo, "e0")
    age(repo, "e0", 1500)
    ledger = repo.root / ".ai/local/ledger.jsonl"
    recent = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    ledger.write_text('{"ts":"%s","event":"checkpoint.recorded","session":"e0","task":null,"note":"x","head":null}\n'
                      % recent + ledger.read_text(encoding="utf-8"), encoding="utf-8")
    start(repo, "e1")
    assert [l["session"] for l in repo.events("session.closed")] == ["e0"]
