"""This repository as a Claude Code marketplace: the real client validates it, installs the
`majordomus` plugin from it into a throwaway HOME (`claude plugin marketplace add` + `claude
plugin install`), and a headless session fires the plugin's hooks against the fake Messages API:
the episode opens with the client's session id, the model reads the briefing, the end derives.
Beside the repository's own registration (`capture install`), each boundary is recorded once.
Codex CLI reads the same marketplace and the plugin's own Codex manifest: the same, against the
fake Responses API."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_driver import Claude
from clients import CODEX, MAJORDOMUS, CodexWorld, install
from fake_anthropic import FakeAnthropic, Step, after_tool, bash, prompt_contains, text
from fake_openai import say, shell
from harness import PROJECT, Audit, ThrowawayRepo, clean_env, make_repo

PLUGIN = PROJECT / "plugins" / "majordomus"


def claude_cli(claude_executable: Path, home: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = clean_env(home)
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    return subprocess.run([str(claude_executable), *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL)


def test_claude_plugin_validate_passes_on_the_marketplace_and_the_plugin(
        claude_executable: Path, client_home: Path) -> None:
    for target, strict in ((PROJECT, ()), (PLUGIN, ("--strict",))):
        proc = claude_cli(claude_executable, client_home, "plugin", "validate", *strict, str(target), cwd=PROJECT)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "✔ Validation passed" in proc.stdout
    provides = proc.stdout
    for event in ("SessionStart", "SessionEnd", "PreCompact", "Stop"):
        assert f"hooks: {event} command" in provides
    assert 'mcpServers: majordomus stdio majordomus ["mcp"]' in provides
    assert "skills: majordomus:majordomus" in provides


def install_plugin(claude_executable: Path, home: Path, cwd: Path) -> None:
    """What a person types: add this repository as a marketplace, install its plugin."""
    added = claude_cli(claude_executable, home, "plugin", "marketplace", "add", str(PROJECT), cwd=cwd)
    assert added.returncode == 0 and "Successfully added marketplace: majordomus" in added.stdout, added
    done = claude_cli(claude_executable, home, "plugin", "install", "majordomus@majordomus", cwd=cwd)
    assert done.returncode == 0 and "Successfully installed plugin: majordomus@majordomus" in done.stdout, done


def bare_repo(root: Path, env: dict[str, str]) -> ThrowawayRepo:
    """A repository after `majordomus init` only: no hooks of its own."""
    root.mkdir(parents=True)
    repo = ThrowawayRepo(root, env)
    repo.git("init", "-q", "-b", "main")
    (root / "README.md").write_text("a project\n", encoding="utf-8")
    repo.commit_all("initial")
    repo.mj("init")
    repo.commit_all("majordomus init")
    return repo


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeAnthropic]:
    with FakeAnthropic(log_path=tmp_path / "requests.jsonl", deadline_s=900, idle_s=300) as api:
        yield api
    assert api.errors == [], api.errors


def client(claude_executable: Path, repo: ThrowawayRepo, home: Path, fake: FakeAnthropic, tmp_path: Path) -> Claude:
    audit = Audit(tmp_path / "audit.jsonl", [home / ".claude", repo.root / ".ai/repo/knowledge/candidates"])
    return Claude(claude_executable, repo, home, fake, audit, tmp_path)


def record_and_finish(claude: Claude, decision: str) -> None:
    claude.fake.extend([
        Step(prompt_contains("plugin"), name="record", reply=bash(f'majordomus decision add "{decision}"')),
        Step(after_tool, text("Recorded."), name="done"),
    ])


def test_the_installed_plugin_opens_briefs_and_closes_the_episode(
        claude_executable: Path, client_home: Path, fake: FakeAnthropic, tmp_path: Path) -> None:
    repo = bare_repo(tmp_path / "repo", clean_env(client_home))
    install_plugin(claude_executable, client_home, repo.root)
    claude = client(claude_executable, repo, client_home, fake, tmp_path)
    record_and_finish(claude, "The plugin records the boundaries")

    run = claude.run("Record the plugin decision.")
    assert run.returncode == 0 and run.result.get("is_error") is False, run.describe()
    sid = run.session_id
    ours = [(h.event, h.status) for h in run.hooks if "majordomus-plugin-hook" in h.command]
    assert ("SessionStart", 0) in ours and ("SessionEnd", 0) in ours, run.hooks
    assert [(o["episode"], o["agent"]) for o in repo.events("session.opened")] == [(sid, "claude")]
    assert [d["text"] for d in repo.events("decision.recorded", sid)] == ["The plugin records the boundaries"]
    first = fake.main_requests()[0].messages_text()
    assert f"# Majordomus briefing: episode {sid} (startup)" in first
    assert "majordomus:majordomus" in first  # the plugin's skill is offered by its name
    assert "mcp__plugin_majordomus_majordomus__record_decision" in first  # and its MCP server's tools
    assert [c["episode"] for c in repo.events("session.closed")] == [sid]
    [candidate] = repo.candidates()
    assert "The plugin records the boundaries" in candidate.read_text(encoding="utf-8")
    assert repo.events("provider.event.failed") == []


def test_beside_capture_install_each_boundary_is_recorded_once(
        claude_executable: Path, client_home: Path, fake: FakeAnthropic, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", clean_env(client_home))  # capture install, committed
    install_plugin(claude_executable, client_home, repo.root)
    claude = client(claude_executable, repo, client_home, fake, tmp_path)
    record_and_finish(claude, "One record per boundary")

    run = claude.run("Record the plugin decision.")
    assert run.returncode == 0, run.describe()
    sid = run.session_id
    starts = sorted(h.command for h in run.hooks if h.event == "SessionStart")
    assert len(starts) == 2 and any("majordomus-plugin-hook" in c for c in starts), starts  # both ran
    assert [o["episode"] for o in repo.events("session.opened")] == [sid]
    assert [c["episode"] for c in repo.events("session.closed")] == [sid]
    first = fake.main_requests()[0].messages_text()
    assert first.count(f"# Majordomus briefing: episode {sid} (startup)") == 1
    # the plugin's server duplicates the repository's .mcp.json one: the client offers the tools once
    assert "mcp__majordomus__record_decision" in first and "mcp__plugin_majordomus" not in first
    assert repo.events("provider.event.failed") == []


# -- Codex CLI: the same marketplace (Codex reads .claude-plugin/marketplace.json) and plugin
# (its own manifest, .codex-plugin/plugin.json: hooks/codex.json, the skill, the MCP server) ------
@pytest.fixture
def codex(tmp_path: Path) -> Iterator[CodexWorld]:
    world = CodexWorld(tmp_path, install(CODEX))
    config = world.codex_home / "config.toml"
    config.write_text(config.read_text(encoding="utf-8").replace("plugins = false", "plugins = true"),
                      encoding="utf-8")
    yield world
    world.close()
    assert world.fake.errors == []


def codex_cli(world: CodexWorld, *args: str) -> str:
    proc = subprocess.run([str(world.exe), *args], cwd=world.repo, env=world.env(), capture_output=True,
                          text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def with_codex_plugin(world: CodexWorld) -> list[dict[str, object]]:
    """`codex plugin marketplace add` + `codex plugin add`, then the trust a person gives the
    project and each hook in /hooks; returns Codex's list of the plugin's hooks."""
    assert "Added marketplace `majordomus`" in codex_cli(world, "plugin", "marketplace", "add", str(PROJECT))
    assert "Added plugin `majordomus`" in codex_cli(world, "plugin", "add", "majordomus@majordomus")
    world.trust_project()
    return [h for h in world.trust_hooks() if h.get("source") == "plugin"]


def test_codex_runs_the_plugins_hooks_and_offers_its_tools(codex: CodexWorld) -> None:
    assert codex.mj("init").returncode == 0
    hooks = with_codex_plugin(codex)
    assert {(h["eventName"], h["timeoutSec"], h["trustStatus"]) for h in hooks} == {
        ("sessionStart", 30, "trusted"), ("sessionEnd", 3, "trusted"), ("preCompact", 30, "trusted")}
    assert "majordomus  majordomus  mcp" in codex_cli(codex, "mcp", "list")

    decision = "codex plugin: one install brings hooks, skill and tools"
    run = codex.run("record it", [shell(f"{MAJORDOMUS} decision add '{decision}' --why scripted"), say("DONE")])
    assert run.proc.returncode == 0, run.proc.stderr
    ledger = codex.ledger()
    [opened] = [e for e in ledger if e["event"] == "session.opened"]
    assert (opened["episode"], opened["agent"]) == (run.thread_id, "codex")
    header = f"# Majordomus briefing: episode {run.thread_id} (startup)"
    assert any(m.startswith(header) for m in run.messages(0, "developer"))
    tools = json.dumps(run.requests[0].body["tools"])
    assert "record_decision" in tools and "knowledge_base_search" in tools
    assert [e["episode"] for e in ledger if e["event"] == "session.closed"] == [run.thread_id]
    candidates = list((codex.repo / ".ai/repo/knowledge/candidates").glob(f"{run.thread_id}-*.md"))
    assert len(candidates) == 1 and decision in candidates[0].read_text(encoding="utf-8")
    assert [e for e in ledger if e["event"] == "provider.event.failed"] == []


def test_codex_with_the_plugin_and_capture_install_records_each_boundary_once(codex: CodexWorld) -> None:
    assert codex.mj("init").returncode == 0
    assert codex.mj("capture", "install", "--agent", "codex").returncode == 0
    hooks = with_codex_plugin(codex)
    assert len(hooks) == 3 and len(codex.hooks_list()["hooks"]) == 6  # both sets are listed, and trusted
    run = codex.run("hello", [say("hi")])
    assert run.proc.returncode == 0, run.proc.stderr
    ledger = codex.ledger()
    assert [e["episode"] for e in ledger if e["event"] == "session.opened"] == [run.thread_id]
    assert [e["episode"] for e in ledger if e["event"] == "session.closed"] == [run.thread_id]
    briefings = [m for m in run.messages(0, "developer") if m.startswith("# Majordomus briefing")]
    assert len(briefings) == 1
    assert [e for e in ledger if e["event"] == "provider.event.failed"] == []
