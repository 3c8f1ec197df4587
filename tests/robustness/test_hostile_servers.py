"""The MCP server and the cockpit against one hostile message or request each (issue 28, "the
terminal review and the servers"): `majordomus mcp` over its real stdio and `majordomus serve` over
real sockets. One message must never end the server, every answer must be strict JSON (no `NaN`, no
lone surrogate), a record body must render in linear time and bounded depth, and a client that
trickles its request head must not hold a thread for ever."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import MAJORDOMUS, Repo, make_repo

TIMEOUT = 30


def strict(line: bytes) -> Any:
    """`line` as strict JSON: NaN, Infinity and a lone surrogate are refused, as any other parser would."""
    def refuse(name: str) -> Any:
        raise AssertionError(f"{name} in an answer: {line[:200]!r}")
    text = line.decode("utf-8")  # a lone surrogate written raw is not UTF-8: this raises
    value = json.loads(text, parse_constant=refuse)
    assert "\\ud8" not in text.lower() and "\\udc" not in text.lower(), text[:200]
    return value


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen[bytes]]:
    repo = make_repo(tmp_path_factory.mktemp("mcp") / "repo")
    proc = subprocess.Popen([MAJORDOMUS, "mcp"], cwd=repo.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(timeout=TIMEOUT)


def ask(proc: subprocess.Popen[bytes], raw: bytes) -> Any:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(raw + b"\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    assert line, f"the server ended on {raw[:80]!r} (exit {proc.poll()})"
    return strict(line)


def alive(proc: subprocess.Popen[bytes]) -> None:
    answer = ask(proc, b'{"jsonrpc":"2.0","id":7,"method":"ping"}')
    assert answer == {"jsonrpc": "2.0", "id": 7, "result": {}}


@pytest.mark.parametrize("raw", [
    b'{"jsonrpc":"2.0","id":1,"method":"ping","params":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    b"[" * 500 + b"]" * 500,
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
    b'{"jsonrpc":"2.0","id":1,"method":"\\udfff"}',
    b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1e999,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":-Infinity,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"knowledge_base_search",'
    b'"arguments":{"text":"\\ud800"}}}',
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"record_decision",'
    b'"arguments":{"text":' + b"[" * 200 + b"]" * 200 + b"}}}",
], ids=["nested-100000", "nested-500", "surrogate-id", "surrogate-method", "nan-id", "overflow-id",
        "infinity-id", "object-id", "surrogate-argument", "nested-argument"])
def test_one_message_never_ends_the_mcp_server(mcp: subprocess.Popen[bytes], raw: bytes) -> None:
    answer = ask(mcp, raw)
    assert answer["jsonrpc"] == "2.0" and "error" in answer, answer
    assert answer["error"]["code"] in (-32700, -32600, -32602), answer
    assert answer["id"] is None or isinstance(answer["id"], int)
    alive(mcp)


def test_a_well_formed_float_id_is_echoed_as_json(mcp: subprocess.Popen[bytes]) -> None:
    assert ask(mcp, b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}') == {"jsonrpc": "2.0", "id": 1.5, "result": {}}


# --- the cockpit -----------------------------------------------------------------------------
def _candidate(repo: Repo, rid: str, body: str) -> None:
    folder = repo.root / ".ai/repo/knowledge/candidates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{rid}.md").write_text(
        f'---\nid: "{rid}"\nkind: knowledge/v1\nclass: fact\nstatus: candidate\nepistemics: observed\n'
        f'title: "hostile body {rid}"\ndate: "2026-01-01"\nprovenance:\n  origin: extracted\n---\n{body}\n',
        encoding="utf-8")


@pytest.fixture(scope="module")
def cockpit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    repo = make_repo(tmp_path_factory.mktemp("cockpit") / "repo")
    _candidate(repo, "x-stars", "*a " * 30_000)  # 90 KB
    _candidate(repo, "x-quotes", ">" * 1_200 + " deep")
    _candidate(repo, "x-spaced", "> " * 1_200 + "deep")
    proc = subprocess.Popen([MAJORDOMUS, "serve", "--port", "0"], cwd=repo.root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        assert proc.stderr is not None
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", proc.stderr.readline().decode())
        assert found
        threading.Thread(target=lambda: proc.stderr.read() if proc.stderr else None, daemon=True).start()
        yield int(found.group(1))
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)


def get(port: int, path: str, timeout: float = TIMEOUT) -> tuple[int, bytes]:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.startswith(b"HTTP/"), data[:200]
    return int(data.split(b" ", 2)[1]), data.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize("rid", ["x-stars", "x-quotes", "x-spaced"])
def test_a_hostile_body_renders_fast_and_whole(cockpit: int, rid: str) -> None:
    started = time.monotonic()
    status, page = get(cockpit, f"/cockpit/knowledge_base/record/{rid}", timeout=10)
    assert status == 200, page[:300]
    assert time.monotonic() - started < 5  # the old renderer took over 15 s on the 90 KB body
    assert (b"deep" if rid != "x-stars" else b"*a *a *a") in page  # nothing dropped


def test_a_trickled_head_is_dropped_and_connections_are_capped(cockpit: int) -> None:
    """A hundred clients trickling their request head a byte at a time: those over the cap are
    answered 503 at once, the others 408 once the head's deadline passes; then a request is served."""
    from majordomus.readers.httplimits import HEAD_SECONDS, MAX_CONNECTIONS

    socks = []
    for _ in range(100):
        sock = socket.create_connection(("127.0.0.1", cockpit), timeout=TIMEOUT)
        sock.sendall(b"G")
        socks.append(sock)
    started = time.monotonic()
    answers: dict[int, bytes] = {}
    while len(answers) < len(socks) and time.monotonic() - started < HEAD_SECONDS + 10:
        for n, sock in enumerate(socks):
            if n in answers:
                continue
            sock.settimeout(0.01)
            try:
                answers[n] = sock.recv(65536) or b"(closed)"  # what the server said, before any reset
                continue
            except (TimeoutError, BlockingIOError):
                pass
            except OSError:
                answers[n] = b"(reset)"
                continue
            try:
                sock.sendall(b"E")  # one more byte: never a whole request line
            except OSError:
                answers[n] = b"(reset)"
        time.sleep(0.3)
    elapsed = time.monotonic() - started
    for sock in socks:
        sock.close()
    assert len(answers) == 100, f"{100 - len(answers)} trickling connections still held after {elapsed:.1f} s"
    busy = [a for a in answers.values() if a.startswith(b"HTTP/1.1 503")]
    assert len(busy) >= 100 - MAX_CONNECTIONS, sorted(set(a[:40] for a in answers.values()))
    timed_out = [a for a in answers.values() if a.startswith(b"HTTP/1.0 408") or a.startswith(b"HTTP/1.1 408")]
    assert timed_out or len(busy) == 100
    assert elapsed < HEAD_SECONDS + 5
    assert get(cockpit, "/cockpit/knowledge_base/status")[0] == 200
