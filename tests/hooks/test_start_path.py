"""The session-start hook on a prebuilt briefing (issue 31's start row): its `git status` is started
before the open path is imported, it imports nothing heavy, and it asks git once; a start that
closed an orphaned episode (which writes records) asks again."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import MAJORDOMUS, Repo
from lifecycle import age, end, start

HEAVY = {"subprocess", "typing", "doit", "sqlite3", "yaml", "jinja2", "dataclasses", "string", "threading",
         "locale", "selectors", "inspect", "ast", "urllib.parse", "ipaddress",
         "re", "enum", "fnmatch", "json"}  # `json`'s modules compile patterns: `lean.json` runs `_json`


def _start(repo: Repo, episode: str, trace: Path) -> tuple[subprocess.CompletedProcess[bytes], set[str]]:
    """The real start hook script, its interpreter's imports listed (`-X importtime`)."""
    env = dict(os.environ, GIT_TRACE=str(trace), PYTHONPROFILEIMPORTTIME="1")
    env["PATH"] = f"{Path(MAJORDOMUS).parent}{os.pathsep}{env.get('PATH', '')}"
    payload = {"session_id": episode, "transcript_path": f"/x/{episode}.jsonl", "cwd": str(repo.root),
               "hook_event_name": "SessionStart", "source": "startup"}
    proc = subprocess.run([str(repo.root / ".claude/hooks/majordomus-session-start")], cwd=repo.root,
                          input=json.dumps(payload).encode(), capture_output=True, env=env)
    lines = proc.stderr.decode().splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    assert [line for line in lines if not line.startswith("import time:")] == []
    return proc, imported


def _statuses(trace: Path) -> list[str]:
    return [line for line in trace.read_text().splitlines() if "built-in: git" in line and " status " in line]


def test_a_start_on_a_prebuilt_briefing_imports_nothing_heavy_and_asks_git_once(repo: Repo, tmp_path: Path) -> None:
    start(repo, "e0")
    end(repo, "e0")  # the close prebuilds the next start's briefing
    trace = tmp_path / "trace"
    proc, imported = _start(repo, "e1", trace)
    assert proc.returncode == 0 and proc.stdout.startswith(b"# Majordomus briefing: episode e1 (startup)")
    assert "majordomus.context.briefing" not in imported  # the prebuilt text, not a composition
    assert imported & HEAVY == set()
    assert len(_statuses(trace)) == 1


def test_the_status_is_asked_early_only_in_an_initialised_checkouts_top(repo: Repo, tmp_path: Path) -> None:
    """`cli/main.py` starts it before importing the hook's modules, for the hook script's root."""
    from majordomus.base import git
    from majordomus.cli.main import _ask_early

    asked = _ask_early("session-start", str(repo.root))
    assert asked is not None and git.status_of(repo.root, asked).head.branch == "main"
    assert _ask_early("session-end", str(repo.root)) is None
    assert _ask_early("session-start", None) is None
    assert _ask_early("session-start", str(repo.root / ".ai")) is None  # not the top
    assert _ask_early("session-start", str(tmp_path)) is None


def test_a_start_that_closes_an_orphan_asks_git_again(repo: Repo, tmp_path: Path) -> None:
    start(repo, "e0")
    repo.mj("decision", "add", "decided before the end never came", env={"MAJORDOMUS_EPISODE": "e0"}, check=True)
    age(repo, "e0", 1441)
    trace = tmp_path / "trace"
    proc, _ = _start(repo, "e1", trace)
    assert proc.returncode == 0 and proc.stdout.startswith(b"# Majordomus briefing: episode e1 (startup)")
    assert [l["session"] for l in repo.events("session.closed")] == ["e0"]
    # the first answer predates the sweep's records: the start asks again, and the briefing's
    # git state is the second answer's (the orphan's record is in it, untracked)
    assert len(_statuses(trace)) == 2
    [opened] = [l for l in repo.events("session.opened") if l["session"] == "e1"]
    assert opened["head"] == repo.git("rev-parse", "HEAD").strip()
