"""Findings: what a check, a rule or doctor reports. Not exceptions: checks collect them and go on."""
from __future__ import annotations

import posixpath
from typing import Any, NamedTuple

from majordomus.base.output import line as one_line

GROUP_AT = 3  # findings over this many files with the same text are printed as one


class Finding(NamedTuple):
    """One finding: where, what is wrong, and the fix (a command or an edit). A NamedTuple: every
    reader of the rules (doctor, `check`, `watch`) would pay `dataclasses` (and `inspect`) in imports."""

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
        return self._asdict()


def grouped(findings: list[Finding]) -> list[str]:
    """Each finding's lines; one finding over many files (the same rule, text and reproduce, at
    `GROUP_AT` files or more: 33 untracked candidates) is one finding with their count, their
    folder and one command for them all, so a long list never buries the rest of the report."""
    groups: dict[tuple[object, ...], list[Finding]] = {}
    for f in findings:
        key = (f.rule, f.what, f.blocking, f.reproduce, f.field) if f.file else (id(f),)
        groups.setdefault(key, []).append(f)
    out: list[str] = []
    for members in groups.values():
        files = [str(m.file) for m in members]
        if len(members) < GROUP_AT or len(set(files)) < len(files):
            out += [m.line() for m in members]
            continue
        try:
            folder = posixpath.commonpath(files)
        except ValueError:  # absolute and relative paths mixed: no one folder
            folder = ""
        first, rest = members[0], len(members) - 3
        templates = {m.fix.replace(str(m.file), "\0") for m in members}
        template = templates.pop() if len(templates) == 1 else ""
        fix = (template.replace("\0", f"{folder}/") if "\0" in template and folder else
               f"{first.fix} (and the same for each of the {len(members) - 1} others)")
        named = ", ".join(posixpath.basename(f) for f in files[:3]) + (f" and {rest} more" if rest > 0 else "")
        out.append(Finding(first.rule, f"{first.what} ({len(members)} files: {named})", fix, first.blocking,
                           file=f"{folder}/" if folder else None, field=first.field,
                           reproduce=first.reproduce).line())
    return out
