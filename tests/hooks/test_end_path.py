"""The session-end hook (issue 31's end row: close, derive, compose the next start's briefing)
imports neither `typing` nor `calendar` (with `locale`): its modules take their annotations' names
under TYPE_CHECKING and their records from base/lean.py, and a ledger stamp is dated without
`calendar`. Nor `sqlite3`'s package with `datetime`: the knowledge index opens `_sqlite3` itself; nor `shlex`
(a plain interpreter path is not quoted); nor `json`'s modules (its modules encode and decode with `lean.json`)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import MAJORDOMUS, Repo
from lifecycle import start

NOT_ON_THE_END_PATH = {"typing", "calendar", "locale", "sqlite3", "datetime", "shlex", "json"}


def test_an_end_that_derives_and_composes_imports_neither_typing_nor_calendar(repo: Repo) -> None:
    start(repo, "e0")
    repo.mj("decision", "add", "The end path stays light", env={"MAJORDOMUS_EPISODE": "e0"}, check=True)
    env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
    env["PATH"] = f"{Path(MAJORDOMUS).parent}{os.pathsep}{env.get('PATH', '')}"
    payload = {"session_id": "e0", "transcript_path": "/x/e0.jsonl", "cwd": str(repo.root),
               "hook_event_name": "SessionEnd", "reason": "other"}
    proc = subprocess.run([str(repo.root / ".claude/hooks/majordomus-session-end")], cwd=repo.root,
                          input=json.dumps(payload).encode(), capture_output=True, env=env)
    lines = proc.stderr.decode().splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    assert proc.returncode == 0 and [line for line in lines if not line.startswith("import time:")] == []
    assert [p.name for p in repo.candidates()] != []  # derived
    assert "majordomus.context.briefing" in imported  # and composed
    assert imported & NOT_ON_THE_END_PATH == set()
