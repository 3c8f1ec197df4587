"""Codex CLI 0.171.0 from the npm registry, run headless (`codex exec`) in a throwaway git
repository against a fake Responses API on 127.0.0.1.

`TestCodexFacts` pins the mechanics majordomus's `capture install --agent codex` will rely on:
the requests reach the fake, the scripted shell call runs, and project hooks in
`.codex/hooks.json` run only once the user trusted the project *and* each hook; what the hooks
receive, and what of their output reaches the model. The hooks here are a payload-recording
probe (`World.probe_hook`); to test majordomus's own hooks, register its commands instead
(or run `majordomus capture install --agent codex`) and keep `trust_project`/`trust_hooks`."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clients import CODEX, MAJORDOMUS, CodexWorld, codex_hook_hash, install
from fake_openai import COMPACTION_SUMMARY, SHELL_TOOL, say, shell


@pytest.fixture(scope="module")
def codex_exe() -> Path:
    return install(CODEX)


@pytest.fixture
def world(tmp_path: Path, codex_exe: Path) -> Iterator[CodexWorld]:
    w = CodexWorld(tmp_path, codex_exe)
    yield w
    w.close()
    assert w.fake.errors == []


def lifecycle_hooks(world: CodexWorld, start_reply: str = "plain") -> None:
    world.register_hooks({
        "SessionStart": [{"command": world.probe_hook("SessionStart", start_reply), "timeout": 30}],
        "PreCompact": [{"command": world.probe_hook("PreCompact"), "timeout": 30}],
        "PostCompact": [{"command": world.probe_hook("PostCompact"), "timeout": 30}],
        "Stop": [{"command": world.probe_hook("Stop"), "timeout": 30}],
        "SessionEnd": [{"command": world.probe_hook("SessionEnd")}],
    })


class TestCodexFacts:
    def test_requests_reach_the_fake_and_the_scripted_shell_call_runs(self, world: CodexWorld) -> None:
        assert world.mj("init").returncode == 0
        decide = f"{MAJORDOMUS} decision add 'codex e2e: keep the ledger local' --why scripted"
        run = world.run("record the decision", [shell(decide), say("ALL DONE")])

        assert run.proc.returncode == 0, run.proc.stderr
        assert len(run.requests) == 2
        first, second = (r.body for r in run.requests)
        assert run.requests[0].headers["authorization"] == "Bearer dummy"
        assert first["stream"] is True
        tool = next(t for t in first["tools"] if t.get("name") == SHELL_TOOL)
        assert "cmd" in tool["parameters"]["properties"]
        assert run.messages(0, "user")[-1] == "record the decision"
        # the tool's result goes back to the model in the next request
        output = next(i for i in second["input"] if i["type"] == "function_call_output")
        assert output["call_id"] == "call_1" and "exited with code 0" in output["output"]
        decisions = [e for e in world.ledger() if e["event"] == "decision.recorded"]
        assert [d["text"] for d in decisions] == ["codex e2e: keep the ledger local"]
        assert {"type": "agent_message", "text": "ALL DONE"} in [
            {k: e["item"][k] for k in ("type", "text")} for e in run.events
            if e["type"] == "item.completed" and e["item"]["type"] == "agent_message"]

    def test_an_untrusted_project_loads_no_hooks(self, world: CodexWorld) -> None:
        lifecycle_hooks(world)
        assert world.hooks_list()["hooks"] == []  # the project layer is not even read
        world.trust_hooks()  # nothing to trust while the project is not trusted
        run = world.run("hello", [say("hi")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert world.hook_calls() == []
        assert not any("PROBE" in text for text in run.messages(0, "developer"))

    def test_a_trusted_project_skips_untrusted_hooks_silently(self, world: CodexWorld) -> None:
        lifecycle_hooks(world)
        world.trust_project()
        listed = world.hooks_list()["hooks"]
        assert {h["eventName"] for h in listed} == {
            "sessionStart", "preCompact", "postCompact", "stop", "sessionEnd"}
        assert {h["trustStatus"] for h in listed} == {"untrusted"}
        run = world.run("hello", [say("hi")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert world.hook_calls() == []
        assert "untrusted" not in run.proc.stdout + run.proc.stderr

    def test_exec_trust_flag_trusts_the_project_only(self, world: CodexWorld) -> None:
        lifecycle_hooks(world)
        run = world.run("hello", [say("hi")], "--trust")
        assert run.proc.returncode == 0, run.proc.stderr
        config = (world.codex_home / "config.toml").read_text(encoding="utf-8")
        assert f'[projects."{world.repo}"]\ntrust_level = "trusted"' in config
        assert world.hook_calls() == []  # the hooks still wait for their own trust
        assert {h["trustStatus"] for h in world.hooks_list()["hooks"]} == {"untrusted"}

    def test_bypass_flag_runs_untrusted_hooks_in_a_trusted_project(self, world: CodexWorld) -> None:
        lifecycle_hooks(world)
        world.trust_project()
        run = world.run("hello", [say("hi")], "--dangerously-bypass-hook-trust")
        assert run.proc.returncode == 0, run.proc.stderr
        assert [c["event"] for c in world.hook_calls()] == ["SessionStart", "Stop", "SessionEnd"]
        assert any("--dangerously-bypass-hook-trust` is enabled" in e["item"].get("message", "")
                   for e in run.events if e["type"] == "item.completed")

    def test_trust_is_per_hook_and_lives_in_the_user_config(self, world: CodexWorld) -> None:
        lifecycle_hooks(world)
        world.trust_project()
        trusted = world.trust_hooks()
        assert {h["trustStatus"] for h in trusted} == {"trusted"}
        config = (world.codex_home / "config.toml").read_text(encoding="utf-8")
        assert f'[projects."{world.repo}"]\ntrust_level = "trusted"' in config
        hooks_json = world.repo / ".codex" / "hooks.json"
        for hook in trusted:
            event = hook["key"].split(":")[-3]
            assert hook["key"] == f"{hooks_json}:{event}:0:0"
            assert f'[hooks.state."{hook["key"]}"]\ntrusted_hash = "{hook["currentHash"]}"' in config
            # the hash is Codex's own, and we can compute it: no opaque state
            assert hook["currentHash"] == codex_hook_hash(event, hook["command"], hook["timeoutSec"])
        # editing a trusted hook un-trusts it
        lifecycle_hooks(world, start_reply="json")
        status = {h["key"].split(":")[-3]: h["trustStatus"] for h in world.hooks_list()["hooks"]}
        assert status.pop("session_start") == "modified"
        assert set(status.values()) == {"trusted"}

    def test_hook_timeouts_are_seconds_and_session_end_is_clamped(self, world: CodexWorld) -> None:
        world.register_hooks({
            "SessionStart": [{"command": world.probe_hook("SessionStart")}],
            "SessionEnd": [{"command": world.probe_hook("SessionEnd"), "timeout": 30}],
            "PreCompact": [{"command": world.probe_hook("PreCompact"), "timeout": 7}],
        })
        world.trust_project()
        listed = world.hooks_list()
        timeouts = {h["eventName"]: h["timeoutSec"] for h in listed["hooks"]}
        assert timeouts == {"sessionStart": 600, "sessionEnd": 3, "preCompact": 7}
        assert any("clamping SessionEnd hook timeout to 3s" in w for w in listed["warnings"])
        # without a timeout, SessionEnd gets the short default
        world.register_hooks({"SessionEnd": [{"command": world.probe_hook("SessionEnd")}]})
        [end] = world.hooks_list()["hooks"]
        assert end["timeoutSec"] == 1

    def test_trusted_hooks_receive_the_lifecycle_and_start_text_reaches_the_model(
            self, world: CodexWorld) -> None:
        lifecycle_hooks(world, start_reply="plain")
        world.trust_project()
        world.trust_hooks()
        run = world.run("please work", [shell("echo proof > proof.txt"), say("ALL DONE")])
        assert run.proc.returncode == 0, run.proc.stderr
        assert (world.repo / "proof.txt").read_text() == "proof\n"

        assert [c["event"] for c in world.hook_calls()] == ["SessionStart", "Stop", "SessionEnd"]
        [start] = world.hook_calls("SessionStart")
        payload = start["payload"]
        assert payload["session_id"] == run.thread_id
        assert payload["hook_event_name"] == "SessionStart"
        assert payload["source"] == "startup"
        assert payload["cwd"] == str(world.repo)
        assert payload["permission_mode"] == "bypassPermissions"  # exec never asks
        assert payload["model"] == "gpt-5.1-codex"
        transcript = Path(payload["transcript_path"])
        assert transcript.is_relative_to(world.codex_home / "sessions")
        assert transcript.name.endswith(f"{run.thread_id}.jsonl")
        [stop] = world.hook_calls("Stop")
        assert stop["payload"]["last_assistant_message"] == "ALL DONE"
        [end] = world.hook_calls("SessionEnd")
        assert end["payload"] == {"session_id": run.thread_id, "hook_event_name": "SessionEnd",
                                  "transcript_path": payload["transcript_path"],
                                  "cwd": str(world.repo), "reason": "other"}
        for call in world.hook_calls():
            assert call["cwd"] == str(world.repo)  # hooks run in the session directory
            assert call["session_id_in_env"] == []  # the id is only in the payload
            assert call["env"]["CODEX_HOME"] == str(world.codex_home)

        # plain stdout reaches the model: a developer message just before the user's prompt
        for n in range(len(run.requests)):
            assert "PROBE-SessionStart-PLAIN" in run.messages(n, "developer")
        items = run.requests[0].body["input"]
        at = next(i for i, item in enumerate(items) if item.get("role") == "developer"
                  and item["content"][0]["text"] == "PROBE-SessionStart-PLAIN")
        assert items[at + 1]["role"] == "user"
        assert items[at + 1]["content"][0]["text"] == "please work"

    def test_json_additional_context_reaches_the_model(self, world: CodexWorld) -> None:
        lifecycle_hooks(world, start_reply="json")
        world.trust_project()
        world.trust_hooks()
        run = world.run("please work", [say("ok")])
        assert run.proc.returncode == 0, run.proc.stderr
        developer = run.messages(0, "developer")
        assert "PROBE-SessionStart-JSON" in developer
        assert not any("hookSpecificOutput" in text for text in developer)

    def test_compaction_fires_pre_and_post_compact_then_start_again(self, world: CodexWorld) -> None:
        lifecycle_hooks(world, start_reply="plain")
        world.trust_project()
        world.trust_hooks()
        run = world.run("a long task", [shell("echo one > one.txt", tokens=200_000), say("ALL DONE")],
                        "-c", "model_auto_compact_token_limit=1000")
        assert run.proc.returncode == 0, run.proc.stderr
        compactions = [r for r in run.requests if world.fake.is_compaction(r)]
        assert len(compactions) == 1

        events = [(c["event"], c["payload"].get("source") or c["payload"].get("trigger"))
                  for c in world.hook_calls()]
        assert events == [("SessionStart", "startup"), ("PreCompact", "auto"),
                          ("PostCompact", "auto"), ("SessionStart", "compact"),
                          ("Stop", None), ("SessionEnd", None)]
        assert {c["payload"]["session_id"] for c in world.hook_calls()} == {run.thread_id}
        pre = world.hook_calls("PreCompact")[0]["payload"]
        assert pre["turn_id"] and pre["model"] == "gpt-5.1-codex"
        # after compaction the history is the summary, then the start text again
        after = run.requests[-1]
        assert not world.fake.is_compaction(after)
        texts = [json.dumps(item) for item in after.body["input"]]
        summary_at = next(i for i, t in enumerate(texts) if COMPACTION_SUMMARY in t)
        start_at = max(i for i, t in enumerate(texts) if "PROBE-SessionStart-PLAIN" in t)
        assert start_at > summary_at

    def test_resume_keeps_the_session_id_and_starts_with_source_resume(self, world: CodexWorld) -> None:
        lifecycle_hooks(world, start_reply="plain")
        world.trust_project()
        world.trust_hooks()
        first = world.run("first", [say("one")])
        again = world.run("second", [say("two")], resume=True)
        assert again.proc.returncode == 0, again.proc.stderr
        assert again.thread_id == first.thread_id
        starts = [(c["payload"]["source"], c["payload"]["session_id"])
                  for c in world.hook_calls("SessionStart")]
        assert starts == [("startup", first.thread_id), ("resume", first.thread_id)]
        assert [c["payload"]["reason"] for c in world.hook_calls("SessionEnd")] == ["other", "other"]
        # the resumed history keeps the first start text and gets a second one
        developer = again.messages(0, "developer")
        assert developer.count("PROBE-SessionStart-PLAIN") == 2


# -- majordomus's own hooks in Codex (issue 19) ----------------------------------------------
def with_majordomus(world: CodexWorld) -> list[dict[str, Any]]:
    """`majordomus init` and `capture install --agent codex` in the repository, then the two
    trust steps a user takes (the project, then each hook); returns Codex's list of our hooks."""
    assert world.mj("init").returncode == 0
    installed = world.mj("capture", "install", "--agent", "codex")
    assert installed.returncode == 0, installed.stderr
    assert "trust: Codex runs these hooks only once you trust them" in installed.stderr
    world.git("add", "-A")
    world.git("commit", "-q", "-m", "majordomus init and capture install --agent codex")
    world.trust_project()
    return world.trust_hooks()


def decide(text: str) -> str:
    """The scripted shell call that records a decision: majordomus by absolute path, since Codex's
    shell tool runs a login shell whose profile resets PATH."""
    return f"{MAJORDOMUS} decision add '{text}' --why scripted"


class TestMajordomusInCodex:
    def test_install_registers_three_hooks_codex_trusts_with_their_timeouts(self, world: CodexWorld) -> None:
        hooks = with_majordomus(world)
        assert {h["eventName"]: h["timeoutSec"] for h in hooks} == {
            "sessionStart": 30, "sessionEnd": 3, "preCompact": 30}
        assert {h["trustStatus"] for h in hooks} == {"trusted"}
        assert world.hooks_list()["warnings"] == []  # SessionEnd asks for the 3 s it can have

    def test_the_episode_opens_with_the_thread_id_briefs_the_model_and_the_end_derives(
            self, world: CodexWorld) -> None:
        with_majordomus(world)
        text = "codex e2e: the ledger stays local"
        run = world.run("record the decision", [shell(decide(text)), say("ALL DONE")])
        assert run.proc.returncode == 0, run.proc.stderr
        ledger = world.ledger()
        (opened,) = [e for e in ledger if e["event"] == "session.opened"]
        assert (opened["episode"], opened["agent"], opened["source"]) == (run.thread_id, "codex", "startup")
        (decision,) = [e for e in ledger if e["event"] == "decision.recorded"]
        assert decision["session"] == run.thread_id and decision["text"] == text

        # the briefing is a developer message before the prompt, in every request of the session
        header = f"# Majordomus briefing: episode {run.thread_id} (startup)"
        for n in range(len(run.requests)):
            assert any(m.startswith(header) for m in run.messages(n, "developer")), n
        assert not any("hookSpecificOutput" in m for m in run.messages(0, "developer"))

        # SessionEnd closed it within its 3 s: Codex kills a slow end hook, so the end is recorded
        # first and the derivation follows it (issue 28: the record and the ledger always agree)
        closes = [e for e in ledger if e["event"] == "session.closed"]
        assert [(c["episode"], c["reason"], c["by"]) for c in closes] == [(run.thread_id, "other", "hook")]
        derived = [e for e in ledger if e["event"] == "knowledge.derived"]
        assert derived and derived[-1]["episode"] == run.thread_id and derived[-1]["written"] == 1
        assert ledger.index(closes[0]) < ledger.index(derived[-1])
        candidates = list((world.repo / ".ai/repo/knowledge/candidates").glob(f"{run.thread_id}-*.md"))
        assert len(candidates) == 1 and text in candidates[0].read_text(encoding="utf-8")
        assert [e for e in ledger if e["event"] == "provider.event.failed"] == []

    def test_compaction_checkpoints_derives_and_briefs_again(self, world: CodexWorld) -> None:
        with_majordomus(world)
        text = "codex e2e: compaction keeps decisions"
        run = world.run("a long task", [shell(decide(text), tokens=200_000), say("ALL DONE")],
                        "-c", "model_auto_compact_token_limit=1000")
        assert run.proc.returncode == 0, run.proc.stderr
        assert len([r for r in run.requests if world.fake.is_compaction(r)]) == 1
        events = [(e["event"], e.get("source") or e.get("note") or e.get("reason"))
                  for e in world.ledger() if e["event"] in ("session.opened", "session.resumed",
                                                           "checkpoint.recorded", "session.closed")]
        assert events == [("session.opened", "startup"), ("checkpoint.recorded", "compaction (auto)"),
                          ("session.resumed", "compact"), ("session.closed", "other")]
        # after the summary, the compact briefing leads with the episode's own context
        after = run.requests[-1]
        texts = [json.dumps(item) for item in after.body["input"]]
        summary_at = next(i for i, t in enumerate(texts) if COMPACTION_SUMMARY in t)
        brief_at = max(i for i, t in enumerate(texts)
                       if f"Majordomus briefing: episode {run.thread_id} (compact)" in t)
        assert brief_at > summary_at
        assert text in texts[brief_at]
