"""OpenCode (npm `opencode-ai`) run headless (`opencode run`) in a throwaway repository after
`majordomus init` and `capture install --agent opencode`, against the fake Messages API on
127.0.0.1 (OpenCode's `anthropic` provider, its base URL pointed at the fake).

OpenCode has no hook file: the plugin `capture install` wrote (.opencode/plugins/majordomus.js)
opens the episode at the session's first model call and puts the briefing into the system prompt
(experimental.chat.system.transform), and closes it when the session goes idle. What the client
taught us: it takes its project location from $PWD, not from the directory it was started in,
and delivers plugin events only for that location; a person's shell sets PWD, a test must too."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import npm_client
from fake_anthropic import FakeAnthropic, Request, Step, text, tool_use
from harness import ThrowawayRepo, clean_env

PACKAGE, VERSION, BIN = "opencode-ai", "1.18.33", "opencode"  # `npm view opencode-ai version`
MODEL = "claude-sonnet-4-5"


def main_turn(request: Request) -> bool:
    """OpenCode's agent loop after a prompt: it offers its `bash` tool (its title request offers none)."""
    return request.is_message and "bash" in request.tool_names and not request.has_tool_result()


def after_tool(request: Request) -> bool:
    return request.is_message and "bash" in request.tool_names and request.has_tool_result()


@pytest.fixture(scope="module")
def opencode_exe() -> Path:
    return npm_client.install(PACKAGE, VERSION, BIN)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(log_path=tmp_path / "requests.jsonl", deadline_s=900, idle_s=300) as api:
        yield api
    assert api.errors == [], api.errors


@pytest.fixture
def repo(tmp_path: Path, fake: FakeAnthropic) -> ThrowawayRepo:
    home = tmp_path / "home"
    config = home / ".config" / "opencode"
    config.mkdir(parents=True)
    # the fake as the `anthropic` provider; no update check, no sharing, no models.dev download
    (config / "opencode.json").write_text(json.dumps({
        "$schema": "https://opencode.ai/config.json", "model": f"anthropic/{MODEL}",
        "small_model": f"anthropic/{MODEL}", "autoupdate": False, "share": "disabled",
        "provider": {"anthropic": {"options": {"baseURL": fake.base_url + "/v1", "apiKey": "dummy"}}},
    }), encoding="utf-8")
    root = tmp_path / "repo"
    root.mkdir()
    env = clean_env(home)
    env.update({"PWD": str(root), "OPENCODE_DISABLE_MODELS_FETCH": "1", "OPENCODE_DISABLE_AUTOUPDATE": "1"})
    repo = ThrowawayRepo(root, env)
    repo.git("init", "-q", "-b", "main")
    (root / "README.md").write_text("a project\n", encoding="utf-8")
    repo.commit_all("initial")
    repo.mj("init")
    installed = repo.mj("capture", "install", "--agent", "opencode")
    assert "wrote     .opencode/plugins/majordomus.js" in installed.stderr
    repo.commit_all("majordomus init and capture install --agent opencode")
    return repo


def opencode(exe: Path, repo: ThrowawayRepo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(exe), *args], cwd=repo.root, env=repo.env, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def test_opencode_connects_the_mcp_server_capture_install_registered(opencode_exe: Path, repo: ThrowawayRepo) -> None:
    proc = opencode(opencode_exe, repo, "mcp", "list")
    assert proc.returncode == 0, proc.stderr
    assert "✓ majordomus" in proc.stdout and "connected" in proc.stdout and "majordomus mcp" in proc.stdout


def test_the_plugin_opens_briefs_and_closes_the_episode(
        opencode_exe: Path, repo: ThrowawayRepo, fake: FakeAnthropic) -> None:
    decision = "OpenCode records through its plugin"
    fake.extend([Step(main_turn, tool_use("bash", {"command": f'majordomus decision add "{decision}"',
                                                   "description": "record"}), name="record"),
                 Step(after_tool, text("Recorded."), name="done")])
    proc = opencode(opencode_exe, repo, "run", "Record the decision.")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert fake.unused_steps() == []

    [opened] = repo.events("session.opened")
    sid = opened["episode"]
    assert sid.startswith("ses_") and opened["agent"] == "opencode" and opened["source"] == "startup"
    assert [(d["session"], d["text"]) for d in repo.events("decision.recorded")] == [(sid, decision)]
    # the briefing is in the system prompt of every model call of the session
    loop = [r for r in fake.messages_requests() if "bash" in r.tool_names]
    assert len(loop) == 2
    for request in loop:
        assert f"# Majordomus briefing: episode {sid} (startup)" in request.system_text()
    # and the MCP server's tools are offered, under OpenCode's names for them
    assert {"majordomus_record_decision", "majordomus_knowledge_base_search"} <= set(loop[0].tool_names)
    # the session going idle closed the episode and derived its candidate
    assert [(c["episode"], c["reason"]) for c in repo.events("session.closed")] == [(sid, "idle")]
    [candidate] = repo.candidates()
    assert decision in candidate.read_text(encoding="utf-8")
    assert repo.events("provider.event.failed") == []

    # the same session again (`--session`): a new span of the episode, briefed as a resume
    fake.extend([Step(main_turn, text("Nothing more."), name="again")])
    again = opencode(opencode_exe, repo, "run", "--session", sid, "Anything else?")
    assert again.returncode == 0, again.stdout + again.stderr
    last = [r for r in fake.messages_requests() if "bash" in r.tool_names][-1]
    assert f"# Majordomus briefing: episode {sid} (resume)" in last.system_text()
    assert [c["episode"] for c in repo.events("session.closed")] == [sid, sid]
    assert repo.events("provider.event.failed") == []
