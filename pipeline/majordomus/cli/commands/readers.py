"""majordomus mcp | serve | openapi: the reader capabilities of `readers.knowledge_base`, projected
to MCP on stdio (with the evidence writers), to a read-only HTTP server, and to its OpenAPI
document."""
from __future__ import annotations

from majordomus.base.errors import OK, USAGE, FatalError
from majordomus.base.output import emit_json
from majordomus.cli.commands import Subparsers
from majordomus.cli.options import port as port_number
from majordomus.readers import httpd, mcp_stdio
from majordomus.readers.openapi import document
from majordomus.store.workspace import open_workspace

NAMES = ("mcp", "serve", "openapi")


def add_parsers(sub: Subparsers) -> None:
    m = sub.add_parser("mcp", help="serve the knowledge readers and the evidence writers as MCP tools on stdio",
                       description="An MCP server on stdin/stdout: one tool per reader capability, and the "
                       "evidence writers (record a decision, ask or resolve a question, start or finish a task).")
    m.add_argument("--list", action="store_true", help="print the tool list as JSON and exit")
    m.set_defaults(handler=lambda a: mcp(a.list))
    s = sub.add_parser("serve", help="serve the knowledge readers over HTTP (read-only)",
                       description="A read-only HTTP server: GET /openapi.json and one route per reader "
                       "capability. Bound to 127.0.0.1 unless --host says otherwise.")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=port_number, default=8765, help="port (default 8765; 0 picks a free one)")
    s.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="answer requests whose Host header is NAME too (repeatable; localhost, "
                   "127.0.0.1, ::1 and --host are always answered, any other Host is refused: 421)")
    s.set_defaults(handler=lambda a: serve(a.host, a.port, tuple(a.allow_host)))
    o = sub.add_parser("openapi", help="print the OpenAPI 3.1 document of the readers",
                       description="The OpenAPI 3.1 document generated from the reader declarations, "
                       "as `majordomus serve` serves it at /openapi.json.")
    o.set_defaults(handler=lambda a: openapi())


def mcp(list_only: bool) -> int:
    """Serve the MCP tools on stdio (or print their list)."""

    if list_only:
        emit_json(mcp_stdio.tools())
        return OK
    return mcp_stdio.serve(open_workspace().root)


def serve(host: str, port: int, allow: tuple[str, ...] = ()) -> int:
    """Serve the readers over HTTP until interrupted."""

    if not 0 <= port <= 65535:
        raise FatalError(f"--port {port} is not a port: give 0-65535 (0 picks a free one)", USAGE)
    root = open_workspace().root
    try:
        return httpd.serve(root, host, port, allow)
    except OSError as exc:
        raise FatalError(f"cannot listen on {host}:{port}: {exc.strerror or exc}: "
                         "choose another --port (0 picks a free one)", USAGE) from None


def openapi() -> int:
    """Print the OpenAPI document."""

    emit_json(document())
    return OK
