"""What a derivation costs: a fresh repository, an episode with N decisions among M other ledger
lines, derived three times (a dry run, the first write, then the no-op re-run). Each size is
built afresh `--runs` times and the median of each figure is printed: the process's wall time,
its CPU time in user space and in the kernel (its git calls included; the kernel's share is mostly
the file system creating and renaming files, and it varies with the file system's state more than
with majordomus) and the deriver's own time (MJ_TIMING). Prints a table; asserts
nothing.

    .venv/bin/python benchmarks/derive.py [--runs R] [N ...]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MJ = str(Path(sys.executable).with_name("majordomus"))
RUNS = (("dry run", ("--dry-run",)), ("first", ()), ("re-run", ()))


def _cpu() -> tuple[float, float]:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime, usage.ru_stime


def run(root: Path, *args: str) -> tuple[float, float, float, float]:
    """(wall ms, user CPU ms, system CPU ms, deriver ms or NaN) of one `majordomus` call."""
    env = dict(os.environ, MJ_TIMING="1")
    (user, system), started = _cpu(), time.perf_counter()
    proc = subprocess.run([MJ, *args], cwd=root, capture_output=True, text=True, env=env, check=True)
    wall = (time.perf_counter() - started) * 1000
    after = _cpu()
    own = re.search(r"MJ_TIMING derive \S+: ([0-9.]+) ms", proc.stderr)
    return wall, (after[0] - user) * 1000, (after[1] - system) * 1000, float(own.group(1)) if own else float("nan")


def once(decisions: int, noise: int) -> list[tuple[float, float, float, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
        subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@x", "commit", "-q", "--allow-empty",
                        "-m", "i"], cwd=root, check=True)
        subprocess.run([MJ, "init"], cwd=root, check=True, capture_output=True)
        subprocess.run([MJ, "session", "start", "--id", "e1"], cwd=root, check=True, capture_output=True)
        with (root / ".ai/local/ledger.jsonl").open("a", encoding="utf-8") as ledger:
            for i in range(noise):
                ledger.write(json.dumps({"ts": "2026-01-01T00:00:00Z", "event": "checkpoint.recorded",
                                         "session": f"other{i % 50}", "note": "x"}) + "\n")
            for i in range(decisions):
                ledger.write(json.dumps({"ts": "2026-01-01T00:00:00Z", "event": "decision.recorded",
                                         "session": "e1", "task": None, "text": f"decision {i}",
                                         "why": None}) + "\n")
        return [run(root, "knowledge", "derive", *args) for _, args in RUNS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh repositories per size (median)")
    parser.add_argument("sizes", type=int, nargs="*", default=[1, 50, 500], help="decisions in the episode")
    args = parser.parse_args()
    noise = 20000
    print(f"| records | other ledger lines | run | wall ms | user CPU ms | system CPU ms | deriver ms "
          f"(MJ_TIMING) |  (medians of {args.runs})")
    print("|---|---|---|---|---|---|---|")
    for n in args.sizes:
        trials = [once(n, noise) for _ in range(args.runs)]
        for i, (label, _) in enumerate(RUNS):
            wall, user, system, own = (statistics.median(t[i][k] for t in trials) for k in range(4))
            print(f"| {n} | {noise} | {label} | {wall:.0f} | {user:.0f} | {system:.0f} | {own:.1f} |")


if __name__ == "__main__":
    main()
