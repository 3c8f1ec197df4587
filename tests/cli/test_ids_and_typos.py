"""A failure is seen by whoever can fix it: an unknown id exits 3 on every command that takes one, a
refused id names the command that lists the valid ones, a mistyped command or verb is answered
with the nearest ones, and an MCP server started outside any repository names MAJORDOMUS_ROOT."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import MAJORDOMUS, Repo, make_repo

LISTS = {  # a command taking an id, and the command its answer names as listing the valid ones
    ("knowledge", "record"): "majordomus knowledge candidates",
    ("knowledge", "promote"): "majordomus knowledge candidates",
    ("knowledge", "reject"): "majordomus knowledge candidates",
    ("question", "resolve"): "majordomus question list",
    ("history", "--episode"): "majordomus history --event session.opened",
    ("knowledge", "derive", "--episode"): "majordomus history --event session.opened",
    ("session", "close", "--id"): "majordomus history --event session.opened",
    ("session", "context", "--episode"): "majordomus history --event session.opened",
}
TAIL = {("knowledge", "reject"): ("--reason", "noise"), ("question", "resolve"): ("an answer",)}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    repo = make_repo(tmp_path_factory.mktemp("ids") / "repo")
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    repo.mj("question", "add", "Which parser?", check=True)
    return repo


@pytest.mark.parametrize("command", list(LISTS), ids=" ".join)
def test_an_unknown_id_exits_3_and_names_the_listing(shared: Repo, command: tuple[str, ...]) -> None:
    def written() -> int:  # a refused close is recorded as such; nothing else may be
        return len([line for line in shared.ledger() if line["event"] != "session.refused"])
    before = written()
    proc = shared.mj(*command, "nope-000000000000", *TAIL.get(command, ()), input="evidence\n")
    assert proc.returncode == 3, (command, proc.returncode, proc.stderr)
    assert len(proc.stderr.splitlines()) == 1 and f"`{LISTS[command]}`" in proc.stderr, proc.stderr
    assert written() == before


@pytest.mark.parametrize("command", list(LISTS), ids=" ".join)
def test_a_refused_id_exits_4_and_names_the_listing(shared: Repo, command: tuple[str, ...]) -> None:
    proc = shared.mj(*command, "../x", *TAIL.get(command, ()), input="evidence\n")
    assert proc.returncode == 4, (command, proc.returncode, proc.stderr)
    assert len(proc.stderr.splitlines()) == 1 and f"`{LISTS[command]}`" in proc.stderr, proc.stderr
    assert "'../x' refused" in proc.stderr


def test_history_of_a_known_episode_with_nothing_matching_is_not_an_error(shared: Repo) -> None:
    proc = shared.mj("history", "--episode", "e1", "--event", "outbox.drained")
    assert proc.returncode == 0 and proc.stderr == "no ledger lines match\n"
    assert shared.mj("history", "--episode", "e1", "--json", check=True).stdout.startswith("[\n")


@pytest.mark.parametrize(("argv", "said"), [
    (("knowlege",), "invalid choice: 'knowlege': did you mean `majordomus knowledge`?"),
    (("knowledge", "promte", "x"), "invalid choice: 'promte': did you mean `majordomus knowledge promote`?"),
    (("knowledge", "canidates"), "did you mean `majordomus knowledge candidates`?"),
    (("doctr",), "did you mean `majordomus doctor`"),
    (("promote", "x"), "invalid choice: 'promote': did you mean `majordomus knowledge promote`?"),
    (("candiates",), "did you mean `majordomus knowledge candidates`?"),
    (("session", "clsoe"), "did you mean `majordomus session close`?"),
    (("knowledge", "promote", "x", "--class", "conventon"), "did you mean 'convention'?"),
    (("zzzzzz",), "invalid choice: 'zzzzzz': one of init, capture, session,"),
])
def test_a_mistyped_command_is_answered_with_the_nearest(shared: Repo, argv: tuple[str, ...], said: str) -> None:
    proc = shared.mj(*argv)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and said in proc.stderr, proc.stderr


def _mcp(cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "MAJORDOMUS_ROOT"}
    return subprocess.run([MAJORDOMUS, "mcp"], cwd=cwd, input="", capture_output=True, text=True,
                          env={**full, **env}, timeout=60)


def test_the_mcp_server_outside_a_repository_names_majordomus_root(tmp_path: Path, shared: Repo) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    proc = _mcp(outside, {})
    assert proc.returncode == 5 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "MAJORDOMUS_ROOT" in proc.stderr and str(outside) in proc.stderr
    wrong = _mcp(outside, {"MAJORDOMUS_ROOT": str(tmp_path / "missing")})
    assert wrong.returncode == 5 and f"MAJORDOMUS_ROOT={tmp_path / 'missing'} is not inside" in wrong.stderr
    served = _mcp(outside, {"MAJORDOMUS_ROOT": str(shared.root)})  # set, it serves (stdin closed: ends)
    assert served.returncode == 0, served.stderr
