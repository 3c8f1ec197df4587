"""Two versions of majordomus paired in the cycle a person lives: on each side's own copy of one
store, a session-start hook (timed), twenty decisions appended to the episode's window, the
session-end hook (timed); the sides take turns, the first alternating. A hook is measured after
the boundary that precedes it, not on a store at rest: a cache that wins at rest can lose here
(docs/PERFORMANCE.md, issue 31's fifth step).

    python benchmarks/cycle.py NEW_REPO NEW_BIN OLD_REPO OLD_BIN [--pairs N]

NEW_REPO and OLD_REPO are two copies of one repository with the hooks installed (`scale.py
--keep` leaves one: copy it twice with `cp -a`, then run `git status` once in each copy);
NEW_BIN and OLD_BIN are the `bin` folders whose `majordomus` each side runs (a venv's). Prints
each hook's median wall and CPU ms a side, the medians of the pair-by-pair new/old ratios, and
in how many rounds the two starts printed the same bytes (the same store, the same episodes: a
difference is a change of output); each run closes episodes of its own (a second run on the same
copies would close episodes already derived, whose records it leaves unchanged). Bytecode is compiled first; PYTHONDONTWRITEBYTECODE is
dropped from the hooks' environment. The stores grow by a round's episode each pair.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HOOKS = {"start": ".claude/hooks/majordomus-session-start", "end": ".claude/hooks/majordomus-session-end"}
DECISIONS = 20
WHEN = "2026-01-01T12:00:00Z"  # the decisions' time: the same bytes on both sides


def timed(command: list[str], payload: bytes, cwd: Path, env: dict[str, str]) -> tuple[bytes, float, float]:
    """The command's stdout, wall ms and CPU ms (user + system of its process tree)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = os.times().elapsed
    done = subprocess.run(command, input=payload, cwd=cwd, env=env, capture_output=True, timeout=600)
    wall = os.times().elapsed - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return done.stdout, wall * 1000, cpu * 1000


def payload(repo: Path, episode: str, event: str, **more: str) -> bytes:
    """What Claude Code sends a hook on stdin."""
    return json.dumps({"session_id": episode, "transcript_path": "/dev/null", "cwd": str(repo),
                       "hook_event_name": event, **more}).encode()


def decisions(repo: Path, episode: str, n: int) -> None:
    task = f"t-cycle{n:05d}"
    lines = [{"ts": WHEN, "event": "task.started", "session": episode, "task": task, "title": f"cycle {n}",
              "scope": None}]
    lines += [{"ts": WHEN, "event": "decision.recorded", "session": episode, "task": task,
               "text": f"Cycle decision {n}.{d}: use choice {d}", "why": f"cycle {n}"} for d in range(DECISIONS)]
    with open(repo / ".ai" / "local" / "ledger.jsonl", "a", encoding="utf-8") as ledger:
        ledger.write("".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("new_repo", type=Path)
    parser.add_argument("new_bin", type=Path)
    parser.add_argument("old_repo", type=Path)
    parser.add_argument("old_bin", type=Path)
    parser.add_argument("--pairs", type=int, default=10)
    args = parser.parse_args()
    sides = {"new": (args.new_repo.resolve(), args.new_bin.resolve()),
             "old": (args.old_repo.resolve(), args.old_bin.resolve())}
    for repo, bin_dir in sides.values():
        missing = [p for p in (repo / HOOKS["start"], repo / HOOKS["end"], bin_dir / "majordomus") if not p.exists()]
        if missing:
            sys.exit(f"cycle.py: {missing[0]} is missing: give a repository with the hooks installed and a venv's bin")
        subprocess.run([str(bin_dir / "python"), "-c", "import compileall, os, majordomus; "
                        "compileall.compile_dir(os.path.dirname(majordomus.__file__), quiet=1)"],
                       check=False, capture_output=True)  # the side's package, as the hooks import it
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    figures: dict[str, dict[str, list[tuple[float, float]]]] = {s: {"start": [], "end": []} for s in sides}
    same = 0
    # this run's own episodes: a second run on the same copies would otherwise close episodes
    # already derived, whose records are unchanged (no folder written, nothing rescanned)
    run = f"{time.time_ns() // 1_000_000:x}"
    for n in range(args.pairs + 1):  # round 0 warms both sides up, untimed
        order = list(sides) if n % 2 else list(reversed(sides))
        printed = {}
        for side in order:
            repo, bin_dir = sides[side]
            env = dict(base, PATH=f"{bin_dir}{os.pathsep}{base.get('PATH', '')}")
            episode = f"cycle-{run}-{n}"
            out, wall, cpu = timed([str(repo / HOOKS["start"])],
                                   payload(repo, episode, "SessionStart", source="startup"), repo, env)
            printed[side] = out
            if n:
                figures[side]["start"].append((wall, cpu))
            decisions(repo, episode, n)
            _, wall, cpu = timed([str(repo / HOOKS["end"])], payload(repo, episode, "SessionEnd", reason="other"),
                                 repo, env)
            if n:
                figures[side]["end"].append((wall, cpu))
        same += printed["new"] == printed["old"]
    print(f"{args.pairs} pairs; the two starts printed the same bytes in {same} of {args.pairs + 1} rounds")
    print("| hook | new wall ms | new CPU ms | old wall ms | old CPU ms | new/old CPU | new/old wall |")
    print("|---|---|---|---|---|---|---|")
    for hook in HOOKS:
        new, old = figures["new"][hook], figures["old"][hook]
        cpu = statistics.median(a[1] / b[1] for a, b in zip(new, old))
        wall = statistics.median(a[0] / b[0] for a, b in zip(new, old))
        print(f"| {hook} | {statistics.median(w for w, _ in new):.0f} | {statistics.median(c for _, c in new):.0f} "
              f"| {statistics.median(w for w, _ in old):.0f} | {statistics.median(c for _, c in old):.0f} "
              f"| {cpu:.3f} | {wall:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
