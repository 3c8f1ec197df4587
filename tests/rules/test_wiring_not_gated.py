"""The wiring half of majordomus.knowledge-observed is not gated by the first derivation (the
freshness half is): a close path that never calls the deriver never writes that first line, so a
gated check would stay a skip for ever in the very repository it is for. With the wiring broken
and freshness not judged yet, doctor prints one finding that says both — not an ERROR and a SKIP
for the same rule."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT, Repo
from rules_helpers import OLD, append_line

OBSERVED = "majordomus.knowledge-observed"


def unwired_copy(tmp_path: Path) -> dict[str, str]:
    """A copy of the package whose close path no longer derives, and the environment running it."""
    src = tmp_path / "src"
    shutil.copytree(PROJECT / "pipeline" / "majordomus", src / "pipeline" / "majordomus",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for data in ("templates", "schemas", ".ai-skeleton", "rules"):
        (src / data).symlink_to(PROJECT / data)
    end = src / "pipeline/majordomus/session/end.py"
    text = end.read_text(encoding="utf-8")
    assert "outcome = derive_on_close(ws, episode, window, record)" in text
    end.write_text(text.replace("outcome = derive_on_close(ws, episode, window, record)", "outcome = None"), encoding="utf-8")
    return dict(os.environ, PYTHONPATH=str(src / "pipeline"))


def doctor(repo: Repo, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "majordomus", "doctor", *args], cwd=repo.root, env=env,
                          capture_output=True, text=True)


def test_broken_wiring_is_one_finding_before_the_first_derivation(repo: Repo, tmp_path: Path) -> None:
    env = unwired_copy(tmp_path)
    append_line(repo, "session.opened", OLD, "e1", episode="e1")
    append_line(repo, "session.closed", "2020-01-01T01:00:00Z", "e1", episode="e1", reason="other")

    proc = doctor(repo, env, "--json")
    assert proc.returncode == 10, proc.stderr
    data = json.loads(proc.stdout)
    (rule,) = [r for r in data["rules"] if r["id"] == OBSERVED]
    assert rule["status"] == "findings" and rule["skipped"] is None
    (finding,) = [f for f in data["findings"] if f["rule"] == OBSERVED]
    assert finding["blocking"]
    assert "the close path does not derive" in finding["what"]
    assert "never calls derive_on_close" in finding["what"]
    assert "freshness is not judged yet: not judged: no knowledge.derived line yet" in finding["what"]

    text = doctor(repo, env).stdout
    lines = [l for l in text.splitlines() if OBSERVED in l]
    assert len(lines) == 1 and lines[0].startswith("ERROR ")
    assert "SKIP" not in text


def test_the_installed_close_path_is_wired_and_the_gate_is_a_skip(repo: Repo) -> None:
    append_line(repo, "session.opened", OLD, "e1", episode="e1")
    append_line(repo, "session.closed", "2020-01-01T01:00:00Z", "e1", episode="e1", reason="other")
    proc = repo.mj("doctor")
    assert proc.returncode == 0
    assert "SKIP majordomus.knowledge-observed: not judged: no knowledge.derived line yet" in proc.stdout
    assert "ERROR" not in proc.stdout
