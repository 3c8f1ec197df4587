"""What the deriver last wrote, per record id, so that a file a person edited is never overwritten.

`.ai/local/state/derived/<id>.sha256` holds the sha256 of the bytes the deriver last wrote (or
found identical) at that id. A candidate whose bytes differ from it was changed by a person, the
third review act: the deriver leaves it alone and says so. A file with no entry (written before
the index existed, or the local state was removed) and different bytes is treated the same way:
when in doubt, a person's file wins. Delete the file to have it derived again.
"""
from __future__ import annotations

from pathlib import Path

from majordomus.base.fsio import read_text, write_if_changed
from majordomus.base.ids import sha256_hex
from majordomus.store.workspace import Workspace


def entry(ws: Workspace, rid: str) -> Path:
    """Where the digest of what the deriver last wrote at `rid` is kept."""
    return ws.state / "derived" / f"{rid}.sha256"


def digest(data: bytes) -> str:
    return sha256_hex(data)


def remember(ws: Workspace, rid: str, data: bytes) -> None:
    """Record that the deriver's bytes for `rid` are `data`."""

    write_if_changed(entry(ws, rid), (digest(data) + "\n").encode("ascii"), root=ws.root)


def last_written(ws: Workspace, rid: str) -> str | None:
    try:
        return read_text(entry(ws, rid), 4096).strip() or None
    except FileNotFoundError:
        return None


def edited_by_hand(ws: Workspace, rid: str, current: bytes) -> bool:
    """True when `current` (the file's bytes now) is not what the deriver last wrote at `rid`."""
    last = last_written(ws, rid)
    return last is None or digest(current) != last
