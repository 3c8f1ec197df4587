"""Gemini CLI 0.61.0 from the npm registry, run headless (`gemini --yolo -p`) in a throwaway git
repository against a fake Gemini API on 127.0.0.1 (GOOGLE_GEMINI_BASE_URL).

`TestGeminiFacts` pins the mechanics majordomus's `capture install --agent gemini` will rely
on: the requests reach the fake, the scripted shell call runs, project hooks in
`.gemini/settings.json` run only in a trusted folder, what they receive, and that only JSON
`hookSpecificOutput.additionalContext` reaches the model. The hooks here are a
payload-recording probe (`World.probe_hook`); to test majordomus's own hooks, register its
commands instead (or run `majordomus capture install --agent gemini`) and keep `trust_folder`."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from clients import GEMINI, MAJORDOMUS, GeminiWorld, install
from fake_gemini import SHELL_TOOL, say, shell


@pytest.fixture(scope="module")
def gemini_exe() -> Path:
    return install(GEMINI)


@pytest.fixture
def world(tmp_path: Path, gemini_exe: Path) -> Iterator[GeminiWorld]:
    w = GeminiWorld(tmp_path, gemini_exe)
    yield w
    w.close()
    assert w.fake.errors == []


HOOK_EVENTS = ("SessionStart", "PreCompress", "AfterAgent", "SessionEnd")


def lifecycle_hooks(world: GeminiWorld, start_reply: str = "json") -> None:
    world.register_hooks({
        event: [{"name": f"probe-{event}",
                 "command": world.probe_hook(event, start_reply if event == "SessionStart" else "none"),
                 "timeout": 30_000}]
        for event in HOOK_EVENTS})


class TestGeminiFacts:
    def test_requests_reach_the_fake_and_the_scripted_shell_call_runs(self, world: GeminiWorld) -> None:
        assert world.mj("init").returncode == 0
        world.trust_folder()
        decide = f"{MAJORDOMUS} decision add 'gemini e2e: keep the ledger local' --why scripted"
        run = world.run("record the decision", [shell(decide), say("ALL DONE")])

        assert run.proc.returncode == 0, run.proc.stderr
        assert run.output["response"] == "ALL DONE"
        assert len(run.model_requests) == 2
        for request in run.model_requests:
            assert request.path.startswith("/v1beta/models/")
            assert request.query == {"alt": ["sse"]}
            assert request.headers["x-goog-api-key"] == "dummy"
        first, second = (r.body for r in run.model_requests)
        names = [f["name"] for tool in first["tools"] for f in tool.get("functionDeclarations", [])]
        assert SHELL_TOOL in names
        assert run.user_texts(0)[-1] == "record the decision"
        # the tool's result goes back to the model in the next request
        responses = [part["functionResponse"] for content in second["contents"]
                     for part in content["parts"] if "functionResponse" in part]
        assert [r["name"] for r in responses] == [SHELL_TOOL]
        decisions = [e for e in world.ledger() if e["event"] == "decision.recorded"]
        assert [d["text"] for d in decisions] == ["gemini e2e: keep the ledger local"]
        # besides the model turns, only the router's one-shot classification is called
        side = {r.path.rsplit(":", 1)[1] for r in run.requests if r not in run.model_requests}
        assert side <= {"generateContent", "countTokens"}

    def test_an_untrusted_folder_exits_55_before_any_request(self, world: GeminiWorld) -> None:
        lifecycle_hooks(world)
        run = world.run("hello", [say("hi")])
        assert run.proc.returncode == 55
        assert "not running in a trusted directory" in run.proc.stderr
        assert "GEMINI_CLI_TRUST_WORKSPACE" in run.proc.stderr
        assert run.requests == []
        assert world.hook_calls() == []

    def test_skip_trust_runs_but_drops_the_project_hooks(self, world: GeminiWorld) -> None:
        lifecycle_hooks(world)
        run = world.run("hello", [say("hi")], "--skip-trust")
        assert run.proc.returncode == 0, run.proc.stderr
        assert len(run.model_requests) == 1
        assert world.hook_calls() == []

    def test_the_trust_variable_runs_the_project_hooks(self, world: GeminiWorld) -> None:
        lifecycle_hooks(world)
        run = world.run("hello", [say("hi")], env={"GEMINI_CLI_TRUST_WORKSPACE": "true"})
        assert run.proc.returncode == 0, run.proc.stderr
        assert [c["event"] for c in world.hook_calls("SessionStart")] == ["SessionStart"]
        assert not (world.gemini_home / "trustedFolders.json").exists()

    def test_trusted_folder_hooks_receive_the_lifecycle(self, world: GeminiWorld) -> None:
        lifecycle_hooks(world, start_reply="json")
        world.trust_folder()
        run = world.run("please work", [shell("echo proof > proof.txt"), say("ALL DONE")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert (world.repo / "proof.txt").read_text() == "proof\n"
        session = run.output["session_id"]

        # PreCompress fires before every model turn, though nothing is compressed
        turns = len(run.model_requests)
        assert [c["event"] for c in world.hook_calls()] == (
            ["SessionStart"] + ["PreCompress"] * turns + ["AfterAgent", "SessionEnd"])
        assert not any("state_snapshot" in r.text() for r in run.requests)  # no summary asked

        transcript = None
        for call in world.hook_calls():
            payload = call["payload"]
            assert payload["session_id"] == session
            assert payload["cwd"] == str(world.repo)
            assert payload["hook_event_name"] == call["event"]
            assert payload["timestamp"].endswith("Z")
            transcript = transcript or payload["transcript_path"]
            assert payload["transcript_path"] == transcript
            assert call["cwd"] == str(world.repo)
            env = call["env"]
            assert env["GEMINI_SESSION_ID"] == session
            assert env["GEMINI_PROJECT_DIR"] == env["GEMINI_CWD"] == str(world.repo)
            assert env["CLAUDE_PROJECT_DIR"] == str(world.repo)
        assert transcript is not None
        assert Path(transcript).is_relative_to(world.gemini_home / "tmp")
        start, *_ = world.hook_calls("SessionStart")
        assert start["payload"]["source"] == "startup"
        assert {c["payload"]["trigger"] for c in world.hook_calls("PreCompress")} == {"auto"}
        [after] = world.hook_calls("AfterAgent")
        assert after["payload"]["prompt_response"] == "ALL DONE"
        [end] = world.hook_calls("SessionEnd")
        assert end["payload"]["reason"] == "exit"

    def test_json_additional_context_reaches_the_model(self, world: GeminiWorld) -> None:
        lifecycle_hooks(world, start_reply="json")
        world.trust_folder()
        run = world.run("please work", [say("ok")])
        assert run.proc.returncode == 0, run.proc.stderr
        # a <hook_context> block before the prompt, in the same user turn
        assert run.user_texts(0)[-1] == (
            "<hook_context>PROBE-SessionStart-JSON</hook_context>\n\nplease work")
        [after] = world.hook_calls("AfterAgent")
        assert after["payload"]["prompt"].startswith("<hook_context>PROBE-SessionStart-JSON")

    def test_plain_stdout_goes_to_the_user_not_the_model(self, world: GeminiWorld) -> None:
        lifecycle_hooks(world, start_reply="plain")
        world.trust_folder()
        run = world.run("please work", [say("ok")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert not any("PROBE-SessionStart-PLAIN" in r.text() for r in run.requests)
        assert run.user_texts(0)[-1] == "please work"
        assert "PROBE-SessionStart-PLAIN" in run.proc.stderr

    def test_hook_timeouts_are_milliseconds(self, world: GeminiWorld) -> None:
        slow = "sleep 2 && " + world.probe_hook("SessionStart", "json")
        world.register_hooks({"SessionStart": [{"name": "slow", "command": slow, "timeout": 500}]})
        world.trust_folder()
        run = world.run("please work", [say("ok")])
        assert run.proc.returncode == 0, run.proc.stderr  # a failed hook never fails the run
        assert "Hook timed out after 500ms" in run.proc.stderr
        assert run.user_texts(0)[-1] == "please work"  # its context is lost
        assert world.hook_calls() == []

    def test_project_hooks_are_announced_once_and_remembered(self, world: GeminiWorld) -> None:
        lifecycle_hooks(world)
        world.trust_folder()
        first = world.run("one", [say("ok")])
        assert first.proc.returncode == 0, first.proc.stderr
        assert "project-level hooks have been detected" in first.proc.stderr
        for event in HOOK_EVENTS:
            assert f"probe-{event}" in first.proc.stderr
        remembered = json.loads((world.gemini_home / "trusted_hooks.json").read_text())
        assert sorted(remembered[str(world.repo)]) == sorted(
            f"probe-{e}:{world.probe_hook(e, 'json' if e == 'SessionStart' else 'none')}"
            for e in HOOK_EVENTS)
        second = world.run("two", [say("ok")])
        assert second.proc.returncode == 0, second.proc.stderr
        assert "project-level hooks have been detected" not in second.proc.stderr
        assert len(world.hook_calls("SessionStart")) == 2  # the notice never gated them

    def test_resume_latest_keeps_the_session_id(self, world: GeminiWorld) -> None:
        lifecycle_hooks(world, start_reply="json")
        world.trust_folder()
        first = world.run("first", [say("one")])
        again = world.run("second", [say("two")], "--resume", "latest")
        assert again.proc.returncode == 0, again.proc.stderr
        session = first.output["session_id"]
        assert again.output["session_id"] == session
        starts = [(c["payload"]["source"], c["payload"]["session_id"])
                  for c in world.hook_calls("SessionStart")]
        assert starts == [("startup", session), ("resume", session)]
        assert [c["payload"]["reason"] for c in world.hook_calls("SessionEnd")] == ["exit", "exit"]
        # the resumed history carries the first run's reply, but 0.61.0 drops the first user turn
        # (its prompt and its start text): only the new start text is in the history
        contents = again.model_requests[0].body["contents"]
        assert {"role": "model", "parts": [{"text": "one"}]} in contents
        texts = again.user_texts(0)
        assert not any(t.endswith("first") for t in texts)
        assert texts[-1] == "<hook_context>PROBE-SessionStart-JSON</hook_context>\n\nsecond"
        assert sum("<hook_context>" in t for t in texts) == 1


# -- majordomus's own hooks in Gemini CLI (issue 19) -----------------------------------------
def with_majordomus(world: GeminiWorld) -> None:
    """`majordomus init` and `capture install --agent gemini`, then the user's one trust step."""
    assert world.mj("init").returncode == 0
    installed = world.mj("capture", "install", "--agent", "gemini")
    assert installed.returncode == 0, installed.stderr
    assert "trust: Gemini CLI runs project hooks only in a trusted folder" in installed.stderr
    world.git("add", "-A")
    world.git("commit", "-q", "-m", "majordomus init and capture install --agent gemini")
    world.trust_folder()


def decide(text: str) -> str:
    return f"{MAJORDOMUS} decision add '{text}' --why scripted"


class TestMajordomusInGemini:
    def test_the_episode_opens_with_the_session_id_briefs_the_model_and_the_end_derives(
            self, world: GeminiWorld) -> None:
        with_majordomus(world)
        text = "gemini e2e: the ledger stays local"
        run = world.run("record the decision", [shell(decide(text)), say("ALL DONE")])
        assert run.proc.returncode == 0, run.proc.stderr
        session = run.output["session_id"]
        ledger = world.ledger()
        (opened,) = [e for e in ledger if e["event"] == "session.opened"]
        assert (opened["episode"], opened["agent"], opened["source"]) == (session, "gemini", "startup")
        (decision,) = [e for e in ledger if e["event"] == "decision.recorded"]
        assert decision["session"] == session

        # only JSON additionalContext reaches the model: a <hook_context> block before the prompt
        first = run.user_texts(0)[-1]
        assert first.startswith(f"<hook_context># Majordomus briefing: episode {session} (startup)")
        assert first.endswith("</hook_context>\n\nrecord the decision")
        assert "hookSpecificOutput" not in run.proc.stderr  # nothing of ours went to the user

        # PreCompress fired before each of the two model turns; only the turn after the decision
        # had anything to record
        assert len(run.model_requests) == 2
        checkpoints = [e for e in ledger if e["event"] == "checkpoint.recorded"]
        assert [c["note"] for c in checkpoints] == ["compaction (auto)"]
        assert ledger.index(checkpoints[0]) > ledger.index(decision)

        closes = [e for e in ledger if e["event"] == "session.closed"]
        assert [(c["episode"], c["reason"], c["by"]) for c in closes] == [(session, "exit", "hook")]
        derived = [e for e in ledger if e["event"] == "knowledge.derived" and e["episode"] == session]
        assert len(derived) == 2 and ledger.index(derived[-1]) < ledger.index(closes[0])
        candidates = list((world.repo / ".ai/repo/knowledge/candidates").glob(f"{session}-*.md"))
        assert len(candidates) == 1 and text in candidates[0].read_text(encoding="utf-8")
        assert [e for e in ledger if e["event"] == "provider.event.failed"] == []

    def test_a_run_with_nothing_to_record_records_no_checkpoint(self, world: GeminiWorld) -> None:
        with_majordomus(world)
        run = world.run("say hello", [say("hello")])
        assert run.proc.returncode == 0, run.proc.stderr
        events = [e["event"] for e in world.ledger()]
        assert "checkpoint.recorded" not in events
        assert events.count("session.opened") == 1 and events.count("session.closed") == 1
