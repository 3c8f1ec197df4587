"""A fake model API's plumbing: a threaded HTTP server on 127.0.0.1 (port 0) that logs every
request body and stops by itself after a deadline. The model-specific fakes (fake_openai,
fake_gemini) subclass it and answer from a script."""
from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Recorded:
    """One request as the fake received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw: bytes
    body: Any = None  # the parsed JSON body, or None

    def text(self) -> str:
        return self.raw.decode("utf-8", "replace")


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    chunks: list[bytes] = field(default_factory=list)


class FakeAPI:
    """Subclasses implement `answer(request) -> Reply`. Use as a context manager."""

    def __init__(self, deadline: float = 300.0) -> None:
        self.deadline = deadline
        self.requests: list[Recorded] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._stopped = threading.Event()

    # -- subclass API ------------------------------------------------------------------
    def answer(self, request: Recorded) -> Reply:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- lifecycle ---------------------------------------------------------------------
    @property
    def url(self) -> str:
        assert self._server is not None, "not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAPI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                split = urlsplit(self.path)
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                request = Recorded(self.command, split.path, parse_qs(split.query),
                                   {k.lower(): v for k, v in self.headers.items()}, raw, body)
                with fake._lock:
                    fake.requests.append(request)
                try:
                    reply = fake.answer(request)
                except Exception as exc:  # the test reads fake.errors
                    fake.errors.append(f"{self.command} {self.path}: {exc!r}")
                    reply = Reply(500, {"Content-Type": "application/json"},
                                  [json.dumps({"error": {"message": repr(exc)}}).encode()])
                self.send_response(reply.status)
                headers = {"Content-Type": "application/json", **reply.headers}
                for key, value in headers.items():
                    self.send_header(key, value)
                payload = b"".join(reply.chunks)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)
                self.wfile.flush()
                self.close_connection = True

            do_GET = do_POST = do_PUT = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                         daemon=True).start()
        threading.Thread(target=self._watchdog, daemon=True).start()
        return self

    def _watchdog(self) -> None:
        if not self._stopped.wait(self.deadline):
            self.errors.append(f"deadline of {self.deadline}s reached: the fake stopped itself")
            self.stop()

    def stop(self) -> None:
        if self._server is not None and not self._stopped.is_set():
            self._stopped.set()
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- helpers -----------------------------------------------------------------------
    def snapshot(self) -> list[Recorded]:
        with self._lock:
            return list(self.requests)

    @staticmethod
    def sse(events: list[tuple[str | None, Any]]) -> list[bytes]:
        """Server-sent events: (event name or None, JSON data)."""
        out = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            out.append(f"{head}data: {json.dumps(data)}\n\n".encode())
        return out


def wait_until(predicate: Any, timeout: float = 10.0, step: float = 0.05) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return bool(predicate())
