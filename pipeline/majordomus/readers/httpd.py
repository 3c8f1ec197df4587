"""The HTTP projection: a read-only server on the standard library's `http.server`, bound to
127.0.0.1 unless told otherwise. It serves `/openapi.json` (generated) and one `GET` route per
declared capability, routed by `openapi.match`; every error is JSON in the document's `Error`
shape: 404 for an unknown id or route, 400 for a refused id or parameter, 405 for any method
that writes. Each request opens a fresh `Workspace`, so a policy edit is read on the next one."""
from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from majordomus.base.errors import FatalError
from majordomus.readers import openapi
from majordomus.readers.knowledge_base import call
from majordomus.store.workspace import Workspace


def respond(root: Path, method: str, target: str) -> tuple[int, Any]:
    """(status, JSON body) for one request: the whole server minus the sockets."""

    if method not in ("GET", "HEAD"):
        return 405, {"error": "method_not_allowed",
                     "message": f"{method} refused: this server is read-only; use GET"}
    url = urlsplit(target)
    if url.path == "/openapi.json":
        return 200, openapi.document()
    found = openapi.match(url.path)
    if found is None:
        routes = ", ".join(["/openapi.json", *openapi.document()["paths"]])
        return 404, {"error": "unknown_route", "message": f"no capability at {url.path!r}: the routes are {routes}"}
    cap, arguments = found
    for name, values in parse_qs(url.query, keep_blank_values=True).items():
        if len(values) != 1 or name in arguments:
            return 400, {"error": "refused", "message": f"query parameter {name!r} given more than once"}
        arguments[name] = values[0]
    try:
        return 200, call(Workspace(root), cap, arguments)
    except FatalError as exc:
        status, kind = openapi.STATUS_OF.get(exc.code, openapi.INTERNAL)
        return status, {"error": kind, "message": exc.message}
    except Exception as exc:  # noqa: BLE001 - a reader never takes the server down
        return 500, {"error": "internal", "message": f"{type(exc).__name__}: {exc}"}


class Handler(BaseHTTPRequestHandler):
    root: Path  # set on the subclass `serve` builds
    server_version = "majordomus"
    timeout = 30  # an idle connection is dropped, never held open for ever

    def _send(self, body: bool) -> None:
        status, data = respond(self.root, self.command, self.path)
        payload = (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        if status == 405:
            self.send_header("Allow", "GET, HEAD")
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        self._send(True)

    def do_HEAD(self) -> None:  # noqa: N802
        self._send(False)

    def do_POST(self) -> None:  # noqa: N802
        self._send(True)

    do_PUT = do_DELETE = do_PATCH = do_POST

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the standard signature
        sys.stderr.write(f"majordomus serve: {self.address_string()} {format % args}\n")


def serve(root: Path, host: str, port: int) -> int:
    """Serve until interrupted; the first stderr line names the bound address."""
    handler = type("BoundHandler", (Handler,), {"root": root})
    with ThreadingHTTPServer((host, port), handler) as httpd:
        sys.stderr.write(f"majordomus serve: listening on http://{host}:{httpd.server_port}/ "
                         "(GET /openapi.json for the routes; Ctrl-C stops)\n")
        if host not in ("127.0.0.1", "localhost", "::1"):
            sys.stderr.write(f"majordomus serve: bound to {host}, not 127.0.0.1: whoever reaches this "
                             "address can read the knowledge store\n")
        sys.stderr.flush()
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0
