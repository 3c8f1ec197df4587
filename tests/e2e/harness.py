"""What every real-client test needs, whichever the client: a throwaway repository driven only
through the `majordomus` command and the hook scripts `capture install` wrote, a clean
environment, and the audit of the `majordomus` processes the client starts (see
audit/sitecustomize.py). Nothing here imports majordomus: the suite sees it as a user does."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[2]
AUDIT_DIR = Path(__file__).resolve().parent / "audit"
# The venv that runs pytest is the one `make e2e` built: its bin holds `majordomus`.
VENV_BIN = Path(sys.executable).parent
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}
# Variables of whatever client or model runs this suite must not reach the client under test.
FOREIGN = ("ANTHROPIC_", "CLAUDE", "MAJORDOMUS_", "OTEL_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_",
           "MJ_E2E_", "PYTHONPATH", "VIRTUAL_ENV")


def majordomus() -> Path:
    found = shutil.which("majordomus", path=str(VENV_BIN))
    if found is None:
        raise RuntimeError(f"no majordomus in {VENV_BIN}: run the suite with `make e2e`")
    return Path(found)


def clean_env(home: Path) -> dict[str, str]:
    """The environment a person's shell would give the client: this machine's, less any agent's
    or model's variables, with a throwaway HOME (and XDG folders in it), a fixed git identity and
    the venv's bin first on PATH, where the hook scripts look for `majordomus`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
    env.update(GIT_IDENTITY)
    env.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_DATA_HOME": str(home / ".local" / "share"), "XDG_STATE_HOME": str(home / ".local" / "state"),
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "PATH": os.pathsep.join([str(VENV_BIN), env.get("PATH", "/usr/bin:/bin")]),
        "LANG": env.get("LANG", "C.UTF-8"),
    })
    return env


@dataclass
class ThrowawayRepo:
    """A real git repository in a temporary folder, initialised for majordomus, hooks installed."""

    root: Path
    env: dict[str, str]

    def git(self, *args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
        return proc.stdout

    def mj(self, *args: str) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([str(majordomus()), *args], cwd=self.root, env=self.env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise AssertionError(f"majordomus {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
        return proc

    def hook(self, name: str, payload: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        """Run the hook script `capture install` wrote, fed `payload` on stdin as a client does."""
        script = self.root / ".claude" / "hooks" / f"majordomus-{name}"
        return subprocess.run([str(script)], cwd=self.root, env=self.env, input=json.dumps(payload),
                              capture_output=True, text=True)

    def commit_all(self, message: str) -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def ledger(self) -> list[dict[str, Any]]:
        path = self.root / ".ai" / "local" / "ledger.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def events(self, event: str, session: str | None = None) -> list[dict[str, Any]]:
        return [line for line in self.ledger()
                if line["event"] == event and (session is None or line.get("session") == session)]

    def candidates(self) -> list[Path]:
        folder = self.root / ".ai" / "repo" / "knowledge" / "candidates"
        return sorted(p for p in folder.glob("*.md") if p.name != "README.md")

    def twin(self, path: Path) -> ThrowawayRepo:
        """A byte-for-byte copy (history, ignored state and all), to ask what a hook would print."""
        shutil.copytree(self.root, path, symlinks=True)
        return ThrowawayRepo(path, self.env)


def make_repo(root: Path, env: dict[str, str]) -> ThrowawayRepo:
    """`git init`, one commit, `majordomus init` and `capture install`, all committed."""
    root.mkdir(parents=True)
    repo = ThrowawayRepo(root, env)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.name", GIT_IDENTITY["GIT_AUTHOR_NAME"])
    repo.git("config", "user.email", GIT_IDENTITY["GIT_AUTHOR_EMAIL"])
    (root / "README.md").write_text("a project\n", encoding="utf-8")
    repo.commit_all("initial")
    repo.mj("init")
    repo.mj("capture", "install")
    repo.commit_all("majordomus init and capture install")
    return repo


@dataclass
class Process:
    """One Python process the audit saw (a `majordomus` run by a hook or by the agent's shell)."""

    pid: int
    argv: list[str]
    parent: list[str]
    t_start: float | None
    t_parent: float | None
    t_end: float | None = None
    opened: list[str] = field(default_factory=list)  # paths under the watched folders, in order
    writes: list[str] = field(default_factory=list)  # those opened for writing

    @property
    def hook(self) -> str | None:
        """`session-start` etc. when this is `majordomus hook NAME`."""
        args = self.argv[self.argv.index("hook") + 1:] if "hook" in self.argv else []
        return args[0] if args and self.is_majordomus else None

    def _entry(self) -> int | None:
        """Where `majordomus` stands in argv: the console script, or `python -m majordomus`."""
        for number, arg in enumerate(self.argv[:3]):
            if Path(arg).name == "majordomus" or arg.endswith("majordomus/__main__.py"):
                return number
        return None

    @property
    def is_majordomus(self) -> bool:
        return self._entry() is not None

    @property
    def command(self) -> str:
        """`majordomus ARGS` as the shell ran it."""
        entry = self._entry()
        return " ".join(self.argv if entry is None else ["majordomus", *self.argv[entry + 1:]])

    @property
    def wall_ms(self) -> float | None:
        """From the start of the shell that ran it (the hook script) to the interpreter's exit."""
        begin = self.t_parent if self.t_parent is not None else self.t_start
        if begin is None or self.t_end is None:
            return None
        return (self.t_end - begin) * 1000


class Audit:
    """The records audit/sitecustomize.py appends for every Python process started with env()."""

    def __init__(self, log: Path, watch: list[Path]) -> None:
        self.log = log
        self.watch = watch

    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": str(AUDIT_DIR), "MJ_E2E_AUDIT_LOG": str(self.log),
                "MJ_E2E_WATCH": os.pathsep.join(str(p) for p in self.watch)}

    def processes(self) -> list[Process]:
        found: list[Process] = []
        live: dict[int, Process] = {}
        if not self.log.exists():
            return found
        for line in self.log.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["kind"] == "start":
                live[record["pid"]] = process = Process(record["pid"], record["argv"], record["parent"],
                                                         record["t_start"], record["t_parent"])
                found.append(process)
            elif record["pid"] in live and record["kind"] == "end":
                live[record["pid"]].t_end = record["t_end"]
            elif record["pid"] in live and record["kind"] == "open":
                live[record["pid"]].opened.append(record["path"])
                if _for_writing(record.get("mode"), record.get("flags") or 0):
                    live[record["pid"]].writes.append(record["path"])
        return found

    def hooks(self) -> list[Process]:
        return [p for p in self.processes() if p.hook]


def _for_writing(mode: str | None, flags: int) -> bool:
    if mode is not None:
        return any(c in mode for c in "wxa+")
    return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND))
