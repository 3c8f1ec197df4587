"""`majordomus init` and `majordomus capture install`: idempotent, and polite to what is there;
Claude Code's skill (Agent Skills format) and permission rules, merged once each."""
from __future__ import annotations

import json
import os
import re
import stat

import yaml
from conftest import PROJECT, Repo
from majordomus.store import policy
from majordomus.base import yamlio


def _tree(repo: Repo) -> dict[str, bytes]:
    return {str(p.relative_to(repo.root)): p.read_bytes()
            for p in sorted(repo.root.rglob("*")) if p.is_file() and ".git" not in p.parts}


def test_init_lays_the_skeleton(bare_repo: Repo) -> None:
    proc = bare_repo.mj("init", check=True)
    ai = bare_repo.root / ".ai/repo"
    for rel in ("policy.yaml", "knowledge/sources.yaml", "knowledge/candidates/README.md",
                "knowledge/curated/README.md", "sessions/README.md", "adrs/README.md"):
        assert (ai / rel).is_file(), rel
    assert ".ai/local/" in (bare_repo.root / ".gitignore").read_text().splitlines()
    assert ".tmp.*" in (bare_repo.root / ".gitignore").read_text().splitlines()
    assert "initialised" in proc.stderr
    sources = yamlio.load((ai / "knowledge/sources.yaml").read_text())
    assert sources["classes"]["candidates"]["pathspec"] == ":(glob).ai/repo/knowledge/candidates/*.md"
    assert set(sources["classes"]) == {"curated", "candidates"}
    contract = (ai / "knowledge/candidates/README.md").read_text()
    assert "majordomus knowledge promote" in contract and "majordomus knowledge reject" in contract
    # the .ai/local/ state is ignored by git: only tracked sections show up
    status = bare_repo.git("status", "--porcelain", "--untracked-files=all")
    assert ".ai/local" not in status and ".ai/repo/policy.yaml" in status


def test_policy_declares_every_key_with_its_default(bare_repo: Repo) -> None:
    bare_repo.mj("init", check=True)
    loaded = policy.load(bare_repo.root / ".ai/repo/policy.yaml")
    assert loaded.declared == frozenset(policy.DECLARED)
    assert loaded.values == policy.defaults().values


def test_init_is_idempotent_and_leaves_edits_alone(bare_repo: Repo) -> None:
    bare_repo.mj("init", check=True)
    before = _tree(bare_repo)
    assert bare_repo.mj("init", check=True).returncode == 0
    assert _tree(bare_repo) == before
    edited = bare_repo.root / ".ai/repo/policy.yaml"
    edited.write_text(edited.read_text().replace("briefing_budget_lines: 40", "briefing_budget_lines: 12"))
    proc = bare_repo.mj("init", check=True)
    assert "left alone .ai/repo/policy.yaml" in proc.stderr
    assert "briefing_budget_lines: 12" in edited.read_text()


def test_init_outside_git_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    repo = Repo(tmp_path)
    proc = repo.mj("init")
    assert proc.returncode == 5 and "git init" in proc.stderr
    assert not (tmp_path / ".ai").exists()


def test_commands_before_init_name_the_fix(bare_repo: Repo) -> None:
    proc = bare_repo.mj("decision", "add", "x")
    assert proc.returncode == 5 and "majordomus init" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_capture_install_merges_and_is_byte_stable(bare_repo: Repo) -> None:
    bare_repo.mj("init", check=True)
    settings = bare_repo.root / ".claude/settings.json"
    settings.parent.mkdir()
    mine = {"model": "x", "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [
        {"type": "command", "command": "echo mine"}]}], "Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}
    settings.write_text(json.dumps(mine))
    bare_repo.mj("capture", "install", check=True)
    merged = json.loads(settings.read_text())
    assert merged["model"] == "x" and merged["hooks"]["Stop"][0] == mine["hooks"]["Stop"][0]
    start = merged["hooks"]["SessionStart"]
    assert start[0] == mine["hooks"]["SessionStart"][0] and len(start) == 2
    for event, script in (("SessionStart", "majordomus-session-start"), ("SessionEnd", "majordomus-session-end"),
                          ("PreCompact", "majordomus-pre-compact"), ("Stop", "majordomus-stop")):
        commands = [h["command"] for g in merged["hooks"][event] for h in g["hooks"]]
        assert f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{script}' in commands
        path = bare_repo.root / ".claude/hooks" / script
        assert path.stat().st_mode & stat.S_IXUSR
        text = path.read_text()
        assert str(bare_repo.root) not in text and os.environ["HOME"] not in text  # no machine paths
    before = _tree(bare_repo)
    proc = bare_repo.mj("capture", "install", check=True)
    assert _tree(bare_repo) == before
    assert "unchanged .claude/settings.json" in proc.stderr


def test_capture_install_refuses_broken_settings(bare_repo: Repo) -> None:
    bare_repo.mj("init", check=True)
    settings = bare_repo.root / ".claude/settings.json"
    settings.parent.mkdir()
    settings.write_text("{ not json")
    proc = bare_repo.mj("capture", "install")
    assert proc.returncode == 4 and "settings.json is not JSON" in proc.stderr
    assert settings.read_text() == "{ not json"


SKILL = ".claude/skills/majordomus/SKILL.md"
ALLOW = [rule for command in ("start", "finish", "decision add", "question add", "question resolve", "question list",
                               "checkpoint", "handover", "history", "context", "session context", "doctor", "check",
                               "knowledge candidates", "knowledge record", "knowledge status", "knowledge search",
                               "knowledge edges", "knowledge stale", "knowledge check", "knowledge dispute")
         for rule in (f"Bash(majordomus {command})", f"Bash(majordomus {command} *)")]
ASK = ["Bash(majordomus knowledge promote *)", "Bash(majordomus knowledge reject *)",
       "Bash(majordomus knowledge export *)", "Bash(majordomus *--verify*)"]


def settings(repo: Repo) -> dict:  # type: ignore[type-arg]
    return json.loads((repo.root / ".claude/settings.json").read_text(encoding="utf-8"))


def test_the_skill_says_when_and_how_to_record(repo: Repo) -> None:
    path = repo.root / SKILL
    text = path.read_text(encoding="utf-8")
    assert text == (PROJECT / "templates/skills/majordomus/SKILL.md").read_text(encoding="utf-8")
    front, body = text.split("---\n", 2)[1:]
    meta = yaml.safe_load(front)
    assert set(meta) == {"name", "description"}
    # Claude Code: lowercase letters, numbers and hyphens, at most 64; the name is the folder's
    assert re.fullmatch(r"[a-z0-9-]{1,64}", meta["name"]) and meta["name"] == path.parent.name
    # descriptions over 250 characters are cut in the skill listing; it says what, then when
    assert len(meta["description"]) <= 250 and "Use when" in meta["description"]
    for command in ('majordomus decision add "', 'majordomus question add "', "majordomus question resolve ID",
                    'majordomus start "', 'majordomus finish --verify "', "majordomus finish --outcome blocked --reason",
                    "majordomus checkpoint --note", "majordomus knowledge search"):
        assert command in body, command
    assert len(body.splitlines()) < 60  # brief: a skill's body enters the context whole


def test_permissions_allow_majordomus_and_ask_for_a_persons_acts(repo: Repo) -> None:
    """The commands an agent records and reads with, and none that writes elsewhere (doit,
    generate, init, capture: tests/robustness/test_guard.py)."""
    permissions = settings(repo)["permissions"]
    assert permissions["allow"] == ALLOW
    assert permissions["ask"] == ASK


def test_the_merge_keeps_what_is_there_and_adds_each_rule_once(bare_repo: Repo) -> None:
    bare_repo.mj("init", check=True)
    path = bare_repo.root / ".claude/settings.json"
    path.parent.mkdir()
    mine = {"permissions": {"allow": ["Bash(make test)", "Bash(majordomus:*)"], "deny": ["Bash(curl *)"],
                            "ask": ["Bash(git push *)", "Bash(majordomus knowledge reject *)"],
                            "defaultMode": "default"}}
    path.write_text(json.dumps(mine), encoding="utf-8")
    bare_repo.mj("capture", "install", check=True)
    permissions = settings(bare_repo)["permissions"]
    # the person's own rules are kept (the deprecated prefix form too: theirs, not ours)
    assert permissions["allow"] == ["Bash(make test)", "Bash(majordomus:*)", *ALLOW]
    assert permissions["deny"] == ["Bash(curl *)"] and permissions["defaultMode"] == "default"
    assert permissions["ask"] == ["Bash(git push *)", "Bash(majordomus knowledge reject *)",
                                  *[rule for rule in ASK if "reject" not in rule]]
    before = path.read_bytes(), (bare_repo.root / SKILL).read_bytes()
    again = bare_repo.mj("capture", "install", check=True)
    assert (path.read_bytes(), (bare_repo.root / SKILL).read_bytes()) == before
    assert f"unchanged {SKILL}" in again.stderr and "unchanged .claude/settings.json" in again.stderr


def test_a_skill_edited_by_hand_is_restored(repo: Repo) -> None:
    path = repo.root / SKILL
    original = path.read_bytes()
    path.write_text("---\nname: majordomus\ndescription: mine\n---\n", encoding="utf-8")
    proc = repo.mj("capture", "install", check=True)
    assert f"wrote     {SKILL}" in proc.stderr and path.read_bytes() == original


def test_broken_permissions_are_refused_untouched(bare_repo: Repo) -> None:
    bare_repo.mj("init", check=True)
    path = bare_repo.root / ".claude/settings.json"
    path.parent.mkdir()
    for broken in ({"permissions": ["Bash"]}, {"permissions": {"allow": "Bash(majordomus *)"}},
                   {"permissions": {"ask": {"x": 1}}}):
        path.write_text(json.dumps(broken), encoding="utf-8")
        proc = bare_repo.mj("capture", "install")
        assert proc.returncode == 4 and "fix it by hand" in proc.stderr and len(proc.stderr.splitlines()) == 1
        assert json.loads(path.read_text(encoding="utf-8")) == broken


# Claude Code gives all SessionEnd hooks 1.5 s unless one registers a larger timeout: the end and
# compaction hooks derive, so capture install registers them with 30 s (issue 13).
END = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/majordomus-session-end'
COMPACT = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/majordomus-pre-compact'
START = '"$CLAUDE_PROJECT_DIR"/.claude/hooks/majordomus-session-start'


def ours(settings: dict, event: str, command: str) -> list[dict]:  # type: ignore[type-arg]
    return [h for g in settings["hooks"][event] for h in g["hooks"] if h.get("command") == command]


def test_end_and_compact_hooks_are_registered_with_a_timeout(repo: Repo) -> None:
    settings = json.loads((repo.root / ".claude/settings.json").read_text(encoding="utf-8"))
    assert [h["timeout"] for h in ours(settings, "SessionEnd", END)] == [30]
    assert [h["timeout"] for h in ours(settings, "PreCompact", COMPACT)] == [30]
    assert [h.get("timeout") for h in ours(settings, "SessionStart", START)] == [None]


def test_a_reinstall_adds_the_timeout_to_an_older_entry_then_changes_no_byte(bare_repo: Repo) -> None:
    bare_repo.mj("init", check=True)
    path = bare_repo.root / ".claude/settings.json"
    path.parent.mkdir()
    older = {"hooks": {
        "SessionEnd": [{"matcher": "", "hooks": [{"type": "command", "command": "echo mine"},
                                                 {"type": "command", "command": END}]}],
        "PreCompact": [{"matcher": "", "hooks": [{"type": "command", "command": COMPACT, "timeout": 5}]}],
    }}
    path.write_text(json.dumps(older, indent=2) + "\n", encoding="utf-8")

    bare_repo.mj("capture", "install", check=True)

    merged = json.loads(path.read_text(encoding="utf-8"))
    assert merged["hooks"]["SessionEnd"] == [{"hooks": [  # the empty matcher goes (Copilot CLI refuses it)
        {"type": "command", "command": "echo mine"}, {"type": "command", "command": END, "timeout": 30}]}]
    assert ours(merged, "PreCompact", COMPACT) == [{"type": "command", "command": COMPACT, "timeout": 30}]
    assert len(merged["hooks"]["PreCompact"]) == 1  # merged into the entry, not added beside it
    before = path.read_bytes()
    proc = bare_repo.mj("capture", "install", check=True)
    assert path.read_bytes() == before
    assert "unchanged .claude/settings.json" in proc.stderr


def test_a_larger_timeout_set_by_hand_is_kept(bare_repo: Repo) -> None:
    bare_repo.mj("init", check=True)
    path = bare_repo.root / ".claude/settings.json"
    path.parent.mkdir()
    mine = {"hooks": {"SessionEnd": [{"matcher": "", "hooks": [
        {"type": "command", "command": END, "timeout": 55}]}]}}
    path.write_text(json.dumps(mine), encoding="utf-8")
    bare_repo.mj("capture", "install", check=True)
    merged = json.loads(path.read_text(encoding="utf-8"))
    assert [h["timeout"] for h in ours(merged, "SessionEnd", END)] == [55]
