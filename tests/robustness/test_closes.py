"""Every close is recorded, whatever the client does (issue 28): a payload whose `cwd` lies outside
the repository, an end hook killed mid-derivation, a derivation a locked dep file kept from
running, an episode whose opening head is gone, a start without git, a payload on a pipe the
client keeps open; and the briefing capped as the client counts it. Each runs the real hook
scripts, real git and real doit."""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from conftest import MAJORDOMUS, Repo, make_repo

GUARD_S = 60  # a hang guard, not a timing


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, PATH=f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ['PATH']}")
    env.update(extra)
    return env


def _hook(repo: Repo, name: str, payload: dict[str, Any], cwd: Path | None = None,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The repository's own hook script, run from `cwd` (where the agent stands) with `payload`."""
    return subprocess.run([str(repo.root / ".claude/hooks" / f"majordomus-{name}")], cwd=cwd or repo.root,
                          input=json.dumps(payload).encode(), capture_output=True, env=env or _env(),
                          timeout=GUARD_S)


def _utf16(text: str) -> int:
    """A JavaScript string's length: what Claude Code counts."""
    return len(text.encode("utf-16-le")) // 2


# --- the briefing, capped as the client counts -----------------------------------------------------

def test_the_briefing_is_capped_as_the_client_counts_trailer_included(repo: Repo) -> None:
    """Claude Code counts a JavaScript string: a character outside the BMP is two. Titles of such
    characters made the briefing twice the ceiling; the closing note went on after the cut."""
    from majordomus.evidence import work
    from majordomus.store.workspace import Workspace

    ws = Workspace(repo.root)
    policy = repo.root / ".ai/repo/policy.yaml"
    policy.write_text(re.sub(r"briefing_budget_lines: \d+", "briefing_budget_lines: 100000",
                             policy.read_text(encoding="utf-8")), encoding="utf-8")
    for n in range(120):
        work.question_add(ws, f"question {n} " + "\U0001d538\U0001f600" * 140)
    proc = _hook(repo, "session-start", {"session_id": "e1", "source": "startup", "cwd": str(repo.root)})
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.decode("utf-8")
    assert _utf16(text) <= 10_000, _utf16(text)
    assert text.endswith("`majordomus context` shows the repository context whole)\n")
    assert text.startswith("# Majordomus briefing: episode e1 (startup)\n")


def test_the_cap_keeps_the_note_inside_the_ceiling() -> None:
    from majordomus.context import briefing

    body = "".join(f"- line {n} " + "x" * 80 + "\n" for n in range(120))  # 9,800 and more
    for text in (body, body + briefing.TRIMMED, "\U0001f600" * 9_000 + "\n" + body):
        out = briefing.capped(text)
        assert _utf16(out) <= 10_000 and out.endswith(briefing.TRIMMED)
    assert briefing.capped("short\n") == "short\n"


# --- the repository a hook belongs to -------------------------------------------------------------

def test_a_hook_whose_cwd_lies_outside_the_repository_still_closes_the_episode(tmp_path: Path) -> None:
    """The agent `cd`ed out of the repository (to a sibling checkout, to /tmp): the payload's cwd
    names that folder, but the hook script is the repository's own."""
    repo = make_repo(tmp_path / "repo")
    other = make_repo(tmp_path / "other")  # an initialised repository of its own
    plain = tmp_path / "plain"
    plain.mkdir()
    start = _hook(repo, "session-start", {"session_id": "e1", "source": "startup", "cwd": str(plain)}, cwd=plain)
    assert start.returncode == 0 and b"not initialised" not in start.stderr, start.stderr
    assert start.stdout.startswith(b"# Majordomus briefing: episode e1")
    repo.mj("decision", "add", "keep the close where the hook lives", env={"MAJORDOMUS_EPISODE": "e1"}, check=True)
    end = _hook(repo, "session-end", {"session_id": "e1", "reason": "other", "cwd": str(other.root)},
                cwd=other.root)
    assert end.returncode == 0 and b"not initialised" not in end.stderr, end.stderr
    assert [line["episode"] for line in repo.events("session.closed")] == ["e1"]
    assert other.events("session.closed") == [] and other.events("session.refused") == []
    assert (repo.root / ".ai/repo/sessions/e1.md").is_file() or \
        (repo.root / ".ai/local/state/outbox/sessions/e1.md").is_file()


def test_without_a_hook_root_the_payloads_cwd_still_decides(tmp_path: Path) -> None:
    """`majordomus hook` run by hand (no script, no --hook-root): the payload's cwd names the repository."""
    one = make_repo(tmp_path / "one")
    two = make_repo(tmp_path / "two")
    proc = one.mj("hook", "session-start", input=json.dumps({"session_id": "e1", "cwd": str(two.root)}))
    assert proc.returncode == 0, proc.stderr
    assert two.events("session.opened") and not one.events("session.opened")


def test_a_payload_on_a_pipe_the_client_keeps_open_is_acted_on(repo: Repo) -> None:
    """The client writes the JSON and keeps stdin open: the hook acts on the complete object."""
    proc = subprocess.Popen([str(repo.root / ".claude/hooks/majordomus-session-start")], cwd=repo.root,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    assert proc.stdin is not None
    began = time.monotonic()
    proc.stdin.write(json.dumps({"session_id": "e1", "source": "startup", "cwd": str(repo.root)}).encode() + b"\n")
    proc.stdin.flush()
    try:
        code = proc.wait(timeout=GUARD_S)  # before: until the client closed the pipe (never, here)
        took = time.monotonic() - began
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
        out, err = proc.stdout.read() if proc.stdout else b"", proc.stderr.read() if proc.stderr else b""
    assert code == 0 and took < GUARD_S / 2, (took, err)  # a guard: the hook took ~0.2 s here
    assert out.startswith(b"# Majordomus briefing: episode e1"), err
    assert [line["episode"] for line in repo.events("session.opened")] == ["e1"]


def test_a_payload_cut_short_on_an_open_pipe_is_a_recorded_failure_in_bounded_time(repo: Repo) -> None:
    proc = subprocess.Popen([MAJORDOMUS, "hook", "session-start"], cwd=repo.root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(MAJORDOMUS_LOCK_WAIT="1"))
    assert proc.stdin is not None
    proc.stdin.write(b'{"session_id": "e1", "sour')
    proc.stdin.flush()
    try:
        code = proc.wait(timeout=GUARD_S)
    finally:
        proc.stdin.close()
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read() if proc.stderr else b""
    assert code == 0 and b"Traceback" not in err, err
    assert b"session-start failed" in err and b"complete JSON object" in err, err
    assert any("complete JSON object" in l["error"] for l in repo.events("provider.event.failed"))


# --- a derivation that did not happen is retried, and named until it is ----------------------------

def test_a_derivation_a_locked_dep_file_kept_from_running_is_retried_and_named(repo: Repo) -> None:
    import sqlite3

    assert _hook(repo, "session-start", {"session_id": "e1", "cwd": str(repo.root)}).returncode == 0
    repo.mj("knowledge", "derive", "--episode", "e1", check=True)  # doit's dep file exists
    repo.mj("decision", "add", "derive what a lock kept back", env={"MAJORDOMUS_EPISODE": "e1"}, check=True)
    holder = sqlite3.connect(repo.root / ".ai/local/state/doit.sqlite3", isolation_level=None)
    holder.execute("begin exclusive")  # another process's transaction on doit's dep file
    try:
        end = _hook(repo, "session-end", {"session_id": "e1", "reason": "other", "cwd": str(repo.root)})
    finally:
        holder.execute("rollback")
        holder.close()
    assert end.returncode == 0 and b"locked" in end.stderr, end.stderr
    assert repo.events("session.closed") and not [
        l for l in repo.events("knowledge.derived") if l.get("written")]
    doctor = repo.mj("doctor")
    assert "the derivation of episode e1 did not happen" in doctor.stdout + doctor.stderr, doctor.stdout
    # the next boundary runs it
    nxt = _hook(repo, "session-start", {"session_id": "e2", "cwd": str(repo.root)})
    assert nxt.returncode == 0 and nxt.stderr == b"", nxt.stderr
    derived = [l for l in repo.events("knowledge.derived") if l["episode"] == "e1"]
    assert derived[-1]["written"] == 1, derived
    doctor = repo.mj("doctor")
    assert "derivation of episode e1" not in doctor.stdout + doctor.stderr


# --- an end hook killed outright --------------------------------------------------------------------

def _record_closes(repo: Repo, episode: str) -> int:
    """How many closed spans the session record of `episode` states (tracked, or in the outbox)."""
    for folder in (".ai/repo/sessions", ".ai/local/state/outbox/sessions"):
        path = repo.root / folder / f"{episode}.md"
        if path.is_file():
            return len(re.findall(r"^(?:    )?closed: ", path.read_text(encoding="utf-8"), re.M))
    return 0


def _ledger_closes(repo: Repo, episode: str) -> int:
    return sum(1 for line in repo.events("session.closed") if line["episode"] == episode)


def _end_command(repo: Repo, agent: str) -> list[str]:
    if agent == "claude":
        return [str(repo.root / ".claude/hooks/majordomus-session-end")]
    return [str(repo.root / ".codex/hooks/majordomus-hook"), "codex", "session-end"]


def test_an_end_hook_killed_at_any_point_leaves_record_and_ledger_agreeing(
        tmp_path: Path, monkeypatch: Any) -> None:
    """SIGKILL to the end hook's group (Codex kills it at 3 s; no handler runs) at several points
    of a slow derivation: the tracked session record never says closed while the ledger says open,
    and every derivation a kill cut short is run by the next boundary."""
    from majordomus.evidence import work
    from majordomus.store.workspace import Workspace

    repo = make_repo(tmp_path / "repo")
    repo.git("switch", "-q", "-c", "work")  # the session record is tracked on a branch
    repo.mj("capture", "install", "--agent", "codex", check=True)
    ws = Workspace(repo.root)

    def opened(episode: str) -> None:
        proc = _hook(repo, "session-start", {"session_id": episode, "cwd": str(repo.root)})
        assert proc.returncode == 0, proc.stderr
        monkeypatch.setenv("MAJORDOMUS_EPISODE", episode)
        for n in range(40):  # a derivation long enough to be killed inside
            work.decision_add(ws, f"decision {n} of {episode}", why="to make the derivation take a while")

    def end(agent: str, episode: str, kill_after: float | None) -> float:
        began = time.monotonic()
        proc = subprocess.Popen(_end_command(repo, agent), cwd=repo.root, stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(),
                                start_new_session=True)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"session_id": episode, "reason": "other", "cwd": str(repo.root),
                                     "hook_event_name": "SessionEnd"}).encode())
        proc.stdin.close()
        if kill_after is not None:
            time.sleep(kill_after)
            try:
                os.killpg(proc.pid, 9)
            except ProcessLookupError:
                pass
        proc.wait(timeout=GUARD_S)
        return time.monotonic() - began

    killed: list[str] = []
    for agent in ("claude", "codex"):
        opened(f"{agent}-whole")
        whole = end(agent, f"{agent}-whole", None)  # how long an end takes here, unkilled
        assert _ledger_closes(repo, f"{agent}-whole") == 1 == _record_closes(repo, f"{agent}-whole")
        for fraction in (0.1, 0.25, 0.4, 0.55, 0.7, 0.85, 0.95):
            episode = f"{agent}-{int(fraction * 100)}"
            opened(episode)
            end(agent, episode, whole * fraction)
            killed.append(episode)
            assert _record_closes(repo, episode) <= _ledger_closes(repo, episode), \
                (episode, "the session record says closed while the ledger says open")
            if _ledger_closes(repo, episode) == 0:
                assert (repo.root / f".ai/local/state/episodes/{episode}.json").is_file()
    # the client's retry of an end that never finished, then the next boundary
    for episode in killed:
        if (repo.root / f".ai/local/state/episodes/{episode}.json").is_file():
            end("claude", episode, None)
    nxt = _hook(repo, "session-start", {"session_id": "after", "cwd": str(repo.root)})
    assert nxt.returncode == 0, nxt.stderr
    for episode in killed:
        assert _ledger_closes(repo, episode) >= 1 and _record_closes(repo, episode) == _ledger_closes(repo, episode), \
            (episode, _record_closes(repo, episode), _ledger_closes(repo, episode))
        derived = [l for l in repo.events("knowledge.derived") if l["episode"] == episode]
        assert any(l["written"] + l["unchanged"] == 40 for l in derived), (episode, derived)  # all of it
    assert not list((repo.root / ".ai/local/state/pending").glob("*-*"))


# --- provenance whose opening head is gone -----------------------------------------------------------

def test_commits_that_can_no_longer_be_told_are_said_so_not_dropped_silently(tmp_path: Path) -> None:
    """The episode's opening (its head) is gone from the ledger (the retention trim): derived
    again, its decision would lose its commit unseen. The output and the ledger line say why."""
    from majordomus.store.workspace import Workspace

    repo = make_repo(tmp_path / "repo")
    repo.git("switch", "-q", "-c", "work")
    assert _hook(repo, "session-start", {"session_id": "e1", "cwd": str(repo.root)}).returncode == 0
    repo.commit("an adr", {".ai/repo/adrs/0001-x.md": "# ADR 1\n"})
    repo.mj("decision", "add", "record adr one", env={"MAJORDOMUS_EPISODE": "e1"}, check=True)
    closed = _hook(repo, "session-end", {"session_id": "e1", "reason": "other", "cwd": str(repo.root)})
    assert closed.returncode == 0 and closed.stderr == b"", closed.stderr
    assert "provenance" not in repo.events("knowledge.derived")[-1]
    (record,) = repo.candidates()
    assert "commit:" in record.read_text(encoding="utf-8")
    lines = repo.ledger()
    opened = next(i for i, l in enumerate(lines) if l["event"] == "session.opened")
    Workspace(repo.root).ledger.trim(len(lines) - opened - 1)  # the opening line goes, the rest stays
    assert not repo.events("session.opened")
    again = repo.mj("knowledge", "derive", "--episode", "e1", check=True)
    assert "commit provenance: the head a span of the episode opened on is no longer in the ledger" \
        in again.stdout, again.stdout
    derived = repo.events("knowledge.derived")[-1]
    assert "no longer in the ledger" in derived.get("provenance", ""), derived


# --- a start without git ------------------------------------------------------------------------------

def _path_without_git(tmp_path: Path) -> str:
    """A PATH holding what the hook script needs (dirname, cat, majordomus) and no git."""
    import shutil

    bin_dir = tmp_path / "bin-without-git"
    if bin_dir.is_dir():
        return str(bin_dir)
    bin_dir.mkdir()
    for tool in ("dirname", "cat"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    (bin_dir / "majordomus").symlink_to(MAJORDOMUS)
    return str(bin_dir)


def test_codex_start_without_git_opens_the_episode_and_it_derives_once_git_is_back(tmp_path: Path) -> None:
    """Codex's registered command found its script with `git rev-parse`: without git the whole
    start failed, and the session's decisions belonged to no episode. Each step fails alone now."""
    from majordomus.hooks.install import REGISTRATIONS

    repo = make_repo(tmp_path / "repo")
    repo.git("switch", "-q", "-c", "work")
    repo.mj("capture", "install", "--agent", "codex", check=True)
    reg = REGISTRATIONS["codex"]
    settings = json.loads((repo.root / ".codex/hooks.json").read_text(encoding="utf-8"))

    def command(boundary: str) -> str:
        (found,) = [h["command"] for g in settings["hooks"][reg.events[boundary]] for h in g["hooks"]]
        return str(found)

    sub = repo.root / "src"
    sub.mkdir()
    payload = {"session_id": "cx-1", "source": "startup", "cwd": str(sub), "hook_event_name": "SessionStart"}
    start = subprocess.run(["/bin/bash", "-c", command("session-start")], cwd=sub, input=json.dumps(payload),
                           capture_output=True, text=True, env=dict(os.environ, PATH=_path_without_git(tmp_path)),
                           timeout=GUARD_S)
    assert start.returncode == 0 and "Traceback" not in start.stderr, start.stderr
    assert "additionalContext" in start.stdout and "episode cx-1" in start.stdout, (start.stdout, start.stderr)
    assert [line["episode"] for line in repo.events("session.opened")] == ["cx-1"]
    assert any("git" in line["error"] for line in repo.events("provider.event.failed"))
    repo.mj("decision", "add", "decided while git was away", env={"PATH": _path_without_git(tmp_path)}, check=True)
    assert repo.events("decision.recorded")[-1]["session"] == "cx-1"
    # git is back: the end derives the decision
    end = subprocess.run(["/bin/bash", "-c", command("session-end")], cwd=sub, timeout=GUARD_S,
                         input=json.dumps({"session_id": "cx-1", "reason": "exit", "cwd": str(sub)}),
                         capture_output=True, text=True, env=_env())
    assert end.returncode == 0 and end.stderr == "", end.stderr
    derived = [l for l in repo.events("knowledge.derived") if l["episode"] == "cx-1"]
    assert derived and derived[-1]["written"] == 1, derived
    assert [line["episode"] for line in repo.events("session.closed")] == ["cx-1"]


def test_an_older_install_s_git_command_is_replaced_not_doubled(repo: Repo) -> None:
    from majordomus.hooks.install import GIT_ROOT, REGISTRATIONS

    reg = REGISTRATIONS["codex"]
    old = {"hooks": {event: [{"hooks": [{"type": "command", "command": reg.command(b, GIT_ROOT), "timeout": 30}]}]
                     for b, event in reg.events.items()}}
    (repo.root / ".codex").mkdir(exist_ok=True)
    (repo.root / ".codex/hooks.json").write_text(json.dumps(old), encoding="utf-8")
    repo.mj("capture", "install", "--agent", "codex", check=True)
    data = json.loads((repo.root / ".codex/hooks.json").read_text(encoding="utf-8"))
    for boundary, event in reg.events.items():
        commands = [h["command"] for g in data["hooks"][event] for h in g["hooks"]]
        assert commands == [reg.command(boundary)] and "git" not in commands[0], commands


# --- no reader prints null where a person reads a table -----------------------------------------------

def test_no_human_reader_prints_null_or_none(repo: Repo) -> None:
    """A record stating `class: null`, one stating nothing, a ledger line with a null inside a
    value: the tables and listings a person reads show "(none)" or "—", never null or None."""
    assert _hook(repo, "session-start", {"session_id": "e1", "cwd": str(repo.root)}).returncode == 0
    folder = repo.root / ".ai/repo/knowledge/candidates"
    (folder / "e1-000000000001.md").write_text("---\nid: e1-000000000001\nkind: knowledge/v1\ntitle: a title\n"
                                               "class: null\nstatus: null\n---\nbody\n", encoding="utf-8")
    (folder / "e1-000000000002.md").write_text("---\nid: e1-000000000002\nkind: knowledge/v1\n---\nbody\n",
                                               encoding="utf-8")
    from majordomus.store.workspace import Workspace

    Workspace(repo.root).ledger.append("checkpoint.recorded", "e1", episode="e1", note="n",
                                       git={"branch": None, "head": "abc"})
    for args in (("knowledge", "status"), ("knowledge", "candidates"), ("knowledge", "search", "body"),
                 ("history",), ("question", "list"), ("knowledge", "edges")):
        proc = repo.mj(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        out = proc.stdout + proc.stderr
        assert not re.search(r"\bnull\b|\bNone\b", out), (args, out)
    status = repo.mj("knowledge", "status").stdout
    assert "by class: (none) 2" in status and "(none) 2" in status.split("by status: ")[1], status
