"""The session-start hook on a prebuilt briefing (issue 31's start row): its `git status` is started
before the open path is imported, it imports nothing heavy, and it asks git once; a start that
closed an orphaned episode (which writes records) asks again."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import MAJORDOMUS, Repo
from lifecycle import age, end, start

HEAVY = {"subprocess", "typing", "doit", "sqlite3", "yaml", "jinja2", "dataclasses", "string", "threading",
         "locale", "selectors", "inspect", "ast", "urllib.parse", "ipaddress",
         "json"}  # `json`'s modules compile patterns: `lean.json` runs `_json`
if sys.version_info < (3, 12):  # a later pathlib uses `re` at import (`lean.pathlib_alone`)
    HEAVY |= {"re", "enum", "fnmatch"}


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


def test_a_start_on_a_prebuilt_briefing_prints_it_whole_and_records_its_opening(repo: Repo, tmp_path: Path) -> None:
    """The usual start ends without the interpreter's finalization (`cli/main.py`'s `_leave`):
    what it printed and wrote is all there, to a pipe and to a file alike."""
    start(repo, "e0")
    end(repo, "e0")
    body = json.loads((repo.root / ".ai/local/state/briefing.prebuilt.json").read_text())["body"]
    proc, imported = _start(repo, "e1", tmp_path / "trace")
    assert "majordomus.context.briefing" not in imported
    assert proc.returncode == 0 and proc.stdout == b"# Majordomus briefing: episode e1 (startup)\n" + body.encode()
    assert [l["session"] for l in repo.events("session.opened")][-1] == "e1"
    assert (repo.root / ".ai/local/state/episodes/e1.json").is_file()
    end(repo, "e1")
    payload = {"session_id": "e2", "transcript_path": "/x/e2.jsonl", "cwd": str(repo.root),
               "hook_event_name": "SessionStart", "source": "startup"}
    env = dict(os.environ, PATH=f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    with (tmp_path / "out").open("wb") as out:
        code = subprocess.run([str(repo.root / ".claude/hooks/majordomus-session-start")], cwd=repo.root,
                              input=json.dumps(payload).encode(), stdout=out, env=env).returncode
    assert code == 0 and (tmp_path / "out").read_bytes().startswith(b"# Majordomus briefing: episode e2 (startup)\n")
    assert (tmp_path / "out").read_bytes().endswith(b"\n")
    assert [l["session"] for l in repo.events("session.opened")][-1] == "e2"


def test_the_collector_is_off_for_the_start_hook_alone_and_on_again_when_it_composes(repo: Repo) -> None:
    code = ("import sys; sys.argv[1:] = {!r}\nimport gc, majordomus\nprint(gc.isenabled())")
    said = [subprocess.run([sys.executable, "-c", code.format(argv)], capture_output=True, text=True,
                           check=True).stdout.strip()
            for argv in (["hook", "session-start", "--hook-root", "x"], ["hook", "session-end"], ["context"], [])]
    assert said == ["False", "True", "True", "True"]
    import gc

    from majordomus.session import start as starting
    from majordomus.store.workspace import Workspace

    gc.disable()
    try:
        started = starting.start(Workspace(repo.root), "e9")  # no prebuilt briefing: it composes
        assert gc.isenabled() and started.briefing.startswith("# Majordomus briefing: episode e9")
    finally:
        gc.enable()
