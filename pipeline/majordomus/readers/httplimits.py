"""The limits on `majordomus serve`'s connections, so that slow or many clients cannot hold it.

- A deadline for the whole request head (the request line and the headers): HEAD_SECONDS from the
  moment the server waits for it, the wait on a kept-alive connection included — not a timeout
  per byte, which a client trickling one byte at a time never meets. Past it, reading stops (the
  socket is shut for reading, so the blocked read returns) and the request is answered 408.
- At most MAX_CONNECTIONS served at once: one more is answered 503 at once and closed, so a
  hundred slow clients hold a hundred sockets for HEAD_SECONDS at most, never a hundred threads.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HEAD_SECONDS = 10.0  # the whole request head, from the first byte awaited to the blank line
MAX_CONNECTIONS = 32  # served at once; beyond, 503


class _Watch:
    """One thread for every connection's deadline (not a timer thread per request): it wakes
    twice a second and stops the reads that are late."""

    def __init__(self) -> None:
        self._due: dict[HeadDeadline, float] = {}
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def arm(self, handler: HeadDeadline) -> None:
        with self._lock:
            self._due[handler] = time.monotonic() + HEAD_SECONDS
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="head-deadlines", daemon=True)
                self._thread.start()

    def disarm(self, handler: HeadDeadline) -> None:
        with self._lock:
            self._due.pop(handler, None)

    def _run(self) -> None:
        while True:
            time.sleep(0.5)
            now = time.monotonic()
            with self._lock:
                late = [h for h, due in self._due.items() if due <= now]
                for handler in late:
                    del self._due[handler]
            for handler in late:
                handler.too_slow()


WATCH = _Watch()


class HeadDeadline(BaseHTTPRequestHandler):
    """http.server's handler with the request head's deadline; `_late` tells `send_error` why."""

    _late = False  # the request head missed its deadline

    def handle_one_request(self) -> None:
        """One request, its head due within HEAD_SECONDS (the wait for it on a kept-alive
        connection included): past it, reading stops and the request is answered 408."""
        self._late = False
        WATCH.arm(self)
        try:
            super().handle_one_request()
        finally:
            WATCH.disarm(self)

    def too_slow(self) -> None:
        self._late = True
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RD)  # the blocked read returns what came, then EOF
        except OSError:
            pass

    def parse_request(self) -> bool:
        parsed = super().parse_request()
        WATCH.disarm(self)  # the head is read
        if parsed and self._late:
            self.send_error(HTTPStatus.REQUEST_TIMEOUT)
            return False
        return parsed


BUSY = {"error": "busy", "message": f"503 over {MAX_CONNECTIONS} connections at once: retry in a few seconds"}


class Server(ThreadingHTTPServer):
    """http.server's threading server with at most MAX_CONNECTIONS handled at once."""

    request_queue_size = 128  # the listen backlog: a burst is accepted (and answered 503), not left unaccepted

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            payload = (json.dumps(BUSY) + "\n").encode("utf-8")
            head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\n"
                    f"Content-Length: {len(payload)}\r\nRetry-After: {HEAD_SECONDS:.0f}\r\n"
                    "Connection: close\r\n\r\n").encode("ascii")
            try:
                request.settimeout(1.0)
                request.sendall(head + payload)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()
