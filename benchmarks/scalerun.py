"""Running one command for benchmarks/scale.py: wall and CPU time, peak RSS, and `majordomus mcp`
spoken to as a client does."""
from __future__ import annotations

import json
import os
import selectors
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MCP_PROTOCOL = "2025-11-25"  # the newest revision reached through the initialize handshake
TIMEOUT_S = 900  # one command's bound; a slower one stops the benchmark
TIME_BIN = shutil.which("time", path="/usr/bin:/bin")  # GNU time, for the peak RSS of the warm-up run

@dataclass
class Sample:
    ms: float
    rss_kib: int
    cpu_ms: float  # user + system time of the process tree
    code: int
    stdout: bytes
    stderr: bytes


def _killer(pid: int) -> threading.Timer:
    def kill() -> None:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    timer = threading.Timer(TIMEOUT_S, kill)
    timer.daemon = True
    timer.start()
    return timer


def _probed(cmd: list[str], probe: bool, report: Path) -> list[str]:
    return [TIME_BIN, "-f", "%M", "-o", str(report), *cmd] if probe and TIME_BIN else cmd


def _peak(probe: bool, report: Path, usage: Any) -> int:
    """Peak RSS in KiB of the largest process of the tree. wait4's ru_maxrss counts, for our own
    child, the RSS of this process at the fork (exec records the old image's high-water mark), so
    the probe runs the command under /usr/bin/time, whose child forks from a small process."""
    if probe and TIME_BIN:
        lines = [x for x in report.read_text().split("\n") if x.strip()]
        if lines and lines[-1].strip().isdigit():
            return int(lines[-1])
    return int(usage.ru_maxrss)


def _cpu(usage: Any) -> float:
    return float(usage.ru_utime + usage.ru_stime) * 1000


def run(cmd: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None, probe: bool = False) -> Sample:
    """One run of `cmd`: wall ms from spawn to reaping; with `probe`, the peak RSS of its process
    tree (the largest of the command and every descendant it waited for)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(prefix="rss.") as report:
        cmd = _probed(cmd, probe, Path(report.name))
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL)
        timer = _killer(proc.pid)
        if stdin is not None and proc.stdin is not None:
            try:
                proc.stdin.write(stdin)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - started
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return Sample(elapsed * 1000, _peak(probe, Path(report.name), usage), _cpu(usage), proc.returncode,
                      out.read(), err.read())


def checked(sample: Sample, what: str, hook: bool = False) -> Sample:
    if sample.code != 0 or (hook and b"failed" in sample.stderr):
        raise SystemExit(f"{what} failed (exit {sample.code}): {sample.stderr.decode(errors='replace')[-800:]}")
    return sample


def mcp_run(mj: Path, cwd: Path, env: dict[str, str], probe: bool = False,
            call: tuple[str, dict[str, Any]] | None = None) -> Sample:
    """`majordomus mcp` over stdio JSON-RPC, as a client speaks it: initialize, the initialized
    notification, tools/list, and with `call` (a tool's name and arguments) that one tools/call.
    Wall ms from spawn to the last answer's whole line (tools/list's, or the call's), before the
    client parses it; RSS after it exits."""
    def send(obj: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(obj) + "\n").encode())
        proc.stdin.flush()

    buffer = bytearray()
    arrived = 0.0  # when the last answer's line was whole: the client's own parse is not the server's time

    def answer(want: int, deadline: float) -> dict[str, Any]:
        nonlocal arrived
        searched = 0  # the buffer's bytes already known to hold no newline (a reply of megabytes comes in 64 KiB reads)
        while True:
            end = buffer.find(b"\n", searched)
            while end >= 0:
                arrived = time.perf_counter()
                line = bytes(buffer[:end])
                del buffer[:end + 1]
                end, searched = buffer.find(b"\n"), 0
                if not line.strip():
                    continue
                msg: dict[str, Any] = json.loads(line)
                if msg.get("id") == want:
                    if "error" in msg:
                        raise SystemExit(f"majordomus mcp answered request {want} with {msg['error']}")
                    return msg
            searched = len(buffer)
            left = deadline - time.monotonic()
            if left <= 0 or not sel.select(left):
                raise SystemExit(f"majordomus mcp did not answer request {want} in {TIMEOUT_S} s")
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise SystemExit(f"majordomus mcp closed its output before answering request {want}")
            buffer.extend(chunk)

    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile(prefix="rss.") as report:
        started = time.perf_counter()
        proc = subprocess.Popen(_probed([str(mj), "mcp"], probe, Path(report.name)), cwd=cwd, env=env,
                                stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err)
        timer = _killer(proc.pid)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        deadline = time.monotonic() + TIMEOUT_S
        try:
            send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": MCP_PROTOCOL, "capabilities": {},
                             "clientInfo": {"name": "majordomus-bench", "version": "1"}}})
            init = answer(1, deadline)
            send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
            listed = answer(2, deadline)
            if call is not None:
                send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": call[0], "arguments": call[1]}})
                called = answer(3, deadline)
                if called.get("result", {}).get("isError") is not False:
                    raise SystemExit(f"majordomus mcp answered {call[0]} with an error: {str(called)[:400]}")
        except (SystemExit, BrokenPipeError) as exc:
            proc.kill()
            proc.wait()
            err.seek(0)
            raise SystemExit(f"{exc or 'majordomus mcp stopped reading'}; its stderr: "
                             f"{err.read().decode(errors='replace')[-600:]}") from None
        elapsed = arrived - started
        assert proc.stdin is not None
        proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        sel.close()
        if not listed.get("result", {}).get("tools"):
            raise SystemExit(f"majordomus mcp listed no tools: {listed}")
        err.seek(0)
        return Sample(elapsed * 1000, _peak(probe, Path(report.name), usage), _cpu(usage), proc.returncode,
                      json.dumps(init["result"]).encode(), err.read())


