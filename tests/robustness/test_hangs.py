"""Nothing waits for ever, and no signal gives a traceback: a lock held by a stopped process, a
hook interrupted with Ctrl-C."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import MAJORDOMUS, Repo, make_repo
from crashkit import held, rng

GUARD_S = 120  # a hang fails the test here; no timing is asserted
SIGINT_TRIALS = 30  # at most, each one start and one end hook run (usually 5 suffice)


def hook(repo: Repo, name: str, episode: str, env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    full = dict(os.environ, PATH=f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ['PATH']}", **env)
    return subprocess.run([str(repo.root / ".claude/hooks" / f"majordomus-{name}")], cwd=repo.root,
                          input=json.dumps({"session_id": episode, "cwd": str(repo.root)}).encode(),
                          capture_output=True, env=full, timeout=GUARD_S)


def test_a_hook_behind_a_stopped_derivation_records_it_and_the_next_boundary_derives(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    state = repo.root / ".ai/local/state"
    env = {"MAJORDOMUS_LOCK_WAIT": "2"}
    hook(repo, "session-start", "e1", env)
    repo.mj("decision", "add", "decided while a derivation hangs", env={"MAJORDOMUS_EPISODE": "e1"}, check=True)
    with held(state / "doit.sqlite3.lock"):
        end = hook(repo, "session-end", "e1", env)
        assert end.returncode == 0 and b"Traceback" not in end.stderr, end.stderr
        assert b"held by another process" in end.stderr
        failed = repo.events("provider.event.failed")
        assert failed and "held by another process" in failed[-1]["error"], failed
        assert [l["session"] for l in repo.events("session.closed")] == ["e1"]
        assert not [l for l in repo.events("knowledge.derived") if l.get("episode") == "e1"]
        assert (state / "pending" / "e1").exists()
        # a command behind it waits its bound too, and says so in one line
        derive = repo.mj("knowledge", "derive", "--episode", "e1", env={"MAJORDOMUS_LOCK_WAIT": "1"})
        assert derive.returncode == 1 and derive.stderr.count("\n") == 1, derive.stderr
        assert "held by another process" in derive.stderr
    start = hook(repo, "session-start", "e2", env)
    assert start.returncode == 0 and start.stderr == b"", start.stderr
    derived = [l for l in repo.events("knowledge.derived") if l.get("episode") == "e1"]
    assert len(derived) == 1 and derived[0]["written"] == 1, derived
    assert not (state / "pending" / "e1").exists()
    assert len(repo.candidates()) == 1


def test_a_hook_behind_a_held_ledger_exits_and_says_why(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    with held(repo.root / ".ai/local/state/ledger.lock"):
        start = hook(repo, "session-start", "e1", {"MAJORDOMUS_LOCK_WAIT": "1"})
    assert start.returncode == 0 and b"Traceback" not in start.stderr
    assert b"held by another process" in start.stderr and start.stderr.count(b"\n") <= 2, start.stderr


def test_sigint_to_a_hook_is_recorded_and_exits_0(tmp_path: Path) -> None:
    """Ctrl-C reaches the hook's whole process group while it works: once majordomus has a file
    under `.ai/` open (a lock, the ledger), then after a random few milliseconds more (seeded:
    `MJ_CRASH_SEED`). A signal before the script's `trap` line would kill `sh` itself: the one
    window no script can close, which this test does not aim at."""
    repo = make_repo(tmp_path / "repo")
    env = dict(os.environ, PATH=f"{Path(MAJORDOMUS).parent}{os.pathsep}{os.environ['PATH']}")
    pick = rng("sigint")

    def working(shell: int) -> bool:
        """Whether the hook's majordomus process (the script's child) has a file under .ai/ open."""
        ai = str((repo.root / ".ai").resolve()) + os.sep
        try:
            children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
            for child in children:
                for fd in os.listdir(f"/proc/{child}/fd"):
                    if os.readlink(f"/proc/{child}/fd/{fd}").startswith(ai):
                        return True
        except OSError:
            pass
        return False

    def run(name: str, episode: str) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.Popen([str(repo.root / ".claude/hooks" / f"majordomus-{name}")], cwd=repo.root,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"session_id": episode, "cwd": str(repo.root)}).encode())
        proc.stdin.close()  # as the agent does: the payload at once
        proc.stdin = None
        deadline = time.monotonic() + GUARD_S
        while proc.poll() is None and not working(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(pick.uniform(0.0, 0.05))
        try:
            os.killpg(proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
        out, err = proc.communicate(timeout=GUARD_S)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    # At least five runs must be cut mid-way for the test to prove anything; how many a random
    # delay cuts depends on how fast the hooks are (a quiet machine finishes many before the
    # signal), so trials go on, five at least, until five were interrupted or TRIALS ran.
    interrupted, trials = 0, 0
    for trial in range(SIGINT_TRIALS):
        if trial >= 5 and interrupted >= 5:
            break
        trials += 1
        for name in ("session-start", "session-end"):
            if name == "session-end":
                repo.mj("decision", "add", f"decision {trial}", env={"MAJORDOMUS_EPISODE": f"s{trial}"})
            done = run(name, f"s{trial}")
            assert done.returncode == 0, (name, trial, done.returncode, done.stderr)
            assert b"Traceback" not in done.stderr and done.stderr.count(b"\n") <= 2, done.stderr
            if b"interrupted by SIGINT" in done.stderr:
                interrupted += 1
                assert any("interrupted by SIGINT" in l["error"] for l in repo.events("provider.event.failed"))
    print(f"SIGINT: {interrupted} of {2 * trials} hook runs interrupted mid-way")
    assert interrupted >= 5, f"the signals landed outside the hooks' work in {2 * trials - interrupted} of " \
        f"{2 * trials} runs: too little was tried"
    for line in repo.ledger():
        assert isinstance(line["event"], str)
    # a derivation a signal stopped is run by the next boundary
    repo.hook("session-start", {"session_id": "after", "cwd": str(repo.root)})
    assert not list((repo.root / ".ai/local/state/pending").glob("s*"))


PEAK_RSS = ("import resource, subprocess, sys\n"
            "code = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL).returncode\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, code)\n")


def test_finish_verify_is_bounded_in_time_input_and_memory(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.mj("start", "a task with a verification", check=True)
    # time: a command that never ends, with a child of its own, is stopped with its group
    pid_file = tmp_path / "child.pid"
    hung = repo.mj("finish", "--verify", f"sleep 300 & echo $! > {pid_file}; wait", "--verify-timeout", "2")
    assert hung.returncode == 4 and "did not finish within 2 s" in hung.stderr, hung.stderr
    assert "Traceback" not in hung.stderr and (repo.root / ".ai/local/state/task.json").exists()
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{child}").exists(), "the command's child outlived the timeout"
    assert repo.events("task.finished") == []
    # input: the command reads /dev/null, not the caller's stdin (a pipe nobody closes)
    reading = subprocess.Popen([MAJORDOMUS, "finish", "--verify", "cat > seen.txt; test ! -s seen.txt"],
                               cwd=repo.root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert reading.stdin is not None
    reading.stdin.write(b"the caller's own input\n")
    reading.stdin.flush()
    try:
        code = reading.wait(timeout=GUARD_S)
    finally:
        reading.kill()
    assert code == 0, reading.stderr.read() if reading.stderr else ""
    (repo.root / "seen.txt").unlink()
    # memory: 150 MB of output, of which only the tail is kept (and its last lines shown)
    repo.mj("start", "a task with a loud verification", check=True)
    loud = "head -c 150000000 /dev/zero | tr '\\0' x; echo; echo the last line; exit 3"
    out = subprocess.run([sys.executable, "-c", PEAK_RSS, MAJORDOMUS, "finish", "--verify", loud],
                         cwd=repo.root, capture_output=True, text=True, timeout=GUARD_S)
    peak_kib, code = map(int, out.stdout.split())
    assert code == 4, out.stderr
    print(f"finish --verify with 150 MB of output: peak RSS {peak_kib / 1024:.0f} MiB")
    assert peak_kib < 100 * 1024, f"{peak_kib / 1024:.0f} MiB for a command's output"
