"""majordomus.agents-fired: doctor names an installed agent whose hooks wait for the user's trust
and have never opened an episode here, with the trust step capture install printed."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from conftest import MAJORDOMUS, Repo, make_repo
from majordomus.store.agents import AGENTS
from rules_helpers import run_json

RULE = "majordomus.agents-fired"


def findings(repo: Repo) -> list[dict[str, str]]:
    code, data = run_json(repo, "doctor")
    assert code == 0  # advisory: doctor still exits 0
    return [f for f in data["findings"] if f["rule"] == RULE]


def test_an_installed_agent_that_never_fired_is_named_with_its_trust_step(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")  # Claude Code's hooks: no trust step, never reported
    assert findings(repo) == []
    repo.mj("capture", "install", "--agent", "codex", "--agent", "gemini", "--agent", "cursor", check=True)
    found = {f["file"]: f for f in findings(repo)}
    assert set(found) == {".codex/hooks.json", ".gemini/settings.json"}  # Cursor needs no trust
    codex = found[".codex/hooks.json"]
    assert codex["what"] == ("Codex CLI's hooks are installed but have never fired in this checkout: "
                             "no episode was opened by codex")
    assert codex["fix"] == AGENTS["codex"].trust
    assert codex["reproduce"] == "majordomus history --event session.opened" and not codex["blocking"]
    text = repo.mj("doctor", check=True).stdout
    assert f"WARN {RULE}: .gemini/settings.json: Gemini CLI's hooks are installed" in text

    # Codex's hook fires once: codex is no longer named, gemini still is
    env = dict(os.environ, PATH=f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ['PATH']}")
    command = json.loads((repo.root / ".codex/hooks.json").read_text())["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    proc = subprocess.run(["bash", "-c", command], cwd=repo.root, env=env, capture_output=True, text=True,
                          input=json.dumps({"session_id": "c1", "cwd": str(repo.root), "source": "startup"}))
    assert proc.returncode == 0, proc.stderr
    assert [f["file"] for f in findings(repo)] == [".gemini/settings.json"]

    # the marker outlives the ledger (its retention may trim the session.opened line)
    (repo.root / ".ai/local/ledger.jsonl").write_text("", encoding="utf-8")
    assert [f["file"] for f in findings(repo)] == [".gemini/settings.json"]


def test_a_registration_without_our_hooks_is_not_an_installed_agent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo.root / ".codex").mkdir()
    (repo.root / ".codex/hooks.json").write_text('{"hooks": {"SessionStart": []}}', encoding="utf-8")
    assert findings(repo) == []
    code, data = run_json(repo, "doctor")
    (rule,) = [r for r in data["rules"] if r["id"] == RULE]
    assert rule["status"] == "ok"
