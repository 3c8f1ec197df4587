"""The episode lifecycle as the real Claude Code client drives it (issue 13).

Each test runs the client from the npm registry, headless, in a throwaway repository after
`majordomus init` and `capture install`, against the fake Messages API, whose script plays the
model: a Bash tool call that records with `majordomus`, then plain text that ends the turn. What
is asserted is what the client and the repository show: the requests the model got, the ledger,
the files under .ai/, git, and which files the majordomus processes opened."""
from __future__ import annotations

from pathlib import Path

from claude_driver import Claude, ClaudeRun
from fake_anthropic import Step, after_tool, bash, is_compaction, prompt_contains, text
from harness import ThrowawayRepo

CANDIDATES = Path(".ai/repo/knowledge/candidates")


def succeeded(run: ClaudeRun) -> str:
    assert run.returncode == 0, run.describe()
    assert run.result.get("is_error") is False, run.describe()
    assert run.session_id, run.describe()
    return run.session_id


def hooks_ran(run: ClaudeRun) -> list[tuple[str, str, int | str]]:
    """(event, matcher, exit status or "cancelled") of each majordomus hook, in the client's order."""
    return [(h.event, h.matcher, h.status) for h in run.hooks if "majordomus" in h.command]


def rel(repo: ThrowawayRepo, path: Path) -> str:
    return path.relative_to(repo.root).as_posix()


def assert_transcript_never_opened(claude: Claude, *session_ids: str) -> None:
    """No majordomus process opened the transcript the client names in every hook payload, nor
    anything else among the client's conversations."""
    transcripts = {str(claude.transcript(sid)) for sid in session_ids}  # the client wrote them
    conversations = claude.home / ".claude" / "projects"
    processes = [p for p in claude.audit.processes() if p.is_majordomus]
    ran = {p.hook for p in processes if p.hook}
    assert {"session-start", "session-end"} <= ran, f"the audit saw no hook process: {ran}"
    # The audit does see opens under the client's folder: the start hook appends the episode to
    # the CLAUDE_ENV_FILE the client gives it there (~/.claude/session-env/<id>/).
    env_files = [path for p in processes if p.hook == "session-start" for path in p.opened
                 if "/session-env/" in path]
    assert env_files, "the audit recorded no open of CLAUDE_ENV_FILE: is it watching?"
    opened = [(p.command, path) for p in processes for path in p.opened
              if path in transcripts or Path(path).is_relative_to(conversations)]
    assert opened == [], f"majordomus opened the client's transcript: {opened}"


def test_a_session_reads_the_briefing_stamps_its_decision_and_derives_at_its_end(
        claude: Claude, e2e_repo: ThrowawayRepo, tmp_path: Path) -> None:
    twin = e2e_repo.twin(tmp_path / "twin")  # the repository as the client found it
    claude.fake.extend([
        Step(prompt_contains("append-only"), name="record",
             reply=bash('majordomus start "Ledger format" && majordomus decision add "Keep the ledger append-only"')),
        Step(after_tool, text("Recorded the decision."), name="done"),
    ])

    run = claude.run("Record the decision to keep the ledger append-only.")

    sid = succeeded(run)
    assert run.result.get("result") == "Recorded the decision."
    assert claude.fake.unused_steps() == []
    assert hooks_ran(run) == [("SessionStart", "startup", 0), ("SessionEnd", "other", 0)]

    # The briefing: what the start hook prints for this episode is in the model's first request.
    printed = twin.hook("session-start", {"session_id": sid, "source": "startup", "cwd": str(twin.root),
                                          "hook_event_name": "SessionStart",
                                          "transcript_path": str(tmp_path / "none.jsonl")})
    briefing = printed.stdout.strip()
    assert briefing.startswith(f"# Majordomus briefing: episode {sid} (startup)"), printed
    first = claude.fake.messages_requests()[0]
    assert first.reply == "record"
    assert briefing in first.messages_text()

    # The decision the agent recorded through the Bash tool carries the client's session id.
    assert [(o["session"], o["source"]) for o in e2e_repo.events("session.opened")] == [(sid, "startup")]
    assert [(d["session"], d["text"]) for d in e2e_repo.events("decision.recorded")] == \
        [(sid, "Keep the ledger append-only")]

    # SessionEnd derived the candidate, then closed the episode.
    [candidate] = e2e_repo.candidates()
    record = candidate.read_text(encoding="utf-8")
    assert "Keep the ledger append-only" in record and f"session:{sid}" in record
    ledger = e2e_repo.ledger()
    derived = [n for n, line in enumerate(ledger) if line["event"] == "knowledge.derived"
               and line.get("episode") == sid and rel(e2e_repo, candidate) in line["paths"]]
    closed = [n for n, line in enumerate(ledger) if line["event"] == "session.closed" and line["session"] == sid]
    assert derived and closed and derived[0] < closed[0], ledger
    assert ledger[closed[0]]["reason"] == "other"

    assert_transcript_never_opened(claude, sid)


def test_compact_in_a_session_runs_pre_compact_which_derives(claude: Claude, e2e_repo: ThrowawayRepo) -> None:
    claude.fake.extend([
        Step(prompt_contains("Record"), name="record",
             reply=bash('majordomus start "Compaction" && majordomus decision add "Compaction keeps decisions"')),
        Step(after_tool, text("Recorded."), name="recorded"),
        Step(is_compaction, name="summary",
             reply=text("<analysis>One decision recorded.</analysis>\n<summary>1. Primary Request and Intent: "
                        "record a decision. It is recorded.</summary>")),
        Step(prompt_contains("List the candidates"), bash(f"ls {CANDIDATES}"), name="list"),
        Step(after_tool, text("Listed."), name="listed"),
    ])

    # One client process: a task, `/compact` typed as the next prompt, then one more prompt.
    run = claude.run("Record a decision.", "/compact", "List the candidates.")

    sid = succeeded(run)
    assert claude.fake.unused_steps() == []
    boundaries = [m for m in run.messages if m.get("subtype") == "compact_boundary"]
    assert [b["compact_metadata"]["trigger"] for b in boundaries] == ["manual"], run.describe()
    assert hooks_ran(run) == [("SessionStart", "startup", 0), ("PreCompact", "manual", 0),
                              ("SessionStart", "compact", 0), ("SessionEnd", "other", 0)]

    [candidate] = e2e_repo.candidates()
    assert "Compaction keeps decisions" in candidate.read_text(encoding="utf-8")
    # It was written by the pre-compact hook's process (the audit watches the candidates folder) ...
    writers = {p.hook or p.command for p in claude.audit.processes() for path in p.writes
               if Path(path).parent == candidate.parent}
    assert writers == {"pre-compact"}, writers
    # ... so it was there before the session ended: the agent's `ls` after the compaction saw it.
    [listed] = [r for r in claude.fake.requests if r.reply == "listed"]
    assert candidate.name in listed.last_user_text()
    assert any(line["event"] == "knowledge.derived" and line.get("episode") == sid
               and rel(e2e_repo, candidate) in line["paths"] for line in e2e_repo.ledger())
    # The compact briefing reached the model in the first request after the compaction.
    [after] = [r for r in claude.fake.requests if r.reply == "list"]
    assert f"# Majordomus briefing: episode {sid} (compact)" in after.messages_text()

    assert_transcript_never_opened(claude, sid)


def test_resume_adds_a_span_and_a_candidate_and_rewrites_nothing_committed(
        claude: Claude, e2e_repo: ThrowawayRepo) -> None:
    """Issue 13, item 1: a resumed closed episode keeps its history."""
    claude.fake.extend([
        Step(prompt_contains("first decision"), name="first",
             reply=bash('majordomus start "Two spans" && majordomus decision add "First decision"')),
        Step(after_tool, text("First recorded."), name="first-done"),
        Step(prompt_contains("second decision"), bash('majordomus decision add "Second decision"'), name="second"),
        Step(after_tool, text("Second recorded."), name="second-done"),
    ])
    first = claude.run("Record the first decision.")
    sid = succeeded(first)
    session_record = e2e_repo.root / ".ai" / "repo" / "sessions" / f"{sid}.md"
    [first_candidate] = e2e_repo.candidates()
    assert session_record.exists()
    e2e_repo.commit_all("first span")
    committed = session_record.read_text(encoding="utf-8")

    second = claude.run("Record the second decision.", resume=sid)

    assert succeeded(second) == sid  # the client resumes the same session id
    assert claude.fake.unused_steps() == []
    assert hooks_ran(second) == [("SessionStart", "resume", 0), ("SessionEnd", "other", 0)]
    # The resume's request carries the whole conversation, the first prompt included.
    [resumed] = [r for r in claude.fake.requests if r.reply == "second"]
    assert "Record the first decision." in resumed.messages_text()
    assert [(d["session"], d["text"]) for d in e2e_repo.events("decision.recorded")] == \
        [(sid, "First decision"), (sid, "Second decision")]

    # A second candidate, derived at the second close; the first one untouched.
    candidates = e2e_repo.candidates()
    assert len(candidates) == 2, candidates
    [second_candidate] = [c for c in candidates if c != first_candidate]
    assert "Second decision" in second_candidate.read_text(encoding="utf-8")
    assert any(line["event"] == "knowledge.derived" and rel(e2e_repo, second_candidate) in line["paths"]
               for line in e2e_repo.ledger())
    assert_transcript_never_opened(claude, sid)

    # Nothing committed is rewritten: committed files only grow (the session record gains the
    # second span), none loses a line or goes away.
    status = e2e_repo.git("diff", "--name-status", "HEAD")
    numstat = e2e_repo.git("diff", "--numstat", "HEAD")
    rewritten = [line for line in numstat.splitlines() if line.split("\t")[1] != "0"]
    assert rewritten == [], (f"committed files lost lines on resume:\n{status}\n"
                             f"{e2e_repo.git('diff', 'HEAD', '--', '.ai/repo/sessions')}")
    assert not any(line.startswith("D") for line in status.splitlines()), status
    e2e_repo.git("diff", "--quiet", "HEAD", "--", rel(e2e_repo, first_candidate))
    # The record keeps the first span (startup) and lists the second (resume).
    now = session_record.read_text(encoding="utf-8")
    assert "startup" in committed and "startup" in now and "resume" in now, now
