"""A fake Anthropic Messages API on 127.0.0.1 for driving a real agent client in tests.

It answers `POST /v1/messages` streaming (server-sent events) and not, and
`POST /v1/messages/count_tokens`; every request is kept (and appended as one JSON line to
`log_path` when given) so a test can read what the client sent the model. Replies come from a
script: a list of `Step`s, each a predicate on the request and the reply it gets, used once, in
order of the first one whose predicate holds. A request no step takes (a side request of the
client, a compaction summary, a turn the test does not care about) gets a short harmless text
ending the turn. Anything else the client asks gets an Anthropic-shaped 404.

The server stops by itself: after `deadline_s` from its start, or `idle_s` without a request,
whichever comes first, so a hung client or a failed test can never leave it running.
"""
from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEFAULT_TEXT = "OK."
# The client retries a compaction whose reply has no <summary> block, then gives up.
DEFAULT_SUMMARY = ("<analysis>The conversation so far.</analysis>\n"
                   "<summary>1. Primary Request and Intent: the test's prompts.</summary>")


@dataclass(frozen=True)
class Reply:
    """One assistant message: its content blocks and why it stopped."""

    blocks: tuple[dict[str, Any], ...]
    stop_reason: str = "end_turn"


def text(words: str) -> Reply:
    """Plain text that ends the turn."""
    return Reply(({"type": "text", "text": words},), "end_turn")


_tool_ids = itertools.count(1)


def tool_use(name: str, tool_input: dict[str, Any], preface: str | None = None) -> Reply:
    """A call of the client's tool `name`; the client runs it and sends the result back."""
    block = {"type": "tool_use", "id": f"toolu_fake{next(_tool_ids):06d}", "name": name, "input": tool_input}
    blocks = ({"type": "text", "text": preface}, block) if preface else (block,)
    return Reply(blocks, "tool_use")


def bash(command: str, description: str = "Run a command") -> Reply:
    """A call of Claude Code's Bash tool."""
    return tool_use("Bash", {"command": command, "description": description})


@dataclass
class Request:
    """One request the client sent, as received."""

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    reply: str | None = None  # the step's name that answered it, "default", or None (not a message)

    @property
    def route(self) -> str:
        return self.path.split("?", 1)[0]

    @property
    def is_message(self) -> bool:
        return self.method == "POST" and self.route == "/v1/messages"

    @property
    def tool_names(self) -> list[str]:
        if not isinstance(self.body, dict):
            return []
        return [t.get("name", "") for t in self.body.get("tools") or [] if isinstance(t, dict)]

    @property
    def is_main(self) -> bool:
        """A request of the agent's own loop (it offers the Bash tool), not a side request."""
        return self.is_message and "Bash" in self.tool_names

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or []) if isinstance(self.body, dict) else []

    def last_user(self) -> dict[str, Any] | None:
        for message in reversed(self.messages):
            if isinstance(message, dict) and message.get("role") == "user":
                return dict(message)
        return None

    def last_user_text(self) -> str:
        """The text of the last user message (tool results included)."""
        message = self.last_user()
        return _text_of(message.get("content")) if message else ""

    def has_tool_result(self) -> bool:
        """Whether the last user message answers a tool call."""
        message = self.last_user()
        content = message.get("content") if message else None
        return isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content)

    def messages_text(self) -> str:
        """All text of all messages, in order."""
        return "\n".join(_text_of(m.get("content")) for m in self.messages)

    def system_text(self) -> str:
        return _text_of(self.body.get("system")) if isinstance(self.body, dict) else ""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") == "tool_result":
                    parts.append(_text_of(block.get("content")))
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return ""


Predicate = Callable[[Request], bool]


def is_compaction(request: Request) -> bool:
    """The client asking for the summary that replaces the conversation (`/compact`, or its own
    compaction when the context fills): its last user message asks for a `<summary>` block."""
    words = request.last_user_text()
    return request.is_message and "<summary>" in words and "summary of the conversation" in words


def main_turn(request: Request) -> bool:
    """The agent's loop asking for its next move after a user prompt (not after a tool result)."""
    return request.is_main and not request.has_tool_result() and not is_compaction(request)


def after_tool(request: Request) -> bool:
    """The agent's loop sending a tool's result back."""
    return request.is_main and request.has_tool_result() and not is_compaction(request)


def prompt_contains(needle: str) -> Predicate:
    """The agent's loop after a user prompt containing `needle`."""
    return lambda request: main_turn(request) and needle in request.last_user_text()


@dataclass
class Step:
    """Answer the first request, in order, for which `when` holds with `reply` (once)."""

    when: Predicate
    reply: Reply | Callable[[Request], Reply]
    name: str = ""
    used: bool = field(default=False, compare=False)


class FakeAnthropic:
    """The server; use as a context manager, or call start() and stop()."""

    def __init__(self, script: Iterable[Step] = (), *, log_path: Path | None = None,
                 deadline_s: float = 600.0, idle_s: float = 180.0, model: str = "claude-sonnet-4-5") -> None:
        self._lock = threading.Lock()
        self.steps: list[Step] = []
        self.extend(script)
        self.log_path = log_path
        self.deadline_s = deadline_s
        self.idle_s = idle_s
        self.model = model
        self.requests: list[Request] = []
        self.stopped_by: str | None = None
        self.errors: list[str] = []  # a predicate or reply that raised; the client got a 500
        self._started = self._last = time.monotonic()
        self._done = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._threads: list[threading.Thread] = []
        self._message_ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def extend(self, steps: Iterable[Step]) -> None:
        """Add steps to the script, after those already there."""
        with self._lock:
            for step in steps:
                step.name = step.name or f"step{len(self.steps)}"
                self.steps.append(step)

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> FakeAnthropic:
        serve = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                 name="fake-anthropic", daemon=True)
        watch = threading.Thread(target=self._watchdog, name="fake-anthropic-watchdog", daemon=True)
        self._threads = [serve, watch]
        self._started = self._last = time.monotonic()
        for thread in self._threads:
            thread.start()
        return self

    def stop(self, reason: str = "stopped") -> None:
        with self._lock:
            if self._done.is_set():
                return
            self._done.set()
            self.stopped_by = reason
        if self._threads:  # shutdown() waits for serve_forever(), which only start() runs
            self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        for thread in self._threads:
            thread.join(timeout=5)

    def _watchdog(self) -> None:
        while not self._done.wait(0.5):
            now = time.monotonic()
            if now - self._started > self.deadline_s:
                threading.Thread(target=self.stop, args=(f"deadline {self.deadline_s:g} s",), daemon=True).start()
                return
            if now - self._last > self.idle_s:
                threading.Thread(target=self.stop, args=(f"idle {self.idle_s:g} s",), daemon=True).start()
                return

    # what the test reads ---------------------------------------------------------------------
    def messages_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_message]

    def main_requests(self) -> list[Request]:
        with self._lock:
            return [r for r in self.requests if r.is_main]

    def unused_steps(self) -> list[str]:
        with self._lock:
            return [s.name for s in self.steps if not s.used]

    # serving ---------------------------------------------------------------------------------
    def record(self, method: str, path: str, headers: dict[str, str], body: Any) -> Request:
        with self._lock:
            self._last = time.monotonic()
            request = Request(len(self.requests), method, path, headers, body)
            self.requests.append(request)
            return request

    def log(self, request: Request) -> None:
        if self.log_path is None:
            return
        line = json.dumps({"index": request.index, "method": request.method, "path": request.path,
                           "reply": request.reply, "body": request.body}, ensure_ascii=False)
        with self._lock, open(self.log_path, "a", encoding="utf-8") as out:
            out.write(line + "\n")

    def choose(self, request: Request) -> Reply:
        with self._lock:
            for step in self.steps:
                if not step.used and step.when(request):
                    step.used = True
                    request.reply = step.name
                    break
            else:
                request.reply = "default"
                return text(DEFAULT_SUMMARY if is_compaction(request) else DEFAULT_TEXT)
        return step.reply(request) if callable(step.reply) else step.reply

    def message(self, request: Request, reply: Reply) -> dict[str, Any]:
        model = request.body.get("model") if isinstance(request.body, dict) else None
        return {
            "id": f"msg_fake{next(self._message_ids):06d}", "type": "message", "role": "assistant",
            "model": model or self.model, "content": [dict(b) for b in reply.blocks],
            "stop_reason": reply.stop_reason, "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 20,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
        }


def sse(message: dict[str, Any]) -> bytes:
    """The message as the Messages API streams it."""
    head = dict(message, content=[], stop_reason=None, stop_sequence=None,
                usage=dict(message["usage"], output_tokens=1))
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": head}),
                                                ("ping", {"type": "ping"})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": {"type": "text", "text": ""}}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "text_delta", "text": block["text"]}}))
        elif block["type"] == "tool_use":
            events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                   "content_block": dict(block, input={})}))
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                   "delta": {"type": "input_json_delta",
                                                             "partial_json": json.dumps(block["input"])}}))
        else:
            raise ValueError(f"no streaming for a {block['type']!r} block")
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta",
                                     "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                     "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode("utf-8")


def _handler(fake: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
            pass

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("request-id", f"req_fake{len(fake.requests):06d}")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data).encode("utf-8"), "application/json")

        def _read_body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            if not raw:
                return None
            try:
                return json.loads(raw)
            except ValueError:
                return raw.decode("utf-8", "replace")

        def _handle(self) -> None:
            body = self._read_body() if self.command == "POST" else None
            request = fake.record(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            try:
                if request.is_message and isinstance(body, dict):
                    try:
                        message = fake.message(request, fake.choose(request))
                        payload = sse(message) if body.get("stream") else None
                    except Exception as exc:  # noqa: BLE001 - a broken script is the test's error, kept for it
                        fake.errors.append(f"request {request.index}: {exc!r}")
                        self._json(500, {"type": "error", "error": {"type": "api_error", "message": repr(exc)}})
                        return
                    if payload is not None:
                        self._send(200, payload, "text/event-stream")
                    else:
                        self._json(200, message)
                elif self.command == "POST" and request.route == "/v1/messages/count_tokens":
                    self._json(200, {"input_tokens": 100})
                else:
                    self._json(404, {"type": "error", "error": {
                        "type": "not_found_error", "message": f"the fake serves no {self.command} {request.route}"}})
            finally:
                fake.log(request)

        do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = _handle

    return Handler
