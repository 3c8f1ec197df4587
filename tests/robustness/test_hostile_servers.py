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
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"decision_add",'
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
