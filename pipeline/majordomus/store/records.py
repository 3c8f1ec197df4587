"""Knowledge records (knowledge/v1): Markdown with YAML front matter, one assertion each.

References are typed: `session:`, `decision:<task-id>`, `task:`, `commit:<sha>`, `issue:`,
`file:`, `test:`. `question:` is refused, and so is any reference to nothing (`…:none`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majordomus.base import yamlio
from majordomus.base.fsio import read_regular
from majordomus.store import allowlist

KIND = "knowledge/v1"
CLASSES = ("fact", "convention", "constraint", "memory", "lesson")
STATUSES = ("candidate", "verified", "superseded")
EPISTEMICS = ("observed", "inferred", "decided")
ORIGINS = ("extracted", "authored")
RELATION_TYPES = ("relates_to",)


def reference_prefixes() -> tuple[str, ...]:
    """The reference vocabulary, from the allow-list generated from the proto."""

    return allowlist.reference_prefixes()


def reference_problem(ref: Any) -> str | None:
    """Why `ref` is not an admissible reference, or None when it is."""
    if not isinstance(ref, str):
        return f"{ref!r} is not a string"
    prefix, sep, target = ref.partition(":")
    if not sep or not target:
        return f"{ref!r} is not PREFIX:TARGET"
    if prefix == "question":
        return f"{ref!r}: question: is not a reference; the task that owns the question is (task:<id>)"
    if prefix not in reference_prefixes():
        return f"{ref!r}: unknown prefix {prefix!r} (admitted: {' '.join(reference_prefixes())})"
    if target == "none":
        return f"{ref!r} refers to nothing"
    if any(c < "\x20" or c == "\x7f" for c in target):  # as the schema's pattern: [^\x00-\x1f\x7f]
        return f"{ref!r} carries a control character"
    return None


@dataclass(frozen=True)
class Record:
    path: Path
    meta: dict[str, Any]
    body: str

    @property
    def id(self) -> str:
        return str(self.meta.get("id", ""))

    @property
    def status(self) -> str:
        return str(self.meta.get("status", ""))

    @property
    def derived_from(self) -> list[str]:
        prov = self.meta.get("provenance") or {}
        refs = prov.get("derived_from") if isinstance(prov, dict) else None
        return [r for r in refs if isinstance(r, str)] if isinstance(refs, list) else []


class RecordError(ValueError):
    """A record file that cannot be read as knowledge/v1; the message names the file."""


def parse(text: str, where: str) -> tuple[dict[str, Any], str]:
    parts = yamlio.split_front_matter(text)
    if parts is None:
        raise RecordError(f"{where}: no front matter (a record starts with '---' and closes it with '---')")
    try:
        meta = yamlio.load(parts[0], where)
    except yamlio.YamlError as exc:
        raise RecordError(str(exc)) from None
    if not isinstance(meta, dict):
        raise RecordError(f"{where}: the front matter is not a mapping")
    return meta, parts[1]


def load(path: Path) -> Record:

    try:  # bytes, then decode: a carriage return in a body is text, not a line ending to translate
        text = read_regular(path).decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise RecordError(f"{path}: not a regular file (a symbolic link is never followed)") from None
    meta, body = parse(text, str(path))
    return Record(path, meta, body)


_STATUS_LINE = re.compile(r"^status: *(\S+)", re.M)


def quick_status(path: Path) -> str | None:
    """The `status:` of a record read without a YAML parse (for skips on the hot path)."""

    try:
        head = read_regular(path, 4096).decode("utf-8", errors="replace")
    except OSError:  # missing, or no regular file: no record there
        return None
    found = _STATUS_LINE.search(head)
    return found.group(1).strip("\"'") if found else None
