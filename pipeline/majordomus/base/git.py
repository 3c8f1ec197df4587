"""git through its command line: one process per question, batched where the question is many."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

_ENV = {"LC_ALL": "C", "LANG": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}


class GitError(RuntimeError):
    pass


def run(root: Path, *args: str, check: bool = True, input: str | None = None) -> str:
    env = dict(os.environ)
    env.update(_ENV)
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", env=env, input=input)
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)}: {proc.stderr.strip() or proc.returncode}")
    return proc.stdout


@dataclass(frozen=True)
class Head:
    branch: str | None  # None when detached
    sha: str | None  # None before the first commit


def head(root: Path) -> Head:
    """Branch and commit of HEAD, in one git call (a second only before the first commit)."""
    out = run(root, "rev-parse", "HEAD", "--abbrev-ref", "HEAD", check=False).split()
    if len(out) == 2:
        return Head(None if out[1] == "HEAD" else out[1], out[0])
    branch = run(root, "symbolic-ref", "--short", "-q", "HEAD", check=False).strip()
    return Head(branch or None, None)


def toplevel(path: Path) -> Path | None:
    out = run(path, "rev-parse", "--show-toplevel", check=False).strip()
    return Path(out) if out else None


def run_many(root: Path, *commands: tuple[str, ...]) -> list[tuple[int, str]]:
    """Several read-only git commands started together and awaited together: one batch, so a
    reader that needs two answers pays for one process's latency. Returns (code, stdout) each."""
    env = dict(os.environ)
    env.update(_ENV)
    procs = [subprocess.Popen(["git", "-c", "core.quotePath=false", *args], cwd=root, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              encoding="utf-8", errors="replace") for args in commands]
    results = []
    for proc in procs:
        out, _ = proc.communicate()
        results.append((proc.returncode, out))
    return results
