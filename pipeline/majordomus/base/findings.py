"""Findings: what a check, a rule or doctor reports. Not exceptions: checks collect them and go on."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Finding:
    """One finding: where, what is wrong, and the fix (a command or an edit)."""

    rule: str  # rule id, e.g. majordomus.knowledge-integrity
    what: str  # what is wrong, one line
    fix: str  # the next step, one line
    blocking: bool = True
    file: str | None = None  # repository-relative path, when a file is at fault
    field: str | None = None  # the field at fault inside that file
    reproduce: str | None = None  # a read-only command that shows it

    def line(self) -> str:
        where = self.file or ""
        if self.field:
            where += f" [{self.field}]"
        level = "ERROR" if self.blocking else "WARN"
        head = f"{level} {self.rule}: " + (f"{where}: " if where else "") + self.what
        tail = [f"  fix: {self.fix}"]
        if self.reproduce:
            tail.insert(0, f"  reproduce: {self.reproduce}")
        return "\n".join([head, *tail])

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
