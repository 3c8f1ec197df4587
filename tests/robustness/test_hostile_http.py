"""`majordomus serve` against a hostile web page and hostile clients, over raw sockets on
127.0.0.1: a `Host` it does not answer for (DNS rebinding), every method, requests http.server
cannot parse, and control characters in the request line that reach the server's log."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from conftest import MAJORDOMUS, make_repo

TIMEOUT = 10


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, list[bytes]]]:
    repo = make_repo(tmp_path_factory.mktemp("http") / "repo")
    repo.hook("session-start", {"session_id": "e1", "cwd": str(repo.root)})
    repo.mj("decision", "add", "the secret plan", check=True)
    repo.hook("session-end", {"session_id": "e1", "cwd": str(repo.root)})
    proc = subprocess.Popen([MAJORDOMUS, "serve", "--port", "0"], cwd=repo.root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    log: list[bytes] = []
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline().decode()
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", first)
        assert found, first
        reader = threading.Thread(target=lambda: log.extend(iter(proc.stderr.readline, b"")), daemon=True)
        reader.start()
        yield int(found.group(1)), log
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)


def exchange(port: int, raw: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send `raw`, read to the close; the status, the headers and the body."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    if not data.startswith(b"HTTP/"):  # no status line at all (http.server's HTTP/0.9 answer)
        return 0, {}, data
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    return status, headers, body


def request(method: str, path: str, host: str | None) -> bytes:
    head = f"{method} {path} HTTP/1.1\r\n" + (f"Host: {host}\r\n" if host is not None else "")
    return (head + "Connection: close\r\n\r\n").encode("latin-1")


def error_shape() -> dict[str, Any]:
    from majordomus.readers.openapi import ERROR_SCHEMA

    return ERROR_SCHEMA


FOREIGN_HOSTS = ["evil.example", "evil.example:{port}", "127.0.0.1.evil.example", "localhost.evil.example:{port}",
                 "10.0.0.1:{port}", "[2001:db8::1]:{port}", "", "local host", "localhost:port", None]
LOOPBACK_HOSTS = ["localhost", "localhost:{port}", "LOCALHOST:{port}", "127.0.0.1:{port}", "127.1.2.3",
                  "[::1]:{port}", "localhost.:{port}"]


def test_only_loopback_hosts_are_answered(server: tuple[int, list[bytes]]) -> None:
    port, _ = server
    for host in FOREIGN_HOSTS:
        shown = host.format(port=port) if host is not None else None
        for path in ("/knowledge_base/candidates", "/openapi.json", "/knowledge_base/status"):
            status, headers, body = exchange(port, request("GET", path, shown))
            assert status == 421, (shown, path, status, body[:200])
            assert headers["content-type"].startswith("application/json")
            data = json.loads(body)
            jsonschema.validate(data, error_shape())
            assert data["error"] == "misdirected" and b"secret plan" not in body
    for host in LOOPBACK_HOSTS:
        status, _, body = exchange(port, request("GET", "/knowledge_base/candidates", host.format(port=port)))
        assert status == 200 and "the secret plan" in json.loads(body)[0]["title"], (host, body[:200])


METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND",
           "FOO", "get", "M-SEARCH"]


def test_every_answer_has_the_error_shape_whatever_the_method(server: tuple[int, list[bytes]]) -> None:
    port, _ = server
    for method in METHODS:
        for path in ("/knowledge_base/nope", "/knowledge_base/record/..%2Fx", "/knowledge_base/candidates"):
            status, headers, body = exchange(port, request(method, path, f"127.0.0.1:{port}"))
            assert headers.get("content-type", "").startswith("application/json"), (method, path, status, body[:200])
            if method == "HEAD":
                assert body == b""
                continue
            if status == 200:
                assert method == "GET" and path.endswith("candidates")
                continue
            data = json.loads(body)
            jsonschema.validate(data, error_shape())
            if method != "GET":
                assert status == 405 and data["error"] == "method_not_allowed", (method, status, data)


MALFORMED = [
    b"GARBAGE\r\n\r\n",
    b"GET / HTTP/9.9\r\nHost: localhost\r\n\r\n",
    b"GET / HTTP/1.1 extra\r\nHost: localhost\r\n\r\n",
    b"GET /" + b"a" * 70_000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(120)) + b"\r\n",
    b"GET / HTTP/1.1\r\nHost: localhost\r\nX-Long: " + b"y" * 70_000 + b"\r\n\r\n",
    b"GET /\x1b]52;c;aGk=\x07\x1b[2J HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"\x1b[31mGET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
    b"\x1b[31mGET /knowledge_base/candidates HTTP/1.1\r\nHost: localhost\r\n\r\n",
]


def test_requests_http_server_cannot_parse_are_answered_in_the_error_shape(server: tuple[int, list[bytes]]) -> None:
    port, _ = server
    for raw in MALFORMED:
        status, headers, body = exchange(port, raw)
        assert status >= 400, (raw[:60], status)
        assert headers.get("content-type", "").startswith("application/json"), (raw[:60], status, body[:200])
        jsonschema.validate(json.loads(body), error_shape())


def test_the_log_escapes_the_request_line(server: tuple[int, list[bytes]]) -> None:
    """An OSC 52 sequence (write the clipboard) and a screen clear in the request line, a header
    and the path reach the log escaped: the log is read on a terminal."""
    port, log = server
    sent = [b"GET /\x1b]52;c;aGk=\x07\x1b[2J HTTP/1.1\r\nHost: localhost\r\n\r\n",
            b"GET /x%1b]52;c;aGk=%07 HTTP/1.1\r\nHost: localhost\r\n\r\n",
            b"\x1b[31mGET / HTTP/1.1\r\nHost: localhost\r\n\r\n",
            b"GET /knowledge_base/candidates HTTP/1.1\r\nHost: \x1b]0;owned\x07\r\n\r\n",
            b"GET /knowledge_base/candidates\r\n\x9b2J\r\n\r\n"]
    before = len(log)
    for raw in sent:
        exchange(port, raw)
    deadline = time.monotonic() + TIMEOUT
    while len(log) < before + len(sent) and time.monotonic() < deadline:
        time.sleep(0.05)
    written = b"".join(log[before:])
    assert written.count(b"\n") >= len(sent), written
    assert not re.search(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", written), written
    assert b"\\u001b]52" in written
