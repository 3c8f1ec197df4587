"""`git.spawn`: git started with `posix_spawnp` and pipes instead of `subprocess` (the start hook's
path imports no `subprocess`); a process that does not answer in time is killed."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from majordomus.base import git


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "trunk"], cwd=root, check=True)
    return root


def test_every_command_line_names_the_root() -> None:
    assert git.argv(Path("/r"), "status") == ["git", "-C", "/r", "status"]


def test_a_run_answers_as_subprocess_did(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    big = "x\r\n" * 200_000  # more than a pipe holds, both ways
    sha = git.run(root, "hash-object", "-w", "--stdin", input=big)
    expected = subprocess.run(["git", "hash-object", "--stdin"], cwd=root, input=big.encode(),
                              capture_output=True, check=True).stdout.decode()
    assert sha == expected
    shown = git.run(root, "cat-file", "blob", sha.strip())
    assert shown == big.replace("\r\n", "\n")  # universal newlines, as `text=True` gave
    with pytest.raises(git.GitError, match="not a git command"):
        git.run(root, "no-such-verb")
    assert git.run(root, "no-such-verb", check=False) == ""
    assert git.run_many(root, ("rev-parse", "--show-toplevel"), ("no-such-verb",)) == [
        (0, f"{root.resolve()}\n"), (1, "")]


def test_a_git_that_does_not_answer_is_killed(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    proc = git.spawn(root, "-c", "alias.hang=!sleep 30", "hang")
    pid = proc.pid
    started = time.monotonic()
    with pytest.raises(git.GitError, match="killed"):
        proc.wait(0.3)
    assert time.monotonic() - started < 10
    assert proc.pid == 0  # reaped: no zombie left
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    assert proc.fds == []  # and its pipes closed
    with pytest.raises(git.GitError, match="killed"):
        proc.wait(0)  # asked again: no answer, no second kill


def test_a_wait_of_no_time_ends_a_process_and_an_answer_is_kept(tmp_path: Path) -> None:
    """The start hook ends an early `git status` it did not read that way (hooks/run.py)."""
    root = _repo(tmp_path)
    answered = git.spawn(root, "rev-parse", "--git-dir")
    assert answered.wait() == (0, ".git\n", "")
    assert answered.wait(0) == (0, ".git\n", "")  # read already: the same answer, nothing killed
    with pytest.raises(git.GitError):
        git.spawn(root, "-c", "alias.hang=!sleep 30", "hang").wait(0)


def test_a_signal_that_stops_the_wait_stops_git(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    proc = git.spawn(root, "-c", "alias.hang=!sleep 30", "hang")
    pid = proc.pid
    previous = signal.signal(signal.SIGALRM, _interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(KeyboardInterrupt):
            proc.wait()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert proc.pid == 0 and proc.fds == []
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def test_git_missing_is_an_os_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(OSError):
        git.run(tmp_path, "status")


def _closing(script: str) -> git.Running:
    """A process (sh, not git) that closes its output at once and goes on running `script`: its
    pipes end before it can be reaped, as git's do a moment before its exit."""
    out, err, feed = os.pipe(), os.pipe(), os.pipe()
    pid = os.posix_spawnp("sh", ["sh", "-c", f"exec >&- 2>&- <&-; {script}"], dict(os.environ), file_actions=[
        (os.POSIX_SPAWN_DUP2, feed[0], 0), (os.POSIX_SPAWN_DUP2, out[1], 1), (os.POSIX_SPAWN_DUP2, err[1], 2)])
    for fd in (out[1], err[1], feed[0]):
        os.close(fd)
    return git.Running(("sh",), pid, [out[0], err[0], feed[1]], b"")


def test_a_process_whose_pipes_closed_is_waited_for_until_it_exits() -> None:
    proc = _closing("sleep 0.3; exit 3")
    started = time.monotonic()
    assert proc.wait_bytes(30) == (3, b"", b"")  # its own exit code, read when it exited
    assert time.monotonic() - started >= 0.25
    assert proc.pid == 0


def test_a_process_whose_pipes_closed_is_still_killed_at_its_time() -> None:
    proc = _closing("sleep 30")
    pid = proc.pid
    started = time.monotonic()
    with pytest.raises(git.GitError, match="killed"):
        proc.wait_bytes(0.3)
    assert time.monotonic() - started < 10
    assert proc.pid == 0
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
