"""Costs of the generated-schema paths, printed as a table (never asserted in tests).

    .venv/bin/python benchmarks/generate.py
"""
from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent


def timed(argv: list[str], cwd: Path, runs: int = 5) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        schemas = Path(tmp) / "schemas"
        shutil.copytree(PROJECT / "schemas", schemas)
        proto = schemas / "knowledge.v1.proto"
        gen = [str(BIN / "majordomus"), "generate", "--proto", str(proto)]
        subprocess.run(gen, cwd=tmp, check=True, capture_output=True)
        rows.append(("majordomus generate, up to date (process)", timed(gen, Path(tmp))))
        rows.append(("majordomus generate --check (protoc + render)", timed([*gen, "--check"], Path(tmp))))
        render = [sys.executable, "-c", "from pathlib import Path; from majordomus.proto import generate; "
                  f"generate.render(Path({str(proto)!r}))"]
        rows.append(("compile + render in a fresh interpreter", timed(render, PROJECT)))
    policy = [sys.executable, "-c", "from pathlib import Path; from majordomus.store import policy; "
              f"policy.load(Path({str(PROJECT / '.ai-skeleton/repo/policy.yaml')!r}))"]
    rows.append(("policy.load in a fresh interpreter", timed(policy, PROJECT)))
    bare = [sys.executable, "-c", "pass"]
    rows.append(("bare interpreter", timed(bare, PROJECT)))

    sys.path.insert(0, str(PROJECT))
    from majordomus.store import schema

    meta = {"id": "e1-0123456789ab", "kind": "knowledge/v1", "class": "fact", "status": "candidate",
            "epistemics": "observed", "title": "t", "date": "2026-01-02",
            "provenance": {"origin": "extracted", "derived_from": ["session:e1", "task:t1"]}}
    start = time.perf_counter()
    schema.record_problems(meta)
    rows.append(("record_problems, first call (import + compile)", (time.perf_counter() - start) * 1000))
    start = time.perf_counter()
    for _ in range(500):
        schema.record_problems(meta)
    rows.append(("record_problems x500 after that", (time.perf_counter() - start) * 1000))

    width = max(len(name) for name, _ in rows)
    print(f"{'work'.ljust(width)}  median ms")
    for name, ms in rows:
        print(f"{name.ljust(width)}  {ms:9.1f}")


if __name__ == "__main__":
    main()
