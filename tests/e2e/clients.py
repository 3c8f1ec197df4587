"""Real agent clients from the npm registry, and the throwaway worlds they run in.

`install(spec)` installs a pinned npm package once into `.venv/e2e-clients/<name>@<version>/`
(a scoped name's `/` becomes `+`) and reuses it while it is there. `World` is one throwaway
git repository with its own HOME; `probe_hook` is a tiny hook script that appends each payload
it gets on stdin, with the environment it saw, to a JSON-lines log.

Nothing here imports majordomus: the tests drive it only through its command and its hooks."""
from __future__ import annotations

import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fake_gemini import FakeGemini
from fake_openai import FakeOpenAI
from fakehttp import Recorded

PROJECT = Path(__file__).resolve().parents[2]
CLIENTS = PROJECT / ".venv" / "e2e-clients"
VENV_BIN = Path(sys.executable).parent
MAJORDOMUS = shutil.which("majordomus", path=str(VENV_BIN)) or "majordomus"
NPM_TIMEOUT = 600

# The variables of a coding client or a model that must not leak into a throwaway run.
_FOREIGN = ("CODEX_", "OPENAI_", "GEMINI_", "GOOGLE_", "CLAUDE", "ANTHROPIC_", "MAJORDOMUS_",
            "COPILOT_", "GH_", "GITHUB_", "NPM_CONFIG_", "npm_config_")


@dataclass(frozen=True)
class Client:
    package: str  # the npm package
    version: str
    bin: str  # the command the package installs

    @property
    def folder(self) -> Path:
        return CLIENTS / f"{self.package.replace('/', '+')}@{self.version}"

    @property
    def exe(self) -> Path:
        return self.folder / "node_modules" / ".bin" / self.bin


CODEX = Client("@openai/codex", "0.171.0", "codex")
GEMINI = Client("@google/gemini-cli", "0.61.0", "gemini")
# the native binary comes from the optional dependency @github/copilot-linux-x64
COPILOT = Client("@github/copilot", "1.0.102", "copilot")


def install(client: Client) -> Path:
    """The client's executable, installed with npm on first use (locked, atomic), else reused."""
    stamp = client.folder / ".installed"
    if stamp.exists() and client.exe.exists():
        return client.exe
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not on PATH: the real clients come from the npm registry")
    CLIENTS.mkdir(parents=True, exist_ok=True)
    with open(CLIENTS / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists() and client.exe.exists():
            return client.exe
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=CLIENTS))
        npm_home = Path(tempfile.mkdtemp(prefix=".npm-home-", dir=CLIENTS))
        try:
            env = clean_env(HOME=str(npm_home), npm_config_cache=str(CLIENTS / ".npm-cache"),
                            npm_config_update_notifier="false")
            (staging / "package.json").write_text('{"private": true}\n', encoding="utf-8")
            proc = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact",
                 f"{client.package}@{client.version}"],
                cwd=staging, env=env, capture_output=True, text=True, timeout=NPM_TIMEOUT)
            if proc.returncode != 0:
                raise RuntimeError(f"npm install {client.package}@{client.version} failed:\n"
                                   f"{proc.stdout}\n{proc.stderr}")
            (staging / ".installed").write_text(f"{client.package}@{client.version}\n",
                                                encoding="utf-8")
            if client.folder.exists():
                shutil.rmtree(client.folder)
            staging.rename(client.folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
            shutil.rmtree(npm_home, ignore_errors=True)
    return client.exe


def clean_env(**extra: str) -> dict[str, str]:
    """The test process's environment without any client's or model's variables, the venv's bin
    first on PATH (so `majordomus` resolves), plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)}
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env.update(extra)
    return env


GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@dataclass
class World:
    """A throwaway git repository `repo` and the HOME its client runs with."""

    base: Path

    def __post_init__(self) -> None:
        self.repo = self.base / "repo"
        self.home = self.base / "home"
        self.hook_log = self.base / "hooks.jsonl"
        self.home.mkdir(parents=True)
        self.repo.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        (self.repo / "README.md").write_text("a project\n", encoding="utf-8")
        self.git("add", "README.md")
        self.git("commit", "-q", "-m", "initial")

    def git(self, *args: str) -> str:
        env = clean_env(HOME=str(self.home), GIT_CONFIG_GLOBAL=os.devnull, **GIT_IDENTITY)
        proc = subprocess.run(["git", *args], cwd=self.repo, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, f"git {' '.join(args)}: {proc.stderr}"
        return proc.stdout

    def mj(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The real `majordomus` command in the repository."""
        env = clean_env(HOME=str(self.home), GIT_CONFIG_GLOBAL=os.devnull, **GIT_IDENTITY)
        return subprocess.run([MAJORDOMUS, *args], cwd=self.repo, env=env, capture_output=True,
                              text=True, timeout=120)

    def ledger(self) -> list[dict[str, Any]]:
        path = self.repo / ".ai" / "local" / "ledger.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                if line.strip()]

    # -- the payload-recording hook ---------------------------------------------------------
    def probe_hook(self, event: str, reply: str = "none") -> str:
        """The command line of a hook that appends its stdin payload and environment to
        `hook_log` as {"event", "payload", "env", "cwd"}; `reply` is what it prints: "none",
        "plain" (the line PROBE-<event>-PLAIN), "json" (hookSpecificOutput.additionalContext
        PROBE-<event>-JSON) or "context" (a top-level additionalContext PROBE-<event>-CONTEXT)."""
        script = self.base / "probe_hook.py"
        if not script.exists():
            script.write_text(PROBE_HOOK, encoding="utf-8")
        return shlex.join([sys.executable, str(script), str(self.hook_log), event, reply])

    def hook_calls(self, event: str | None = None) -> list[dict[str, Any]]:
        if not self.hook_log.exists():
            return []
        calls = [json.loads(line) for line in self.hook_log.read_text(encoding="utf-8").splitlines()]
        return [c for c in calls if event is None or c["event"] == event]


PROBE_HOOK = '''\
import json, os, sys
log, event, reply = sys.argv[1], sys.argv[2], sys.argv[3]
raw = sys.stdin.read()
try:
    payload = json.loads(raw)
except ValueError:
    payload = {"_raw": raw}
env = {k: v for k, v in os.environ.items()
       if k.startswith(("GEMINI_", "CODEX_", "CLAUDE", "MAJORDOMUS_", "COPILOT_"))
       or k in ("HOME", "PATH", "PWD")}
sid = (payload.get("session_id") or payload.get("sessionId")) if isinstance(payload, dict) else None
carriers = sorted(k for k, v in os.environ.items() if sid and sid in v)
with open(log, "a", encoding="utf-8") as out:
    out.write(json.dumps({"event": event, "payload": payload, "env": env, "cwd": os.getcwd(),
                          "session_id_in_env": carriers}) + "\\n")
if reply == "plain":
    print(f"PROBE-{event}-PLAIN")
elif reply == "json":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": event,
                                             "additionalContext": f"PROBE-{event}-JSON"}}))
elif reply == "context":
    print(json.dumps({"additionalContext": f"PROBE-{event}-CONTEXT"}))
'''


# -- Codex CLI -------------------------------------------------------------------------------
CODEX_KEY = "FAKE_OPENAI_KEY"


@dataclass
class CodexRun:
    proc: subprocess.CompletedProcess[str]
    requests: list[Recorded]  # the model requests of this run, in order
    seconds: float

    @property
    def events(self) -> list[dict[str, Any]]:
        """`codex exec --json` lines."""
        return [json.loads(line) for line in self.proc.stdout.splitlines() if line.startswith("{")]

    @property
    def thread_id(self) -> str:
        return next(e["thread_id"] for e in self.events if e["type"] == "thread.started")

    def messages(self, request: int, role: str) -> list[str]:
        """The texts of the `role` messages in one model request's input."""
        return [part["text"] for item in self.requests[request].body["input"]
                if item.get("type") == "message" and item.get("role") == role
                for part in item["content"] if "text" in part]


class CodexWorld(World):
    """A repository and a throwaway HOME/CODEX_HOME whose ~/.codex/config.toml points a
    `[model_providers.fake]` entry (wire_api "responses") at a fake Responses API."""

    def __init__(self, base: Path, exe: Path) -> None:
        super().__init__(base)
        self.exe = exe
        self.codex_home = self.home / ".codex"
        self.codex_home.mkdir()
        self.fake = FakeOpenAI(deadline=900).start()
        (self.codex_home / "config.toml").write_text(codex_config(self.fake.base_url),
                                                     encoding="utf-8")

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(HOME=str(self.home), CODEX_HOME=str(self.codex_home),
                         GIT_CONFIG_GLOBAL=os.devnull, **{CODEX_KEY: "dummy"}, **GIT_IDENTITY,
                         **extra)

    def register_hooks(self, hooks: dict[str, list[dict[str, Any]]]) -> Path:
        """Write `.codex/hooks.json`: event -> handlers ({"command", "timeout"?})."""
        path = self.repo / ".codex" / "hooks.json"
        path.parent.mkdir(exist_ok=True)
        body = {"hooks": {event: [{"hooks": [{"type": "command", **h} for h in handlers]}]
                          for event, handlers in hooks.items()}}
        path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        return path

    # -- Codex's own view and its own config writer (JSON-RPC over `codex app-server`) -----
    def app_server(self, calls: list[tuple[str, dict[str, Any]]], timeout: float = 60) -> list[Any]:
        proc = subprocess.Popen([str(self.exe), "app-server"], cwd=self.repo, env=self.env(),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdin is not None and proc.stdout is not None
        deadline = time.monotonic() + timeout

        def call(n: int, method: str, params: dict[str, Any]) -> Any:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method,
                                         "params": params}) + "\n")
            proc.stdin.flush()
            while time.monotonic() < deadline:
                line = proc.stdout.readline()
                if not line:
                    err = proc.stderr.read() if proc.stderr else ""
                    raise AssertionError(f"codex app-server ended: {err}")
                message = json.loads(line)
                if message.get("id") == n:
                    if "error" in message:
                        raise AssertionError(f"{method}: {message['error']}")
                    return message["result"]
            raise AssertionError(f"codex app-server: no answer to {method} in {timeout}s")

        try:
            call(0, "initialize", {"clientInfo": {"name": "majordomus-e2e", "version": "1"},
                                   "capabilities": {"experimentalApi": True}})
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "initialized"}) + "\n")
            proc.stdin.flush()
            return [call(n, method, params) for n, (method, params) in enumerate(calls, 1)]
        finally:
            proc.kill()
            proc.communicate(timeout=30)

    def hooks_list(self) -> dict[str, Any]:
        """Codex's `hooks/list` for the repository: {"hooks": [...], "warnings", "errors"}."""
        [result] = self.app_server([("hooks/list", {"cwds": [str(self.repo)]})])
        data: dict[str, Any] = result["data"][0]
        return data

    def _write_user_config(self, key_path: str, value: Any) -> None:
        self.app_server([("config/batchWrite", {
            "edits": [{"keyPath": key_path, "value": value, "mergeStrategy": "upsert"}],
            "filePath": None, "expectedVersion": None, "reloadUserConfig": True})])

    def trust_project(self) -> None:
        """What answering "trust this folder" does: [projects."<repo>"] trust_level = "trusted"
        in ~/.codex/config.toml, written by Codex's own config writer."""
        self._write_user_config("projects", {str(self.repo): {"trust_level": "trusted"}})

    def trust_hooks(self) -> list[dict[str, Any]]:
        """What trusting each hook in /hooks does: [hooks.state."<key>"] trusted_hash =
        <currentHash> per listed hook, written through the same config/batchWrite call."""
        hooks = self.hooks_list()["hooks"]
        state = {h["key"]: {"trusted_hash": h["currentHash"]} for h in hooks}
        if state:
            self._write_user_config("hooks.state", state)
        return list(self.hooks_list()["hooks"])

    # -- a headless run --------------------------------------------------------------------
    def run(self, prompt: str, script: list[dict[str, Any]], *args: str,
            resume: bool = False) -> CodexRun:
        """`codex exec -s workspace-write --json [resume --last] ... PROMPT` in the repository,
        the fake answering from `script`."""
        self.fake.script = list(script)
        before = len(self.fake.model_requests())
        # exec's options go before `resume`, which takes fewer of them
        command = [str(self.exe), "exec", "-s", "workspace-write", "--json"]
        if resume:
            command += ["resume", "--last"]
        command += [*args, prompt]
        start = time.monotonic()
        proc = subprocess.run(command, cwd=self.repo, env=self.env(), capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)
        seconds = time.monotonic() - start
        return CodexRun(proc, self.fake.model_requests()[before:], seconds)

    def close(self) -> None:
        self.fake.stop()


def codex_config(base_url: str) -> str:
    """~/.codex/config.toml: the fake provider, and no call home (update check, analytics,
    the plugin and app catalogues) so that the only traffic is to the fake."""
    return f"""model = "gpt-5.1-codex"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{base_url}"
env_key = "{CODEX_KEY}"
wire_api = "responses"

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
"""


def codex_hook_hash(event_snake: str, command: str, timeout: int,
                    matcher: str | None = None) -> str:
    """Codex's trust hash of one command hook: sha256 of the compact, key-sorted JSON of
    {event_name, hooks: [{async: false, command, timeout, type: "command"}], matcher?}."""
    import hashlib

    identity: dict[str, Any] = {"event_name": event_snake,
                                "hooks": [{"async": False, "command": command,
                                           "timeout": timeout, "type": "command"}]}
    if matcher is not None:
        identity["matcher"] = matcher
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()


# -- Gemini CLI ------------------------------------------------------------------------------
@dataclass
class GeminiRun:
    proc: subprocess.CompletedProcess[str]
    requests: list[Recorded]  # every request of this run (side calls too), in order
    seconds: float
    output: dict[str, Any] = field(default_factory=dict)  # --output-format json

    @property
    def model_requests(self) -> list[Recorded]:
        return [r for r in self.requests if r.path.endswith(":streamGenerateContent")]

    def user_texts(self, request: int) -> list[str]:
        """The text parts of the user turns of one model request."""
        return [part["text"] for content in self.model_requests[request].body["contents"]
                if content.get("role") == "user" for part in content["parts"] if "text" in part]


class GeminiWorld(World):
    """A repository and a throwaway HOME; ~/.gemini/settings.json selects API-key auth, the
    environment points GOOGLE_GEMINI_BASE_URL at a fake Gemini API."""

    def __init__(self, base: Path, exe: Path) -> None:
        super().__init__(base)
        self.exe = exe
        self.gemini_home = self.home / ".gemini"
        self.gemini_home.mkdir()
        self.fake = FakeGemini(deadline=900).start()
        (self.gemini_home / "settings.json").write_text(json.dumps(GEMINI_USER_SETTINGS, indent=2),
                                                        encoding="utf-8")

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(HOME=str(self.home), GEMINI_API_KEY="dummy",
                         GOOGLE_GEMINI_BASE_URL=self.fake.base_url, GIT_CONFIG_GLOBAL=os.devnull,
                         **GIT_IDENTITY, **extra)

    def register_hooks(self, hooks: dict[str, list[dict[str, Any]]]) -> Path:
        """Write `.gemini/settings.json` hooks: event -> handlers ({"name", "command",
        "timeout"? in ms})."""
        path = self.repo / ".gemini" / "settings.json"
        path.parent.mkdir(exist_ok=True)
        body = {"hooks": {event: [{"hooks": [{"type": "command", **h} for h in handlers]}]
                          for event, handlers in hooks.items()}}
        path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        return path

    def trust_folder(self) -> None:
        """What "Trust folder" in the CLI's trust dialog writes: ~/.gemini/trustedFolders.json."""
        (self.gemini_home / "trustedFolders.json").write_text(
            json.dumps({str(self.repo): "TRUST_FOLDER"}, indent=2), encoding="utf-8")

    def run(self, prompt: str, script: list[dict[str, Any]], *args: str,
            env: dict[str, str] | None = None) -> GeminiRun:
        """`gemini --yolo --output-format json ... -p PROMPT` in the repository."""
        self.fake.script = list(script)
        before = len(self.fake.snapshot())
        command = [str(self.exe), "--yolo", "--output-format", "json", *args, "-p", prompt]
        start = time.monotonic()
        proc = subprocess.run(command, cwd=self.repo, env=self.env(**(env or {})),
                              capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
        seconds = time.monotonic() - start
        try:
            output = json.loads(proc.stdout) if proc.stdout.strip() else {}
        except ValueError:
            output = {}
        return GeminiRun(proc, self.fake.snapshot()[before:], seconds, output)

    def close(self) -> None:
        self.fake.stop()


# API-key auth (GOOGLE_GEMINI_BASE_URL alone selects the "gateway" auth type, which 0.61.0
# refuses headless), and no call home: no usage statistics, no update check.
GEMINI_USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "telemetry": {"enabled": False},
}


# -- GitHub Copilot CLI ----------------------------------------------------------------------
@dataclass
class CopilotRun:
    proc: subprocess.CompletedProcess[str]
    requests: list[Recorded]  # the model requests of this run, in order
    seconds: float

    @property
    def events(self) -> list[dict[str, Any]]:
        """`copilot -p --output-format json` lines."""
        return [json.loads(line) for line in self.proc.stdout.splitlines() if line.startswith("{")]

    @property
    def session_id(self) -> str:
        return str(next(e["sessionId"] for e in self.events if e.get("type") == "result"))

    def user_texts(self, request: int) -> list[str]:
        """The texts of the user messages in one model request's input."""
        return [part["text"] for item in self.requests[request].body["input"]
                if item.get("type") == "message" and item.get("role") == "user"
                for part in item["content"] if "text" in part]


class CopilotWorld(World):
    """A repository and a throwaway HOME; Copilot CLI in its "bring your own key" mode
    (COPILOT_PROVIDER_BASE_URL, wire API "responses") against the fake Responses API. Its
    runtime unpacks itself (about 235 MB) under $XDG_CACHE_HOME/copilot once: the cache is
    shared beside the installed package, never in the test's HOME."""

    def __init__(self, base: Path, exe: Path) -> None:
        super().__init__(base)
        self.exe = exe
        self.copilot_home = self.home / ".copilot"
        self.cache = exe.parents[2] / "xdg-cache"
        self.fake = FakeOpenAI(deadline=900, client="copilot").start()

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(HOME=str(self.home), XDG_CACHE_HOME=str(self.cache),
                         COPILOT_PROVIDER_BASE_URL=self.fake.base_url,
                         COPILOT_PROVIDER_WIRE_API="responses", COPILOT_PROVIDER_API_KEY="dummy",
                         COPILOT_MODEL="gpt-5.1", GIT_CONFIG_GLOBAL=os.devnull, **GIT_IDENTITY,
                         **extra)

    def register_hooks(self, hooks: dict[str, list[dict[str, Any]]]) -> Path:
        """Write `.github/hooks/probe.json`: event -> handlers ({"bash", "timeoutSec"?})."""
        path = self.repo / ".github" / "hooks" / "probe.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = {"version": 1, "hooks": {event: [{"type": "command", **h} for h in handlers]
                                        for event, handlers in hooks.items()}}
        path.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
        return path

    def trust_folder(self) -> None:
        """What "Yes, and remember this folder for future sessions" keeps: the repository in
        `trustedFolders` of ~/.copilot/config.json."""
        self.copilot_home.mkdir(exist_ok=True)
        (self.copilot_home / "config.json").write_text(
            json.dumps({"trustedFolders": [str(self.repo)]}, indent=2), encoding="utf-8")

    def run(self, prompt: str, script: list[dict[str, Any]], *args: str,
            env: dict[str, str] | None = None) -> CopilotRun:
        """`copilot -p PROMPT --allow-all-tools --allow-all-paths --output-format json ...` in the
        repository (the paths: majordomus is called by its absolute path, outside the repository)."""
        self.fake.script = list(script)
        before = len(self.fake.model_requests())
        command = [str(self.exe), "-p", prompt, "--allow-all-tools", "--allow-all-paths",
                   "--disable-client-telemetry",
                   "--disable-builtin-mcps", "--output-format", "json", *args]
        start = time.monotonic()
        proc = subprocess.run(command, cwd=self.repo, env=self.env(**(env or {})), capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL)
        seconds = time.monotonic() - start
        return CopilotRun(proc, self.fake.model_requests()[before:], seconds)

    def close(self) -> None:
        self.fake.stop()
