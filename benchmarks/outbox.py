#!/usr/bin/env python3
"""Time the outbox on the hook path: what a start costs with an empty outbox, with records
waiting on the trunk (no drain), and with a drain of N records on a branch; and `majordomus
drain` with nothing to do. Real hook scripts, a real bare remote; prints medians in a table:

    .venv/bin/python benchmarks/outbox.py [--runs N] [--records N] [--keep]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import BIN, clean_env, record, timed as sh  # noqa: E402



def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=B", "-c", "user.email=b@example.invalid", *args], cwd=root,
                   check=True, capture_output=True)


def build(base: Path, env: dict[str, str]) -> Path:
    root = base / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for args in (["init"], ["capture", "install"]):
        subprocess.run([str(BIN / "majordomus"), *args], cwd=root, check=True, env=env, capture_output=True)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    git(base, "init", "-q", "--bare", "-b", "main", "remote.git")
    git(root, "remote", "add", "origin", str(base / "remote.git"))
    git(root, "push", "-q", "-u", "origin", "main")
    git(root, "remote", "set-head", "origin", "main")
    return root


def stage(root: Path, records: int) -> None:
    """Put `records` candidates and one session record in the outbox; forget tracked copies."""
    out = root / ".ai/local/state/outbox"
    for n in range(records):
        rid = f"old-{n:012x}"
        (out / "candidates" / f"{rid}.md").write_text(record(rid, f"Synthetic decision {n}", ["session:old"]), encoding="utf-8")
        (root / ".ai/repo/knowledge/candidates" / f"{rid}.md").unlink(missing_ok=True)
    (out / "sessions" / "old.md").write_text("---\nid: old\nkind: session/v1\nbranch: main\n---\n", encoding="utf-8")
    (root / ".ai/repo/sessions/old.md").unlink(missing_ok=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--records", type=int, default=20, help="candidates staged per drain (default 20)")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic repository")
    args = parser.parse_args()
    env = clean_env()
    base = Path(tempfile.mkdtemp(prefix="majordomus-outbox-bench-"))
    try:
        root = build(base, env)
        start = root / ".claude/hooks/majordomus-session-start"
        names = ["python3 -c pass", "start, empty outbox (trunk)", f"start, {args.records + 1} waiting (trunk)",
                 f"start, drains {args.records + 1} (branch)", "majordomus drain, empty"]
        times: dict[str, list[float]] = {name: [] for name in names}
        n = 0
        for _ in range(args.runs):
            def hook(name: str) -> None:
                nonlocal n
                n += 1
                payload = json.dumps({"session_id": f"b{n}", "source": "startup"}).encode()
                times[name].append(sh([str(start)], root, env, payload))

            times[names[0]].append(sh([sys.executable, "-c", "pass"], root, env))
            git(root, "switch", "-q", "main")
            hook(names[1])
            stage(root, args.records)
            hook(names[2])
            git(root, "switch", "-q", "-C", "feature")
            hook(names[3])
            assert not any((root / ".ai/local/state/outbox/candidates").iterdir()), "the drain left records"
            times[names[4]].append(sh([str(BIN / "majordomus"), "drain"], root, env))
        python = statistics.median(times[names[0]])
        print(f"{args.runs} runs each; medians")
        print(f"{'path':<34} {'median ms':>10} {'x python':>9}")
        for name in names:
            med = statistics.median(times[name])
            print(f"{name:<34} {med:>10.1f} {med / python:>9.1f}")
    finally:
        if args.keep:
            print(f"kept: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
