"""majordomus mcp: the reader capabilities of `readers.knowledge_base` and the evidence writers,
as MCP tools on stdio."""
from __future__ import annotations

from majordomus.base.errors import OK
from majordomus.base.output import emit_json
from majordomus.cli.commands import Subparsers
from majordomus.readers import mcp_stdio
from majordomus.store.workspace import open_workspace

NAMES = ("mcp",)


def add_parsers(sub: Subparsers) -> None:
    m = sub.add_parser("mcp", help="serve the knowledge readers and the evidence writers as MCP tools on stdio",
                       description="An MCP server on stdin/stdout: one tool per reader capability, and the "
                       "evidence writers (record a decision, ask or resolve a question, start or finish a task).")
    m.add_argument("--list", action="store_true", help="print the tool list as JSON and exit")
    m.set_defaults(handler=lambda a: mcp(a.list))


def mcp(list_only: bool) -> int:
    """Serve the MCP tools on stdio (or print their list)."""

    if list_only:
        emit_json(mcp_stdio.tools())
        return OK
    return mcp_stdio.serve(open_workspace().root)
