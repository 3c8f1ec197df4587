"""The MCP projection: the reader capabilities and the evidence writers as tools, served on stdio.

The server is a small JSON-RPC 2.0 loop of its own over newline-delimited JSON (the MCP stdio
transport): `initialize` (protocol revisions 2024-11-05 to 2025-11-25), `ping`, `tools/list`,
`tools/call`; notifications are read and need no answer. It imports nothing the first answer does
not need, so `initialize` then `tools/list` come back in a fraction of the quarter second the
official SDK took only to import; the tests drive it with that SDK's real client, which checks
every answer (structured results against the tools' output schemas included).

`tools()` is the tool list as plain JSON, built from the declarations. A reader's name is the
capability's with `_` for `.` (Claude admits no dot in a tool name); its input schema is
generated from the declared parameters; its output schema is the declared result, wrapped as
`{"result": …}` when the result is not an object, because MCP structured content is an object.
Readers are annotated read-only, writers (`readers/evidence_tools.py`) as neither read-only nor
destructive. A refused or unknown id, an unknown parameter or an unknown tool is a tool error
(`isError`) whose text says what was refused and the fix."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

from majordomus import __version__
from majordomus.base.errors import OK, REFUSED, UNKNOWN, FatalError
from majordomus.base.lean import TYPE_CHECKING, rows_twice
from majordomus.base.output import indented
from majordomus.base.resources import data_file

if TYPE_CHECKING:  # `typing` is not imported on a reader's path (base/lean.py)
    from typing import IO, Any

    from majordomus.readers.knowledge_base import Capability

SERVER_NAME = "majordomus"
PROTOCOLS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")  # newest first
MAX_MESSAGE = 1 << 20  # one JSON-RPC message, at most
MAX_DEPTH = 64  # arrays and objects nested in one message, at most (a tool's arguments need a few)
READS = {"readOnlyHint": True, "openWorldHint": False}
INSTRUCTIONS = ("This repository's knowledge store and its evidence ledger. Readers: the candidates awaiting "
                "review, one record, the store's status, a search of titles and bodies. Writers: record a "
                "decision, ask or resolve a question, start or finish a task; what they record becomes a "
                "candidate at the episode's end. Promotion and rejection stay a person's acts on the command line.")
# JSON-RPC error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603


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
    """The tool list generated from the declarations, as `tools/list` answers it (camelCase keys, as
    on the wire): what `majordomus mcp --list` prints and `docs/mcp-tools.json` holds."""
    from majordomus.readers import evidence_tools
    from majordomus.readers.knowledge_base import CAPABILITIES

    return [{"name": cap.flat_name, "title": cap.summary,
             "description": f"{cap.description} (capability {cap.name})",
             "inputSchema": input_schema(cap), "outputSchema": output_schema(cap), "annotations": dict(READS)}
            for cap in CAPABILITIES] + [tool.listing() for tool in evidence_tools.TOOLS]


_LISTED: list[dict[str, Any]] = []


def listed() -> list[dict[str, Any]]:
    """The tool list the server answers `tools/list` with: the published copy (`docs/mcp-tools.json`,
    shipped in the wheel), one file read, so that the first answers import none of the readers and
    writers nor what they import (a test keeps the copy equal to `tools()`); `tools()` itself when
    the copy is missing or unreadable."""
    if not _LISTED:
        try:
            found = json.loads(data_file("mcp-tools").read_bytes())
        except (OSError, ValueError):
            found = None
        if not (isinstance(found, list) and found and all(isinstance(t, dict) and "name" in t for t in found)):
            found = tools()
        _LISTED.extend(found)
    return _LISTED


def call_tool(root: Path, name: str, arguments: dict[str, Any] | None) -> tuple[bool, Any]:
    """(is_error, structured result or error text) for one tool call. A reader imports what answers
    it when it is first called (`readers/answers.py`), a writer what writes (`evidence_tools`):
    nothing of either is imported to start or to list the tools."""
    from majordomus.readers.knowledge_base import CAPABILITIES

    cap = next((c for c in CAPABILITIES if c.flat_name == name), None)
    try:
        from majordomus.store.workspace import Workspace

        ws = Workspace(root)
        if cap is None:
            from majordomus.readers import evidence_tools

            writer = evidence_tools.find(name)
            if writer is None:
                return True, f"unknown tool {name!r}: the tools are {', '.join(t['name'] for t in tools())}"
            return False, evidence_tools.call(ws, writer, dict(arguments or {}))
        if cap.verb == "candidates" and not arguments:  # the review queue's line as kept (`answers.encoded`)
            from majordomus.readers.answers import encoded

            result = encoded(ws, "queue.mcp", _both if wraps(cap) else _bare, 2)
            if type(result) is bytes:
                return False, result
        else:
            from majordomus.readers.answers import call

            result = call(ws, cap, dict(arguments or {}))
    except FatalError as exc:
        kind = {UNKNOWN: "unknown id", REFUSED: "refused"}.get(exc.code, "error")
        return True, f"{kind}: {exc.message}"
    except Exception as exc:  # noqa: BLE001 - a tool never takes the server down
        return True, f"internal error: {type(exc).__name__}: {exc}"
    return False, {"result": result} if wraps(cap) else result


def _both(value: Any) -> bytes | None:
    """What `_called` writes of the answer `{"result": value}` between its head and its end, when
    `lean.rows_twice` encodes it; None when the answer is written another way."""
    return _bare({"result": value})


def _bare(value: Any) -> bytes | None:
    try:
        both = rows_twice(value)
    except ValueError:  # `_called` says why
        return None
    return None if both is None else b"".join((*both[1], _MIDDLE, *both[0]))


_MIDDLE = b'}],"structuredContent":'  # between a tool's answer as text and as structured content


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _result(msg_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _called(msg_id: Any, value: Any) -> dict[str, Any] | tuple[bytes | memoryview, ...]:
    """A tool's answer: its value as structured content and as indented text (the MCP specification
    asks a tool that returns structured content to return the serialized JSON in a text block as
    well). Rows (the review queue: 4 MB of text at 20,000 records) come as the line `encode` would
    write, in pieces: the value encoded once for both (`lean.rows_twice`), or as `_both` wrote it
    (bytes: `answers.encoded`); any other value as the answer to encode."""
    try:
        both = rows_twice(value) if type(value) is not bytes else None
        ident = json.dumps(msg_id, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        head = f'{{"jsonrpc":"2.0","id":{ident},"result":{{"content":[{{"type":"text","text":'.encode("utf-8")
    except ValueError as exc:  # a number that is not finite, a lone surrogate: as `encode` says it
        return (_unwritable(exc),)
    if type(value) is bytes:
        return (head, value, _END)
    if both is None:
        return _result(msg_id, {"content": [{"type": "text", "text": indented(value)}],
                                "structuredContent": value, "isError": False})
    compact, text = both
    return (head, *text, _MIDDLE, *compact, _END)


_END = b',"isError":false}}\n'


def handle(root: Path, message: Any) -> dict[str, Any] | tuple[bytes | memoryview, ...] | None:
    """The answer to one JSON-RPC message (or the line that writes it, in pieces), or None for a
    notification or a response."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return _error(message.get("id") if isinstance(message, dict) else None, INVALID_REQUEST,
                      "not a JSON-RPC 2.0 message object")
    method, msg_id = message.get("method"), message.get("id")
    if method is None:
        return None  # a response to a request of ours: this server sends none
    if not isinstance(method, str):
        return _error(msg_id, INVALID_REQUEST, "method is not a string")
    if "id" not in message:
        return None  # a notification: initialized, cancelled, … need no answer
    params = message.get("params") or {}
    if not isinstance(params, dict):
        return _error(msg_id, INVALID_PARAMS, "params is not an object")
    if method == "initialize":
        asked = params.get("protocolVersion")
        return _result(msg_id, {"protocolVersion": asked if asked in PROTOCOLS else PROTOCOLS[0],
                                "capabilities": {"tools": {"listChanged": False}},
                                "serverInfo": {"name": SERVER_NAME, "version": __version__},
                                "instructions": INSTRUCTIONS})
    if method == "ping":
        return _result(msg_id, {})
    if method == "tools/list":
        return _result(msg_id, {"tools": listed()})
    if method == "tools/call":
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            return _error(msg_id, INVALID_PARAMS, "tools/call takes a tool name and an arguments object")
        failed, value = call_tool(root, name, arguments)
        if failed:
            return _result(msg_id, {"content": [{"type": "text", "text": value}], "isError": True})
        return _called(msg_id, value)
    return _error(msg_id, METHOD_NOT_FOUND, f"method {method!r} not found: this server offers tools only")


class Unfit(ValueError):
    """A message this server will not act on: nested too deep, a lone surrogate, NaN, Infinity."""


def _refuse_constant(name: str) -> Any:
    raise Unfit(f"{name} is not JSON")


def _check(value: Any) -> None:
    """Walk a parsed message without recursion: `Unfit` when it nests deeper than MAX_DEPTH, holds a
    string that is not Unicode text (a lone surrogate, which no answer could carry) or a number
    that is not finite (`1e999` parses as infinity)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > MAX_DEPTH:
                raise Unfit(f"nested deeper than {MAX_DEPTH} levels")
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise Unfit("a string holds a lone surrogate (not Unicode text)") from None
        elif isinstance(item, float) and not math.isfinite(item):
            raise Unfit("a number is not finite")


def parse(raw: bytes) -> tuple[Any, dict[str, Any] | None]:
    """(message, None), or (None, the error answer) for a line that is not a message to act on."""
    try:
        message = json.loads(raw, parse_constant=_refuse_constant)
        _check(message)
    except Unfit as exc:
        return None, _error(None, INVALID_REQUEST, f"refused: {exc}")
    except RecursionError:  # deeper than the interpreter's own bound: the parser gave up first
        return None, _error(None, PARSE_ERROR, f"nested deeper than {MAX_DEPTH} levels")
    except ValueError:
        return None, _error(None, PARSE_ERROR, "not JSON")
    if isinstance(message, dict) and "id" in message:
        msg_id = message["id"]
        if isinstance(msg_id, bool) or not isinstance(msg_id, (str, int, float, type(None))):
            return None, _error(None, INVALID_REQUEST, "id is not a string, a number or null")
    return message, None


def encode(answer: dict[str, Any]) -> bytes:
    """One answer as one line of strict JSON (no NaN, no lone surrogate: `parse` lets none in, and
    what a tool returns is checked here all the same)."""
    try:
        text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8") + b"\n"
    except (ValueError, TypeError, RecursionError) as exc:
        return _unwritable(exc)


def _unwritable(exc: Exception) -> bytes:
    fallback = _error(None, INTERNAL_ERROR, f"the answer could not be written as JSON: {type(exc).__name__}")
    return json.dumps(fallback, separators=(",", ":")).encode("utf-8") + b"\n"


def serve(root: Path, stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None) -> int:
    """Answer JSON-RPC messages, one a line, until the client closes stdin. Whatever else would be
    printed goes to stderr: stdout carries the protocol alone. A line over MAX_MESSAGE bytes, nested
    over MAX_DEPTH, or not strict JSON is answered with a JSON-RPC error, and the server goes on."""
    reader = stdin if stdin is not None else sys.stdin.buffer
    writer = stdout if stdout is not None else sys.stdout.buffer
    sys.stdout = sys.stderr
    while True:
        raw = reader.readline(MAX_MESSAGE + 1)
        if not raw:
            return OK
        answer: dict[str, Any] | tuple[bytes | memoryview, ...] | None
        if len(raw) > MAX_MESSAGE and not raw.endswith(b"\n"):
            while raw and not raw.endswith(b"\n"):  # the rest of the oversized line
                raw = reader.readline(MAX_MESSAGE + 1)
            answer = _error(None, INVALID_REQUEST, f"message over {MAX_MESSAGE} bytes")
        elif not raw.strip():
            continue
        else:
            message, answer = parse(raw)
            if answer is None:
                try:
                    answer = handle(root, message)
                except Exception as exc:  # noqa: BLE001 - one message never takes the server down
                    answer = _error(message.get("id") if isinstance(message, dict) else None,
                                    INTERNAL_ERROR, f"internal error: {type(exc).__name__}")
        if answer is not None:
            for piece in answer if isinstance(answer, tuple) else (encode(answer),):
                writer.write(piece)
            writer.flush()
