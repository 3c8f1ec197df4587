#!/usr/bin/env python3
"""The currency of verified knowledge (issue 26, docs/CURRENCY.md): how right, and how costly.

    .venv/bin/python benchmarks/currency.py [--runs N] [--skip-scale] [--keep]

1. The judgement: a seeded history (benchmarks/currencyhistory.py: 300 verified records anchored
   over 40 files; 1,000 commits that modify, rename, delete and add files at random, one in ten
   in the anchored pool) judged by the real `majordomus knowledge stale --json`, and every
   record's state read through `knowledge status --json`, against the ground truth the generator
   knows. Precision and recall of "may be stale" must both be 1.0: the rule is deterministic, so
   anything less is a defect (the exit status is then 1).
2. The cost at scale: 20,000 verified records anchored over 60 files, 10,000 commits since the
   oldest anchor. The currency read itself, through `majordomus knowledge stale --json` (which
   reads the verified records and judges each): with the records unanchored (the same command
   without currency: its floor), cold (no cache: the whole walk), warm (same HEAD) and after
   HEAD moved one commit (the cache extended by that commit alone), with the cache's size. Then
   the real session-start hook: records unanchored, anchored with the cache warm, and one new
   commit later; also timed once: its first read. Reported, never asserted.
"""
from __future__ import annotations

import argparse
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from currencyhistory import CURATED, build, score  # noqa: E402
from synthetic import BIN, clean_env, timed  # noqa: E402

MJ = str(BIN / "majordomus")


def judgement(root: Path, env: dict[str, str]) -> int:
    started = time.perf_counter()
    history = build(root)
    made = time.perf_counter() - started
    subprocess.run([MJ, "init"], cwd=root, env=env, check=True, capture_output=True)
    out = subprocess.run([MJ, "knowledge", "stale", "--json"], cwd=root, env=env, check=True, capture_output=True)
    listed = {item["id"]: item["state"] for item in json.loads(out.stdout)}
    precision, recall, _ = score(history.truth, {rid: listed.get(rid, "-") for rid in history.truth})
    wrong = sorted(r for r, t in history.truth.items() if (listed.get(r) == "may_be_stale") != (t == "may_be_stale"))
    status = json.loads(subprocess.run([MJ, "knowledge", "status", "--json"], cwd=root, env=env, check=True,
                                       capture_output=True).stdout)["currency"]
    truth = {s: sum(1 for t in history.truth.values() if t == s) for s in ("current", "may_be_stale", "unknown")}
    said = {s: status[s] for s in truth}
    print(f"judgement: {len(history.truth)} verified records, {len(history.shas) - 1} commits (built in "
          f"{made:.1f} s with git fast-import)")
    print(f"  ground truth {truth}; knowledge status says {said}")
    print(f"  may be stale: precision {precision:.3f}, recall {recall:.3f}"
          + ("" if not wrong else f"; judged wrongly: {', '.join(wrong[:10])}"))
    ok = precision == 1.0 and recall == 1.0 and said == truth
    print("  verdict: " + ("exact" if ok else "DEFECT: the rule is deterministic, anything less than 1.0 is a bug"))
    return 0 if ok else 1


def _start(root: Path, env: dict[str, str], n: int) -> float:
    hook = root / ".claude/hooks/majordomus-session-start"
    return timed([str(hook)], root, env, json.dumps({"session_id": f"bench{n}", "source": "startup"}).encode())


def _replace(path: Path, data: bytes) -> None:
    """A record rewritten as our writers and git's checkout write one: a new file renamed into
    place (the knowledge index trusts a large folder whose entries did not change, docs/KNOWLEDGE.md)."""
    tmp = path.with_name(f".tmp.{path.name}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _unanchor(root: Path) -> None:
    for path in (root / CURATED).iterdir():
        text = path.read_text(encoding="utf-8")
        _replace(path, re.sub(r"anchors:\n(?:  - .*\n)+", "", text).encode("utf-8"))


def scale(root: Path, env: dict[str, str], runs: int) -> None:
    started = time.perf_counter()
    history = build(root, commits=10_000, records=20_000, files=2_000, pool=60)
    print(f"scale: {len(history.truth)} verified records, {len(history.shas) - 1} commits since the oldest "
          f"anchor (built in {time.perf_counter() - started:.1f} s)")
    for args in (["init"], ["capture", "install"]):
        subprocess.run([MJ, *args], cwd=root, env=env, check=True, capture_output=True)
    anchored = {p.name: p.read_bytes() for p in (root / CURATED).iterdir()}
    stale_read(root, env, runs, anchored)
    _unanchor(root)
    _start(root, env, 0)  # the known-records cache, warmed for every row alike
    rows: dict[str, list[float]] = {"python3 -c pass": [], "start hook, records unanchored": [],
                                    "start hook, anchored, cache warm": [],
                                    "start hook, anchored, one commit later": []}
    names = list(rows)
    for n in range(runs):
        rows[names[0]].append(timed([sys.executable, "-c", "pass"], root))
        rows[names[1]].append(_start(root, env, n))
    for name, data in anchored.items():
        _replace(root / CURATED / name, data)
    cache = root / ".ai/local/state/currency.cache.json"
    cache.unlink(missing_ok=True)
    _start(root, env, 0)  # the known-records cache again (the files changed)
    cache.unlink(missing_ok=True)
    first = _start(root, env, 0)
    for n in range(runs):
        rows[names[2]].append(_start(root, env, n))
    for n in range(runs):
        _commit(root, f"one more {n}")
        rows[names[3]].append(_start(root, env, n))
    base = statistics.median(rows[names[0]])
    print(f"{'path':<42} {'median ms':>10} {'x python':>9}")
    for name in names:
        med = statistics.median(rows[name])
        print(f"{name:<42} {med:>10.1f} {med / base:>9.1f}")
    print(f"{'start hook, anchored, first read (once)':<42} {first:>10.1f} {first / base:>9.1f}")


def _commit(root: Path, message: str) -> None:
    subprocess.run(["git", "-c", "user.name=B", "-c", "user.email=b@example.invalid", "commit", "-q",
                    "--allow-empty", "-m", message], cwd=root, check=True)


def stale_read(root: Path, env: dict[str, str], runs: int, anchored: dict[str, bytes]) -> None:
    """The currency read at scale: `knowledge stale --json` unanchored, cold, warm, one commit later."""
    stale = [MJ, "knowledge", "stale", "--json"]
    cache = root / ".ai/local/state/currency.cache.json"
    rows: dict[str, list[float]] = {"python3 -c pass": [], "knowledge stale, records unanchored": [],
                                    "knowledge stale, cold (no cache)": [], "knowledge stale, warm": [],
                                    "knowledge stale, HEAD moved one commit": []}
    names = list(rows)
    _unanchor(root)
    timed(stale, root, env)  # the known-records cache, warmed for every row alike
    for _ in range(runs):
        rows[names[0]].append(timed([sys.executable, "-c", "pass"], root))
        rows[names[1]].append(timed(stale, root, env))
    for name, data in anchored.items():
        _replace(root / CURATED / name, data)
    timed(stale, root, env)  # the known-records cache again (the files changed)
    for _ in range(max(1, runs // 2)):  # each a whole walk of 10,000 commits
        cache.unlink(missing_ok=True)
        rows[names[2]].append(timed(stale, root, env))
    for _ in range(runs):
        rows[names[3]].append(timed(stale, root, env))
    for n in range(runs):
        _commit(root, f"one commit {n}")
        rows[names[4]].append(timed(stale, root, env))
    base = statistics.median(rows[names[0]])
    print(f"currency read: `knowledge stale --json`, {len(anchored):,} verified records; cache "
          f"{cache.stat().st_size / 1024:.0f} KiB")
    print(f"{'path':<42} {'runs':>5} {'median ms':>10} {'x python':>9}")
    for name in names:
        med = statistics.median(rows[name])
        print(f"{name:<42} {len(rows[name]):>5} {med:>10.1f} {med / base:>9.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-scale", action="store_true", help="the judgement only")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic repositories")
    args = parser.parse_args()
    env = clean_env()
    top = Path(tempfile.mkdtemp(prefix="majordomus-currency-"))
    try:
        code = judgement(top / "judgement", env)
        if not args.skip_scale:
            scale(top / "scale", env, args.runs)
    finally:
        if args.keep:
            print(f"kept: {top}")
        else:
            shutil.rmtree(top, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
