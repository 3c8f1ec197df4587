"""The embedded doit: its file check decides what runs exactly as doit's own MD5 check does, and
hashes each file once a run however many tasks depend on it."""
from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from doit import dependency

from majordomus.store import filecache
from majordomus.tasks import engine


def _creators(shared: Path, outputs: Path, ran: list[str]) -> dict[str, Any]:
    def task_copy() -> Any:
        for n in range(20):
            target = outputs / f"{n}.txt"

            def action(target: Path = target) -> None:
                ran.append(target.name)
                target.write_bytes(shared.read_bytes())

            yield {"name": str(n), "actions": [action], "file_dep": [str(shared)], "targets": [str(target)]}
    return {"task_copy": task_copy}


def test_a_shared_file_dep_is_hashed_once_a_run_and_its_changes_still_rerun(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[str] = []
    real = dependency.get_file_md5

    def counting(path: str) -> str:
        hashed.append(path)
        return real(path)

    monkeypatch.setattr(dependency, "get_file_md5", counting)
    shared, outputs, dep_file = tmp_path / "shared", tmp_path / "out", tmp_path / "deps.sqlite"
    outputs.mkdir()
    shared.write_bytes(b"one")
    time.sleep(filecache.FINE_NS / 1e9 + 0.02)  # settled: its stat may vouch for it
    ran: list[str] = []

    def run() -> engine.RunReport:
        ran.clear()
        hashed.clear()
        code, report = engine.run(_creators(shared, outputs, ran), ["copy"], dep_file, root=tmp_path, quiet=True)
        assert code == 0
        return report

    run()
    assert len(ran) == 20 and hashed == [str(shared)]  # 20 tasks saved their state: one digest
    run()
    assert ran == [] and hashed == []  # doit's own shortcut: the same mtime is the same file
    stamp = os.stat(shared).st_mtime_ns
    shared.write_bytes(b"two")  # the same size, other bytes, a later mtime
    os.utime(shared, ns=(stamp + 10**9, stamp + 10**9))
    run()
    assert len(ran) == 20 and {p.read_bytes() for p in outputs.iterdir()} == {b"two"}
    assert hashed == [str(shared)]
    shared.write_bytes(b"two")  # the same bytes again, a later mtime: up to date by its digest
    os.utime(shared, ns=(stamp + 2 * 10**9, stamp + 2 * 10**9))
    run()
    assert ran == [] and hashed == [str(shared)]
    for n in range(3):  # a long-lived process (the MCP server) keeps no digest past its run
        shared.write_bytes(f"v{n}".encode())
        os.utime(shared, ns=(stamp + (3 + n) * 10**9, stamp + (3 + n) * 10**9))
        run()
    assert len(engine._DIGESTS) == 1


def test_a_file_dep_changed_within_its_clocks_tick_after_a_run_still_reruns(tmp_path: Path) -> None:
    """doit trusts an unchanged mtime. A file saved while it was still changing (within one tick
    of the file system's clock: a boundary's own evidence, on a clock of whole seconds two
    boundaries a second apart) may change again under the same mtime and size: such a state is
    kept without its mtime, so the next run compares the digest."""
    shared, outputs, dep_file = tmp_path / "shared", tmp_path / "out", tmp_path / "deps.sqlite"
    outputs.mkdir()
    shared.write_bytes(b"one")
    ran: list[str] = []
    code, _ = engine.run(_creators(shared, outputs, ran), ["copy"], dep_file, root=tmp_path, quiet=True)
    assert code == 0 and len(ran) == 20
    then = os.stat(shared).st_mtime_ns
    shared.write_bytes(b"two")  # the same size, other bytes, the same mtime: one tick of a coarse clock
    os.utime(shared, ns=(then, then))
    ran.clear()
    code, _ = engine.run(_creators(shared, outputs, ran), ["copy"], dep_file, root=tmp_path, quiet=True)
    assert code == 0 and len(ran) == 20
    assert {p.read_bytes() for p in outputs.iterdir()} == {b"two"}


def test_the_checker_keeps_doits_name(tmp_path: Path) -> None:
    """doit stores the checker's class name with each task and starts every task over when it
    changes: a dep file written by doit's own MD5 check stays valid."""
    assert engine.checker_class().__name__ == dependency.MD5Checker.__name__
    assert issubclass(engine.checker_class(), dependency.MD5Checker)


def test_doit_plugins_are_found_as_doit_finds_them_with_one_reading(tmp_path: Path) -> None:
    """The entry points are read once a process, and each kind of doit plugin is selected from
    them: an installed distribution's doit reporter is found as doit's own lookup finds it."""
    import subprocess
    import sys

    info = tmp_path / "site" / "mjplugin-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mjplugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[doit.REPORTER]\nmine = mjplugin:Reporter\n\n"
                                           "[doit.COMMAND]\nextra = mjplugin:Command\n")
    script = """
import importlib.metadata as metadata
from doit import plugin
from majordomus.tasks import engine
reads = []
real = metadata.distributions
def counted(**kw):
    reads.append(1)
    return real(**kw)
metadata.distributions = counted
want = {k: sorted(p.name for p in metadata.entry_points(group="doit." + k)) for k in ("COMMAND", "LOADER", "BACKEND", "REPORTER")}
reads.clear()
engine._plugins_listed_once()
got = {}
for kind in want:
    found = plugin.PluginDict()
    found.add_plugins({}, kind)
    got[kind] = sorted(found)
print(got == want, want["REPORTER"], want["COMMAND"], len(reads))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(tmp_path / "site")}).stdout.split()
    assert out == ["True", "['mine']", "['extra']", "1"]
