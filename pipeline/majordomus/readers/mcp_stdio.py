"""The MCP projection: one tool per declared capability, served on stdio with the official MCP
Python SDK's low-level server (`mcp`, an optional dependency: `pip install 'majordomus[mcp]'`).

`tools()` is the tool list as plain JSON, built from the declarations without importing the SDK
(it is slow to import, and only `majordomus mcp` may pay for it). A tool's name is the
capability's name with `_` for `.` (Claude admits no dot in a tool name); its input schema is
generated from the declared parameters; its output schema is the declared result, wrapped as
`{"result": …}` when the result is not an object, because MCP structured content is an object.
A refused or unknown id, an unknown parameter or an unknown tool is a tool error (`isError`)
whose text says what was refused and the fix."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from majordomus import __version__
from majordomus.base.errors import OK, REFUSED, UNKNOWN, FatalError
from majordomus.readers.knowledge_base import CAPABILITIES, Capability, call
from majordomus.store.workspace import Workspace

SERVER_NAME = "majordomus"


def input_schema(cap: Capability) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": False,
            "properties": {p.name: {**p.schema, "description": p.summary} for p in cap.parameters},
            "required": [p.name for p in cap.parameters if p.required]}


def wraps(cap: Capability) -> bool:
    return cap.result.get("type") != "object"


def output_schema(cap: Capability) -> dict[str, Any]:
    if not wraps(cap):
        return cap.result
    return {"type": "object", "additionalProperties": False, "required": ["result"],
            "properties": {"result": cap.result}}


def tools() -> list[dict[str, Any]]:
    """The tool list, as `tools/list` answers it (camelCase keys, as on the wire)."""
    return [{"name": cap.flat_name, "title": cap.summary,
             "description": f"{cap.description} (capability {cap.name})",
             "inputSchema": input_schema(cap), "outputSchema": output_schema(cap)}
            for cap in CAPABILITIES]


def call_tool(root: Path, name: str, arguments: dict[str, Any] | None) -> tuple[bool, Any]:
    """(is_error, structured result or error text) for one tool call: the server minus the SDK."""

    cap = next((c for c in CAPABILITIES if c.flat_name == name), None)
    if cap is None:
        names = ", ".join(c.flat_name for c in CAPABILITIES)
        return True, f"unknown tool {name!r}: the tools are {names}"
    try:
        result = call(Workspace(root), cap, dict(arguments or {}))
    except FatalError as exc:
        kind = {UNKNOWN: "unknown id", REFUSED: "refused"}.get(exc.code, "error")
        return True, f"{kind}: {exc.message}"
    except Exception as exc:  # noqa: BLE001 - a reader never takes the server down
        return True, f"internal error: {type(exc).__name__}: {exc}"
    return False, {"result": result} if wraps(cap) else result


def serve(root: Path) -> int:
    """Serve the tools on stdin/stdout until the client closes the stream."""
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.server.stdio import stdio_server


    listed = [types.Tool(name=t["name"], title=t["title"], description=t["description"],
                         input_schema=t["inputSchema"], output_schema=t["outputSchema"]) for t in tools()]

    async def list_tools(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult(tools=listed)

    async def on_call(ctx: Any, params: Any) -> Any:
        failed, value = await anyio.to_thread.run_sync(call_tool, root, params.name, params.arguments)
        if failed:
            return types.CallToolResult(content=[types.TextContent(type="text", text=value)], is_error=True)
        text = json.dumps(value, indent=2, ensure_ascii=False)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    structured_content=value)

    server: Any = Server(SERVER_NAME, version=__version__, on_list_tools=list_tools, on_call_tool=on_call,
                         instructions="Read-only access to this repository's knowledge store: "
                                      "candidates awaiting review, one record, and the store's status.")

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    return OK
