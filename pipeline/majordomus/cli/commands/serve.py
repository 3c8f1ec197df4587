"""majordomus serve: the reader capabilities of `readers.knowledge_base` over read-only HTTP, with
the cockpit's pages."""
from __future__ import annotations

from majordomus.base.errors import USAGE, FatalError
from majordomus.cli.commands import Subparsers
from majordomus.cli.options import port as port_number
from majordomus.readers import httpd
from majordomus.store.workspace import open_workspace

NAMES = ("serve",)


def add_parsers(sub: Subparsers) -> None:
    s = sub.add_parser("serve", help="serve the knowledge readers over HTTP (read-only)",
                       description="A read-only HTTP server: GET /openapi.json and one route per reader "
                       "capability. Bound to 127.0.0.1 unless --host says otherwise.")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    s.add_argument("--port", type=port_number, default=8765, help="port (default 8765; 0 picks a free one)")
    s.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="answer requests whose Host header is NAME too (repeatable; localhost, "
                   "127.0.0.1, ::1 and --host are always answered, any other Host is refused: 421)")
    s.set_defaults(handler=lambda a: serve(a.host, a.port, tuple(a.allow_host)))


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
