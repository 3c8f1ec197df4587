"""OpenCode (issue 30): no hook file, so `capture install --agent opencode` writes a plugin module
(.opencode/plugins/majordomus.js) that runs the hook script beside it. Here Node.js loads that
very module and calls its hooks the way OpenCode does (tests/e2e/test_opencode.py runs the real
client): the first model call opens the episode and gets the briefing for its system prompt, the
session going idle closes it, the next call opens it again, a compaction checkpoints and briefs."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import MAJORDOMUS, PROJECT, Repo, make_repo

NODE = shutil.which("node")
PLUGIN = ".opencode/plugins/majordomus.js"

# Load the plugin, then run the calls given as JSON on argv: ["system", id] or ["event", type, id]
# or ["compacting", id] or ["dispose"]; print what each system transform added.
DRIVER = """
const [plugin, directory, calls] = process.argv.slice(2);
const mod = await import(plugin);
const hooks = await mod.MajordomusPlugin({ directory, worktree: directory });
const out = [];
for (const [kind, a, b] of JSON.parse(calls)) {
  if (kind === "system") {
    const output = { system: ["base prompt"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: a, model: {} }, output);
    out.push(output.system.slice(1));
  } else if (kind === "event") {
    await hooks.event({ event: { type: a, properties: a === "session.created" ? { info: { id: b } } : { sessionID: b } } });
  } else if (kind === "compacting") {
    await hooks["experimental.session.compacting"]({ sessionID: a }, { context: [] });
  } else if (kind === "dispose") {
    await hooks.dispose();
  }
}
console.log(JSON.stringify(out));
"""


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = make_repo(tmp_path / "repo", capture=False)
    repo.mj("capture", "install", "--agent", "opencode", check=True)
    return repo


def drive(repo: Repo, calls: list[list[str]], path: str | None = None) -> list[list[str]]:
    assert NODE is not None
    env = dict(os.environ)
    env["PATH"] = path if path is not None else f"{Path(MAJORDOMUS).parent}{os.pathsep}{env.get('PATH', '')}"
    script = repo.root.parent / "driver.mjs"
    script.write_text(DRIVER, encoding="utf-8")
    proc = subprocess.run([NODE, str(script), str(repo.root / PLUGIN), str(repo.root), json.dumps(calls)],
                          cwd=repo.root, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result: list[list[str]] = json.loads(proc.stdout)
    return result


def test_install_writes_the_plugin_its_script_and_the_server_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", capture=False)
    first = repo.mj("capture", "install", "--agent", "opencode", check=True)
    plugin = repo.root / PLUGIN
    assert plugin.read_bytes() == (PROJECT / "templates/hooks/majordomus-opencode.js").read_bytes()
    script = repo.root / ".opencode/hooks/majordomus-hook"
    assert script.stat().st_mode & stat.S_IXUSR
    server = json.loads((repo.root / "opencode.json").read_text(encoding="utf-8"))["mcp"]["majordomus"]
    assert server == {"type": "local", "command": ["majordomus", "mcp"], "enabled": True}
    assert "Commit .opencode/ and opencode.json (the MCP server)" in first.stderr
    plugin.write_text("// edited by hand\n", encoding="utf-8")
    again = repo.mj("capture", "install", "--agent", "opencode", check=True)
    assert f"wrote     {PLUGIN}" in again.stderr and plugin.read_bytes() == script.parent.parent.joinpath(
        "plugins/majordomus.js").read_bytes()
    before = {p: p.read_bytes() for p in (plugin, script, repo.root / "opencode.json")}
    third = repo.mj("capture", "install", "--agent", "opencode", check=True)
    assert {p: p.read_bytes() for p in before} == before and "wrote" not in third.stderr


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_the_plugin_opens_at_the_first_call_briefs_each_call_and_closes_when_idle(repo: Repo) -> None:
    out = drive(repo, [["event", "session.created", "ses_a"], ["system", "ses_a"], ["system", "ses_a"],
                       ["event", "session.idle", "ses_a"]])
    first, second = out
    assert len(first) == 1 and first[0].startswith("# Majordomus briefing: episode ses_a (startup)")
    assert second == first  # the open span's briefing, every call
    assert [(e["episode"], e["agent"], e["source"]) for e in repo.events("session.opened")] == [
        ("ses_a", "opencode", "startup")]
    assert [(e["episode"], e["reason"]) for e in repo.events("session.closed")] == [("ses_a", "idle")]
    assert repo.events("provider.event.failed") == []


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_the_next_prompt_after_idle_reopens_and_a_compaction_checkpoints_and_briefs(repo: Repo) -> None:
    repo.commit("work", {"a.txt": "a\n"})
    out = drive(repo, [["event", "session.created", "ses_b"], ["system", "ses_b"],
                       ["event", "session.idle", "ses_b"], ["system", "ses_b"],
                       ["compacting", "ses_b"], ["event", "session.compacted", "ses_b"], ["system", "ses_b"],
                       ["event", "session.idle", "ses_b"], ["dispose"]])
    assert [texts[0].splitlines()[0] for texts in out] == [
        "# Majordomus briefing: episode ses_b (startup)", "# Majordomus briefing: episode ses_b (resume)",
        "# Majordomus briefing: episode ses_b (compact)"]
    events = [(e["event"], e.get("source") or e.get("reason") or e.get("note")) for e in repo.ledger()
              if e["event"] in ("session.opened", "session.resumed", "session.closed", "checkpoint.recorded")]
    assert events[0] == ("session.opened", "startup") and events[1] == ("session.closed", "idle")
    assert events[-1] == ("session.closed", "idle")
    assert ("session.resumed", "compact") in events
    assert repo.events("provider.event.failed") == []


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_a_session_continued_from_an_earlier_process_is_briefed_as_a_resume(repo: Repo) -> None:
    drive(repo, [["event", "session.created", "ses_e"], ["system", "ses_e"], ["event", "session.idle", "ses_e"]])
    [out] = drive(repo, [["system", "ses_e"], ["event", "session.idle", "ses_e"]])  # no session.created
    assert out[0].startswith("# Majordomus briefing: episode ses_e (resume)")
    assert [e["reason"] for e in repo.events("session.closed")] == ["idle", "idle"]


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_without_majordomus_the_plugin_adds_nothing_and_never_throws(repo: Repo) -> None:
    out = drive(repo, [["system", "ses_c"], ["event", "session.idle", "ses_c"]], path="/usr/bin:/bin")
    assert out == [[]]
    assert repo.events("session.opened") == []


def payload(session: str, root: Path, **extra: Any) -> str:
    return json.dumps({"session_id": session, "cwd": str(root), **extra})


def test_the_hook_script_reads_opencodes_payload_and_prints_the_plain_briefing(repo: Repo) -> None:
    script = repo.root / ".opencode/hooks/majordomus-hook"
    env = dict(os.environ)
    env["PATH"] = f"{Path(MAJORDOMUS).parent}{os.pathsep}{env.get('PATH', '')}"
    start = subprocess.run([str(script), "opencode", "session-start"], cwd=repo.root / ".opencode", env=env,
                           input=payload("ses_d", repo.root, source="startup"), capture_output=True, text=True)
    assert start.returncode == 0, start.stderr
    assert start.stdout.startswith("# Majordomus briefing: episode ses_d (startup)")  # not JSON: plain text
