"""`capture install --agent A` registers `majordomus mcp` in each agent's own MCP file, beside
what is there, once (tests/e2e/ shows each real client listing the tools)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from conftest import Repo, make_repo
from majordomus.hooks.mcp_register import FILES
from majordomus.store.agents import AGENTS

JSON_AGENTS = [a for a in AGENTS if a in FILES and not FILES[a].path.endswith(".toml")]


@pytest.fixture
def plain(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "repo", capture=False)


def servers(repo: Repo, agent: str) -> dict[str, object]:
    spec = FILES[agent]
    found = json.loads((repo.root / spec.path).read_text(encoding="utf-8"))[spec.key]
    assert isinstance(found, dict)
    return found


@pytest.mark.parametrize("agent", JSON_AGENTS)
def test_the_server_is_registered_beside_the_users_and_a_rerun_changes_no_byte(plain: Repo, agent: str) -> None:
    spec = FILES[agent]
    path = plain.root / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    theirs = {"theme": "kept", spec.key: {"other": {"command": "other-server", "args": ["--x"]}}}
    path.write_text(json.dumps(theirs), encoding="utf-8")

    first = plain.mj("capture", "install", "--agent", agent, check=True)
    found = servers(plain, agent)
    assert found["other"] == {"command": "other-server", "args": ["--x"]}
    assert found["majordomus"] == spec.entry
    assert json.loads(path.read_text(encoding="utf-8"))["theme"] == "kept"
    assert f"wrote     {spec.path}" in first.stderr

    before = path.read_bytes()
    again = plain.mj("capture", "install", "--agent", agent, check=True)
    assert path.read_bytes() == before
    assert f"unchanged {spec.path}" in again.stderr
    assert f"wrote     {spec.path}" not in again.stderr


@pytest.mark.parametrize("agent", JSON_AGENTS)
def test_a_users_own_majordomus_entry_is_left_as_it_is(plain: Repo, agent: str) -> None:
    spec = FILES[agent]
    path = plain.root / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    mine = {"command": "/opt/majordomus/bin/majordomus", "args": ["mcp"], "env": {"X": "1"}}
    path.write_text(json.dumps({spec.key: {"majordomus": mine}}), encoding="utf-8")
    plain.mj("capture", "install", "--agent", agent, check=True)
    assert servers(plain, agent)["majordomus"] == mine


def test_claude_codes_server_is_approved_once_in_its_settings(plain: Repo) -> None:
    plain.mj("capture", "install", check=True)
    plain.mj("capture", "install", check=True)
    settings = json.loads((plain.root / ".claude/settings.json").read_text(encoding="utf-8"))
    assert settings["enabledMcpjsonServers"] == ["majordomus"]
    assert servers(plain, "claude")["majordomus"] == {"command": "majordomus", "args": ["mcp"]}


def test_codex_gets_a_table_appended_and_the_rest_of_its_toml_kept_byte_for_byte(plain: Repo) -> None:
    path = plain.root / ".codex/config.toml"
    path.parent.mkdir()
    theirs = ('# my project settings\nmodel = "o3"   # aligned comment\n\n'
              '[mcp_servers.docs]\ncommand = "docs-server"\n')
    path.write_text(theirs, encoding="utf-8")

    plain.mj("capture", "install", "--agent", "codex", check=True)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(theirs)
    config = tomllib.loads(text)
    assert config["mcp_servers"] == {"docs": {"command": "docs-server"},
                                     "majordomus": {"command": "majordomus", "args": ["mcp"]}}
    before = path.read_bytes()
    again = plain.mj("capture", "install", "--agent", "codex", check=True)
    assert path.read_bytes() == before and "unchanged .codex/config.toml" in again.stderr


def test_codex_without_a_config_gets_one_holding_only_our_table(plain: Repo) -> None:
    plain.mj("capture", "install", "--agent", "codex", check=True)
    text = (plain.root / ".codex/config.toml").read_text(encoding="utf-8")
    assert text == '[mcp_servers.majordomus]\ncommand = "majordomus"\nargs = ["mcp"]\n'


@pytest.mark.parametrize(("rel", "body", "agent", "says"), [
    (".codex/config.toml", 'mcp_servers = { docs = { command = "d" } }\n', "codex", "cannot be added"),
    (".codex/config.toml", "model = \n", "codex", "is not TOML"),
    (".cursor/mcp.json", "{not json", "cursor", "is not JSON"),
    (".github/mcp.json", '{"mcpServers": []}', "copilot", '"mcpServers" is not an object'),
])
def test_a_file_it_cannot_merge_into_is_refused_in_one_line_and_left_alone(
        plain: Repo, rel: str, body: str, agent: str, says: str) -> None:
    path = plain.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    proc = plain.mj("capture", "install", "--agent", agent)
    assert proc.returncode == 4, proc.stderr
    [line] = [l for l in proc.stderr.splitlines() if rel in l]
    assert says in line and f"rerun `majordomus capture install --agent {agent}`" in line
    assert path.read_text(encoding="utf-8") == body
