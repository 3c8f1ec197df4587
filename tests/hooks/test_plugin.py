"""The repository as a Claude Code marketplace (and a Codex one) holding the `majordomus` plugin:
its files agree with what `capture install` writes, and its hook script, run as the agent runs
it, records each boundary once even where the repository has its own registration too.
(`claude plugin validate` and the real clients: tests/e2e/test_plugins.py.)"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import MAJORDOMUS, PROJECT, Repo, make_repo
from majordomus import __version__
from majordomus.hooks.mcp_register import STDIO

PLUGIN = PROJECT / "plugins" / "majordomus"
SCRIPT = PLUGIN / "hooks" / "majordomus-plugin-hook"


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_marketplace_holds_the_plugin_at_the_packages_version() -> None:
    market = load(PROJECT / ".claude-plugin" / "marketplace.json")
    [entry] = market["plugins"]
    assert (entry["name"], entry["source"]) == ("majordomus", "./plugins/majordomus")
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == "majordomus"
    assert manifest["version"] == entry["version"] == __version__


def test_the_plugins_skill_and_server_are_the_ones_capture_install_writes() -> None:
    skill = PROJECT / "templates" / "skills" / "majordomus" / "SKILL.md"
    assert (PLUGIN / "skills" / "majordomus" / "SKILL.md").read_bytes() == skill.read_bytes()
    assert load(PLUGIN / ".mcp.json") == {"mcpServers": {"majordomus": STDIO}}


def test_the_plugins_hooks_run_its_script_for_each_boundary_with_the_end_budgets() -> None:
    hooks = load(PLUGIN / "hooks" / "hooks.json")["hooks"]
    expected = {"SessionStart": ("session-start", None), "SessionEnd": ("session-end", 30),
                "PreCompact": ("pre-compact", 30), "Stop": ("stop", None)}
    assert set(hooks) == set(expected)
    for event, (boundary, timeout) in expected.items():
        [group] = hooks[event]
        assert "matcher" not in group  # every source and trigger (and Copilot CLI refuses an empty one)
        [handler] = group["hooks"]
        assert handler["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}"/hooks/majordomus-plugin-hook claude {boundary}'
        assert handler.get("timeout") == timeout
    assert os.access(SCRIPT, os.X_OK)


def test_codexs_manifest_names_the_same_skill_and_server_and_its_own_hooks() -> None:
    from majordomus.hooks.install import REGISTRATIONS

    manifest = load(PLUGIN / ".codex-plugin" / "plugin.json")
    assert (manifest["name"], manifest["version"]) == ("majordomus", __version__)
    assert (manifest["skills"], manifest["mcpServers"], manifest["hooks"]) == (
        "./skills/", "./.mcp.json", "./hooks/codex.json")
    hooks = load(PLUGIN / "hooks" / "codex.json")["hooks"]
    codex = REGISTRATIONS["codex"]
    assert set(hooks) == set(codex.events.values())
    for boundary, event in codex.events.items():
        [group] = hooks[event]
        [handler] = group["hooks"]
        # Codex sets PLUGIN_ROOT (and CLAUDE_PLUGIN_ROOT) for a plugin's hooks; SessionEnd gets its 3 s
        assert handler["command"] == f'"$PLUGIN_ROOT"/hooks/majordomus-plugin-hook codex {boundary}'
        assert handler["timeout"] == codex.timeouts[boundary]


def run_plugin_hook(repo: Repo, boundary: str, body: dict[str, Any], path: str | None = None) -> subprocess.CompletedProcess[str]:
    """The plugin's hook as Claude Code runs it: through a shell, in the project, with the
    plugin's and the project's variables and the payload on stdin."""
    env = dict(os.environ)
    env["PATH"] = path if path is not None else f"{Path(MAJORDOMUS).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update({"CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(repo.root), "CLAUDE_PLUGIN_ROOT": str(PLUGIN)})
    env.pop("MAJORDOMUS_HOOK_VIA", None)
    command = f'"${{CLAUDE_PLUGIN_ROOT}}"/hooks/majordomus-plugin-hook claude {boundary}'
    return subprocess.run(["sh", "-c", command], cwd=repo.root, env=env, input=json.dumps(body),
                          capture_output=True, text=True)


def body(session: str, root: Path, **extra: str) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(root), "transcript_path": "/tmp/t.jsonl", **extra}


def test_alone_the_plugins_hook_opens_briefs_and_closes_the_episode(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", capture=False)
    start = run_plugin_hook(repo, "session-start", body("e-plugin", repo.root, source="startup"))
    assert start.returncode == 0, start.stderr
    assert start.stdout.startswith("# Majordomus briefing: episode e-plugin (startup)")
    end = run_plugin_hook(repo, "session-end", body("e-plugin", repo.root, reason="other"))
    assert end.returncode == 0, end.stderr
    assert [(e["episode"], e["agent"]) for e in repo.events("session.opened")] == [("e-plugin", "claude")]
    assert [e["episode"] for e in repo.events("session.closed")] == ["e-plugin"]
    assert repo.events("provider.event.failed") == []


def test_beside_the_repositorys_own_registration_each_boundary_is_recorded_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")  # capture install: .claude/settings.json runs our hooks too
    for boundary, extra in (("session-start", {"source": "startup"}), ("pre-compact", {"trigger": "auto"}),
                            ("session-end", {"reason": "other"})):
        payload = body("e-both", repo.root, **extra)
        plugin = run_plugin_hook(repo, boundary, payload)
        assert plugin.returncode == 0 and plugin.stdout == "", plugin.stderr
        own = repo.hook(boundary, payload, env={"CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(repo.root)})
        assert own.returncode == 0, own.stderr
        if boundary == "session-start":
            assert own.stdout.startswith(b"# Majordomus briefing: episode e-both")
    assert len(repo.events("session.opened")) == 1
    assert len(repo.events("session.closed")) == 1
    assert repo.events("provider.event.failed") == []


@pytest.mark.parametrize("where", ["path", "venv"])
def test_the_plugins_hook_finds_majordomus_on_path_or_in_the_projects_venv(tmp_path: Path, where: str) -> None:
    repo = make_repo(tmp_path / "repo", capture=False)
    if where == "venv":
        (repo.root / ".venv" / "bin").mkdir(parents=True)
        (repo.root / ".venv" / "bin" / "majordomus").symlink_to(MAJORDOMUS)
    start = run_plugin_hook(repo, "session-start", body("e-found", repo.root, source="startup"),
                            path=None if where == "path" else "/usr/bin:/bin")
    assert start.returncode == 0, start.stderr
    assert "episode e-found" in start.stdout


def test_without_majordomus_the_plugins_hook_says_so_and_never_blocks(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", capture=False)
    start = run_plugin_hook(repo, "session-start", body("e-none", repo.root), path="/usr/bin:/bin")
    assert start.returncode == 0 and start.stdout == ""
    assert "majordomus: not found on PATH or in .venv: claude session-start not recorded" in start.stderr


def test_server_json_describes_the_pypi_package_launched_by_uvx_as_the_registry_schema_asks() -> None:
    """The MCP registry's server.json (schema 2025-12-11, modelcontextprotocol/registry
    docs/reference/server-json/server.schema.json): name `namespace/name`, a description of at
    most 100 characters, and a package with exactly the schema's keys, pinned to our version."""
    import re

    server = load(PROJECT / "server.json")
    assert server["$schema"].endswith("/server.schema.json")
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", server["name"])
    assert 1 <= len(server["description"]) <= 100
    assert server["version"] == __version__
    [package] = server["packages"]
    allowed = {"registryType", "registryBaseUrl", "identifier", "version", "fileSha256", "runtimeHint",
               "transport", "runtimeArguments", "packageArguments", "environmentVariables"}
    assert set(package) <= allowed
    # `uvx majordomus mcp`: uvx runs the package's `majordomus` script with the argument `mcp`
    assert (package["registryType"], package["registryBaseUrl"], package["identifier"]) == (
        "pypi", "https://pypi.org", "majordomus")
    assert (package["version"], package["runtimeHint"], package["transport"]) == (__version__, "uvx", {"type": "stdio"})
    assert package["packageArguments"] == [{"type": "positional", "value": "mcp"}]
    # the registry proves the PyPI package is ours by this line in its description (the README)
    assert f"mcp-name: {server['name']}" in (PROJECT / "README.md").read_text(encoding="utf-8")
