"""doit, embedded: `DoitMain(ModuleTaskLoader(...)).run([...])` under a file lock, with a
reporter that says when nothing changed.

The dep file is sqlite3 (the dbm fallback loses records under two processes) and every run
holds an exclusive lock, since no backend stops two processes from doing one task twice.
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from majordomus.base.fsio import locked

BOOKKEEPING = "bookkeeping"  # task meta key: a task that always runs to report, not to make


@dataclass
class RunReport:
    executed: list[str] = field(default_factory=list)
    uptodate: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)

    @property
    def nothing_changed(self) -> bool:
        return not self.executed and not self.failed


def reporter_class(report: RunReport, out: TextIO | None = None, quiet: bool = False) -> type:
    """A ConsoleReporter that counts what ran and, at the end, says what changed or that nothing did."""
    from doit.reporter import ConsoleReporter

    class SayingReporter(ConsoleReporter):  # type: ignore[misc]
        def __init__(self, outstream: TextIO, options: dict[str, Any]) -> None:
            super().__init__(out or outstream, options)

        def execute_task(self, task: Any) -> None:
            if not (task.meta or {}).get(BOOKKEEPING) and task.actions:
                report.executed.append(task.name)

        def skip_uptodate(self, task: Any) -> None:
            report.uptodate.append(task.name)

        def skip_ignore(self, task: Any) -> None:
            pass

        def add_failure(self, task: Any, fail: Any) -> None:
            report.failed.append(task.name)
            super().add_failure(task, fail)

        def complete_run(self) -> None:
            if not quiet:
                for message in report.messages:
                    self.write(message + "\n")
                if report.nothing_changed and not report.messages:
                    count = len(report.uptodate)
                    self.write(f"nothing changed: {count} task{'s' if count != 1 else ''} up to date\n")
            super().complete_run()

    return SayingReporter


def config(dep_file: Path, report: RunReport, quiet: bool = False) -> dict[str, Any]:
    return {"backend": "sqlite3", "dep_file": str(dep_file), "verbosity": 0,
            "reporter": reporter_class(report, quiet=quiet)}


def lock_path(dep_file: Path) -> Path:
    """The lock every run over `dep_file` holds: the CLI's, `majordomus doit`'s and `doit`'s."""
    return dep_file.with_name(dep_file.name + ".lock")


def main(namespace: dict[str, Any], argv: list[str], dep_file: Path, wait_s: float | None = None) -> int:
    """doit's own command line (`run`, `list`, `info`, `forget` …) over the tasks of
    `namespace`, under the dep file's lock (waited for `wait_s` at most); doit's exit code."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    with locked(lock_path(dep_file), wait_s):
        code: int = DoitMain(ModuleTaskLoader(namespace), config_filenames=()).run(argv)
    return code


def run(creators: dict[str, Callable[..., Any]], selection: list[str], dep_file: Path,
        report: RunReport | None = None, quiet: bool = False,
        wait_s: float | None = None) -> tuple[int, RunReport]:
    """Run the `selection` of tasks made by `creators`; returns doit's exit code and the report."""
    report = report or RunReport()
    namespace: dict[str, Any] = dict(creators)
    namespace["DOIT_CONFIG"] = config(dep_file, report, quiet)
    code = main(namespace, ["run", *selection], dep_file, wait_s)
    if code and not report.failed:
        print(f"majordomus: doit exited {code}", file=sys.stderr)
    return code, report


def run_quietly(creators: dict[str, Callable[..., Any]], selection: list[str], dep_file: Path,
                report: RunReport | None = None, wait_s: float | None = None) -> tuple[int, RunReport, str]:
    """`run`, with doit's own output captured: at session start stdout is the briefing, and no
    doit report or traceback reaches a person. Returns the code, the report and the text."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code, report = run(creators, selection, dep_file, report=report, quiet=True, wait_s=wait_s)
    text = err.getvalue() + out.getvalue()
    if code != 0 and os.environ.get("MJ_DEBUG") == "1":
        sys.stderr.write(text)
    return code, report, text


def cause(text: str) -> str | None:
    """The last exception line of doit's report (`NotADirectoryError: [Errno 20] ...`)."""

    found = [line for line in re.findall(r"^(?:[\w.]+(?:Error|Exception)|ERROR)\b:? .*$", text, re.M)
             if not line.startswith("TaskError")]  # doit's wrapper names the task, not the cause
    return found[-1].strip()[:300] if found else None
