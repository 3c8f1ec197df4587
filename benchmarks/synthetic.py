"""What the benchmarks share: the installed command, a clean environment, a timed run, and a
synthetic candidate record in the shape the deriver writes."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def clean_env() -> dict[str, str]:
    """This environment with the venv's commands first and no episode or timing switches."""
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    for key in ("MAJORDOMUS_EPISODE", "MAJORDOMUS_ROOT", "CLAUDE_ENV_FILE", "CLAUDE_PROJECT_DIR", "MJ_TIMING"):
        env.pop(key, None)
    return env


def timed(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, stdin: bytes | None = None) -> float:
    """Milliseconds `cmd` took; a failure (or a hook's reported failure) stops the benchmark."""
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, env=env)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0 or b"failed" in proc.stderr:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return elapsed * 1000


def record(rid: str, title: str, refs: list[str], relations: list[str] = (), date: str = "2026-01-01") -> str:  # type: ignore[assignment]
    """A candidate record as the deriver renders one."""
    lines = ["---", f"id: {rid}", "kind: knowledge/v1", "class: convention", "status: candidate",
             "epistemics: decided", f'title: "{title}"', f'date: "{date}"', "provenance:",
             "  origin: extracted", "  derived_from:"] + [f'    - "{r}"' for r in refs]
    if relations:
        lines.append("relations:")
        for target in relations:
            lines += ["  - type: relates_to", f'    target: "{target}"']
    return "\n".join(lines + ["---", title, ""])
