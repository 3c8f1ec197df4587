"""The HTTP projection: a read-only server on the standard library's `http.server`, bound to
127.0.0.1 unless told otherwise. It serves `/openapi.json` (generated) and one `GET` route per
declared capability, routed by `openapi.match`; every answer that is not a 200 is JSON in the
document's `Error` shape, whatever the method and however malformed the request: 404 for an
unknown id or route, 400 for a refused id or parameter (and for a request http.server cannot
parse), 405 for any other method, 421 for a `Host` this server does not answer for. Each request
opens a fresh `Workspace`, so a policy edit is read on the next one.

A web page can reach a server on the fixed port through DNS rebinding (its own name resolving to
127.0.0.1): the browser then sends the page's name as `Host`. So only a loopback `Host`
(`localhost`, `127.0.0.0/8`, `::1`, with any port) or one the server was configured with
(`--host`, `--allow-host`) is answered.

`/` and `/cockpit/…` are the cockpit's HTML pages (`readers.cockpit`), generated from the same
declarations; they meet the same `Host` and method rules first, and answer their refusals as
pages.

A client has a deadline for its whole request head and the connections served at once are capped
(`readers.httplimits`): a request head trickled a byte at a time is answered 408, a connection over
the cap 503."""
from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from majordomus.base.errors import OK, FatalError
from majordomus.base.output import indented, line, say
from majordomus.readers import cockpit, openapi, pages
from majordomus.readers.httplimits import HEAD_SECONDS, HeadDeadline, Server
from majordomus.readers.answers import call
from majordomus.store.workspace import Workspace

WILDCARDS = ("0.0.0.0", "::", "")  # bind addresses that name no host a client would send


def host_name(header: str | None) -> str | None:
    """The host of a `Host` header without its port, lower-cased, without a trailing dot; None
    when there is no header or it is not a host."""
    if header is None:
        return None
    value = header.strip().lower()
    if value.startswith("["):  # [v6]:port
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not (rest.startswith(":") and rest[1:].isdigit())):
            return None
    else:
        name, colon, port = value.rpartition(":")
        if not colon or ":" in name:  # no port, or a bare v6 address
            name = value
        elif not port.isdigit():
            return None
    name = name.rstrip(".")
    return name or None


def admits(header: str | None, configured: Iterable[str] = ()) -> bool:
    """Whether a request with this `Host` header is answered: a loopback host, or a configured one."""
    name = host_name(header)
    if name is None:
        return False
    if name == "localhost" or name in {c.strip().lower().rstrip(".") for c in configured}:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refusal(method: str, host: str | None, configured: Iterable[str] = ()) -> tuple[int, dict[str, str]] | None:
    """The refusal every request meets first, JSON route or cockpit page: a `Host` this server does
    not answer for (421), a method that is not a read (405). None when the request may go on."""
    if not admits(host, configured):
        shown = "no Host header" if host is None else f"Host {line(host)[:100]!r}"
        return 421, {"error": "misdirected",
                     "message": f"{shown} refused: this server answers only for localhost, 127.0.0.1 "
                                "and ::1 (a web page must not read it through DNS rebinding); "
                                "`majordomus serve --allow-host NAME` admits another name"}
    if method not in ("GET", "HEAD"):
        return 405, {"error": "method_not_allowed",
                     "message": f"{method} refused: this server is read-only; use GET"}
    return None


def respond(root: Path, method: str, target: str, host: str | None = "127.0.0.1",
            configured: Iterable[str] = ()) -> tuple[int, Any]:
    """(status, JSON body) for one request: the whole server minus the sockets."""

    refused = refusal(method, host, configured)
    if refused is not None:
        return refused
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


# http.server's own refusals (a request line or header it cannot parse, a line too long, an
# HTTP version it does not speak), as error kinds of the document's `Error` shape
# a method is an HTTP token (RFC 9110 5.6.2); a request line whose first word is not one is
# malformed, answered as http.server answers a line it cannot parse
TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
PROTOCOL_KINDS = {HTTPStatus.METHOD_NOT_ALLOWED: "method_not_allowed",
                  HTTPStatus.NOT_IMPLEMENTED: "method_not_allowed", HTTPStatus.NOT_FOUND: "unknown_route"}


class Handler(HeadDeadline):
    root: Path  # set on the subclass `serve` builds
    configured: tuple[str, ...] = ()  # the hosts answered besides loopback
    server_version = "majordomus"
    timeout = 30  # an idle connection is dropped, never held open for ever
    def _answer(self, status: int, data: Any, body: bool, page: str | None = None) -> None:
        """Send JSON `data`, or the cockpit's HTML `page` with its security headers."""
        if page is not None:
            payload, kind = page.encode("utf-8"), pages.CONTENT_TYPE
        else:
            payload = (indented(data) + "\n").encode("utf-8")
            kind = "application/json; charset=utf-8"
        if self.request_version == "HTTP/0.9":  # http.server's guess for a line it cannot read:
            self.request_version = "HTTP/1.0"  # answer with a status line and headers all the same
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(payload)))
        if page is not None:
            for name, value in pages.HEADERS.items():
                self.send_header(name, value)
        if status == 405:
            self.send_header("Allow", "GET, HEAD")
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if body:
            self.wfile.write(payload)

    def _send(self) -> None:
        if TOKEN.fullmatch(self.command) is None:
            self.send_error(HTTPStatus.BAD_REQUEST, "Bad request method", "the method is not an HTTP token")
            return
        if self.command not in ("GET", "HEAD"):
            self.close_connection = True  # its body, if any, is never read: nothing may follow it
        host = self.headers.get("Host")
        if cockpit.owns(urlsplit(self.path).path):
            refused = refusal(self.command, host, self.configured)
            if refused is not None:
                status, data = refused
                self._answer(status, data, self.command != "HEAD", cockpit.error_page(status, data["message"]))
                return
            status, page = cockpit.page(self.root, self.path)
            self._answer(status, None, self.command != "HEAD", page)
            return
        status, data = respond(self.root, self.command, self.path, host, self.configured)
        self._answer(status, data, self.command != "HEAD")

    def __getattr__(self, name: str) -> Callable[[], None]:
        """Every method is answered (`do_OPTIONS`, `do_TRACE`, `do_FOO` ...): `respond` refuses
        what is not a read, in the `Error` shape, rather than http.server's HTML 501."""
        if name.startswith("do_"):
            return self._send
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals, in the `Error` shape too (never its HTML page)."""
        if self._late:
            code, message, explain = HTTPStatus.REQUEST_TIMEOUT, None, f"the request head took over {HEAD_SECONDS:g} s"
        try:
            status = HTTPStatus(code)
        except ValueError:
            status = HTTPStatus.BAD_REQUEST
        self.log_error("code %d, message %s", code, message)
        self.close_connection = True
        kind = PROTOCOL_KINDS.get(status, "internal" if code >= 500 else "refused")
        text = f"{message or status.phrase}" + (f": {explain}" if explain else "")
        data = {"error": kind, "message": f"{code} {line(text)}: send GET with a Host of localhost"}
        self._answer(code, data, self.command != "HEAD" and code >= 200 and code not in (204, 304))

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the standard signature
        """One line on stderr, its control characters escaped (the request line is the client's)."""
        say(line(f"majordomus serve: {self.address_string()} {format % args}"))


def serve(root: Path, host: str, port: int, allow: tuple[str, ...] = ()) -> int:
    """Serve until interrupted; the first stderr line names the bound address."""
    configured = tuple(h for h in (host, *allow) if h not in WILDCARDS)
    handler = type("BoundHandler", (Handler,), {"root": root, "configured": configured})
    with Server((host, port), handler) as httpd:
        say(f"majordomus serve: listening on http://{host}:{httpd.server_port}/ "
            "(the cockpit's pages at /, GET /openapi.json for the JSON routes; Ctrl-C stops)")
        if host not in ("127.0.0.1", "localhost", "::1"):
            say(f"majordomus serve: bound to {host}, not 127.0.0.1: whoever reaches this "
                "address can read the knowledge store")
        if configured:
            say(f"majordomus serve: answers a Host of localhost, 127.0.0.1, ::1 and {', '.join(configured)}")
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
    return OK
