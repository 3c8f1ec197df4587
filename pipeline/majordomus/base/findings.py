"""Findings: what a check, a rule or doctor reports. Not exceptions: checks collect them and go on."""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from majordomus.base.output import line as one_line


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
        """The finding as a person reads it: each part one line (`output.line`), so a file name or
        a message carrying a newline or an escape never forges a line of the report."""
        where = one_line(self.file or "")
        if self.field:
            where += f" [{one_line(self.field)}]"
        level = "ERROR" if self.blocking else "WARN"
        head = f"{level} {one_line(self.rule)}: " + (f"{where}: " if where else "") + one_line(self.what)
        tail = [f"  fix: {one_line(self.fix)}"]
        if self.reproduce:
            tail.insert(0, f"  reproduce: {one_line(self.reproduce)}")
        return "\n".join([head, *tail])

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
