"""The rules around the derivation table: markers, acts never undone, dry run, timing, the README
contract, temporary files, idempotence, compaction, references, and the evidence writers."""
from __future__ import annotations

import json
import os
import re
import time

import pytest
from conftest import Repo

from majordomus.store import records
from majordomus.store.records import reference_problem
from majordomus.base.transcript import marker_in

CANDIDATES = ".ai/repo/knowledge/candidates"


def set_policy(repo: Repo, **switches: str) -> None:
    path = repo.root / ".ai/repo/policy.yaml"
    text = path.read_text(encoding="utf-8")
    for key, value in switches.items():
        text, count = re.subn(rf'^(  {key}: )"(on|off)"', rf'\g<1>"{value}"', text, flags=re.M)
        assert count == 1, key
    path.write_text(text, encoding="utf-8")


# --- the evidence writers ------------------------------------------------------------------------

def test_every_writer_stamps_the_episode(episode: Repo) -> None:
    episode.mj("start", "t", check=True)
    episode.mj("decision", "add", "d", check=True)
    qid = episode.mj("question", "add", "q?", check=True).stdout.strip()
    episode.mj("question", "resolve", qid, "a", check=True)
    episode.mj("checkpoint", "--note", "n", check=True)
    episode.mj("handover", "--next", "go on", check=True)
    episode.mj("finish", "--outcome", "completed", check=True)
    events = ["task.started", "decision.recorded", "question.opened", "question.resolved",
              "checkpoint.recorded", "handover.recorded", "task.finished"]
    for event in events:
        (line,) = episode.events(event)
        assert line["session"] == "e1", event
    (opened,) = episode.events("session.opened")
    assert re.fullmatch(r"[0-9a-f]{40}", opened["head"]), opened["head"]


def test_finish_verify_false_records_the_failure_and_says_how_to_finish_failed(episode: Repo) -> None:
    task = episode.mj("start", "t", check=True).stdout.strip()
    before = episode.ledger()
    proc = episode.mj("finish", "--verify", "echo first; echo the-last-words; exit 3")
    assert proc.returncode == 4
    assert "exited 3" in proc.stderr and "the-last-words" in proc.stderr
    assert 'majordomus finish --outcome failed --reason' in proc.stderr
    # the failure is the interesting event: one ledger line, and the task is not finished
    (failed,) = episode.ledger()[len(before):]
    assert failed["event"] == "verification.failed" and failed["session"] == "e1"
    assert (failed["task"], failed["title"], failed["command"], failed["code"]) == (
        task, "t", "echo first; echo the-last-words; exit 3", 3)
    assert re.fullmatch(r"[0-9a-f]{40}", failed["head"]) and failed["timed_out"] is None
    assert not (episode.root / f".ai/local/state/completed/{task}.md").exists()
    plain = episode.mj("finish", "--verify", "false")
    assert plain.returncode == 4 and "`false` exited 1" in plain.stderr
    assert episode.events("task.finished") == []
    assert [l["command"] for l in episode.events("verification.failed")] == [
        "echo first; echo the-last-words; exit 3", "false"]
    # The task is still active: it can be finished as failed, as the message says.
    episode.mj("finish", "--outcome", "failed", "--reason", "verification fails", check=True)
    assert [l["outcome"] for l in episode.events("task.finished")] == ["failed"]


def test_verify_runs_in_the_repository_root(episode: Repo) -> None:
    (episode.root / "sub").mkdir()
    episode.mj("start", "t", check=True)
    proc = episode.mj("finish", "--verify", "test -f .ai/repo/policy.yaml",
                      env={"MAJORDOMUS_ROOT": str(episode.root)})
    assert proc.returncode == 0, proc.stderr


def test_finish_refusals(episode: Repo) -> None:
    assert episode.mj("finish").returncode == 3  # no active task
    episode.mj("start", "t", check=True)
    assert episode.mj("finish", "--outcome", "blocked").returncode == 4  # a reason is needed
    assert episode.mj("finish", "--outcome", "blocked", "--reason", "r", "--verify", "true").returncode == 4
    assert episode.events("task.finished") == []


def test_the_finish_note_holds_its_reason_under_a_heading(episode: Repo) -> None:
    task = episode.mj("start", "t", "--scope", "lib", check=True).stdout.strip()
    episode.mj("finish", "--outcome", "no_match", "--reason", "no match\n\n## not a heading of ours", check=True)
    note = (episode.root / f".ai/local/state/completed/{task}.md").read_text(encoding="utf-8")
    assert note.startswith("# t\n") and "- outcome: no_match\n" in note and "- scope: lib\n" in note
    from majordomus.evidence.work import read_note_reason

    assert read_note_reason(note) == "no match\n\n## not a heading of ours"


# --- transcript markers --------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["Human: do it", "ok\nAssistant: sure", "User: x", "  System: y",
                                  "see <system-reminder>", "<function_calls>", "a <tool_use> b",
                                  "</tool_result>"])
def test_the_marker_list(text: str) -> None:
    assert marker_in(text)


@pytest.mark.parametrize("text", ["a Human: inline", "Humane: no", "<tool>", "user: lower"])
def test_not_markers(text: str) -> None:
    assert marker_in(text) is None


def _append(repo: Repo, event: str, **fields: object) -> None:
    """A ledger line the writers now refuse (they refuse a marker), as an older version, another
    tool or a hand edit may have left it: the deriver still skips it."""
    from majordomus.store.workspace import Workspace

    Workspace(repo.root).ledger.append(event, "e1", **fields)


def test_a_decision_carrying_a_marker_gives_no_record_and_skipped_1(episode: Repo) -> None:
    assert episode.mj("decision", "add", "Human: do it").returncode == 4  # refused where written
    _append(episode, "decision.recorded", task=None, text="Human: do it", why=None)
    proc = episode.mj("knowledge", "derive", check=True)
    assert episode.candidates() == []
    assert re.search(r"skipped ledger line \d+: decision.recorded carries the transcript marker 'Human:'",
                     proc.stderr)
    (derived,) = episode.events("knowledge.derived")
    assert (derived["written"], derived["skipped"]) == (0, 1)
    assert "1 skipped" in proc.stdout


@pytest.mark.parametrize("where", ["why", "answer", "reason-second-line", "task-title"])
def test_a_marker_anywhere_in_the_evidence_skips_the_line(episode: Repo, where: str) -> None:
    if where == "why":
        _append(episode, "decision.recorded", task=None, text="fine", why="because\nAssistant: said so")
    elif where == "answer":
        _append(episode, "question.resolved", question="q-1", task=None, text="fine?",
                answer="<tool_result>yes</tool_result>")
    elif where == "reason-second-line":
        _append(episode, "task.started", task="t-1", title="t", scope=None)
        _append(episode, "task.finished", task="t-1", title="t", outcome="blocked", note="none",
                reason="first\nUser: second")
    else:
        _append(episode, "task.started", task="t-2", title="Human: a task", scope=None)
        _append(episode, "task.finished", task="t-2", title="Human: a task", outcome="completed",
                note="none", verify="true")
    episode.mj("knowledge", "derive", check=True)
    assert episode.candidates() == []
    assert episode.events("knowledge.derived")[-1]["skipped"] == 1


# --- acts are never undone -----------------------------------------------------------------------

def test_a_promoted_id_is_not_rewritten(episode: Repo) -> None:
    episode.mj("decision", "add", "Keep it", check=True)
    episode.mj("knowledge", "derive", check=True)
    (path,) = episode.candidates()
    curated = episode.root / ".ai/repo/knowledge/curated" / path.name
    curated.write_text(path.read_text(encoding="utf-8").replace("status: candidate", "status: verified"),
                       encoding="utf-8")
    path.unlink()
    promoted = curated.read_bytes()
    proc = episode.mj("knowledge", "derive", check=True)
    assert episode.candidates() == []
    assert curated.read_bytes() == promoted
    derived = episode.events("knowledge.derived")[-1]
    assert (derived["written"], derived["kept"]) == (0, 1)
    assert "kept" in proc.stdout


def test_a_superseded_candidate_is_not_rewritten(episode: Repo) -> None:
    episode.mj("decision", "add", "Drop it", check=True)
    episode.mj("knowledge", "derive", check=True)
    (path,) = episode.candidates()
    rejected = path.read_text(encoding="utf-8").replace("status: candidate", "status: superseded") + \
        "\n# Rejected\n\nnot true\n"
    path.write_text(rejected, encoding="utf-8")
    episode.mj("knowledge", "derive", check=True)
    assert path.read_text(encoding="utf-8") == rejected
    assert episode.events("knowledge.derived")[-1]["kept"] == 1


# --- dry run, timing, idempotence --------------------------------------------------------------

def test_dry_run_prints_what_would_be_written_and_writes_nothing(episode: Repo) -> None:
    episode.mj("decision", "add", "Dry", check=True)
    before = episode.ledger()
    proc = episode.mj("knowledge", "derive", "--dry-run", check=True)
    assert episode.candidates() == []
    assert episode.ledger() == before
    assert "would write 1" in proc.stdout and "convention  Dry" in proc.stdout
    (listed,) = re.findall(rf"{CANDIDATES}/e1-[0-9a-f]{{12}}\.md", proc.stdout)
    data = json.loads(episode.mj("knowledge", "derive", "--dry-run", "--json", check=True).stdout)
    assert data["dry_run"] is True and data["written"] == [listed]
    assert data["records"][0]["class"] == "convention"
    episode.mj("knowledge", "derive", check=True)
    assert [episode.root / listed] == episode.candidates()
    again = episode.mj("knowledge", "derive", "--dry-run", check=True)
    assert "would write 0, unchanged 1" in again.stdout


def test_mj_timing_prints_wall_time_and_counters_on_stderr(episode: Repo) -> None:
    episode.mj("decision", "add", "Timed", check=True)
    proc = episode.mj("knowledge", "derive", "--dry-run", env={"MJ_TIMING": "1"}, check=True)
    assert re.search(r"MJ_TIMING derive e1: [0-9.]+ ms .*evidence 1, drafts 1, written 1", proc.stderr)
    assert "MJ_TIMING" not in proc.stdout
    quiet = episode.mj("knowledge", "derive", check=True)
    assert "MJ_TIMING" not in quiet.stderr


def test_a_second_run_writes_nothing_and_says_so(episode: Repo) -> None:
    episode.mj("decision", "add", "Once", check=True)
    first = episode.mj("knowledge", "derive", check=True)
    assert "wrote 1" in first.stdout
    (path,) = episode.candidates()
    stamp = path.stat().st_mtime_ns
    second = episode.mj("knowledge", "derive", check=True)
    assert "nothing changed (1 record up to date)" in second.stdout
    assert path.stat().st_mtime_ns == stamp
    assert [(d["written"], d["unchanged"], d["paths"]) for d in episode.events("knowledge.derived")] == \
        [(1, 0, [f"{CANDIDATES}/{path.name}"]), (0, 1, [])]


def test_an_unknown_episode_is_exit_3(episode: Repo) -> None:
    proc = episode.mj("knowledge", "derive", "--episode", "nope")
    assert proc.returncode == 3 and "history --event session.opened" in proc.stderr
    assert episode.mj("knowledge", "derive", "--episode", "../x").returncode == 4
    assert episode.events("knowledge.derived") == []


# --- the README contract, temporary files --------------------------------------------------------

def test_a_repository_initialised_before_candidates_gets_the_contract_seeded(episode: Repo) -> None:
    folder = episode.root / CANDIDATES
    for child in folder.iterdir():
        child.unlink()
    folder.rmdir()
    episode.mj("decision", "add", "Seeded", check=True)
    episode.mj("knowledge", "derive", check=True)
    assert (folder / "README.md").read_text(encoding="utf-8").startswith("# Candidate knowledge records")
    assert len(episode.candidates()) == 1


def test_stale_tmp_files_are_swept_young_ones_kept_and_tmp_ignored(episode: Repo) -> None:
    folder = episode.root / CANDIDATES
    stale, young = folder / ".tmp.e1-abc.md.99999", folder / ".tmp.e1-def.md.99998"
    stale.write_text("half a rec", encoding="utf-8")
    young.write_text("being written", encoding="utf-8")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    episode.mj("decision", "add", "Swept", check=True)
    proc = episode.mj("knowledge", "derive", env={"MJ_TIMING": "1"}, check=True)
    assert not stale.exists() and young.exists()
    assert "swept 1" in proc.stderr
    assert ".tmp.*" in (episode.root / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert episode.git("check-ignore", f"{CANDIDATES}/{young.name}").strip() == f"{CANDIDATES}/{young.name}"
    assert not any(p.name.startswith(".tmp.") for p in folder.iterdir() if p != young)


# --- compaction --------------------------------------------------------------------------------

def test_compaction_derives_even_when_it_skips_its_checkpoint(episode: Repo) -> None:
    set_policy(episode, checkpoint_on_compact="off")
    episode.mj("decision", "add", "No task is active", check=True)
    proc = episode.hook("pre-compact", {"session_id": "e1", "trigger": "auto"})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert episode.events("checkpoint.recorded") == []
    (derived,) = episode.events("knowledge.derived")
    assert derived["written"] == 1 and len(episode.candidates()) == 1


def test_compaction_knowledge_switch_off_checkpoints_without_deriving(episode: Repo) -> None:
    set_policy(episode, knowledge_on_compact="off")
    episode.mj("start", "active task", check=True)
    episode.mj("decision", "add", "Under a task", check=True)
    proc = episode.hook("pre-compact", {"session_id": "e1", "trigger": "manual"})
    assert proc.returncode == 0
    assert len(episode.events("checkpoint.recorded")) == 1
    assert episode.events("knowledge.derived") == [] and episode.candidates() == []


def test_compaction_with_a_task_active_derives(episode: Repo) -> None:
    episode.mj("start", "active task", check=True)
    episode.mj("decision", "add", "Under a task", check=True)
    episode.hook("pre-compact", {"session_id": "e1", "trigger": "auto"})
    assert len(episode.candidates()) == 1
    assert len(episode.events("checkpoint.recorded")) == 1


# --- references ----------------------------------------------------------------------------------

@pytest.mark.parametrize("ref", ["session:e1", "decision:t-1", "task:t-1", "commit:abc1234", "issue:12",
                                 "file:.ai/repo/adrs/0001-x.md", "test:tests/x.py::y"])
def test_admitted_references(ref: str) -> None:
    assert reference_problem(ref) is None


@pytest.mark.parametrize("ref", ["question:q-1", "decision:none", "task:none", "session:none",
                                 "commit:none", "nope:x", "session:", "session"])
def test_refused_references(ref: str) -> None:
    assert reference_problem(ref)


def test_a_ledger_line_naming_task_none_derives_from_the_session_alone(episode: Repo) -> None:
    ledger = episode.root / ".ai/local/ledger.jsonl"
    with ledger.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"ts": "2026-01-02T03:04:05Z", "event": "decision.recorded", "session": "e1",
                                 "task": "none", "text": "Nothing's task", "why": None}) + "\n")
        handle.write(json.dumps({"ts": "2026-01-02T03:04:06Z", "event": "decision.recorded", "session": "e1",
                                 "task": "../../etc", "text": "A path for a task", "why": None}) + "\n")
    proc = episode.mj("knowledge", "derive", check=True)
    (path,) = episode.candidates()
    meta = records.load(path).meta
    assert meta["provenance"]["derived_from"] == ["session:e1"]
    assert meta["date"] == "2026-01-02"
    assert "not a task id" in proc.stderr
    refs = [r for p in episode.candidates() for r in records.load(p).derived_from]
    assert not any(reference_problem(r) for r in refs)


def test_no_written_record_carries_a_refused_reference(episode: Repo) -> None:
    episode.mj("start", "t", check=True)
    qid = episode.mj("question", "add", "q?", check=True).stdout.strip()
    episode.mj("question", "resolve", qid, "a", check=True)
    episode.mj("decision", "add", "d", check=True)
    episode.mj("finish", "--outcome", "failed", "--reason", "r", check=True)
    episode.mj("decision", "add", "outside", check=True)
    episode.mj("knowledge", "derive", check=True)
    assert len(episode.candidates()) == 4
    for path in episode.candidates():
        for ref in records.load(path).derived_from:
            assert reference_problem(ref) is None, (path.name, ref)
        assert "question:" not in path.read_text(encoding="utf-8")


def test_text_that_is_not_unicode_is_refused_at_the_writer(episode: Repo) -> None:
    proc = episode.mj("decision", "add", "ok", env={"PYTHONIOENCODING": "utf-8"})
    assert proc.returncode == 0
    from majordomus.evidence import work
    from majordomus.base.errors import FatalError
    from majordomus.store.workspace import Workspace

    with pytest.raises(FatalError) as refused:
        work.decision_add(Workspace(episode.root), "bad \udcff byte")
    assert refused.value.code == 4
    assert len(episode.events("decision.recorded")) == 1
