"""The caller's environment never redirects which repository git reads: a `GIT_DIR`, a
`GIT_WORK_TREE`, a `GIT_INDEX_FILE` ... set in the shell (a script that exported them, another
tool's hook) must not make Majordomus record, list or cite another repository."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import Repo, make_repo


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, Repo]:
    """`ours`, initialised, with one derived candidate; `other`, a plain repository on another
    branch with other commits, whose git dir the hostile environment points at."""
    base = tmp_path_factory.mktemp("env")
    ours = make_repo(base / "ours")
    other = make_repo(base / "other", init=False, capture=False)
    other.git("checkout", "-q", "-b", "elsewhere")
    other.commit("another repository's commit", {"x.txt": "x\n"})
    ours.hook("session-start", {"session_id": "e0", "cwd": str(ours.root)})
    ours.mj("decision", "add", "the one decision", env={"MAJORDOMUS_EPISODE": "e0"}, check=True)
    ours.hook("session-end", {"session_id": "e0", "cwd": str(ours.root)})
    ours.git("add", "-A")
    ours.commit("the candidate, tracked")
    return ours, other


def hostile(other: Repo, tmp: Path) -> dict[str, dict[str, str]]:
    (tmp / "empty-index").write_bytes(b"")
    return {
        "GIT_DIR": {"GIT_DIR": str(other.root / ".git")},
        "GIT_DIR+GIT_WORK_TREE": {"GIT_DIR": str(other.root / ".git"), "GIT_WORK_TREE": str(other.root)},
        "GIT_INDEX_FILE": {"GIT_INDEX_FILE": str(tmp / "empty-index")},
        "GIT_LITERAL_PATHSPECS": {"GIT_LITERAL_PATHSPECS": "1"},
        "GIT_CONFIG_COUNT": {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "core.worktree",
                             "GIT_CONFIG_VALUE_0": str(other.root)},
    }


ANSWERS = (("knowledge", "candidates", "--json"),)


def test_git_environment_never_redirects_the_repository(two: tuple[Repo, Repo], tmp_path: Path) -> None:
    ours, other = two
    clean = {args: json.loads(ours.mj(*args, check=True).stdout) for args in ANSWERS}
    assert len(clean[ANSWERS[0]]) == 1 and clean[ANSWERS[0]][0]["tracked"] is True
    head = ours.git("rev-parse", "HEAD").strip()
    failures = []
    for n, (name, env) in enumerate(hostile(other, tmp_path).items()):
        for args in ANSWERS:
            proc = ours.mj(*args, env=env)
            if proc.returncode != 0 or json.loads(proc.stdout) != clean[args]:
                failures.append(f"{name}: `{' '.join(args)}` answered differently: {proc.stdout[:200]!r} "
                                f"{proc.stderr[:200]!r}")
        episode = f"env{n}"
        hook = ours.hook("session-start", {"session_id": episode, "cwd": str(ours.root)}, env=env)
        assert hook.returncode == 0 and b"Traceback" not in hook.stderr
        opened = [l for l in ours.events("session.opened") if l["session"] == episode]
        if not opened or (opened[0]["branch"], opened[0]["head"]) != ("main", head):
            failures.append(f"{name}: the start hook recorded {opened and (opened[0]['branch'], opened[0]['head'])}"
                            f" for a repository on main at {head[:12]}")
    assert not failures, "\n".join(failures)
    assert ours.written_outside() == [] and other.git("status", "--porcelain") == ""
