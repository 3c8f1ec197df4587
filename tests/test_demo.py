"""`make demo`'s script: its commands printed as they can be pasted (quotes kept), its repository
kept and named, and the two commands worth trying there next, which do work there."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT


def test_the_demo_keeps_its_repository_and_says_what_to_try_there(tmp_path: Path) -> None:
    bin_dir = str(Path(sys.executable).parent)  # where `make demo` puts majordomus: the venv's bin
    env = dict(os.environ, PATH=os.pathsep.join([bin_dir, os.environ.get("PATH", "")]), TMPDIR=str(tmp_path))
    proc = subprocess.run(["bash", str(PROJECT / "scripts/demo.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout)
    commands = [line[2:] for line in out.splitlines() if line.startswith("$ ")]
    assert 'majordomus start "a task" --scope lib' in commands
    assert 'majordomus decision add "Tabs are refused in the parser" --why "two encodings of one thing"' in commands
    assert "printf '{\"session_id\":\"e1\",\"source\":\"startup\"}' | .claude/hooks/majordomus-session-start >/dev/null" in commands

    first = out.splitlines()[0]
    (demo,) = re.findall(r"kept when it ends: (\S+)$", first)
    repo = Path(demo)
    assert repo.parent == tmp_path and (repo / ".git").is_dir() and (repo / ".ai/repo/policy.yaml").is_file()
    mj = str(Path(bin_dir) / "majordomus")
    assert out.splitlines()[-5:] == [
        f"The demo repository is kept: {demo}",
        "Worth trying there next: review the waiting candidate at the terminal, then browse the cockpit.",
        f"  cd {demo}",
        f"  {mj} knowledge review    # promote, reject, edit or skip each candidate",
        f"  {mj} serve               # the cockpit at http://127.0.0.1:8765/ (Ctrl-C stops it)",
    ]
    # the review has something to review: the second session's candidate, the first's is promoted
    queue = subprocess.run([mj, "knowledge", "review", "--json"], cwd=repo, capture_output=True, text=True)
    assert queue.returncode == 0, queue.stderr
    assert [item["title"] for item in json.loads(queue.stdout)] == ["Line endings are LF only"]
    assert len(list((repo / ".ai/repo/knowledge/curated").glob("e1-*.md"))) == 1
