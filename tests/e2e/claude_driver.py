"""Claude Code, the real client from the npm registry, run headless (`claude -p`) against the
fake Messages API in a throwaway repository and HOME.

The flags are the ones a person would type, with what the client taught us:
- `--allowedTools=Bash` with the `=`: the option takes a list, so `--allowedTools Bash PROMPT`
  would swallow the prompt as a second tool name.
- no `--dangerously-skip-permissions`: as root (CI here is root) the client refuses it.
- `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`: no telemetry, update check or other side traffic;
  the fake sees only the model's requests.
- `--debug-file`: the client's own log, which names each hook it ran, its exit status and, for
  SessionStart, how long it took.
Several prompts in one process (e.g. a task, then `/compact`, then another prompt) go in as
`--input-format=stream-json` user messages on stdin: a slash command there runs as typed.
"""
from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_anthropic import FakeAnthropic
from harness import Audit, ThrowawayRepo, clean_env

PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.332"  # `npm view @anthropic-ai/claude-code version`; shared/agents/ recorded 2.1.197
BIN = "claude"
RUN_TIMEOUT_S = 240
_HOOK_LINE = re.compile(
    r"^(?P<ts>\S+) \[\w+\] (?:Hooks: )?(?P<event>\w+):(?P<matcher>\S+) \[(?P<command>[^\]]*)\] "
    r"(?:\(plugin (?P<plugin>[^)]*)\) )?(?:(?:finished|completed) with status (?P<status>-?\d+)(?: \((?P<ms>\d+)ms\))?|(?P<cancelled>cancelled)$)")


@dataclass
class HookRun:
    """One hook run as the client's debug log tells it."""

    event: str  # SessionStart, SessionEnd, PreCompact
    matcher: str  # startup, resume, compact, other, manual
    command: str
    status: int | str  # the exit status, or "cancelled" (the client's time budget ran out)
    ms: int | None  # the client states it for SessionStart only


@dataclass
class ClaudeRun:
    """One `claude -p` process: what it printed, its session, and the hooks it ran."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    debug_log: Path
    session_id: str | None = None
    result: dict[str, Any] = field(default_factory=dict)
    messages: list[dict[str, Any]] = field(default_factory=list)  # stream-json output, when asked
    hooks: list[HookRun] = field(default_factory=list)

    def describe(self) -> str:
        return (f"claude exited {self.returncode}\nargv: {self.argv}\nstdout: {self.stdout[-3000:]}\n"
                f"stderr: {self.stderr[-3000:]}\ndebug log: {self.debug_log}")


class Claude:
    """The client bound to one repository, one HOME and one fake API."""

    def __init__(self, executable: Path, repo: ThrowawayRepo, home: Path, fake: FakeAnthropic,
                 audit: Audit, logs: Path) -> None:
        self.executable = executable
        self.repo = repo
        self.home = home
        self.fake = fake
        self.audit = audit
        self.logs = logs
        self.runs: list[ClaudeRun] = []

    @property
    def env(self) -> dict[str, str]:
        env = clean_env(self.home)
        env.update(self.audit.env())
        env.update({
            "ANTHROPIC_BASE_URL": self.fake.base_url,
            "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        })
        return env

    def run(self, *prompts: str, resume: str | None = None, extra: tuple[str, ...] = (),
            allowed: str | None = "Bash") -> ClaudeRun:
        """`claude -p` with one prompt as its argument, or several as stream-json user messages;
        `resume` continues that session (`--resume ID`); `allowed` is `--allowedTools` (None: not
        given, so only the repository's own permission rules allow a command)."""
        if not prompts:
            raise ValueError("give the client at least one prompt")
        debug_log = self.logs / f"claude-debug-{len(self.runs) + 1}.log"
        argv = [str(self.executable), "-p", *([f"--allowedTools={allowed}"] if allowed else []),
                f"--debug-file={debug_log}"]
        if resume:
            argv += ["--resume", resume]
        argv += list(extra)
        if len(prompts) == 1:
            argv += ["--output-format=json", prompts[0]]
            proc = subprocess.run(argv, cwd=self.repo.root, env=self.env, capture_output=True, text=True,
                                  timeout=RUN_TIMEOUT_S, stdin=subprocess.DEVNULL)
            returncode, stdout, stderr = proc.returncode, proc.stdout, proc.stderr
        else:
            argv += ["--input-format=stream-json", "--output-format=stream-json", "--verbose"]
            returncode, stdout, stderr = self._converse(argv, prompts)
        run = ClaudeRun(argv, returncode, stdout, stderr, debug_log)
        lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
        if len(prompts) > 1:
            run.messages = lines
            lines = [m for m in lines if m.get("type") == "result"]
        if lines:
            run.result = lines[-1]
            run.session_id = run.result.get("session_id")
        run.hooks = hook_runs(debug_log)
        self.runs.append(run)
        return run

    def _converse(self, argv: list[str], prompts: tuple[str, ...]) -> tuple[int, str, str]:
        """Send each prompt once the client has finished the turn before it (its `result`
        message): all at once, the client would fold the later ones into the running turn."""
        deadline = time.monotonic() + RUN_TIMEOUT_S
        proc = subprocess.Popen(argv, cwd=self.repo.root, env=self.env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        lines: queue.Queue[str | None] = queue.Queue()
        stderr: queue.Queue[str | None] = queue.Queue()
        readers = [threading.Thread(target=_pump, args=(proc.stdout, lines.put), daemon=True),
                   threading.Thread(target=_pump, args=(proc.stderr, stderr.put), daemon=True)]
        for reader in readers:
            reader.start()
        out: list[str] = []
        try:
            for prompt in prompts:
                proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": prompt}}) + "\n")
                proc.stdin.flush()
                while True:
                    line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                    if line is None:
                        raise EOFError
                    out.append(line)
                    if line.startswith("{") and json.loads(line).get("type") == "result":
                        break
            proc.stdin.close()
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except (queue.Empty, subprocess.TimeoutExpired) as exc:
            proc.kill()
            proc.wait()
            raise TimeoutError(f"claude did not finish in {RUN_TIMEOUT_S} s: {out[-5:]}") from exc
        except (EOFError, BrokenPipeError):
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        for reader in readers:
            reader.join(timeout=10)
        while not lines.empty():
            line = lines.get()
            if line is not None:
                out.append(line)
        return proc.returncode, "".join(out), "".join(line for line in stderr.queue if line)

    def transcript(self, session_id: str) -> Path:
        """The transcript the client keeps for `session_id` (and names in every hook payload)."""
        found = sorted((self.home / ".claude" / "projects").glob(f"*/{session_id}.jsonl"))
        assert len(found) == 1, f"expected one transcript of {session_id}, found {found}"
        return found[0]


def hook_runs(debug_log: Path) -> list[HookRun]:
    if not debug_log.exists():
        return []
    found: list[HookRun] = []
    for line in debug_log.read_text(encoding="utf-8", errors="replace").splitlines():
        match = _HOOK_LINE.match(line)
        if match:
            status: int | str = "cancelled" if match["cancelled"] else int(match["status"])
            run = HookRun(match["event"], match["matcher"], match["command"], status,
                          int(match["ms"]) if match["ms"] else None)
            if run not in found[-1:]:  # the client logs a cancellation twice
                found.append(run)
    return found


def _pump(stream: Any, sink: Callable[[str | None], object]) -> None:
    """Hand each line of `stream` to `sink`, then None at its end."""
    for line in stream:
        sink(line)
    sink(None)
