"""What a derivation costs: a fresh repository, an episode with N decisions among M other ledger
lines, derived twice (first write, then the no-op re-run) and once as a dry run. Prints a table;
asserts nothing.

    .venv/bin/python benchmarks/derive.py [N ...]
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MJ = str(Path(sys.executable).with_name("majordomus"))


def run(root: Path, *args: str) -> tuple[float, str]:
    env = dict(os.environ, MJ_TIMING="1")
    started = time.perf_counter()
    proc = subprocess.run([MJ, *args], cwd=root, capture_output=True, text=True, env=env, check=True)
    wall = (time.perf_counter() - started) * 1000
    own = re.search(r"MJ_TIMING derive \S+: ([0-9.]+) ms", proc.stderr)
    return wall, own.group(1) if own else "-"


def bench(decisions: int, noise: int) -> list[str]:
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
        rows = []
        for label, args in (("dry run", ("--dry-run",)), ("first", ()), ("re-run", ())):
            wall, own = run(root, "knowledge", "derive", *args)
            rows.append(f"| {decisions} | {noise} | {label} | {wall:.0f} | {own} |")
        return rows


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1, 50, 500]
    print("| records | other ledger lines | run | process wall ms | deriver ms (MJ_TIMING) |")
    print("|---|---|---|---|---|")
    for n in sizes:
        for row in bench(n, 20000):
            print(row)


if __name__ == "__main__":
    main()
