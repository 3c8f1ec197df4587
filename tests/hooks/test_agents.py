"""Every agent with lifecycle hooks: `capture install --agent A` writes its registration, and its
registered command, run as the agent runs it (bash, the agent's variables, its payload on
stdin), opens, compacts and closes the same episodes.

Codex CLI and Gemini CLI payloads are the ones the real clients sent (../shared/agents/, and
tests/e2e/ runs them for real). Copilot CLI's are from its hooks reference (github/docs,
content/copilot/reference/copilot-cli-reference/cli-hooks-reference.md) and were seen again from
@github/copilot 1.0.102; Cursor's are the ones its own hook runner builds (npm @cursor/sdk
1.0.32, dist/esm/34.js): docs/AGENTS.md says which field came from where.
"""
from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import MAJORDOMUS, Repo, make_repo
from majordomus.hooks.install import REGISTRATIONS
from majordomus.store.agents import AGENTS

OTHERS = ("codex", "gemini", "copilot", "cursor")


def agent_env(agent: str, root: Path) -> dict[str, str]:
    """The variables each agent sets for its hooks (as seen from the real clients or their source)."""
    return {
        "claude": {"CLAUDECODE": "1", "CLAUDE_PROJECT_DIR": str(root)},
        "codex": {},
        "gemini": {"GEMINI_PROJECT_DIR": str(root), "GEMINI_CWD": str(root),
                   "CLAUDE_PROJECT_DIR": str(root)},
        "copilot": {"COPILOT_CLI": "1", "COPILOT_PROJECT_DIR": str(root), "CLAUDE_PROJECT_DIR": str(root)},
        "cursor": {"CURSOR_PROJECT_DIR": str(root), "CURSOR_VERSION": "1.7.0",
                   "CLAUDE_PROJECT_DIR": str(root)},
    }[agent]


def payload(agent: str, boundary: str, session: str, root: Path, **extra: Any) -> dict[str, Any]:
    """A documented (or recorded) payload of `agent` for one boundary."""
    if agent == "copilot":  # camelCase events get camelCase payloads
        body: dict[str, Any] = {"sessionId": session, "timestamp": 1704614400000, "cwd": str(root)}
        body.update({"session-start": {"source": "new", "initialPrompt": "Create a new feature"},
                     "session-end": {"reason": "complete"},
                     "pre-compact": {"transcriptPath": "/tmp/t.jsonl", "trigger": "auto",
                                     "customInstructions": ""}}[boundary])
    elif agent == "cursor":
        event = {"session-start": "sessionStart", "session-end": "sessionEnd",
                 "pre-compact": "preCompact"}[boundary]
        body = {"conversation_id": session, "generation_id": "g-1", "model": "default",
                "session_id": session, "hook_event_name": event, "cursor_version": "1.7.0",
                "workspace_roots": [str(root)], "user_email": None, "transcript_path": None}
        body.update({"session-start": {"is_background_agent": False, "composer_mode": "agent"},
                     "session-end": {"reason": "completed", "duration_ms": 4200,
                                     "is_background_agent": False, "final_status": "completed"},
                     "pre-compact": {"trigger": "auto", "context_usage_percent": 91,
                                     "context_tokens": 180000, "context_window_size": 200000,
                                     "message_count": 40, "messages_to_compact": 30,
                                     "is_first_compaction": True}}[boundary])
    else:
        event = {"claude": ("SessionStart", "SessionEnd", "PreCompact"),
                 "codex": ("SessionStart", "SessionEnd", "PreCompact"),
                 "gemini": ("SessionStart", "SessionEnd", "PreCompress")}[agent]
        name = dict(zip(("session-start", "session-end", "pre-compact"), event))[boundary]
        body = {"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": str(root),
                "hook_event_name": name}
        body.update({"session-start": {"source": "startup"},
                     "session-end": {"reason": "exit" if agent == "gemini" else "other"},
                     "pre-compact": {"trigger": "auto"}}[boundary])
    body.update(extra)
    return body


def registered_command(repo: Repo, agent: str, boundary: str) -> str:
    """Our command for `boundary`, read back from the agent's registration file."""
    reg = REGISTRATIONS[agent]
    data = json.loads((repo.root / AGENTS[agent].registration).read_text(encoding="utf-8"))
    entries = data["hooks"][reg.events[boundary]]
    handlers = entries if reg.flat else [h for g in entries for h in g["hooks"]]
    (command,) = [h[reg.command_key] for h in handlers if "majordomus" in h.get(reg.command_key, "")]
    return str(command)


def fire(repo: Repo, agent: str, boundary: str, body: dict[str, Any], registration: str | None = None,
         env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run the command `registration` (default: `agent`'s own) registered for `boundary` the way
    the agents do, through bash in the repository, with `agent`'s variables and `body` on stdin."""
    command = registered_command(repo, registration or agent, boundary)
    full = dict(os.environ)
    full["PATH"] = f"{Path(MAJORDOMUS).parent}{os.pathsep}{full.get('PATH', '')}"
    full.update(agent_env(agent, repo.root))
    full.update(env or {})
    return subprocess.run(["bash", "-c", command], cwd=cwd or repo.root, input=json.dumps(body),
                          capture_output=True, text=True, env=full)


@pytest.fixture
def plain(tmp_path: Path) -> Repo:
    """An initialised repository without any agent's hooks."""
    return make_repo(tmp_path / "repo", capture=False)


# --- installation ------------------------------------------------------------------------------

@pytest.mark.parametrize("agent", OTHERS)
def test_install_merges_beside_what_is_there_and_is_byte_stable(plain: Repo, agent: str) -> None:
    reg = REGISTRATIONS[agent]
    path = plain.root / AGENTS[agent].registration
    path.parent.mkdir(parents=True, exist_ok=True)
    theirs_event = reg.events["session-start"]
    theirs_handler = {"type": "command", reg.command_key: "echo theirs"}
    theirs = {"model": "kept", "hooks": {theirs_event: [theirs_handler if reg.flat else {"hooks": [theirs_handler]}],
                                         "Other": [{"x": 1}]}}
    path.write_text(json.dumps(theirs), encoding="utf-8")

    proc = plain.mj("capture", "install", "--agent", agent, check=True)
    merged = json.loads(path.read_text(encoding="utf-8"))
    assert merged["model"] == "kept" and merged["hooks"]["Other"] == [{"x": 1}]
    assert merged["hooks"][theirs_event][0] == theirs["hooks"][theirs_event][0]
    for boundary, event in reg.events.items():
        entries = merged["hooks"][event]
        handlers = entries if reg.flat else [h for g in entries for h in g["hooks"]]
        ours = [h for h in handlers if h.get(reg.command_key) == reg.command(boundary)]
        assert len(ours) == 1, (event, handlers)
        assert ours[0][reg.timeout_key] == reg.timeouts[boundary]
        assert f"majordomus-hook {agent} {boundary}" in ours[0][reg.command_key]
    if reg.version:
        assert merged["version"] == 1
    script = plain.root / AGENTS[agent].folder / "majordomus-hook"
    assert script.stat().st_mode & stat.S_IXUSR
    for text in (script.read_text(encoding="utf-8"), path.read_text(encoding="utf-8")):
        assert str(plain.root) not in text and os.environ["HOME"] not in text  # no machine paths
    assert f"wrote     {AGENTS[agent].registration}" in proc.stderr
    trust = AGENTS[agent].trust
    assert (f"trust: {trust}" in proc.stderr) if trust else ("trust:" not in proc.stderr)

    before = {p: p.read_bytes() for p in (path, script)}
    again = plain.mj("capture", "install", "--agent", agent, check=True)
    assert {p: p.read_bytes() for p in (path, script)} == before
    assert f"unchanged {AGENTS[agent].registration}" in again.stderr


def test_the_agent_flag_repeats_and_the_timeouts_are_each_agents_own(plain: Repo) -> None:
    plain.mj("capture", "install", "--agent", "codex", "--agent", "gemini", check=True)
    codex = json.loads((plain.root / ".codex/hooks.json").read_text())
    gemini = json.loads((plain.root / ".gemini/settings.json").read_text())
    assert codex["hooks"]["SessionEnd"][0]["hooks"][0]["timeout"] == 3  # Codex clamps at 3 s
    assert gemini["hooks"]["PreCompress"][0]["hooks"][0]["timeout"] == 30_000  # Gemini counts ms
    assert gemini["hooks"]["PreCompress"][0]["hooks"][0]["name"] == "majordomus-pre-compact"
    assert not (plain.root / ".claude").exists()  # an explicit --agent installs only what it names


def test_bare_install_is_claude_and_names_the_agents_it_sees(plain: Repo, tmp_path: Path) -> None:
    (plain.root / ".codex").mkdir()
    (plain.root / ".cursor").mkdir()
    home = tmp_path / "home-with-gemini"
    (home / ".gemini").mkdir(parents=True)
    proc = plain.mj("capture", "install", env={"HOME": str(home)}, check=True)
    assert (plain.root / ".claude/settings.json").is_file()
    lines = [l for l in proc.stderr.splitlines() if l.startswith("majordomus: also seen")
             or l.startswith("also seen")]
    text = "\n".join(lines)
    assert "Codex CLI (.codex): add its hooks with `majordomus capture install --agent codex`" in text
    assert "Cursor (.cursor)" in text and "--agent cursor" in text
    assert "Gemini CLI (~/.gemini)" in text and "--agent gemini" in text
    assert "Copilot" not in text
    plain.mj("capture", "install", "--agent", "codex", check=True)
    again = plain.mj("capture", "install", env={"HOME": str(home)}, check=True)
    assert "--agent codex" not in again.stderr and "--agent cursor" in again.stderr


def test_claude_codes_registration_has_no_empty_matcher_and_an_older_one_loses_it(plain: Repo) -> None:
    """Copilot CLI 1.0.102 refuses a whole .claude/settings.json over `"matcher": ""` (seen in its
    log: "hooks.preCompact[0].matcher: matcher cannot be empty"); Claude Code needs none."""
    settings = plain.root / ".claude/settings.json"
    settings.parent.mkdir()
    older = {"hooks": {"PreCompact": [{"matcher": "", "hooks": [
        {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/majordomus-pre-compact'}]}],
        "SessionStart": [{"matcher": "", "hooks": [{"type": "command", "command": "echo theirs"}]}]}}
    settings.write_text(json.dumps(older), encoding="utf-8")
    plain.mj("capture", "install", check=True)
    merged = json.loads(settings.read_text(encoding="utf-8"))
    assert merged["hooks"]["PreCompact"] == [{"hooks": [{**older["hooks"]["PreCompact"][0]["hooks"][0], "timeout": 30}]}]
    assert merged["hooks"]["SessionStart"][0] == older["hooks"]["SessionStart"][0]  # theirs: untouched
    assert all("matcher" not in g for g in merged["hooks"]["SessionStart"][1:])


def test_a_broken_registration_is_refused_in_one_line(plain: Repo) -> None:
    path = plain.root / ".cursor/hooks.json"
    path.parent.mkdir()
    path.write_text('{"hooks": []}', encoding="utf-8")
    proc = plain.mj("capture", "install", "--agent", "cursor")
    assert proc.returncode == 4 and proc.stderr.count("\n") == 1
    assert '.cursor/hooks.json: "hooks" is not an object' in proc.stderr
    assert "majordomus capture install --agent cursor" in proc.stderr
    assert path.read_text(encoding="utf-8") == '{"hooks": []}'


# --- the adapters, through the registered commands ----------------------------------------------

def briefing_of(agent: str, stdout: str) -> str:
    """The text the agent puts before the model, out of the start hook's stdout."""
    if agent == "claude":
        return stdout
    data = json.loads(stdout)
    if agent in ("codex", "gemini"):
        assert data["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        return str(data["hookSpecificOutput"]["additionalContext"])
    key = "additionalContext" if agent == "copilot" else "additional_context"
    assert list(data) == [key]
    return str(data[key])


@pytest.mark.parametrize("agent", OTHERS)
def test_each_agent_opens_compacts_and_closes_one_episode(plain: Repo, agent: str) -> None:
    plain.mj("capture", "install", "--agent", agent, check=True)
    sid = f"{agent}-4f1c2a"
    start = fire(plain, agent, "session-start", payload(agent, "session-start", sid, plain.root))
    assert start.returncode == 0 and start.stderr == "", start.stderr
    assert briefing_of(agent, start.stdout).startswith(f"# Majordomus briefing: episode {sid} (startup)")
    (opened,) = plain.events("session.opened")
    assert (opened["episode"], opened["agent"], opened["source"], opened["by"]) == (sid, agent, "startup", "hook")

    plain.mj("decision", "add", f"{agent} keeps the ledger local", check=True)
    pre = fire(plain, agent, "pre-compact", payload(agent, "pre-compact", sid, plain.root))
    assert pre.returncode == 0 and pre.stdout == "" and pre.stderr == "", pre.stderr
    assert [c["note"] for c in plain.events("checkpoint.recorded")] == ["compaction (auto)"]

    end = fire(plain, agent, "session-end", payload(agent, "session-end", sid, plain.root))
    assert end.returncode == 0 and end.stdout == "" and end.stderr == "", end.stderr
    (closed,) = plain.events("session.closed")
    reason = {"codex": "other", "gemini": "exit", "copilot": "complete", "cursor": "completed"}[agent]
    assert (closed["episode"], closed["reason"]) == (sid, reason)
    (candidate,) = plain.candidates()
    assert f"{agent} keeps the ledger local" in candidate.read_text(encoding="utf-8")
    assert plain.events("provider.event.failed") == []


def test_a_hook_finds_the_repository_from_a_subdirectory(plain: Repo) -> None:
    plain.mj("capture", "install", "--agent", "codex", check=True)
    sub = plain.root / "src" / "deep"
    sub.mkdir(parents=True)
    proc = fire(plain, "codex", "session-start", payload("codex", "session-start", "c-sub", sub), cwd=sub)
    assert proc.returncode == 0, proc.stderr
    assert [o["episode"] for o in plain.events("session.opened")] == ["c-sub"]


def test_copilot_running_claudes_registration_is_recorded_as_copilot(plain: Repo) -> None:
    """Copilot CLI 1.0.102 also runs `.claude/settings.json` hooks, with snake_case payloads, and
    reads only a top-level `additionalContext` from them (seen against a fake model API)."""
    plain.mj("capture", "install", check=True)
    body = {"hook_event_name": "SessionStart", "session_id": "cp-1", "timestamp": "2026-12-01T14:54:26.844Z",
            "cwd": str(plain.root), "source": "new", "initial_prompt": "please work"}
    proc = fire(plain, "copilot", "session-start", body, registration="claude")
    assert proc.returncode == 0, proc.stderr
    assert briefing_of("copilot", proc.stdout).startswith("# Majordomus briefing: episode cp-1 (startup)")
    (opened,) = plain.events("session.opened")
    assert opened["agent"] == "copilot"


@pytest.mark.parametrize("agent", ["copilot", "cursor"])
def test_with_its_own_registration_too_an_agent_is_recorded_once(plain: Repo, agent: str) -> None:
    plain.mj("capture", "install", "--agent", "claude", "--agent", agent, check=True)
    sid = f"{agent}-twice"
    body = payload(agent, "session-start", sid, plain.root)
    via_claude = fire(plain, agent, "session-start", body, registration="claude")
    assert via_claude.returncode == 0 and via_claude.stdout == "" and via_claude.stderr == ""
    assert plain.events("session.opened") == []  # the agent's own registration records it
    own = fire(plain, agent, "session-start", body)
    assert own.returncode == 0 and briefing_of(agent, own.stdout)
    assert [o["agent"] for o in plain.events("session.opened")] == [agent]


def test_claude_code_inside_another_agent_is_still_claude(plain: Repo) -> None:
    plain.mj("capture", "install", "--agent", "claude", "--agent", "copilot", check=True)
    proc = fire(plain, "claude", "session-start", payload("claude", "session-start", "cl-1", plain.root),
                registration="claude", env={"COPILOT_CLI": "1"})  # inherited from a Copilot shell
    assert proc.returncode == 0 and proc.stdout.startswith("# Majordomus briefing: episode cl-1")
    assert [o["agent"] for o in plain.events("session.opened")] == ["claude"]


def test_gemini_precompress_each_turn_records_only_what_changed(plain: Repo) -> None:
    plain.mj("capture", "install", "--agent", "gemini", check=True)
    sid = "g-turns"
    fire(plain, "gemini", "session-start", payload("gemini", "session-start", sid, plain.root))
    turn = payload("gemini", "pre-compact", sid, plain.root)
    for _ in range(2):  # before the first model turns: nothing happened yet
        assert fire(plain, "gemini", "pre-compact", turn).returncode == 0
    assert plain.events("checkpoint.recorded") == [] and plain.events("knowledge.derived") == []

    plain.mj("decision", "add", "Turns with work are checkpointed", check=True)
    fire(plain, "gemini", "pre-compact", turn)
    assert len(plain.events("checkpoint.recorded")) == 1 and len(plain.events("knowledge.derived")) == 1
    fire(plain, "gemini", "pre-compact", turn)  # the next turn, with nothing new
    assert len(plain.events("checkpoint.recorded")) == 1 and len(plain.events("knowledge.derived")) == 1

    plain.commit("a commit moves HEAD", {"x.txt": "x\n"})
    fire(plain, "gemini", "pre-compact", turn)
    assert len(plain.events("checkpoint.recorded")) == 2


def test_an_unknown_agent_is_recorded_and_never_blocks(plain: Repo) -> None:
    proc = plain.mj("hook", "session-start", "--agent", "nobody",
                    input=json.dumps({"session_id": "x", "cwd": str(plain.root)}))
    assert proc.returncode == 0 and proc.stdout == ""
    assert proc.stderr == ("majordomus: session-start failed: unknown agent 'nobody' "
                           "(one of claude, codex, gemini, copilot, cursor, opencode)\n")
    (failed,) = plain.events("provider.event.failed")
    assert failed["hook"] == "session-start" and "nobody" in failed["error"]
    assert plain.events("session.opened") == []


@pytest.mark.parametrize("argv, call", [
    (["hook", "session-end"], ("session-end", None, "claude")),
    (["hook", "session-end", "--hook-root", "/r"], ("session-end", "/r", "claude")),
    (["hook", "pre-compact", "--agent", "gemini", "--hook-root", "/r"], ("pre-compact", "/r", "gemini")),
    (["hook", "session-start", "--agent", "codex"], ("session-start", None, "codex")),
    (["hook", "session-start", "--hook-root", "/r", "--agent", "codex"], None),  # not as scripts say it
    (["hook", "session-start", "--agent", "a", "--agent", "b"], None),
    (["hook", "session-start", "--agent"], None),
    (["hook", "--help"], None),
])
def test_the_hook_fast_path_takes_exactly_what_the_scripts_say(argv: list[str], call: Any) -> None:
    from majordomus.cli.main import _hook_call

    assert _hook_call(argv) == call
