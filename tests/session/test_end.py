"""The one close path (session/end.py), driven through the real hook scripts on real git
repositories: spans, the session record that only grows, a failing derivation in one line, and
`session.closed` stamped after its derivation."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from conftest import Repo
from lifecycle import age, end, session_record, start


def numstat(repo: Repo) -> list[tuple[int, int, str]]:
    rows = []
    for line in repo.git("diff", "--numstat", "HEAD").splitlines():
        added, deleted, path = line.split("\t")
        rows.append((int(added), int(deleted), path))
    return rows


def test_the_issue_repro_leaves_the_first_span_intact(repo: Repo) -> None:
    """Issue 13's repro: open, close, commit, resume, close. The second close only adds lines."""
    start(repo, "e1")
    repo.mj("decision", "add", "First decision", check=True)
    end(repo, "e1")
    repo.git("add", "-A")
    repo.commit("e1, first span")
    record = session_record(repo, "e1")
    first = record.read_text(encoding="utf-8")
    [first_candidate] = repo.candidates()
    first_bytes = first_candidate.read_bytes()

    start(repo, "e1", "resume")
    repo.mj("decision", "add", "Second decision", check=True)
    end(repo, "e1")

    assert repo.git("status", "--short", "--untracked-files=no") == " M .ai/repo/sessions/e1.md\n"
    [(added, deleted, path)] = numstat(repo)
    assert (deleted, path) == (0, ".ai/repo/sessions/e1.md") and added == 10  # the span's 8 + key + body
    now = record.read_text(encoding="utf-8")
    # every line of the first span is still there, in order, and the second span follows it
    rest = iter(now.splitlines())
    assert all(line in rest for line in first.splitlines())
    assert "later_spans:\n  - span: 2\n" in now and '    source: "resume"\n' in now
    assert 'source: "startup"\n' in now
    assert now.splitlines()[-1].startswith("Span 2 opened ") and now.splitlines()[-1].endswith("(other).")
    # the first candidate is untouched; the second span derived its own
    assert first_candidate.read_bytes() == first_bytes
    second = [c for c in repo.candidates() if c != first_candidate]
    assert len(second) == 1 and "Second decision" in second[0].read_text(encoding="utf-8")
    opened = repo.events("session.opened")
    assert [(l["session"], l["source"]) for l in opened] == [("e1", "startup"), ("e1", "resume")]
    derived = [l["episode"] for l in repo.events("knowledge.derived")]
    assert derived == ["e1", "e1"]


def test_a_one_span_record_keeps_the_format_records_had_before_spans(episode: Repo) -> None:
    end(episode, "e1")
    [opened] = episode.events("session.opened")
    [closed] = episode.events("session.closed")
    text = session_record(episode, "e1").read_text(encoding="utf-8")
    closed_at = text.split('closed: "')[1].split('"')[0]
    assert text == (
        "---\n"
        'id: "e1"\n'
        "kind: session/v1\n"
        'branch: "main"\n'
        f'opened: "{opened["ts"]}"\n'
        f'closed: "{closed_at}"\n'
        'source: "startup"\n'
        'reason: "other"\n'
        f'head_open: "{opened["head"]}"\n'
        f'head_close: "{closed["head"]}"\n'
        "---\n"
        f"Episode e1 opened {opened['ts']} (startup) on main and closed {closed_at} (other).\n")


def test_each_span_cites_its_own_commits(repo: Repo) -> None:
    """A record names the commits of the span its evidence came from: a later span's commit to a
    watched path neither reaches nor rewrites the first span's record."""
    start(repo, "e1")
    repo.mj("decision", "add", "Records are one assertion", check=True)
    first_sha = repo.commit("an ADR", {".ai/repo/adrs/0001-one.md": "# one\n"})
    end(repo, "e1")
    [first] = repo.candidates()
    assert f"commit:{first_sha}" in first.read_text(encoding="utf-8")
    repo.git("add", "-A")
    repo.commit("e1, first span")
    before = first.read_bytes()

    start(repo, "e1", "resume")
    second_sha = repo.commit("a rule", {".ai/repo/rules/project/two.yaml": "id: two\n"})
    repo.mj("decision", "add", "Rules name their validator", check=True)
    end(repo, "e1")

    assert first.read_bytes() == before
    [second] = [c for c in repo.candidates() if c != first]
    text = second.read_text(encoding="utf-8")
    assert f"commit:{second_sha}" in text and f"commit:{first_sha}" not in text
    assert "file:.ai/repo/rules/project/two.yaml" in text and "0001-one.md" not in text
    assert all(deleted == 0 for _, deleted, _ in numstat(repo))


def test_the_whole_episode_is_derived_again_without_rewriting(repo: Repo) -> None:
    """`knowledge derive` over a two-span episode writes nothing new: both spans' records stand."""
    start(repo, "e1")
    repo.mj("decision", "add", "One", check=True)
    end(repo, "e1")
    start(repo, "e1", "resume")
    repo.mj("decision", "add", "Two", check=True)
    end(repo, "e1")
    before = {p: p.read_bytes() for p in repo.candidates()}
    proc = repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert "nothing changed (2 records up to date)" in proc.stdout
    assert {p: p.read_bytes() for p in repo.candidates()} == before


def test_session_closed_is_stamped_after_its_derivation(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a clock that ticks a second at every reading, the close's ledger line carries a time
    after its knowledge.derived line's (it used to carry the time the close began)."""
    from majordomus.session import end as end_module
    from majordomus.store import ledger as ledger_module
    from majordomus.store.workspace import Workspace

    start(repo, "e1")
    repo.mj("decision", "add", "Stamped in order", check=True)
    ticks = iter(range(10_000))

    def clock() -> str:
        return f"2030-01-01T00:{next(ticks) // 60 % 60:02d}:{next(ticks) % 60:02d}Z"

    monkeypatch.setattr(ledger_module, "utc_now", clock)
    monkeypatch.setattr(end_module, "utc_now", clock)
    closed = end_module.close_episode(Workspace(repo.root), "e1", by="test")
    assert closed.error is None
    lines = repo.ledger()
    derived = next(l for l in lines if l["event"] == "knowledge.derived")
    close = next(l for l in lines if l["event"] == "session.closed")
    assert lines.index(derived) < lines.index(close)
    assert close["ts"] > derived["ts"]
    recorded = session_record(repo, "e1").read_text(encoding="utf-8").split('closed: "')[1].split('"')[0]
    assert recorded < derived["ts"]  # the record names when the close began, before the derivation


@pytest.mark.parametrize("hook", ["session-end", "pre-compact"])
def test_a_failing_derivation_in_a_hook_is_one_line_with_its_cause_and_fix(repo: Repo, hook: str) -> None:
    """Issue 13's repro: the candidates folder replaced by a file. The hook prints one line on
    stderr naming that file and the fix, nothing on stdout, and no doit report anywhere."""
    start(repo, "e1")
    repo.mj("decision", "add", "x", check=True)
    folder = repo.root / ".ai/repo/knowledge/candidates"
    subprocess.run(["rm", "-rf", str(folder)], check=True)
    folder.write_text("in the way\n", encoding="utf-8")

    payload = {"session_id": "e1", "cwd": str(repo.root),
               **({"reason": "other"} if hook == "session-end" else {"trigger": "manual"})}
    proc = repo.hook(hook, payload)

    assert proc.returncode == 0
    assert proc.stdout == b""
    err = proc.stderr.decode()
    assert err.count("\n") == 1, err
    assert "Traceback" not in err and "TaskError" not in err and "####" not in err
    assert ".ai/repo/knowledge/candidates is a file where a folder belongs" in err
    assert "mv .ai/repo/knowledge/candidates .ai/repo/knowledge/candidates.bak" in err
    assert "`majordomus knowledge derive --episode e1`" in err
    [failed] = repo.events("provider.event.failed")
    assert failed["hook"] == hook and "is a file where a folder belongs" in failed["error"]
    if hook == "session-end":
        assert [l["reason"] for l in repo.events("session.closed")] == ["other"]  # the close happened

    # the fix it names works
    folder.rename(folder.with_name("candidates.bak"))
    repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert len(repo.candidates()) == 1


def test_the_cli_close_names_the_cause_too(episode: Repo) -> None:
    episode.mj("decision", "add", "x", check=True)
    (episode.root / ".ai/repo/knowledge/candidates").rename(episode.root / "moved")
    (episode.root / ".ai/repo/knowledge/candidates").write_text("x", encoding="utf-8")
    proc = episode.mj("session", "close")
    assert proc.returncode == 1
    assert "derivation failed: .ai/repo/knowledge/candidates is a file where a folder belongs" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_a_late_end_after_the_orphan_sweep_is_a_span_of_its_own(repo: Repo) -> None:
    """The sweep closed e0 as orphaned; its own end arrives later: a span opened and closed by
    that end, recorded, never an error."""
    start(repo, "e0")
    repo.mj("decision", "add", "Made before the silence", env={"MAJORDOMUS_EPISODE": "e0"}, check=True)
    age(repo, "e0", 2 * 1440)
    start(repo, "e1")
    assert [l["reason"] for l in repo.events("session.closed")] == ["orphaned"]

    end(repo, "e0")

    closes = [l for l in repo.events("session.closed") if l["session"] == "e0"]
    assert [l["reason"] for l in closes] == ["orphaned", "other"]
    opened = [l for l in repo.events("session.opened") if l["session"] == "e0"]
    assert [l["source"] for l in opened] == ["startup", "late-end"]
    assert not repo.events("provider.event.failed") and not repo.events("session.refused")
    text = session_record(repo, "e0").read_text(encoding="utf-8")
    assert 'reason: "orphaned"\n' in text and '    source: "late-end"\n' in text
    assert '    reason: "other"\n' in text
    # and the resume of it afterwards is one more span
    start(repo, "e0", "resume")
    end(repo, "e0")
    assert "  - span: 3\n" in session_record(repo, "e0").read_text(encoding="utf-8")
    assert not repo.events("provider.event.failed")


def test_an_end_for_an_episode_that_closed_normally_is_still_refused(episode: Repo) -> None:
    end(episode, "e1")
    proc = episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert proc.returncode == 0 and b"is not open" in proc.stderr
    assert len(episode.events("session.closed")) == 1


def test_a_close_run_again_replaces_its_own_span_only(repo: Repo) -> None:
    """A close killed after it published the record (its open record still there) is run again:
    the record keeps one entry for that span."""
    start(repo, "e1")
    end(repo, "e1")
    start(repo, "e1", "resume")
    record_file = repo.root / ".ai/local/state/episodes/e1.json"
    kept = record_file.read_bytes()
    end(repo, "e1")
    once = session_record(repo, "e1").read_text(encoding="utf-8")
    record_file.write_bytes(kept)  # as if the close had died before it removed the open record
    end(repo, "e1")
    twice = session_record(repo, "e1").read_text(encoding="utf-8")
    assert twice.count("  - span: ") == 1 and once.count("  - span: ") == 1
    assert twice.splitlines()[:11] == once.splitlines()[:11]


def test_a_fork_names_its_parent_in_its_record(repo: Repo) -> None:
    start(repo, "parent")
    end(repo, "parent")
    start(repo, "child", "fork", env={"CLAUDE_CODE_SESSION_ID": "parent"})
    [opened] = [l for l in repo.events("session.opened") if l["session"] == "child"]
    assert opened["source"] == "fork" and opened["forked_from"] == "parent"
    end(repo, "child")
    text = session_record(repo, "child").read_text(encoding="utf-8")
    assert 'forked_from: "parent"\n' in text and 'source: "fork"\n' in text
    assert "forked_from" not in session_record(repo, "parent").read_text(encoding="utf-8")


def test_a_fork_the_hook_cannot_place_is_recorded_without_a_parent(repo: Repo) -> None:
    for env in ({}, {"CLAUDE_CODE_SESSION_ID": "child"}, {"CLAUDE_CODE_SESSION_ID": "../x"}):
        repo.hook("session-start", {"session_id": "child", "source": "fork"}, env=env)
        repo.hook("session-end", {"session_id": "child", "reason": "other"})
    assert all("forked_from" not in l for l in repo.events("session.opened"))
    assert not repo.events("provider.event.failed")


def test_a_record_waiting_in_the_trunk_outbox_grows_there_and_drains_whole(tmp_path: Path) -> None:
    from conftest import published

    repo = published(tmp_path)
    start(repo, "e1")
    end(repo, "e1")
    staged = repo.root / ".ai/local/state/outbox/sessions/e1.md"
    assert staged.exists() and not session_record(repo, "e1").exists()
    start(repo, "e1", "resume")
    end(repo, "e1")
    assert "  - span: 2\n" in staged.read_text(encoding="utf-8")
    repo.git("switch", "-q", "-c", "work")
    proc = repo.mj("drain", check=True)
    assert proc.returncode == 0
    assert "  - span: 2\n" in session_record(repo, "e1").read_text(encoding="utf-8")
    assert not staged.exists()


def test_a_tracked_record_grown_on_the_trunk_drains_over_it(tmp_path: Path) -> None:
    """Span 1 closed on a branch (tracked), span 2 on the trunk (outbox): the outbox copy only adds
    to the tracked one, so the drain moves it instead of keeping it as a conflict."""
    from conftest import published

    repo = published(tmp_path)
    repo.git("switch", "-q", "-c", "work")
    start(repo, "e1")
    end(repo, "e1")
    repo.git("add", "-A")
    repo.commit("span 1")
    repo.git("switch", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "work")
    start(repo, "e1", "resume")
    end(repo, "e1")
    staged = repo.root / ".ai/local/state/outbox/sessions/e1.md"
    assert "  - span: 2\n" in staged.read_text(encoding="utf-8")
    assert "span: 2" not in session_record(repo, "e1").read_text(encoding="utf-8")
    repo.git("switch", "-q", "work")
    data = json.loads(repo.mj("drain", "--json", check=True).stdout)
    assert data["kept"] == [] and data["moved"], data
    assert "  - span: 2\n" in session_record(repo, "e1").read_text(encoding="utf-8")
    assert all(deleted == 0 for _, deleted, _ in numstat(repo))


def test_a_close_trims_the_ledger_only_when_it_is_over_the_cap_by_its_margin(repo: Repo) -> None:
    """Retention without a rewrite on every close: a ledger over `ledger.retention_lines` by less
    than a tenth of it is left as it is (same file); past that margin the close trims it to the cap
    and says so in the ledger."""
    policy = repo.root / ".ai/repo/policy.yaml"
    policy.write_text(policy.read_text(encoding="utf-8").replace("retention_lines: 50000", "retention_lines: 300"),
                      encoding="utf-8")
    ledger = repo.root / ".ai/local/ledger.jsonl"

    def old_lines(count: int) -> None:
        with open(ledger, "a", encoding="utf-8") as handle:
            for n in range(count):
                handle.write(json.dumps({"ts": "2026-03-04T05:06:07Z", "event": "checkpoint.recorded",
                                         "session": "old", "note": str(n)}) + "\n")

    start(repo, "e1")
    old_lines(300 - len(ledger.read_text(encoding="utf-8").splitlines()) + 20)  # 320 lines, the cap 300
    inode = ledger.stat().st_ino
    end(repo, "e1")
    lines = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    assert ledger.stat().st_ino == inode and len(lines) > 300
    assert not any(line["event"] == "ledger.trimmed" for line in lines)

    start(repo, "e2")
    old_lines(20)
    end(repo, "e2")
    lines = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    assert ledger.stat().st_ino != inode
    assert lines[-1]["event"] == "ledger.trimmed" and len(lines) == 301, len(lines)
    assert [line["event"] for line in lines if line["session"] == "e2"][-1] == "session.closed"


def test_a_boundary_sweeps_the_marks_of_boundaries_killed_before_renaming_them(repo: Repo) -> None:
    """A boundary killed between creating its pending mark and renaming it into place leaves
    `.tmp.<episode>.<pid>`; the next boundary removes it once that process is gone, and leaves the
    one of a process still running."""
    pending = repo.root / ".ai/local/state/pending"
    pending.mkdir(parents=True, exist_ok=True)
    gone = subprocess.Popen(["true"])
    gone.wait()
    alive = subprocess.Popen(["sleep", "30"])
    try:
        (pending / f".tmp.e0.{gone.pid}").write_bytes(b"")
        (pending / f".tmp.e9.{alive.pid}").write_bytes(b"")
        start(repo, "e1")
        assert sorted(p.name for p in pending.iterdir()) == [f".tmp.e9.{alive.pid}"]
    finally:
        alive.kill()
        alive.wait()
