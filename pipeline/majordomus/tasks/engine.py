"""doit, embedded: `DoitMain(ModuleTaskLoader(...)).run([...])` under a file lock, with a
reporter that says when nothing changed.

The dep file is sqlite3 (the dbm fallback loses records under two processes) and every run
holds an exclusive lock, since no backend stops two processes from doing one task twice.
"""
from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from majordomus.base.lean import TYPE_CHECKING
from majordomus.base.errors import FatalError, refused
from majordomus.base.fsio import locked, open_folder
from majordomus.store.filecache import settled

if TYPE_CHECKING:
    from typing import Any, TextIO

# How long a check of the dep file waits for another process's sqlite transaction to end (doit's
# own connection waits sqlite's default five seconds before it gives up).
LOCK_WAIT_S = 1.0
SIDECARS = ("", "-journal", "-wal", "-shm")

BOOKKEEPING = "bookkeeping"  # task meta key: a task that always runs to report, not to make


class RunReport:
    """What a run did: the tasks executed, up to date and failed, and what it had to say. A plain
    class: the engine is on the end hook's path, where `dataclasses` (and `inspect`) would cost
    their import."""

    __slots__ = ("executed", "failed", "messages", "rebuilt", "uptodate")

    def __init__(self) -> None:
        self.executed: list[str] = []
        self.uptodate: list[str] = []
        self.failed: list[str] = []
        self.messages: list[str] = []
        self.rebuilt: str | None = None  # why doit's dep file was rebuilt during this run

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


def _plugins_listed_once() -> None:
    """doit looks for plugins of four kinds (commands, loaders, backends, reporters) among the
    entry points of every installed distribution, and each look reads every distribution's
    metadata again: in a virtualenv of 75 distributions the three a run makes cost 30 ms, and a
    project's own environment often holds hundreds. The entry points are read once a process and
    each kind selected from them: the plugins found are the same. (`doit.plugin` reaches
    `importlib.metadata.entry_points` through `entry_points_impl` for this.)"""
    from doit import plugin

    if getattr(plugin.entry_points_impl, "listed_once", False):
        return
    from importlib.metadata import entry_points

    listed: list[Any] = []

    def select(group: str) -> Any:
        if not listed:
            listed.append(entry_points())
        return listed[0].select(group=group)

    def impl() -> Callable[..., Any]:
        return select

    impl.listed_once = True  # type: ignore[attr-defined]
    plugin.entry_points_impl = impl


_CHECKER: type | None = None
# The digests of this run's file_deps, by (path, inode, mtime, size); emptied as each run starts,
# so a long-lived process (the MCP server, the cockpit) keeps none past its run.
_DIGESTS: dict[tuple[str, int, int, int], str] = {}


def checker_class() -> type:
    """doit's MD5 check, with each file's digest computed once a run. doit saves a task's file
    states after it ran, hashing every `file_dep` of every task: 500 renders over the same
    evidence file and record writer hashed both 500 times. A digest is kept for the file's
    (inode, mtime, size), which doit itself trusts more loosely (mtime alone); a state is trusted
    by its mtime and size only when it was saved after the file's clock had ticked past its last
    change (`filecache.settled`), else the next run compares the digest. The class keeps
    doit's name on purpose: doit stores the checker's class name with each task and starts every
    task over when it changes."""
    global _CHECKER
    if _CHECKER is None:
        from doit import dependency

        def file_md5(path: str) -> str:
            st = os.stat(path)
            key = (path, st.st_ino, st.st_mtime_ns, st.st_size)
            digest = _DIGESTS.get(key)
            if digest is None:
                digest = _DIGESTS[key] = dependency.get_file_md5(path)
            return digest

        class MD5Checker(dependency.MD5Checker):  # type: ignore[misc]
            def check_modified(self, file_path: str, file_stat: os.stat_result, state: Any) -> bool:
                timestamp, size, digest = state
                if file_stat.st_mtime == timestamp and file_stat.st_size == size:
                    return False
                return bool(file_stat.st_size != size or digest != file_md5(file_path))

            def get_state(self, dep: str, current_state: Any) -> Any:
                st = os.stat(dep)
                if current_state and current_state[0] == st.st_mtime:
                    return None
                # A file still within its clock's tick may change again under this mtime: kept
                # without it (None equals no mtime), so the next run compares its digest.
                return st.st_mtime if settled(st) else None, st.st_size, file_md5(dep)

        _CHECKER = MD5Checker
    return _CHECKER


def config(dep_file: Path, report: RunReport, quiet: bool = False, out: TextIO | None = None) -> dict[str, Any]:
    """The run's DOIT_CONFIG. The reporter writes to `out`, else `sys.stdout` as it is *now*: doit's
    own default (`outfile`) is the stream bound when `doit.cmd_run` was first imported, which a later
    redirect (a hook's quiet run) never reaches."""
    stream = out if out is not None else sys.stdout
    return {"backend": "sqlite3", "dep_file": str(dep_file), "verbosity": 0, "outfile": stream,
            "reporter": reporter_class(report, out=stream, quiet=quiet),
            "check_file_uptodate": checker_class()}


def lock_path(dep_file: Path) -> Path:
    """The lock every run over `dep_file` holds: the CLI's, `majordomus doit`'s and `doit`'s."""
    return dep_file.with_name(dep_file.name + ".lock")


def main(namespace: dict[str, Any], argv: list[str], dep_file: Path, wait_s: float | None = None,
         root: Path | None = None, report: RunReport | None = None, quiet: bool = True) -> int:
    """doit's own command line (`run`, `list`, `info`, `forget` …) over the tasks of
    `namespace`, under the dep file's lock (waited for `wait_s` at most); doit's exit code.

    The dep file and its journals must be real files inside `root` (sqlite follows links). After
    a failed `run`, the dep file is checked: one another process's sqlite transaction holds is
    named locked; a corrupted one is a cache to rebuild: it is removed, the run repeated once,
    and `report.rebuilt` says so."""
    from doit.cmd_base import ModuleTaskLoader
    from doit.doit_cmd import DoitMain

    _plugins_listed_once()
    root = root if root is not None else dep_file.parent
    with locked(lock_path(dep_file), wait_s, root=root):
        refuse_links(dep_file, root)
        _DIGESTS.clear()
        code: int = DoitMain(ModuleTaskLoader(namespace), config_filenames=()).run(argv)
        if code and argv[:1] == ["run"]:
            trouble = dep_file_trouble(dep_file)
            if trouble == "locked":
                raise FatalError(f"{dep_file.name} (doit's dep file) is locked by another process's "
                                 "sqlite transaction; nothing was run to its end: rerun when that "
                                 "process is done (the next session boundary does)")
            if trouble is not None:
                discard(dep_file)
                rebuilt = f"doit's dep file {dep_file.name} was {trouble}: rebuilt it"
                if report is not None:
                    for done in (report.executed, report.uptodate, report.failed):
                        done.clear()
                    report.rebuilt = rebuilt
                if not quiet:
                    print(f"majordomus: {rebuilt}", file=sys.stderr)
                code = DoitMain(ModuleTaskLoader(namespace), config_filenames=()).run(argv)
    return code


def run(creators: dict[str, Callable[..., Any]], selection: list[str], dep_file: Path,
        root: Path | None = None, report: RunReport | None = None, quiet: bool = False,
        wait_s: float | None = None) -> tuple[int, RunReport]:
    """Run the `selection` of tasks made by `creators`; returns doit's exit code and the report."""
    report = report or RunReport()
    namespace: dict[str, Any] = dict(creators)
    # doit's own default stream is the sys.stdout of the moment it was first imported: name the
    # one in force now, so a captured run (`run_quietly`) captures doit's report too
    namespace["DOIT_CONFIG"] = config(dep_file, report, quiet, out=sys.stdout)
    code = main(namespace, ["run", *selection], dep_file, wait_s, root=root, report=report, quiet=quiet)
    if code and not report.failed:
        print(f"majordomus: doit exited {code}", file=sys.stderr)
    return code, report


def refuse_links(dep_file: Path, root: Path) -> None:
    """sqlite follows symbolic links: the dep file and its journals must be real files of ours."""
    folder = open_folder(root, dep_file.parent)
    try:
        for suffix in SIDECARS:
            try:
                mode = os.stat(dep_file.name + suffix, dir_fd=folder, follow_symlinks=False).st_mode
            except FileNotFoundError:
                continue
            if not stat.S_ISREG(mode):
                kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
                raise refused(f"{dep_file.name}{suffix} in {dep_file.parent} is {kind}: doit's dep "
                              "file is never followed out of the repository; remove it, and it is "
                              "rebuilt")
    finally:
        os.close(folder)


def dep_file_trouble(dep_file: Path) -> str | None:
    """None when doit's dep file is sound or absent; "locked" when another process's transaction
    holds it past a brief wait; else what is wrong with it ("corrupted (...)")."""
    import sqlite3

    if not dep_file.exists():
        return None
    try:
        conn = sqlite3.connect(dep_file.as_uri() + "?mode=ro", uri=True, timeout=LOCK_WAIT_S)
        try:
            rows = conn.execute("pragma quick_check").fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            return "locked"
        return f"corrupted ({exc})"
    except sqlite3.DatabaseError as exc:
        return f"corrupted ({exc})"
    return None if rows == [("ok",)] else f"corrupted ({rows[0][0] if rows else 'no answer'})"


def discard(dep_file: Path) -> None:
    """Remove the dep file and its journals (under its lock): the next run starts a new one."""
    for suffix in SIDECARS:
        dep_file.with_name(dep_file.name + suffix).unlink(missing_ok=True)


def run_quietly(creators: dict[str, Callable[..., Any]], selection: list[str], dep_file: Path,
                root: Path | None = None, report: RunReport | None = None,
                wait_s: float | None = None) -> tuple[int, RunReport, str]:
    """`run`, with doit's own output captured: at session start stdout is the briefing, and no
    doit report or traceback reaches a person. Returns the code, the report and the text."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code, report = run(creators, selection, dep_file, root, report=report, quiet=True, wait_s=wait_s)
    text = err.getvalue() + out.getvalue()
    if report.rebuilt:
        print(f"majordomus: {report.rebuilt}", file=sys.stderr)
    if code != 0 and os.environ.get("MJ_DEBUG") == "1":
        sys.stderr.write(text)
    return code, report, text


def cause(text: str) -> str | None:
    """The last exception line of doit's report (`NotADirectoryError: [Errno 20] ...`)."""

    raised = [line for line in re.findall(r"^[\w.]+(?:Error|Exception): .*$", text, re.M)
              if not line.startswith("TaskError")]
    if raised:  # an exception's own line says more than doit's "TaskError - taskid:..."
        last = str(raised[-1]).strip()
        if last.startswith("majordomus.base.errors.FatalError: "):
            last = last.split(": ", 1)[1]  # our own refusal says what and the fix already
        return last[:300]
    found = [line for line in re.findall(r"^(?:[\w.]+(?:Error|Exception)|ERROR)\b:? .*$", text, re.M)
             if not line.startswith("TaskError")]  # doit's wrapper names the task, not the cause
    return found[-1].strip()[:300] if found else None
