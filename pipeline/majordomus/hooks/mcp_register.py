"""`capture install --agent A` registers the MCP server (`majordomus mcp`) in the agent's own file.

| agent    | file                   | where                              | seen with the real client               |
|----------|------------------------|------------------------------------|-----------------------------------------|
| claude   | .mcp.json              | mcpServers.majordomus              | `claude mcp list`: Connected             |
| codex    | .codex/config.toml     | [mcp_servers.majordomus]           | `codex mcp list` (trusted project only)  |
| gemini   | .gemini/settings.json  | mcpServers.majordomus              | `gemini mcp list` (trusted folder only)  |
| copilot  | .github/mcp.json       | mcpServers.majordomus              | `copilot mcp list` (trusted folder only) |
| cursor   | .cursor/mcp.json       | mcpServers.majordomus              | Cursor's docs (no client here)           |
| opencode | opencode.json          | mcp.majordomus (type local)        | `opencode mcp list`                      |

An entry named `majordomus` that is already there is the user's and stays as it is; everything
else in the file is kept, and a file that needs nothing is not rewritten. JSON files are written
back with two-space indents; the TOML file is appended to (our table at its end), never reformatted,
and the result is parsed again before it is written. Claude Code asks before it starts a server of
a repository's `.mcp.json`: the approval (`enabledMcpjsonServers`) goes into `.claude/settings.json`
with the hooks (hooks/install.py), and counts once the person has trusted the folder.
"""
from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from majordomus.base.errors import REFUSED, FatalError
from majordomus.base.fsio import atomic_write, read_text

NAME = "majordomus"
COMMAND = "majordomus"
ARGS = ("mcp",)
LIMIT = 1 << 20


class McpFile(NamedTuple):
    path: str  # relative to the repository
    key: str  # the object holding the servers (TOML: the table)
    entry: dict[str, Any]


STDIO = {"command": COMMAND, "args": list(ARGS)}
FILES: dict[str, McpFile] = {
    "claude": McpFile(".mcp.json", "mcpServers", STDIO),
    "codex": McpFile(".codex/config.toml", "mcp_servers", STDIO),
    "gemini": McpFile(".gemini/settings.json", "mcpServers", STDIO),
    "copilot": McpFile(".github/mcp.json", "mcpServers", STDIO),
    "cursor": McpFile(".cursor/mcp.json", "mcpServers", STDIO),
    "opencode": McpFile("opencode.json", "mcp", {"type": "local", "command": [COMMAND, *ARGS],
                                                 "enabled": True}),
}
TOML_TABLE = f'\n[mcp_servers.{NAME}]\ncommand = "{COMMAND}"\nargs = {json.dumps(list(ARGS))}\n'


def _refuse(rel: str, what: str, agent: str) -> FatalError:
    return FatalError(f"{rel}: {what}: fix it by hand, then rerun "
                      f"`majordomus capture install --agent {agent}`", REFUSED)


def _original(root: Path, rel: str, agent: str) -> str:
    path = root / rel
    if path.is_symlink():
        raise _refuse(rel, "it is a symbolic link, and capture install never writes through one", agent)
    if not path.exists():
        return ""
    try:
        return read_text(path, limit=LIMIT)
    except UnicodeDecodeError:
        raise _refuse(rel, "it is not UTF-8 text", agent) from None
    except (OSError, FatalError) as exc:
        raise _refuse(rel, f"it cannot be read ({exc})", agent) from None


def merge_json(spec: McpFile, settings: dict[str, Any], rel: str, agent: str) -> dict[str, Any]:
    """`settings` with our server under `spec.key`, unless one of that name is there already."""
    servers = settings.setdefault(spec.key, {})
    if not isinstance(servers, dict):
        raise _refuse(rel, f'"{spec.key}" is not an object', agent)
    servers.setdefault(NAME, dict(spec.entry))
    return settings


def merged_toml(text: str, rel: str, agent: str) -> str | None:
    """`text` with our table appended, or None when a server of our name is there already."""
    try:
        config = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _refuse(rel, f"it is not TOML ({exc})", agent) from None
    servers = config.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise _refuse(rel, '"mcp_servers" is not a table', agent)
    if NAME in servers:
        return None
    joined = text + ("" if text.endswith("\n") else "\n") + TOML_TABLE if text else TOML_TABLE.lstrip("\n")
    try:  # an inline `mcp_servers = {...}` cannot take a table after it
        tomllib.loads(joined)
    except tomllib.TOMLDecodeError:
        raise _refuse(rel, f"[mcp_servers.{NAME}] cannot be added after its mcp_servers", agent) from None
    return joined


def register(root: Path, agent: str) -> tuple[str, bool] | None:
    """Register our server for `agent` in `root`: (the file, whether it was written), or None
    for an agent without an MCP file."""
    spec = FILES.get(agent)
    if spec is None:
        return None
    original = _original(root, spec.path, agent)
    if spec.path.endswith(".toml"):
        joined = merged_toml(original, spec.path, agent)
        if joined is None:
            return spec.path, False
        atomic_write(root / spec.path, joined, root=root)
        return spec.path, True
    try:
        settings = json.loads(original) if original.strip() else {}
    except ValueError as exc:
        raise _refuse(spec.path, f"it is not JSON ({str(exc).splitlines()[0][:80]})", agent) from None
    if not isinstance(settings, dict):
        raise _refuse(spec.path, "it is not a JSON object", agent)
    before = json.dumps(settings, sort_keys=True)
    merged = merge_json(spec, settings, spec.path, agent)
    if original.strip() and json.dumps(merged, sort_keys=True) == before:
        return spec.path, False  # kept byte for byte
    atomic_write(root / spec.path, json.dumps(merged, indent=2, ensure_ascii=False) + "\n", root=root)
    return spec.path, True
