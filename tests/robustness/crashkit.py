"""Kill -9 at a random moment, then check what a reader would see."""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

SEED = int(os.environ.get("MJ_CRASH_SEED", "1984"))


def rng(name: str) -> random.Random:
    """A fixed-seed generator per suite, so CI replays the same kill points."""
    return random.Random(f"{SEED}:{name}")


def kill_after(argv: list[str], cwd: Path, delay_s: float, env: dict[str, str] | None = None,
               stdin: bytes | None = None) -> bool:
    """Run `argv`, SIGKILL it after `delay_s`; True when it was killed before it finished."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env)
    assert proc.stdin is not None
    try:
        proc.stdin.write(stdin or b"")
        proc.stdin.close()
    except BrokenPipeError:
        pass
    deadline = time.monotonic() + delay_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        time.sleep(0.002)
    if proc.poll() is not None:
        return False
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return True


def assert_records_whole(folder: Path) -> int:
    """Every record a reader would list has its closing front matter; returns how many."""
    count = 0
    for path in folder.glob("*.md"):
        if path.name == "README.md":
            continue
        assert not path.name.startswith(".tmp."), path
        text = path.read_text(encoding="utf-8")
        assert text.startswith("---\n") and "\n---\n" in text[3:], f"half a record: {path}"
        count += 1
    return count


def assert_ledger_parses(path: Path) -> list[dict[str, object]]:
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines]
