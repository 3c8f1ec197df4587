"""The loop closed, as the real Claude Code client drives it (issue 15): a constraint a person
promoted is in the next session's first request to the model; a session that commits three times
and records nothing gets the Stop hook's reminder in the next request to the model, exactly once;
the permission rules `capture install` wrote let `majordomus` run unasked and keep a person's acts
asked."""
from __future__ import annotations

import json
import re
import subprocess

from claude_driver import Claude, ClaudeRun
from fake_anthropic import Request, Step, after_tool, bash, prompt_contains, text
from harness import ThrowawayRepo, majordomus

REMINDER = "Majordomus: this episode has 3 commits since it opened and no decision, question or task recorded"


def succeeded(run: ClaudeRun) -> str:
    assert run.returncode == 0, run.describe()
    assert run.result.get("is_error") is False, run.describe()
    assert run.session_id, run.describe()
    return run.session_id


def promote(repo: ThrowawayRepo, rid: str, cls: str, evidence: str) -> None:
    """A person's act at a terminal: the evidence on stdin, the class they judge it to be."""
    proc = subprocess.run([str(majordomus()), "knowledge", "promote", rid, "--class", cls], cwd=repo.root,
                          env=repo.env, input=evidence, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_a_constraint_a_person_promoted_is_in_the_next_sessions_first_request(
        claude: Claude, e2e_repo: ThrowawayRepo) -> None:
    claude.fake.extend([
        Step(prompt_contains("tabs"), name="record",
             reply=bash('majordomus decision add "Tabs are refused in the parser" --why "two encodings of one thing"')),
        Step(after_tool, text("Recorded the decision."), name="recorded"),
        Step(prompt_contains("lexer"), text("Read the briefing."), name="second"),
    ])
    first = claude.run("Record that tabs are refused in the parser.")
    succeeded(first)
    [candidate] = e2e_repo.candidates()
    rid = candidate.stem
    before = claude.fake.messages_requests()
    assert all("Tabs are refused in the parser (" + rid not in r.messages_text() for r in before)

    promote(e2e_repo, rid, "constraint", "the parser's tests refuse a tab since the first commit\n")

    second = claude.run("Look at the lexer.")
    succeeded(second)
    requests = claude.fake.messages_requests()[len(before):]
    assert requests and requests[0].reply == "second"
    # no id on a verified record: no act of the agent's needs one (issue 25)
    assert "- constraint: Tabs are refused in the parser" in requests[0].messages_text()
    assert "## What this repository knows (1 verified record)" in requests[0].messages_text()


def carries_reminder(request: Request) -> bool:
    return request.is_main and REMINDER in request.last_user_text()


def test_three_commits_and_no_record_get_the_reminder_in_the_next_request_once(
        claude: Claude, e2e_repo: ThrowawayRepo) -> None:
    commits = " && ".join(f"echo {n} > f{n}.txt && git add f{n}.txt && git commit -q -m 'change {n}'"
                          for n in (1, 2, 3))
    claude.fake.extend([
        Step(prompt_contains("three"), bash(commits), name="commit"),
        Step(after_tool, text("Committed three times."), name="done"),
        Step(carries_reminder, text("Nothing in these commits needs recording."), name="reminded"),
    ])
    run = claude.run("Make three commits.")
    sid = succeeded(run)
    assert claude.fake.unused_steps() == []
    assert e2e_repo.git("rev-list", "--count", "HEAD").strip() == "5"  # two of the set-up, three of the agent

    requests = claude.fake.messages_requests()
    names = [r.reply for r in requests]
    assert names == ["commit", "done", "reminded"], names
    # The turn that would have ended did not: the next request carries the reminder (Claude Code
    # 2.1.332 gives it twice in that request: as "Stop hook feedback" in a user message's
    # <system-reminder>, and as a system message), and no request before it did.
    assert [REMINDER in r.messages_text() for r in requests] == [False, False, True]
    assert "Stop hook feedback:\n" + REMINDER in requests[2].last_user_text()
    # The hook ran at both stops and exited 0; it blocked once, and said nothing the second time
    # (stop_hook_active), so the session ended after the model's answer.
    log = run.debug_log.read_text(encoding="utf-8", errors="replace")
    ran = re.findall(r"Hooks: Stop \[[^\]]*majordomus-stop\] finished with status (\d+)", log)
    blocked = re.findall(r'Hook Stop \(Stop\) success:\\n\{\\"decision\\": \\"block\\"', log)
    assert ran == ["0", "0"] and len(blocked) == 1, (ran, blocked)
    assert [(line["session"], line["commits"]) for line in e2e_repo.events("session.reminded")] == [(sid, 3)]


def test_recording_waits_on_no_permission_prompt_and_a_persons_acts_are_asked(
        claude: Claude, e2e_repo: ThrowawayRepo) -> None:
    """Without `--allowedTools`, only the rules `capture install` wrote in .claude/settings.json
    decide: `majordomus` runs unasked; a promotion (an `ask` rule) and a command no rule names are
    refused, since `claude -p` has nobody to ask."""
    claude.fake.extend([
        Step(prompt_contains("encoding"), name="record",
             reply=bash('majordomus decision add "The lexer keeps one encoding" --why "tabs and spaces are one"')),
        Step(after_tool, bash("majordomus knowledge promote some-000000000000 --class constraint"), name="promote"),
        Step(after_tool, bash("touch stray.txt"), name="touch"),
        Step(after_tool, text("Done."), name="done"),
    ])
    # A person trusted the workspace once (the client's trust dialog): until then the client
    # ignores a project's allow rules, and says so on stderr.
    (claude.home / ".claude.json").write_text(json.dumps(
        {"projects": {str(e2e_repo.root): {"hasTrustDialogAccepted": True}}}), encoding="utf-8")
    run = claude.run("Record that the lexer keeps one encoding.", allowed=None)
    assert "has not been trusted" not in run.stderr, run.describe()
    sid = succeeded(run)
    assert claude.fake.unused_steps() == []
    assert [(line["session"], line["text"]) for line in e2e_repo.events("decision.recorded")] == [
        (sid, "The lexer keeps one encoding")]
    denied = [d["tool_input"]["command"] for d in run.result.get("permission_denials", [])]
    assert denied == ["majordomus knowledge promote some-000000000000 --class constraint", "touch stray.txt"], \
        run.describe()
    assert not (e2e_repo.root / "stray.txt").exists()
