"""GitHub Copilot CLI 1.0.102 from the npm registry, run headless (`copilot -p`) in a throwaway
git repository in its "bring your own key" mode against the fake Responses API on 127.0.0.1.

The issue planned Copilot CLI on its documentation alone; the client turned out to run here
without a GitHub account (COPILOT_PROVIDER_BASE_URL), so `TestCopilotFacts` pins what its hooks
really do, and `TestMajordomusInCopilot` runs majordomus's installed hooks in it. Where the
documentation and the client differ, the client wins (docs/AGENTS.md)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from clients import COPILOT, MAJORDOMUS, CopilotWorld, install
from fake_openai import say, shell


@pytest.fixture(scope="module")
def copilot_exe() -> Path:
    return install(COPILOT)


@pytest.fixture
def world(tmp_path: Path, copilot_exe: Path) -> Iterator[CopilotWorld]:
    w = CopilotWorld(tmp_path, copilot_exe)
    yield w
    w.close()
    assert w.fake.errors == []


def lifecycle_hooks(world: CopilotWorld, start_reply: str = "context") -> None:
    world.register_hooks({
        "sessionStart": [{"bash": world.probe_hook("sessionStart", start_reply), "timeoutSec": 30}],
        "preCompact": [{"bash": world.probe_hook("preCompact"), "timeoutSec": 30}],
        "sessionEnd": [{"bash": world.probe_hook("sessionEnd"), "timeoutSec": 30}],
    })


class TestCopilotFacts:
    def test_requests_reach_the_fake_and_the_scripted_shell_call_runs(self, world: CopilotWorld) -> None:
        world.trust_folder()
        run = world.run("please work", [shell("echo proof > proof.txt"), say("ALL DONE")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert (world.repo / "proof.txt").read_text() == "proof\n"
        assert len(run.requests) == 2
        assert run.requests[0].headers["authorization"] == "Bearer dummy"
        assert "bash" in [t.get("name") for t in run.requests[0].body["tools"]]
        assert run.user_texts(0)[-1].endswith("please work")
        assert run.session_id

    def test_an_untrusted_folder_runs_no_repository_hook(self, world: CopilotWorld) -> None:
        lifecycle_hooks(world)
        run = world.run("hello", [say("hi")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert world.hook_calls() == []

    def test_trusted_hooks_get_camel_case_payloads_and_only_a_top_level_context_reaches_the_model(
            self, world: CopilotWorld) -> None:
        lifecycle_hooks(world, start_reply="context")
        world.trust_folder()
        run = world.run("please work", [say("ALL DONE")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert [c["event"] for c in world.hook_calls()] == ["sessionStart", "sessionEnd"]
        [start] = world.hook_calls("sessionStart")
        assert start["payload"]["sessionId"] == run.session_id
        assert start["payload"]["source"] == "new"  # the docs list startup|resume|new
        assert start["payload"]["cwd"] == str(world.repo) and start["cwd"] == str(world.repo)
        assert start["payload"]["initialPrompt"] == "please work"
        assert start["env"]["COPILOT_PROJECT_DIR"] == str(world.repo)
        assert start["env"]["COPILOT_CLI"] == "1"
        [end] = world.hook_calls("sessionEnd")
        assert end["payload"]["reason"] == "complete" and end["payload"]["sessionId"] == run.session_id
        # a user message of its own, before the prompt
        assert run.user_texts(0)[0] == "PROBE-sessionStart-CONTEXT"

    @pytest.mark.parametrize("reply", ["plain", "json"])
    def test_plain_stdout_and_hook_specific_output_never_reach_the_model(
            self, world: CopilotWorld, reply: str) -> None:
        lifecycle_hooks(world, start_reply=reply)
        world.trust_folder()
        run = world.run("please work", [say("ok")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert world.hook_calls("sessionStart")
        assert not any("PROBE" in r.text() for r in run.requests)

    def test_it_also_runs_claude_codes_registration_with_snake_case_payloads(self, world: CopilotWorld) -> None:
        settings = world.repo / ".claude" / "settings.json"
        settings.parent.mkdir()
        settings.write_text(json.dumps({"hooks": {"SessionStart": [{"matcher": "", "hooks": [
            {"type": "command", "command": world.probe_hook("SessionStart", "context")}]}]}}))
        world.trust_folder()
        run = world.run("please work", [say("ok")])
        assert run.proc.returncode == 0, run.proc.stderr
        [start] = world.hook_calls("SessionStart")
        payload = start["payload"]
        assert (payload["hook_event_name"], payload["session_id"], payload["source"]) == (
            "SessionStart", run.session_id, "new")
        assert start["env"]["CLAUDE_PROJECT_DIR"] == str(world.repo) and "CLAUDECODE" not in start["env"]
        assert run.user_texts(0)[0] == "PROBE-SessionStart-CONTEXT"


# -- majordomus's own hooks in Copilot CLI (issue 19) ----------------------------------------
def with_majordomus(world: CopilotWorld, *agents: str) -> None:
    assert world.mj("init").returncode == 0
    args = [a for agent in agents for a in ("--agent", agent)]
    installed = world.mj("capture", "install", *args)
    assert installed.returncode == 0, installed.stderr
    if "copilot" in agents:
        assert "trust: Copilot CLI runs repository hooks only in a trusted folder" in installed.stderr
    world.git("add", "-A")
    world.git("commit", "-q", "-m", "majordomus init and capture install")
    world.trust_folder()


def decide(text: str) -> str:
    return f"{MAJORDOMUS} decision add '{text}' --why scripted"


class TestMajordomusInCopilot:
    def test_the_episode_opens_with_the_session_id_briefs_the_model_and_the_end_derives(
            self, world: CopilotWorld) -> None:
        with_majordomus(world, "copilot")
        text = "copilot e2e: the ledger stays local"
        run = world.run("record the decision", [shell(decide(text)), say("ALL DONE")])
        assert run.proc.returncode == 0, run.proc.stderr
        session = run.session_id
        ledger = world.ledger()
        (opened,) = [e for e in ledger if e["event"] == "session.opened"]
        assert (opened["episode"], opened["agent"], opened["source"]) == (session, "copilot", "startup")
        (decision,) = [e for e in ledger if e["event"] == "decision.recorded"]
        assert decision["session"] == session and decision["text"] == text
        assert run.user_texts(0)[0].startswith(f"# Majordomus briefing: episode {session} (startup)")
        closes = [e for e in ledger if e["event"] == "session.closed"]
        assert [(c["episode"], c["reason"], c["by"]) for c in closes] == [(session, "complete", "hook")]
        candidates = list((world.repo / ".ai/repo/knowledge/candidates").glob(f"{session}-*.md"))
        assert len(candidates) == 1 and text in candidates[0].read_text(encoding="utf-8")
        assert [e for e in ledger if e["event"] == "provider.event.failed"] == []

    def test_with_claude_codes_hooks_installed_too_the_episode_is_recorded_once(
            self, world: CopilotWorld) -> None:
        with_majordomus(world, "claude", "copilot")
        run = world.run("hello", [say("hi")])
        assert run.proc.returncode == 0, run.proc.stderr
        events = [(e["event"], e.get("agent")) for e in world.ledger()
                  if e["event"] in ("session.opened", "session.resumed", "session.closed")]
        assert events == [("session.opened", "copilot"), ("session.closed", None)]
        briefings = [t for t in run.user_texts(0) if t.startswith("# Majordomus briefing")]
        assert len(briefings) == 1

    def test_claude_codes_hooks_alone_record_copilot_as_copilot(self, world: CopilotWorld) -> None:
        with_majordomus(world, "claude")
        run = world.run("hello", [say("hi")])
        assert run.proc.returncode == 0, run.proc.stderr
        (opened,) = [e for e in world.ledger() if e["event"] == "session.opened"]
        assert (opened["episode"], opened["agent"]) == (run.session_id, "copilot")
        assert run.user_texts(0)[0].startswith(f"# Majordomus briefing: episode {run.session_id}")

    def test_auto_compaction_fires_pre_compact_which_checkpoints(self, world: CopilotWorld) -> None:
        """A small prompt budget and a turn reporting 200,000 tokens make Copilot CLI compact."""
        with_majordomus(world, "copilot")
        text = "copilot e2e: compaction keeps decisions"
        run = world.run("a long task", [shell(decide(text), tokens=200_000), say("ALL DONE")],
                        env={"COPILOT_PROVIDER_MAX_PROMPT_TOKENS": "40000"})
        assert run.proc.returncode == 0, run.proc.stderr
        events = [(e["event"], e.get("source") or e.get("note") or e.get("reason") or e.get("text"))
                  for e in world.ledger() if e["event"] in ("session.opened", "decision.recorded",
                                                           "checkpoint.recorded", "session.closed")]
        assert events == [("session.opened", "startup"), ("decision.recorded", text),
                          ("checkpoint.recorded", "compaction (auto)"), ("session.closed", "complete")]
