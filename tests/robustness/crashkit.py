"""Kill -9 at a random moment, then check what a reader would see."""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SEED = int(os.environ.get("MJ_CRASH_SEED", "1984"))


def rng(name: str) -> random.Random:
    """A fixed-seed generator per suite, so CI replays the same kill points."""
    return random.Random(f"{SEED}:{name}")


# Trials run in this many streams at once, each on its own copy of the prepared repository: a
# trial is one process at a time (the one killed, then the reader and the rerun), so a second
# stream uses the machine's other core. Every trial asserts what it did alone.
STREAMS = 2


def in_streams(name: str, trials: int, prepared: Path,
               trial: Callable[[Path, random.Random, str], tuple[int, ...]]) -> tuple[int, ...]:
    """Run `trials` trials of `trial(root, random, tag)` in `STREAMS` threads: the first on
    `prepared`, the others on copies of it made first, each with its own seeded generator
    (`rng(f"{name}:{stream}")`) and a tag unique to the trial. Returns the trials' counts, summed."""
    roots = [prepared]
    for stream in range(1, STREAMS):
        copy = prepared.with_name(f"{prepared.name}-stream{stream}")
        shutil.copytree(prepared, copy, symlinks=True)
        roots.append(copy)

    def run(stream: int) -> list[int]:
        pick = rng(f"{name}:{stream}")
        totals: list[int] = []
        for n in range(stream, trials, STREAMS):
            counts = trial(roots[stream], pick, f"s{stream}n{n}")
            totals = [a + b for a, b in zip(totals, counts)] if totals else list(counts)
        return totals

    with ThreadPoolExecutor(STREAMS) as pool:
        results = list(pool.map(run, range(STREAMS)))
    return tuple(sum(column) for column in zip(*results))


def kill_after(argv: list[str], cwd: Path, delay_s: float, env: dict[str, str] | None = None,
               stdin: bytes | None = None) -> bool:
    """Run `argv`, SIGKILL it after `delay_s`; True when it was killed before it finished."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None
    try:
        proc.stdin.write(stdin or b"")
        proc.stdin.close()
    except BrokenPipeError:
        pass
    deadline = time.monotonic() + delay_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        time.sleep(0.002)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def assert_records_whole(folder: Path) -> int:
    """Every record a reader would list has its closing front matter; returns how many."""
    count = 0
    for path in folder.glob("*.md"):
        if path.name == "README.md":
            continue
        assert not path.name.startswith(".tmp."), path
        text = path.read_text(encoding="utf-8")
        assert text.startswith("---\n") and "\n---\n" in text[3:], f"half a record: {path}"
        count += 1
    return count


def assert_ledger_parses(path: Path) -> list[dict[str, object]]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]


HOLDER = ("import fcntl, os, sys, time\n"
          "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
          "fcntl.flock(fd, fcntl.LOCK_EX)\n"
          "print('held', flush=True)\n"
          "time.sleep(600)\n")


@contextmanager
def held(lock: Path) -> Iterator[None]:
    """Another process holds `lock` and does not let go (a `knowledge derive` stopped with Ctrl-Z)
    until the block ends."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        yield
    finally:
        proc.kill()
        proc.wait()


def queued(procs: list[subprocess.Popen[Any]], state: Path, guard_s: float = 120) -> None:
    """Wait until each process has a lock file under `state` open (it waits for that lock) or has
    ended: the gate of a race, which `held` then opens for all of them at once."""
    deadline = time.monotonic() + guard_s
    where = str(state.resolve()) + os.sep
    while time.monotonic() < deadline:
        waiting = 0
        for proc in procs:
            if proc.poll() is not None:
                waiting += 1
                continue
            try:
                fds = os.listdir(f"/proc/{proc.pid}/fd")
                targets = [os.readlink(f"/proc/{proc.pid}/fd/{fd}") for fd in fds]
            except OSError:
                continue
            if any(t.startswith(where) and t.endswith(".lock") for t in targets):
                waiting += 1
        if waiting == len(procs):
            return
        time.sleep(0.02)
    raise AssertionError(f"the processes never all waited on a lock under {state}")
