"""Each real client lists the MCP server `capture install --agent A` registered in its own file,
and offers the model every majordomus tool (issue 30).

The client's own listing (`claude mcp list`, `codex mcp list --json`, `gemini mcp list`, `copilot
mcp list --json`) names the server; one headless run against the fake model API shows what the
model is offered: the tools of `majordomus mcp --list`, under the client's own names. Each
client starts a project's server only after the person's trust step, taken here the way the
client itself writes it."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from claude_driver import Claude
from clients import CODEX, COPILOT, GEMINI, MAJORDOMUS, CodexWorld, CopilotWorld, GeminiWorld, install
from fake_anthropic import Step, main_turn, text
from fake_gemini import say as gemini_say
from fake_openai import say
from harness import ThrowawayRepo


def tool_names() -> list[str]:
    proc = subprocess.run([MAJORDOMUS, "mcp", "--list"], capture_output=True, text=True, check=True)
    return [tool["name"] for tool in json.loads(proc.stdout)]


def installed(world: CodexWorld | GeminiWorld | CopilotWorld, agent: str) -> None:
    assert world.mj("init").returncode == 0
    proc = world.mj("capture", "install", "--agent", agent)
    assert proc.returncode == 0, proc.stderr


# -- Claude Code -------------------------------------------------------------------------------
def trust_claude_folder(home: Path, root: Path) -> None:
    """What accepting the folder-trust dialog keeps: projects.<root>.hasTrustDialogAccepted in
    ~/.claude.json (the client created the file on its first run)."""
    path = home / ".claude.json"
    data = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    data.setdefault("projects", {}).setdefault(str(root), {})["hasTrustDialogAccepted"] = True
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def test_claude_code_connects_the_server_and_offers_its_tools(
        claude: Claude, e2e_repo: ThrowawayRepo, client_home: Path) -> None:
    def listing() -> str:
        proc = subprocess.run([str(claude.executable), "mcp", "list"], cwd=e2e_repo.root, env=claude.env,
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        return proc.stdout

    assert "majordomus: majordomus mcp - ⏸ Pending approval" in listing()  # before the trust step
    trust_claude_folder(client_home, e2e_repo.root)
    assert "majordomus: majordomus mcp - ✔ Connected" in listing()

    claude.fake.extend([Step(main_turn, text("Nothing to do."), name="done")])
    run = claude.run("Say hello.")
    assert run.returncode == 0, run.describe()
    # 2.1.332 defers MCP tools: the first request names them in a list the model loads from with
    # its ToolSearch tool, rather than sending their schemas
    first = claude.fake.main_requests()[0].messages_text()
    listed = first.split("to load tool schemas before calling them:", 1)[1].split("\n\n", 1)[0].split()
    assert [n for n in listed if n.startswith("mcp__majordomus__")] == sorted(
        f"mcp__majordomus__{name}" for name in tool_names())


# -- Codex CLI ---------------------------------------------------------------------------------
@pytest.fixture
def codex(tmp_path: Path) -> Iterator[CodexWorld]:
    world = CodexWorld(tmp_path, install(CODEX))
    yield world
    world.close()
    assert world.fake.errors == []


def test_codex_lists_the_server_of_a_trusted_project_and_offers_its_tools(codex: CodexWorld) -> None:
    installed(codex, "codex")

    def listing() -> list[dict[str, object]]:
        proc = subprocess.run([str(codex.exe), "mcp", "list", "--json"], cwd=codex.repo, env=codex.env(),
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        return list(json.loads(proc.stdout))

    assert listing() == []  # an untrusted project's .codex/config.toml is not read
    codex.trust_project()
    [server] = listing()
    assert server["name"] == "majordomus" and server["enabled"] is True
    assert server["transport"] == {"type": "stdio", "command": "majordomus", "args": ["mcp"], "env": None,
                                   "env_vars": [], "cwd": None}

    run = codex.run("say hello", [say("hi")])
    assert run.proc.returncode == 0, run.proc.stderr
    offered = json.dumps(run.requests[0].body["tools"])
    missing = [name for name in tool_names() if name not in offered]
    assert missing == [], offered[:3000]


# -- Gemini CLI --------------------------------------------------------------------------------
@pytest.fixture
def gemini(tmp_path: Path) -> Iterator[GeminiWorld]:
    world = GeminiWorld(tmp_path, install(GEMINI))
    yield world
    world.close()


def test_gemini_connects_the_server_in_a_trusted_folder_and_offers_its_tools(gemini: GeminiWorld) -> None:
    installed(gemini, "gemini")

    def listing() -> str:
        proc = subprocess.run([str(gemini.exe), "mcp", "list"], cwd=gemini.repo, env=gemini.env(),
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        return proc.stdout + proc.stderr

    assert "majordomus: majordomus mcp (stdio) - Disabled" in listing()
    gemini.trust_folder()
    assert "majordomus: majordomus mcp (stdio) - Connected" in listing()

    run = gemini.run("say hello", [gemini_say("hi")])
    assert run.proc.returncode == 0, run.proc.stderr
    offered = json.dumps(run.model_requests[0].body.get("tools"))
    missing = [name for name in tool_names() if name not in offered]
    assert missing == [], offered[:3000]


# -- GitHub Copilot CLI ------------------------------------------------------------------------
@pytest.fixture
def copilot(tmp_path: Path) -> Iterator[CopilotWorld]:
    world = CopilotWorld(tmp_path, install(COPILOT))
    yield world
    world.close()
    assert world.fake.errors == []


def test_copilot_lists_the_workspace_server_and_offers_its_tools(copilot: CopilotWorld) -> None:
    installed(copilot, "copilot")

    def listing() -> dict[str, object]:
        proc = subprocess.run([str(copilot.exe), "mcp", "list", "--json"], cwd=copilot.repo,
                              env=copilot.env(), capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
        assert proc.returncode == 0, proc.stderr
        return dict(json.loads(proc.stdout).get("mcpServers", {}))

    assert "majordomus" not in listing()  # an untrusted folder's workspace servers are not read
    copilot.trust_folder()
    server = listing()["majordomus"]
    assert isinstance(server, dict)
    assert (server["command"], server["args"], server["source"]) == ("majordomus", ["mcp"], "workspace")
    assert server["sourcePath"] == str(copilot.repo / ".github" / "mcp.json")

    run = copilot.run("say hello", [say("hi")])
    assert run.proc.returncode == 0, run.proc.stderr
    offered = json.dumps(run.requests[0].body["tools"])
    missing = [name for name in tool_names() if name not in offered]
    assert missing == [], offered[:3000]
