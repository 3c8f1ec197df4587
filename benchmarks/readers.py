"""Cost of the readers on a large store: N candidate records (committed), a ledger of L lines whose
knowledge.derived lines name them, and each reader run through the real `majordomus` command.
Prints wall time (median of 3) and the number of git processes each started (a PATH shim counts
them). Reported, never asserted.

    .venv/bin/python benchmarks/readers.py [N] [L]
"""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECORD = """---
id: {id}
kind: knowledge/v1
class: convention
status: candidate
epistemics: decided
title: "Decision number {n}"
date: "2026-01-02"
provenance:
  origin: extracted
  derived_from:
    - "session:e{e}"
    - "decision:t-{n}"
relations:
  - type: relates_to
    target: "file:README.md"
---
Decision number {n}.
"""


def main(count: int = 2000, ledger_lines: int = 20000) -> None:
    mj = shutil.which("majordomus", path=str(Path(sys.executable).parent)) or "majordomus"
    real_git = shutil.which("git") or "git"
    with tempfile.TemporaryDirectory() as tmp:
        root, shim, log = Path(tmp) / "repo", Path(tmp) / "shim", Path(tmp) / "git.log"
        shim.mkdir()
        (shim / "git").write_text(f'#!/bin/sh\necho "$1" >> "{log}"\nexec "{real_git}" "$@"\n')
        (shim / "git").chmod(0o755)
        env = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@example.invalid",
                   GIT_COMMITTER_NAME="b", GIT_COMMITTER_EMAIL="b@example.invalid")
        root.mkdir()
        run = lambda *a: subprocess.run(a, cwd=root, env=env, check=True, capture_output=True)  # noqa: E731
        run("git", "init", "-q", "-b", "main")
        run("git", "commit", "-q", "--allow-empty", "-m", "init")
        run(mj, "init")
        folder = root / ".ai/repo/knowledge/candidates"
        ids = [f"e{n % 50}-{n:012x}" for n in range(count)]
        for n, rid in enumerate(ids):
            (folder / f"{rid}.md").write_text(RECORD.format(id=rid, n=n, e=n % 50))
        run("git", "add", ".ai")
        run("git", "commit", "-q", "-m", "records")
        with (root / ".ai/local/ledger.jsonl").open("w") as ledger:
            for n in range(ledger_lines):
                if n % 10 == 0 and n // 10 < count:
                    rid = ids[n // 10]
                    line = {"ts": "2026-01-02T03:04:05Z", "event": "knowledge.derived", "session": "e1",
                            "episode": "e1", "written": 1, "unchanged": 0,
                            "paths": [f".ai/repo/knowledge/candidates/{rid}.md"]}
                else:
                    line = {"ts": "2026-01-02T03:04:05Z", "event": "decision.recorded", "session": "e1",
                            "task": f"t-{n}", "text": f"decision {n}", "why": "because"}
                ledger.write(json.dumps(line, separators=(",", ":")) + "\n")
        shim_env = dict(env, PATH=f"{shim}{os.pathsep}{env['PATH']}")
        rows = []
        for args in (["knowledge", "candidates", "--json"], ["knowledge", "record", ids[-1], "--json"],
                     ["knowledge", "status", "--json"], ["knowledge", "edges", "--json"], ["openapi"]):
            times, calls = [], 0
            for _ in range(3):
                log.write_text("")
                start = time.perf_counter()
                subprocess.run([mj, *args], cwd=root, env=shim_env, check=True, capture_output=True)
                times.append(time.perf_counter() - start)
                calls = len(log.read_text().splitlines())
            rows.append((" ".join(args[:2]), statistics.median(times), calls))
    print(f"{count} candidate records, {ledger_lines} ledger lines")
    print(f"{'command':<24} {'wall (s)':>9} {'git processes':>14}")
    for name, wall, calls in rows:
        print(f"{name:<24} {wall:>9.3f} {calls:>14}")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
