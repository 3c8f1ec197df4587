"""git through its command line: one process per question, batched where the question is many.

The caller's environment never decides which repository git reads: every `GIT_*` variable is
dropped before git runs (`GIT_DIR`, `GIT_WORK_TREE`, `GIT_INDEX_FILE`, `GIT_OBJECT_DIRECTORY`,
`GIT_NAMESPACE`, `GIT_CONFIG_PARAMETERS`, `GIT_LITERAL_PATHSPECS` ... would each make git answer
about another repository, another index or another reading of our pathspecs), except the
few that say who commits and which configuration files a person keeps (`KEPT`).
"""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

_ENV = {"LC_ALL": "C", "LANG": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
# The GIT_* variables a caller may set: identity, where a person's configuration lives, how far up
# a repository is looked for (a ceiling only narrows), where
# git's own programs are, and tracing. Any other GIT_* is dropped (an allow-list, so a variable
# a later git adds cannot redirect us either).
KEPT = frozenset({"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
                  "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM",
                  "GIT_CONFIG_NOSYSTEM", "GIT_CEILING_DIRECTORIES", "GIT_EXEC_PATH", "GIT_TRACE",
                  "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF", "GIT_TRACE_PERFORMANCE",
                  "GIT_TRACE_SETUP"})


class GitError(RuntimeError):
    pass


def environment() -> dict[str, str]:
    """The environment git runs in: the caller's, without the GIT_* variables that would choose
    another repository, work tree, index, object store, namespace or configuration for it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in KEPT}
    env.update(_ENV)
    return env


def run(root: Path, *args: str, check: bool = True, input: str | None = None) -> str:
    env = environment()
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
    env = environment()
    procs = [subprocess.Popen(["git", "-c", "core.quotePath=false", *args], cwd=root, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                              encoding="utf-8", errors="replace") for args in commands]
    results = []
    for proc in procs:
        out, _ = proc.communicate()
        results.append((proc.returncode, out))
    return results
