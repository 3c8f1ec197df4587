#!/usr/bin/env python3
"""Time the hook paths on a synthetic repository: a 20,000-line ledger and 500 candidates.

Runs the real hook scripts fed real JSON on stdin, as Claude Code does, and prints a table of
medians and their ratio to a bare `python3 -c pass` measured in the same run:

    .venv/bin/python benchmarks/hooks.py [--runs N] [--keep]

Targets (issue 2): session end < 300 ms, session start < 100 ms, no-op re-derive < 250 ms.
Also timed, with no target: Gemini CLI's PreCompress hook when nothing changed since the start
(it fires before every model turn, and then records nothing), through its registered command.
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from majordomus.store.ledger import Ledger
from synthetic import BIN, clean_env, record, timed  # noqa: E402

LEDGER_LINES = 20_000
CANDIDATES = 500
DECISIONS = 20




def build(root: Path, env: dict[str, str]) -> None:
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=B", "-c", "user.email=b@example.invalid", "commit", "-q",
                    "--allow-empty", "-m", "initial"], cwd=root, check=True)
    for args in (["init"], ["capture", "install"], ["capture", "install", "--agent", "gemini"]):
        subprocess.run([str(BIN / "majordomus"), *args], cwd=root, check=True, env=env,
                       capture_output=True)
    ledger = root / ".ai/local/ledger.jsonl"
    lines = []
    for i in range(LEDGER_LINES):
        ep = f"old{i // 40}"
        event = ("decision.recorded", "checkpoint.recorded", "task.started", "question.opened")[i % 4]
        lines.append(json.dumps({"ts": "2026-01-01T00:00:00Z", "event": event, "session": ep,
                                 "task": None, "text": f"synthetic line {i}"}))
    ledger.write_text("\n".join(lines) + "\n", encoding="utf-8")
    folder = root / ".ai/repo/knowledge/candidates"
    for n in range(CANDIDATES):
        rid = f"old{n % 500}-{n:012x}"
        (folder / f"{rid}.md").write_text(record(rid, f"Synthetic decision {n}", [f"session:old{n % 500}"]), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--keep", action="store_true", help="keep the synthetic repository")
    args = parser.parse_args()
    env = clean_env()
    root = Path(tempfile.mkdtemp(prefix="majordomus-bench-"))
    try:
        build(root, env)
        hooks = root / ".claude/hooks"
        times: dict[str, list[float]] = {"python3 -c pass": [], "session-start hook": [],
                                         f"session-end hook ({DECISIONS} decisions)": [],
                                         "no-op re-derive": [], "gemini pre-compress, nothing new": []}
        gemini = json.loads((root / ".gemini/settings.json").read_text(encoding="utf-8"))
        precompress = gemini["hooks"]["PreCompress"][0]["hooks"][0]["command"]
        gemini_env = dict(env, GEMINI_PROJECT_DIR=str(root))
        names = list(times)
        for run in range(args.runs):
            ep = f"bench{run}"
            times[names[0]].append(timed([sys.executable, "-c", "pass"], root))
            times[names[1]].append(timed([str(hooks / "majordomus-session-start")], root, env,
                                         json.dumps({"session_id": ep, "source": "startup"}).encode()))
            times[names[4]].append(timed(["bash", "-c", precompress], root, gemini_env,
                                         json.dumps({"session_id": ep, "trigger": "auto",
                                                     "cwd": str(root)}).encode()))
            ledger = Ledger(root / ".ai/local")
            for d in range(DECISIONS):
                ledger.append("decision.recorded", ep, task=None, text=f"decision {run}.{d}", why="bench")
            times[names[2]].append(timed([str(hooks / "majordomus-session-end")], root, env,
                                         json.dumps({"session_id": ep, "reason": "other"}).encode()))
            times[names[3]].append(timed([str(BIN / "majordomus"), "knowledge", "derive", "--episode", ep],
                                         root, env))
        base = statistics.median(times[names[0]])
        targets = {names[1]: 100.0, names[2]: 300.0, names[3]: 250.0}
        lines = ledger.path.read_text(encoding="utf-8").count("\n")
        print(f"synthetic repository: {lines} ledger lines, {CANDIDATES}+ candidates, {args.runs} runs each")
        print(f"{'path':<34} {'median ms':>10} {'x python':>9} {'target ms':>10}  verdict")
        for name in names:
            med = statistics.median(times[name])
            target = targets.get(name)
            verdict = "" if target is None else ("within" if med < target else "OVER")
            print(f"{name:<34} {med:>10.1f} {med / base:>9.1f} {target or '':>10}  {verdict}")
    finally:
        if args.keep:
            print(f"kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
