"""The three knowledge rules of seed 001, each driven to its finding and back to clean in a real
temporary repository."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PROJECT, Repo
from rules_helpers import (OLD, append_line, findings_of, rel, run_json, set_policy, stamp, status_of,
                           write_candidate)

OBSERVED = "majordomus.knowledge-observed"
INTEGRITY = "majordomus.knowledge-integrity"
REVIEWED = "majordomus.candidates-reviewed"


# --- majordomus.knowledge-observed ---------------------------------------------------------------

def test_gate_no_derivation_ever_is_a_skip_not_red(repo: Repo) -> None:
    append_line(repo, "session.opened", OLD, "e1", episode="e1")
    append_line(repo, "session.closed", "2020-01-01T01:00:00Z", "e1", episode="e1", reason="other")
    for command in ("doctor", "watch"):
        code, data = run_json(repo, command)
        assert code == 0, data
        assert status_of(data, OBSERVED) == "skipped"
        assert findings_of(data, OBSERVED) == []
    assert ("SKIP majordomus.knowledge-observed: not judged: no knowledge.derived line yet"
            in repo.mj("watch").stdout)


def test_stale_episode_is_blocking_until_it_is_derived(repo: Repo) -> None:
    append_line(repo, "knowledge.derived", OLD, "e0", episode="e0", written=0, unchanged=0, paths=[])
    append_line(repo, "session.closed", OLD, "e0", episode="e0", reason="other")
    append_line(repo, "session.closed", "2020-01-01T02:00:00Z", "e1", episode="e1", reason="other")
    for command in ("doctor", "watch"):
        code, data = run_json(repo, command)
        assert code == 10, command
        (finding,) = findings_of(data, OBSERVED)
        assert finding["blocking"]
        assert finding["what"].startswith("stopped writer: episode e1 closed ")
        assert finding["fix"] == "majordomus knowledge derive --episode e1"
        assert finding["reproduce"] == "majordomus history --event session.closed --event knowledge.derived"
    text = repo.mj("watch").stdout
    assert "ERROR majordomus.knowledge-observed: stopped writer: episode e1" in text
    assert "  reproduce: majordomus history --event session.closed --event knowledge.derived\n" in text
    assert "  fix: majordomus knowledge derive --episode e1\n" in text
    # The reproduce command is real and read-only: it shows the two events.
    shown = repo.mj("history", "--event", "session.closed", "--event", "knowledge.derived", check=True)
    assert shown.stdout.count("\n") == 3

    repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    code, data = run_json(repo, "watch")
    assert code == 0 and status_of(data, OBSERVED) == "ok"
    assert "fresh: the newest closed episode e1 was derived" in repo.mj("watch").stdout


def test_a_recent_close_is_pending_within_stale_minutes(repo: Repo) -> None:
    append_line(repo, "knowledge.derived", OLD, "e0", episode="e0", written=0, unchanged=0, paths=[])
    append_line(repo, "session.closed", stamp(60), "e1", episode="e1", reason="other")
    code, data = run_json(repo, "watch")
    assert code == 0
    assert "pending: episode e1 closed" in data["rules"][0]["detail"]
    set_policy(repo, "stale_minutes: 30", "stale_minutes: 0")
    code, data = run_json(repo, "watch")
    assert code == 10 and findings_of(data, OBSERVED)[0]["what"].startswith("stopped writer: episode e1")


def test_real_close_path_derives_and_is_judged_fresh(episode: Repo) -> None:
    episode.mj("decision", "add", "Tabs are refused", "--why", "one encoding", check=True)
    end = episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert end.returncode == 0
    code, data = run_json(episode, "watch")
    assert code == 0 and status_of(data, OBSERVED) == "ok"


def test_close_without_derivation_turns_red_once_the_writer_has_run(episode: Repo) -> None:
    """knowledge_on_end off: the close does not derive; once any derivation has run (the gate
    is open) and the close is older than the threshold, the writer is reported stopped."""
    set_policy(episode, 'knowledge_on_end: "on"', 'knowledge_on_end: "off"')
    set_policy(episode, "stale_minutes: 30", "stale_minutes: 0")
    append_line(episode, "knowledge.derived", OLD, "e0", episode="e0", written=0, unchanged=0, paths=[])
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    assert not [l for l in episode.events("knowledge.derived") if l.get("episode") == "e1"]
    code, data = run_json(episode, "doctor")
    assert code == 10
    assert findings_of(data, OBSERVED)[0]["fix"] == "majordomus knowledge derive --episode e1"


WIRED = (PROJECT / "pipeline" / "majordomus" / "session" / "end.py").read_text(encoding="utf-8")


def test_wiring_is_read_from_the_close_paths_own_source() -> None:
    from majordomus.rules import wiring

    assert wiring.check_source(WIRED) is None
    assert wiring.check()[0] is None
    assert wiring.check()[1].name == "end.py"

    unwired = WIRED.replace("outcome = derive_on_close(ws, episode, window, record)", "outcome = None")
    assert "never calls derive_on_close" in (wiring.check_source(unwired) or "")

    # A flag or a comment naming the deriver is not a call.
    flagged = unwired.replace('"""The one close path', '"""derive_on_close is wired. The one close path')
    assert "never calls derive_on_close" in (wiring.check_source(flagged) or "")

    lines = WIRED.splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines) if 'ws.ledger.append("session.closed"' in l)
    block = lines[start:start + 2]
    assert block[-1].rstrip().endswith(")")
    extra = len(block[0]) - len(block[0].lstrip()) - 4  # moved to the function's own level
    block = [line[extra:] for line in block]
    del lines[start:start + 2]
    at = next(i for i, l in enumerate(lines) if "outcome, error = None, None" in l)
    reordered = "".join(lines[:at] + block + lines[at:])
    assert "appends session.closed" in (wiring.check_source(reordered) or "")

    hollow = WIRED.replace("return derive.derive(ws, episode, window=window, record=record)", "return None")
    assert "never calls the deriver" in (wiring.check_source(hollow) or "")
    assert "defines no close_episode" in (wiring.check_source("x = 1\n") or "")


def test_the_wiring_is_kept_by_the_close_paths_stat_and_read_again_when_it_changes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from majordomus.rules import wiring
    from majordomus.store import filecache

    monkeypatch.setattr(filecache, "settled", lambda st, now_ns=None: True)  # the test's file is fresh
    parsed: list[str] = []
    parse = wiring.check_source
    monkeypatch.setattr(wiring, "check_source", lambda text, name: parsed.append(name) or parse(text, name))

    def kept() -> filecache.FileCache:
        return filecache.FileCache(tmp_path / wiring.CACHE, wiring.VERSION, tmp_path)

    source = tmp_path / "end.py"
    source.write_text(WIRED, encoding="utf-8")
    assert wiring.check(source, kept()) == (None, source)
    assert wiring.check(source, kept()) == (None, source) and len(parsed) == 1  # kept: not parsed again
    source.write_text(WIRED.replace("outcome = derive_on_close(ws, episode, window, record)", "outcome = None"),
                      encoding="utf-8")
    for _ in range(2):  # changed: read again, and that answer kept
        problem, _ = wiring.check(source, kept())
        assert "never calls derive_on_close" in (problem or "") and len(parsed) == 2
    assert wiring.check(source)[0] == problem and len(parsed) == 3  # no cache: always read


# --- majordomus.knowledge-integrity --------------------------------------------------------------

def test_integrity_is_blocking_from_check_and_doctor(repo: Repo) -> None:
    path = write_candidate(repo, "e5-000000000001", file_name="e5-000000000002")
    for command in ("check", "doctor"):
        code, data = run_json(repo, command)
        assert code == 10, command
        (finding,) = findings_of(data, INTEGRITY)
        assert finding["file"] == rel(path, repo) and finding["field"] == "id" and finding["blocking"]
        assert finding["reproduce"]
    assert repo.mj("watch").returncode == 0  # not dispatched from watch
    path.rename(path.with_name("e5-000000000001.md"))
    code, data = run_json(repo, "check")
    assert code == 0 and findings_of(data, INTEGRITY) == []


# --- majordomus.candidates-reviewed --------------------------------------------------------------

def commit_all(repo: Repo, monkeypatch: pytest.MonkeyPatch, when: str, message: str = "candidates") -> str:
    monkeypatch.setenv("GIT_COMMITTER_DATE", when)
    monkeypatch.setenv("GIT_AUTHOR_DATE", when)
    repo.git("add", "-A", ".ai/repo/knowledge/candidates")
    return repo.commit(message)


def age_finding(data: dict, rid: str) -> dict | None:
    found = [f for f in findings_of(data, REVIEWED) if f["what"].startswith(f"candidate {rid} has waited")]
    return found[0] if found else None


def test_untracked_candidate_is_named_until_committed(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_candidate(repo, "e2-000000000001", date=stamp()[:10])
    code, data = run_json(repo, "doctor")
    assert code == 0  # advisory: doctor warns, does not fail
    (finding,) = findings_of(data, REVIEWED)
    assert finding["file"] == rel(path, repo) and not finding["blocking"]
    assert "git does not track this candidate" in finding["what"]
    assert finding["fix"].startswith(f"git add {rel(path, repo)}")
    assert repo.mj("watch").returncode == 0
    commit_all(repo, monkeypatch, stamp())
    code, data = run_json(repo, "doctor")
    assert findings_of(data, REVIEWED) == [] and status_of(data, REVIEWED) == "ok"


def test_review_age_is_measured_from_the_ledger_first(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Evidence from 2020, committed in 2020, but derived (queued) an hour ago: one hour waited."""
    path = write_candidate(repo, "e3-000000000001", date="2020-01-01")
    commit_all(repo, monkeypatch, "2020-01-02T00:00:00Z")
    append_line(repo, "knowledge.derived", stamp(3600), "e3", episode="e3", written=1, unchanged=0,
                paths=[rel(path, repo)])
    code, data = run_json(repo, "doctor")
    assert code == 0 and findings_of(data, REVIEWED) == []
    set_policy(repo, "candidate_max_age_minutes: 10080", "candidate_max_age_minutes: 30")
    code, data = run_json(repo, "doctor")
    finding = age_finding(data, "e3-000000000001")
    assert finding is not None and finding["file"] == rel(path, repo)
    assert "has waited 60 min" in finding["what"]
    assert "measured from knowledge.derived at ledger line 1" in finding["what"]
    assert "knowledge reject e3-000000000001" in finding["fix"]
    # A record derived on the trunk was named by its outbox path; drained, it keeps its name.
    drained = write_candidate(repo, "e3-000000000002", date="2020-01-01")
    commit_all(repo, monkeypatch, "2020-01-02T00:00:00Z", "drained")
    append_line(repo, "knowledge.derived", stamp(60), "e3", episode="e3", written=1, unchanged=0,
                paths=[".ai/local/state/outbox/candidates/e3-000000000002.md"])
    code, data = run_json(repo, "doctor")
    assert age_finding(data, "e3-000000000002") is None
    assert drained.exists() and age_finding(data, "e3-000000000001") is not None


def test_review_age_falls_back_to_the_commit_that_added_it(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    old = write_candidate(repo, "e4-000000000001", date=stamp()[:10])
    sha = commit_all(repo, monkeypatch, "2020-03-01T00:00:00Z", "old queue entry")
    young = write_candidate(repo, "e4-000000000002", date="2020-01-01")
    commit_all(repo, monkeypatch, stamp(), "young queue entry")
    code, data = run_json(repo, "doctor")
    finding = age_finding(data, "e4-000000000001")
    assert finding is not None, data
    assert f"measured from commit {sha[:12]} added it" in finding["what"]
    assert age_finding(data, "e4-000000000002") is None  # the commit, not its 2020 date
    # Reviewing the old one (here: rejecting it by hand) clears the finding.
    old.write_text(old.read_text(encoding="utf-8").replace("status: candidate", "status: superseded"),
                   encoding="utf-8")
    code, data = run_json(repo, "doctor")
    assert age_finding(data, "e4-000000000001") is None
    assert young.exists()


def test_review_age_falls_back_to_the_record_date_and_says_so(repo: Repo) -> None:
    path = write_candidate(repo, "e6-000000000001", date="2020-01-01")
    code, data = run_json(repo, "doctor")
    finding = age_finding(data, "e6-000000000001")
    assert finding is not None
    assert "measured from the record's date 2020-01-01" in finding["what"]
    path.write_text(path.read_text(encoding="utf-8").replace("2020-01-01", stamp()[:10]), encoding="utf-8")
    code, data = run_json(repo, "doctor")
    assert age_finding(data, "e6-000000000001") is None


def test_more_candidates_than_the_cap_names_them(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in (1, 2):
        write_candidate(repo, f"e8-00000000000{n}", date=stamp()[:10])
    commit_all(repo, monkeypatch, stamp())
    set_policy(repo, "candidates_max_files: 25", "candidates_max_files: 1")
    code, data = run_json(repo, "doctor")
    assert code == 0
    (finding,) = findings_of(data, REVIEWED)
    assert finding["what"] == ("2 candidates await review, more than knowledge.candidates_max_files (1): "
                               "e8-000000000001, e8-000000000002")
    assert finding["reproduce"] == "majordomus knowledge candidates"
    set_policy(repo, "candidates_max_files: 1", "candidates_max_files: 2")
    assert findings_of(run_json(repo, "doctor")[1], REVIEWED) == []


def test_a_policy_declaring_neither_key_is_reported_at_the_rules_class(repo: Repo) -> None:
    policy = repo.root / ".ai/repo/policy.yaml"
    kept = policy.read_text(encoding="utf-8")
    lines = kept.splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines) if l.startswith("knowledge:"))
    policy.write_text("".join(lines[:start] + lines[start + 3:]), encoding="utf-8")
    code, data = run_json(repo, "doctor")
    assert code == 0
    (finding,) = findings_of(data, REVIEWED)
    assert not finding["blocking"]
    assert finding["file"] == ".ai/repo/policy.yaml"
    assert finding["field"] == "knowledge.candidates_max_files, knowledge.candidate_max_age_minutes"
    assert "defaults (knowledge.candidates_max_files=25, knowledge.candidate_max_age_minutes=10080)" in finding["what"]
    policy.write_text(kept, encoding="utf-8")
    assert findings_of(run_json(repo, "doctor")[1], REVIEWED) == []


def test_derived_candidates_are_warned_untracked_then_clean(episode: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seed's flow: an episode derives a candidate; doctor names it until it is committed."""
    episode.mj("decision", "add", "Tabs are refused", check=True)
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    (path,) = episode.candidates()
    code, data = run_json(episode, "doctor")
    assert code == 0 and data["findings"] and all(f["rule"] == REVIEWED for f in data["findings"])
    assert [f["file"] for f in data["findings"]] == [rel(path, episode), ".ai/repo/sessions/e1.md"]
    episode.git("add", "-A", ".ai/repo")
    episode.commit("session e1")
    code, data = run_json(episode, "doctor")
    assert code == 0 and data["findings"] == [], json.dumps(data, indent=1)
    assert status_of(data, OBSERVED) == "ok"
