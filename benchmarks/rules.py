"""What `check`, `doctor` and `watch` cost as the ledger and the review queue grow.

Builds a temporary repository with LINES ledger lines and CANDIDATES committed candidates, then
runs each command as a person does (a fresh process) and prints a table of wall times, with the
per-rule times MJ_TIMING=1 reports. Nothing is asserted: this prints figures.

    .venv/bin/python benchmarks/rules.py [LINES] [CANDIDATES]
"""
from __future__ import annotations

import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MJ = shutil.which("majordomus", path=str(Path(sys.executable).parent)) or "majordomus"
ENV = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid", GIT_COMMITTER_NAME="b",
           GIT_COMMITTER_EMAIL="b@example.invalid", HOME=tempfile.mkdtemp(prefix="mj-bench-home-"))


def sh(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(args), cwd=root, capture_output=True, text=True, env=env or ENV)


def build(root: Path, lines: int, candidates: int) -> None:
    sh(root, "git", "init", "-q", "-b", "work")
    sh(root, "git", "commit", "-q", "--allow-empty", "-m", "init")
    sh(root, MJ, "init")
    folder = root / ".ai/repo/knowledge/candidates"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    out = []
    for n in range(lines):
        episode = f"e{n // 4}"
        event = ("session.opened", "decision.recorded", "knowledge.derived", "session.closed")[n % 4]
        data: dict[str, object] = {"episode": episode}
        if event == "decision.recorded":
            data = {"task": "none", "text": f"decision {n}", "why": "bench"}
        if event == "knowledge.derived":
            idx = (n // 4) % max(1, candidates)
            data.update(written=1, unchanged=0, paths=[f".ai/repo/knowledge/candidates/{episode}-{idx:012x}.md"])
        out.append(json.dumps({"ts": stamp, "event": event, "session": episode, **data},
                              separators=(",", ":")))
    (root / ".ai/local/ledger.jsonl").write_text("\n".join(out) + "\n", encoding="utf-8")
    for n in range(candidates):
        rid = f"b{n}-{n:012x}"
        (folder / f"{rid}.md").write_text(
            f"---\nid: {rid}\nkind: knowledge/v1\nclass: convention\nstatus: candidate\nepistemics: decided\n"
            f"title: \"decision {n}\"\ndate: \"2026-01-01\"\nprovenance:\n  origin: extracted\n"
            f"  derived_from:\n    - \"session:b{n}\"\n---\ndecision {n}\n", encoding="utf-8")
    sh(root, "git", "add", "-A", ".ai/repo")
    sh(root, "git", "commit", "-q", "-m", "candidates")


def measure(root: Path, command: str, runs: int = 5) -> tuple[float, dict[str, float]]:
    walls, rules = [], {}
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = sh(root, MJ, command, env=dict(ENV, MJ_TIMING="1"))
        walls.append((time.perf_counter() - t0) * 1000)
        rules = {m.group(1): float(m.group(2)) for m in
                 re.finditer(r"MJ_TIMING rule (\S+): ([\d.]+) ms", proc.stderr)}
    return statistics.median(walls), rules


def main() -> None:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    candidates = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    root = Path(tempfile.mkdtemp(prefix="mj-bench-rules-"))
    try:
        build(root, lines, candidates)
        print(f"ledger {lines} lines, {candidates} committed candidates (median of 5 runs)\n")
        print(f"{'command':<8} {'wall ms':>8}  rules (ms, in process)")
        for command in ("check", "watch", "doctor"):
            wall, rules = measure(root, command)
            detail = ", ".join(f"{k.split('.', 1)[1]} {v:.1f}" for k, v in rules.items())
            print(f"{command:<8} {wall:>8.1f}  {detail}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(ENV["HOME"], ignore_errors=True)


if __name__ == "__main__":
    main()
