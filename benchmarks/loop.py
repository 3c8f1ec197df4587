#!/usr/bin/env python3
"""The closed loop's figures, reported, never asserted (issue 15):

- the start briefing's length on a store of 500 records (400 verified, one with a 5,000-character
  title, 100 candidates on the branch) and a 20,000-line ledger, against Claude Code's
  10,000-character cut of hook output; and the start hook's time there;
- the MCP server: `initialize` then `tools/list` answered, timed from process start;
- the stop hook's time when nothing is due (it runs at the end of every turn).

Times are the median and the best of N runs, and their ratio to the venv's own `python -c pass`
measured in the same run. As `scale.py` does, the source is compiled first and
PYTHONDONTWRITEBYTECODE is dropped from the children's environment: a used install has its
bytecode.

    .venv/bin/python benchmarks/loop.py [--runs N] [--keep]
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale import compile_bytecode  # noqa: E402
from synthetic import BIN, clean_env, record, timed  # noqa: E402

LEDGER_LINES = 20_000
VERIFIED = 400
CANDIDATES = 100
LONG_TITLE = "A constraint whose title goes on " + "and on " * 700

CURATED = """---
id: {rid}
kind: knowledge/v1
class: {cls}
status: verified
epistemics: decided
title: {title}
date: '{date}'
provenance:
  origin: extracted
  derived_from:
  - session:old{n}
relations:
- type: relates_to
  target: file:src/module{n}.py
---
{title}

# Evidence

checked by hand
"""


def build(root: Path, env: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=B", "-c", "user.email=b@example.invalid", "commit", "-q",
                    "--allow-empty", "-m", "initial"], cwd=root, check=True)
    for args in (["init"], ["capture", "install"]):
        subprocess.run([str(BIN / "majordomus"), *args], cwd=root, check=True, env=env, capture_output=True)
    lines = []
    for i in range(LEDGER_LINES):
        ep = f"old{i // 40}"
        if i % 40 == 0:
            lines.append(json.dumps({"ts": "2026-01-01T00:00:00Z", "event": "session.opened", "session": ep,
                                     "episode": ep, "branch": "main"}))
        else:
            lines.append(json.dumps({"ts": "2026-01-01T00:00:00Z", "event": "decision.recorded", "session": ep,
                                     "task": None, "text": f"synthetic line {i}"}))
    (root / ".ai/local/ledger.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    curated = root / ".ai/repo/knowledge/curated"
    for n in range(VERIFIED):
        title = LONG_TITLE.strip() if n == 0 else f"Synthetic verified record {n} with a title of ordinary length"
        cls = ("constraint", "convention", "lesson", "fact")[n % 4]
        (curated / f"rec-{n:03d}.md").write_text(
            CURATED.format(rid=f"rec-{n:03d}", cls=cls, title=title, date=f"2026-{n % 12 + 1:02d}-01", n=n % 500),
            encoding="utf-8")
    folder = root / ".ai/repo/knowledge/candidates"
    for n in range(CANDIDATES):
        rid = f"old{n}-{n:012x}"
        (folder / f"{rid}.md").write_text(record(rid, f"Synthetic decision {n}", [f"session:old{n}"]),
                                          encoding="utf-8")


def mcp_first_answers(root: Path, env: dict[str, str]) -> float:
    """Milliseconds from starting `majordomus mcp` to reading its `tools/list` answer."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "bench", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
    started = time.perf_counter()
    proc = subprocess.Popen([str(BIN / "majordomus"), "mcp"], cwd=root, env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
    proc.stdin.flush()
    for _ in range(2):
        answer = json.loads(proc.stdout.readline())
    elapsed = (time.perf_counter() - started) * 1000
    assert answer["id"] == 2 and answer["result"]["tools"], answer
    proc.stdin.close()
    proc.wait(timeout=30)
    return elapsed


def stats(samples: list[float], base: float) -> str:
    med, best = statistics.median(samples), min(samples)
    return f"{med:8.1f} ms {best:8.1f} ms {med / base:6.1f}x"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", action="store_true", help="keep the synthetic repository")
    args = parser.parse_args()
    env = clean_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    compile_bytecode(env)
    tmp = Path(tempfile.mkdtemp(prefix="mj-loop-"))
    try:
        root = tmp / "repo"
        root.mkdir()
        build(root, env)
        start_hook = str(root / ".claude/hooks/majordomus-session-start")
        stop_hook = str(root / ".claude/hooks/majordomus-stop")
        proc = subprocess.run([start_hook], cwd=root, env=env, capture_output=True,
                              input=json.dumps({"session_id": "bench", "source": "startup"}).encode())
        briefing = proc.stdout.decode("utf-8")
        base = [timed([sys.executable, "-c", "pass"], root, env) for _ in range(args.runs)]
        start = [timed([start_hook], root, env, json.dumps({"session_id": f"b{i}", "source": "startup"}).encode())
                 for i in range(args.runs)]
        stop = [timed([stop_hook], root, env, json.dumps({"session_id": "bench", "stop_hook_active": False,
                                                          "hook_event_name": "Stop"}).encode())
                for _ in range(args.runs)]
        mcp = [mcp_first_answers(root, env) for _ in range(args.runs)]
        sdk = [timed([sys.executable, "-c", "import mcp.server.lowlevel, mcp.server.stdio"], root, env)
               for _ in range(args.runs)] if shutil.which("python", path=str(BIN)) and _has_sdk() else []
        b = statistics.median(base)
        shown = [line for line in briefing.splitlines() if line.startswith("- ")]
        print(f"store: {VERIFIED} verified records (one with a {len(LONG_TITLE.strip())}-character title), "
              f"{CANDIDATES} candidates, a {LEDGER_LINES:,}-line ledger; {args.runs} runs; "
              f"`python -c pass` median {b:.1f} ms")
        print()
        print(f"briefing: {len(briefing):,} characters (Claude Code cuts above 10,000), {len(briefing.splitlines())} "
              f"lines, {len(shown)} list items, trimmed for size: {'yes' if 'trimmed to stay under' in briefing else 'no'}")
        print()
        print(f"{'what':52s} {'median':>11s} {'best':>11s} {'ratio':>7s}")
        print(f"{'python -c pass':52s} {stats(base, b)}")
        print(f"{'session-start hook (the briefing above)':52s} {stats(start, b)}")
        print(f"{'stop hook, nothing due':52s} {stats(stop, b)}")
        print(f"{'majordomus mcp: initialize + tools/list answered':52s} {stats(mcp, b)}")
        if sdk:
            print(f"{'(import of the MCP SDK alone, which the old server paid)':52s} {stats(sdk, b)}")
    finally:
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _has_sdk() -> bool:
    return subprocess.run([sys.executable, "-c", "import mcp"], capture_output=True).returncode == 0


if __name__ == "__main__":
    sys.exit(main())
