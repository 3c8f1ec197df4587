"""A hook's payload: the agent's JSON object on stdin, read as soon as it is whole.

A client may write the object and keep its end of the pipe open; reading to end of file would
then hold the hook (a session start) until the client's own timeout. The bytes are read as they
come and decoded each time one could have ended an object; end of file or the hook's deadline
ends the wait with what came, a failure that says why.
"""
from __future__ import annotations

import os
import select
import time

from majordomus.base.lean import TYPE_CHECKING, json, raw_decode

if TYPE_CHECKING:
    from typing import Any

MAX_INPUT = 1 << 20  # a hook payload is a few hundred bytes; a megabyte is not one


class HookInputError(ValueError):
    pass


def read_payload(raw: bytes) -> dict[str, Any]:
    if len(raw) > MAX_INPUT:
        raise HookInputError(f"stdin holds {len(raw)} bytes, more than a hook payload's {MAX_INPUT}")
    if not raw.strip():
        raise HookInputError("stdin is empty; the agent sends a JSON object")
    try:
        payload = json.loads(raw.decode("utf-8", errors="strict"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise HookInputError(f"stdin is not JSON ({str(exc).splitlines()[0][:80]})") from None
    if not isinstance(payload, dict):
        raise HookInputError(f"stdin is JSON {type(payload).__name__}, not an object")
    return payload


def read_stdin(deadline: float, fd: int = 0) -> dict[str, Any]:
    """The payload: acted on as soon as stdin holds one complete JSON object, whether or not the
    client closes its end (one that keeps the pipe open would otherwise hold the hook until its
    own timeout); at end of file, what came; at `deadline`, a failure that says so."""
    raw = b""
    while True:
        left = deadline - time.monotonic()
        try:
            ready = select.select([fd], [], [], max(left, 0))[0] if left > 0 else []
            chunk = os.read(fd, 65536) if ready else None
        except (OSError, ValueError):  # no stdin at all: as an empty one
            chunk = b""
        if chunk is None:
            raise HookInputError(f"stdin held no complete JSON object after {len(raw)} bytes: the "
                                 "agent's payload never ended (nor did its pipe)")
        if not chunk or len(raw) + len(chunk) > MAX_INPUT:
            return read_payload(raw + chunk)
        raw += chunk
        if b"}" in chunk:  # an object can only have ended in this chunk
            try:
                text = raw.decode("utf-8")
                value, _end = raw_decode(text, len(text) - len(text.lstrip()))
            except ValueError:  # not whole yet (or never: end of file or the deadline says which)
                continue
            if not isinstance(value, dict):
                raise HookInputError(f"stdin is JSON {type(value).__name__}, not an object")
            return value
