#!/usr/bin/env python3
"""Time `majordomus knowledge check` on a synthetic store and count the git processes it starts.

Builds a temporary repository with 10,000 records (3 references each), a ledger naming their
episodes, tasks and decisions, and 1,000 commits, then runs the real command with `MJ_TIMING=1`
through a PATH shim that logs every `git` process started:

    .venv/bin/python benchmarks/check.py [--records N] [--runs N] [--keep]

Target (issue 5): under 2 s wall, and exactly one git query for all commit references.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
COMMITS = 1_000
PER_EPISODE = 40
FILES = 200

RECORD = """---
id: {rid}
kind: knowledge/v1
class: convention
status: candidate
epistemics: decided
title: "Synthetic decision {n}"
date: "2026-01-01"
provenance:
  origin: extracted
  derived_from:
{refs}---
Synthetic decision {n}

Why: a benchmark needs a body
"""

# Each scenario: the three references of record n, given its episode, task and commit.
SCENARIOS = {
    "session + decision|task + commit": lambda ep, task, sha, path, n: [
        f"session:{ep}", f"{'decision' if n % 2 else 'task'}:{task}", f"commit:{sha}"],
    "session + commit + file": lambda ep, task, sha, path, n: [
        f"session:{ep}", f"commit:{sha}", f"file:{path}"],
}


def git(root: Path, *args: str, stdin: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=root, input=stdin, capture_output=True, check=True)
    return proc.stdout.decode()


def build_repo(root: Path, env: dict[str, str]) -> list[str]:
    """A repository with FILES tracked files and COMMITS commits (one fast-import); their shas."""
    git(root, "init", "-q", "-b", "main")
    lines: list[str] = []
    for i in range(COMMITS):
        msg = f"c{i}"
        lines.append(f"commit refs/heads/main\nmark :{i + 1}\n"
                     f"committer B <b@example.invalid> {1767225600 + i} +0000\n"
                     f"data {len(msg)}\n{msg}\n")
        if i == 0:
            lines += [f"M 644 inline src/f{k}.txt\ndata 2\n{k % 10}\n" for k in range(FILES)]
    git(root, "fast-import", "--quiet", stdin="".join(lines).encode())
    git(root, "reset", "-q", "--hard", "main")
    subprocess.run([str(BIN / "majordomus"), "init"], cwd=root, check=True, env=env, capture_output=True)
    return git(root, "rev-list", "main").split()


def build_store(root: Path, shas: list[str], records: int, refs_of: object) -> None:
    ledger, folder = [], root / ".ai/repo/knowledge/candidates"
    for old in folder.glob("bench*.md"):
        old.unlink()
    for n in range(records):
        ep, task = f"bench{n // PER_EPISODE}", f"t-{n:08x}"
        if n % PER_EPISODE == 0:
            ledger.append({"ts": "2026-01-01T00:00:00Z", "event": "session.opened", "session": ep,
                           "episode": ep, "source": "startup"})
        ledger.append({"ts": "2026-01-01T00:00:01Z", "event": "task.started", "session": ep,
                       "task": task, "title": f"task {n}"})
        ledger.append({"ts": "2026-01-01T00:00:02Z", "event": "decision.recorded", "session": ep,
                       "task": task, "text": f"Synthetic decision {n}"})
        refs = refs_of(ep, task, shas[n % len(shas)], f"src/f{n % FILES}.txt", n)  # type: ignore[operator]
        rid = f"{ep}-{n:012x}"
        text = RECORD.format(rid=rid, n=n, refs="".join(f'    - "{r}"\n' for r in refs))
        (folder / f"{rid}.md").write_text(text, encoding="utf-8")
    (root / ".ai/local/ledger.jsonl").write_text("".join(json.dumps(l) + "\n" for l in ledger), encoding="utf-8")


def shim(folder: Path, log: Path) -> Path:
    """A `git` first on PATH that logs its arguments, then runs the real git."""
    real = shutil.which("git")
    folder.mkdir()
    script = folder / "git"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return folder


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_check(root: Path, env: dict[str, str], log: Path) -> tuple[float, int, list[str], str, float]:
    """Wall ms, git processes, their arguments, the MJ_TIMING line, and CPU ms (with git's)."""
    log.write_text("", encoding="utf-8")
    cpu, started = _children_cpu(), time.perf_counter()
    proc = subprocess.run([str(BIN / "majordomus"), "knowledge", "check"], cwd=root, env=env,
                          capture_output=True, text=True)
    wall = (time.perf_counter() - started) * 1000
    cpu = (_children_cpu() - cpu) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"check exited {proc.returncode}: {proc.stdout[-800:]}{proc.stderr[-800:]}")
    calls = [l for l in log.read_text(encoding="utf-8").splitlines() if l]
    timing = next((l for l in proc.stderr.splitlines() if l.startswith("MJ_TIMING")), "")
    return wall, len(calls), calls, timing, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the synthetic repository")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="majordomus-bench-check-"))
    root, log = tmp / "repo", tmp / "git-calls.log"
    root.mkdir()
    base_env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
                    GIT_AUTHOR_NAME="B", GIT_AUTHOR_EMAIL="b@example.invalid",
                    GIT_COMMITTER_NAME="B", GIT_COMMITTER_EMAIL="b@example.invalid")
    for key in ("MAJORDOMUS_EPISODE", "MAJORDOMUS_ROOT", "CLAUDE_ENV_FILE", "MJ_TIMING"):
        base_env.pop(key, None)
    env = dict(base_env, MJ_TIMING="1", PATH=f"{shim(tmp / 'shim', log)}{os.pathsep}{base_env['PATH']}")
    try:
        shas = build_repo(root, base_env)
        print(f"synthetic store: {args.records} records x 3 references, {len(shas)} commits, "
              f"{FILES} tracked files, {args.runs} runs each (median); load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        print(f"{'scenario':<34} {'wall ms':>8} {'cpu ms':>7} {'check ms':>9} {'git procs':>9} {'target':>8}  "
              "verdict  git processes")
        for name, refs_of in SCENARIOS.items():
            build_store(root, shas, args.records, refs_of)
            results = [run_check(root, env, log) for _ in range(args.runs)]
            wall = statistics.median(r[0] for r in results)
            cpu = statistics.median(r[4] for r in results)
            inner = statistics.median(float(dict(kv.split("=", 1) for kv in r[3].split()[3:])["ms_total"])
                                      for r in results)
            procs = results[-1][1]
            commit_queries = sum(1 for c in results[-1][2] if c.startswith("cat-file"))
            ok = wall < 2000 and commit_queries == 1
            print(f"{name:<34} {wall:>8.0f} {cpu:>7.0f} {inner:>9.0f} {procs:>9} {'<2000':>8}  {'within' if ok else 'OVER':<7}  "
                  + "; ".join(c.split(' ', 1)[0] if not c.startswith('-c') else c.split(' ')[2] for c in results[-1][2]))
            print(f"  {results[-1][3]}")
    finally:
        if args.keep:
            print(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
