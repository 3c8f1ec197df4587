#!/usr/bin/env python3
"""Soak: many episodes through the real hooks, then `knowledge check` and `doctor` over the result.

Each episode is a session-start hook, two decisions and a question resolved in its window, and a
session-end hook, all fed real JSON on stdin. Prints throughput and the peak memory of any child
process:

    .venv/bin/python benchmarks/soak.py [--episodes 1000] [--keep]
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from majordomus.store.ledger import Ledger

from synthetic import BIN, clean_env  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    env = clean_env()
    root = Path(tempfile.mkdtemp(prefix="majordomus-soak-"))
    try:
        subprocess.run(["git", "init", "-q", "-b", "feature"], cwd=root, check=True)
        subprocess.run(["git", "-c", "user.name=S", "-c", "user.email=s@example.invalid", "commit", "-q",
                        "--allow-empty", "-m", "initial"], cwd=root, check=True)
        for cmd in (["init"], ["capture", "install"]):
            subprocess.run([str(BIN / "majordomus"), *cmd], cwd=root, env=env, check=True, capture_output=True)
        hooks = root / ".claude/hooks"
        ledger = Ledger(root / ".ai/local")
        failures = 0
        started = time.perf_counter()
        for n in range(args.episodes):
            ep = f"soak{n:05d}"
            proc = subprocess.run([str(hooks / "majordomus-session-start")], cwd=root, env=env, capture_output=True,
                                  input=json.dumps({"session_id": ep, "source": "startup"}).encode())
            failures += proc.returncode != 0 or bool(proc.stderr)
            ledger.append("decision.recorded", ep, task=None, text=f"decision {n}.a", why="soak")
            ledger.append("decision.recorded", ep, task=None, text=f"decision {n}.b", why=None)
            ledger.append("question.resolved", ep, question=f"q-{n:08x}", task=None, text=f"question {n}?",
                          answer=f"answer {n}")
            proc = subprocess.run([str(hooks / "majordomus-session-end")], cwd=root, env=env, capture_output=True,
                                  input=json.dumps({"session_id": ep, "reason": "other"}).encode())
            failures += proc.returncode != 0 or bool(proc.stderr)
        elapsed = time.perf_counter() - started
        records = len(list((root / ".ai/repo/knowledge/candidates").glob("soak*.md")))
        checks = []
        for cmd in (["knowledge", "check"], ["doctor"]):
            t0 = time.perf_counter()
            proc = subprocess.run([str(BIN / "majordomus"), *cmd], cwd=root, env=env, capture_output=True, text=True)
            checks.append((" ".join(cmd), proc.returncode, (time.perf_counter() - t0) * 1000,
                           (proc.stdout + proc.stderr).strip().splitlines()[-1:] or [""]))
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        lines = sum(1 for _ in open(ledger.path, encoding="utf-8"))
        print(f"{'episodes':<28} {args.episodes}")
        print(f"{'hook runs':<28} {2 * args.episodes} ({failures} failed)")
        print(f"{'records derived':<28} {records}")
        print(f"{'ledger lines':<28} {lines}")
        print(f"{'wall time':<28} {elapsed:.1f} s")
        print(f"{'throughput':<28} {args.episodes / elapsed:.2f} episodes/s ({elapsed / args.episodes * 1000:.0f} ms each)")
        print(f"{'peak child RSS':<28} {peak_mb:.1f} MiB")
        for name, code, ms, last in checks:
            print(f"{name:<28} exit {code} in {ms:.0f} ms: {last[0][:100]}")
        return 0 if failures == 0 and all(code == 0 for _, code, _, _ in checks) else 1
    finally:
        if args.keep:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
