"""Shared fixtures: real temporary git repositories, the real `majordomus` command, the real hook
scripts fed real JSON on stdin. No mock stands in for git, doit or the file system."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

# Property tests replay a fixed seed in CI; HYPOTHESIS_PROFILE=long searches much further by hand.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.register_profile("long", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
SCALE = 20 if os.environ.get("HYPOTHESIS_PROFILE") == "long" else 1

PROJECT = Path(__file__).resolve().parent.parent
MAJORDOMUS = shutil.which("majordomus", path=str(Path(sys.executable).parent)) or "majordomus"
GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author", "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author", "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def _git_status(path: Path) -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=path, capture_output=True,
                          text=True).stdout


@pytest.fixture(scope="session", autouse=True)
def _checkout_untouched() -> Iterator[None]:
    """Fail the run if any test wrote into the developer's own checkout (ignored files aside)."""
    before = _git_status(PROJECT) if (PROJECT / ".git").exists() else None
    yield
    if before is not None:
        after = _git_status(PROJECT)
        assert after == before, f"the test run changed the checkout:\n{after}"


@pytest.fixture(scope="session")
def _bytecode(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the suite's `majordomus` processes keep their compiled bytecode: outside the checkout,
    shared by the whole run. A used install has its bytecode; without this, an environment with
    PYTHONDONTWRITEBYTECODE set made each of the suite's thousands of processes compile the
    package's modules from source again (about half a second each)."""
    return tmp_path_factory.mktemp("bytecode")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                   _bytecode: Path) -> Iterator[None]:
    """A fresh $HOME per test, which must stay empty: nothing of ours writes there."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(_bytecode))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig-unused"))
    for key in ("MAJORDOMUS_EPISODE", "MAJORDOMUS_ROOT", "CLAUDE_ENV_FILE", "CLAUDE_PROJECT_DIR", "MJ_TIMING"):
        monkeypatch.delenv(key, raising=False)
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    yield
    leftovers = sorted(p.name for p in home.iterdir())
    assert leftovers == [], f"something wrote to $HOME: {leftovers}"


@dataclass
class Repo:
    """A real temporary git repository with a fixed identity, default branch main."""

    root: Path

    def git(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr}")
        return proc.stdout

    def commit(self, message: str = "change", files: dict[str, str] | None = None) -> str:
        for rel, text in (files or {}).items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            self.git("add", "--", rel)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD").strip()

    def mj(self, *args: str, input: str | bytes | None = None, env: dict[str, str] | None = None,
           check: bool = False) -> subprocess.CompletedProcess[str]:
        """Run the real `majordomus` command in the repository."""
        full_env = dict(os.environ)
        full_env.update(env or {})
        proc = subprocess.run([MAJORDOMUS, *args], cwd=self.root, capture_output=True,
                              input=input.decode("utf-8", "replace") if isinstance(input, bytes) else input,
                              text=True, env=full_env)
        if check and proc.returncode != 0:
            raise AssertionError(f"majordomus {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
        return proc

    def hook(self, name: str, payload: Any, env: dict[str, str] | None = None,
             raw: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """Feed a real hook script real JSON on stdin, as Claude Code does."""
        data = raw if raw is not None else json.dumps(payload).encode("utf-8")
        full_env = dict(os.environ)
        full_env["PATH"] = f"{Path(MAJORDOMUS).parent}{os.pathsep}{full_env.get('PATH', '')}"
        full_env.update(env or {})
        return subprocess.run([str(self.root / ".claude" / "hooks" / f"majordomus-{name}")],
                              cwd=self.root, input=data, capture_output=True, env=full_env)

    def ledger(self) -> list[dict[str, Any]]:
        path = self.root / ".ai" / "local" / "ledger.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    def events(self, event: str) -> list[dict[str, Any]]:
        return [line for line in self.ledger() if line["event"] == event]

    def written_outside(self, allowed: tuple[str, ...] = (".ai/", ".claude/", ".mcp.json")) -> list[str]:
        """Paths git sees as new or changed (ignored ones too) outside `allowed`."""
        out = self.git("status", "--porcelain", "--ignored", "--untracked-files=all")
        paths = [line[3:] for line in out.splitlines()]
        return [p for p in paths if not p.startswith(allowed) and p not in (".gitignore", ".gitattributes")]

    def candidates(self) -> list[Path]:
        folder = self.root / ".ai" / "repo" / "knowledge" / "candidates"
        return sorted(p for p in folder.glob("*.md") if p.name != "README.md")


# Prepared repositories, one per (init, capture), made once a run by the real commands below and
# copied for each test that asks for the same: `_templates` names their folder.
_TEMPLATES: dict[str, Path] = {}


@pytest.fixture(scope="session", autouse=True)
def _templates(tmp_path_factory: pytest.TempPathFactory) -> None:
    _TEMPLATES["folder"] = tmp_path_factory.mktemp("templates")


def make_repo(path: Path, init: bool = True, capture: bool = True) -> Repo:
    """A real git repository with one commit, `majordomus init` and `capture install` done as
    asked. The first of a kind in a run is made by those commands; the others are copies of it
    (names no path of its own: `test_a_copied_repository_is_a_fresh_one` checks it)."""
    folder, kind = _TEMPLATES.get("folder"), _kind(init, capture)
    if folder is None or kind is None or (path.exists() and any(path.iterdir())):
        return _make_repo(path, init, capture)
    template = folder / kind
    if not template.exists():
        building = template.with_name(template.name + ".tmp")
        shutil.rmtree(building, ignore_errors=True)
        _make_repo(building, init, capture)
        building.rename(template)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.rmdir()
    shutil.copytree(template, path, symlinks=True, copy_function=shutil.copy)
    return Repo(path)


def _kind(init: bool, capture: bool) -> str | None:
    """The name of the prepared repository the real commands would make in this environment, or
    None when they would not make the same one twice: a test that changed the environment (a
    commit date, PATH, ...) gets its own, and one without fixed commit dates or with a global git
    configuration gets a repository made afresh."""
    env = dict(os.environ)
    home = Path(env.get("HOME", "/nonexistent"))
    if ("GIT_AUTHOR_DATE" not in env or "GIT_COMMITTER_DATE" not in env or not home.is_dir()
            or any(home.iterdir()) or Path(env.get("GIT_CONFIG_GLOBAL", home / ".gitconfig")).exists()):
        return None
    for key in ("HOME", "GIT_CONFIG_GLOBAL", "PYTEST_CURRENT_TEST"):  # a fresh empty one per test
        env.pop(key, None)
    digest = hashlib.sha256(repr(sorted(env.items())).encode()).hexdigest()[:16]
    return f"init{int(init)}-capture{int(capture)}-{digest}"


def _make_repo(path: Path, init: bool, capture: bool) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    repo = Repo(path)
    repo.git("init", "-q", "-b", "main")
    repo.git("config", "user.name", "Test Author")
    repo.git("config", "user.email", "author@example.invalid")
    repo.commit("initial", {"README.md": "a project\n"})
    if init:
        repo.mj("init", check=True)
    if capture:
        repo.mj("capture", "install", check=True)
    return repo


def published(tmp_path: Path, name: str = "repo") -> Repo:
    """An initialised repository with its hooks committed, pushed to a bare remote whose
    default branch git records as main."""
    repo = make_repo(tmp_path / name)
    repo.git("add", "-A")
    repo.commit("majordomus init and capture install")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "-u", "origin", "main")
    repo.git("remote", "set-head", "origin", "main")
    return repo


@pytest.fixture
def bare_repo(tmp_path: Path) -> Repo:
    """A git repository with one commit, not initialised for majordomus."""
    return make_repo(tmp_path / "repo", init=False, capture=False)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A git repository with one commit, `majordomus init` and `capture install` done."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def episode(repo: Repo) -> Repo:
    """`repo` with episode e1 opened through the real session-start hook."""
    proc = repo.hook("session-start", {"session_id": "e1", "source": "startup", "cwd": str(repo.root)})
    assert proc.returncode == 0, proc.stderr
    return repo
