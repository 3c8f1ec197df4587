"""One git process per boundary: the close reads HEAD and the trunk from git's files (the record's
place, the derivation's folder and the drain all route by that answer), asks for the episode's
commits only when HEAD moved since the open, and prebuilds the next start's briefing after one
`git status`; a re-derivation that changes nothing runs neither git nor doit."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import Repo


def _git_processes(trace: Path) -> list[str]:
    """The git commands a run started, from GIT_TRACE (one `built-in` line a process)."""
    if not trace.exists():
        return []
    return [line.split("built-in: git ", 1)[1].split()[0] for line in trace.read_text().splitlines()
            if "trace: built-in: git " in line]


def test_a_close_with_nothing_committed_runs_one_git_process(episode: Repo, tmp_path: Path) -> None:
    for n in range(3):
        episode.mj("decision", "add", f"use the index {n}", check=True)
    trace = tmp_path / "trace"
    proc = episode.hook("session-end", {"session_id": "e1", "reason": "other"}, env={"GIT_TRACE": str(trace)})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    # the refs are read from files; the next start's briefing, prebuilt (docs/CONTEXT.md): its status
    assert _git_processes(trace) == ["status"]
    (derived,) = episode.events("knowledge.derived")
    assert derived["written"] == 3 and len(episode.candidates()) == 3
    (closed,) = episode.events("session.closed")
    assert closed["branch"] == "main" and closed["head"] == episode.git("rev-parse", "HEAD").strip()


def test_a_close_after_a_commit_asks_for_the_episode_commits(episode: Repo, tmp_path: Path) -> None:
    episode.mj("decision", "add", "rules live in the repository", check=True)
    sha = episode.commit("a rule", {".ai/repo/rules/project/r.md": "a rule\n"})
    trace = tmp_path / "trace"
    episode.hook("session-end", {"session_id": "e1", "reason": "other"}, env={"GIT_TRACE": str(trace)})
    assert _git_processes(trace)[:1] == ["log"]
    (record,) = episode.candidates()
    assert f"commit:{sha}" in record.read_text()


def test_a_rederivation_with_nothing_to_do_runs_no_doit(episode: Repo, tmp_path: Path) -> None:
    episode.mj("decision", "add", "one", check=True)
    episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    before = {p: p.read_bytes() for p in episode.candidates()}
    trace = tmp_path / "trace"
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "majordomus", "knowledge", "derive",
                           "--episode", "e1"], cwd=episode.root, capture_output=True, text=True,
                          env={**__import__("os").environ, "GIT_TRACE": str(trace)})
    assert proc.returncode == 0 and "nothing changed (1 record up to date)" in proc.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert not {m for m in imported if m.split(".")[0] == "doit"}
    assert _git_processes(trace) == []
    assert {p: p.read_bytes() for p in episode.candidates()} == before
    last = episode.events("knowledge.derived")[-1]
    assert (last["written"], last["unchanged"]) == (0, 1)


def test_a_rederivation_after_a_hand_edit_goes_through_doit(episode: Repo) -> None:
    """Something would change (a person's edit, a deleted record): doit decides, as before."""
    episode.mj("decision", "add", "one", check=True)
    episode.mj("decision", "add", "two", check=True)
    episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    first, second = episode.candidates()
    first.write_text(first.read_text() + "\nA person's note.\n")
    second.unlink()
    out = episode.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert "edited by hand" in out.stderr and second.exists()
    last = episode.events("knowledge.derived")[-1]
    assert (last["written"], last.get("edited")) == (1, 1)

