"""The README's install and quick-start lines work as written, in order, in a fresh copy of this
repository (what a clone holds: the tracked files, committed), with nothing of this checkout's
.venv on PATH.

A fenced block preceded by `<!-- readme-test: NAME -->` is run: `clone` (the install from the
clone, in its root), `wheel` (build the wheel there and install it), `repository` (in a new git
repository of the reader's: the quick start, in README order), `pre-commit-config` and
`pre-commit` (the pre-commit snippet, against the clone). A line whose first word is `pip`,
`pipx` or `uv` is one way of several: a flow runs its tool's lines and every line that names no
tool; the pip flow runs in a fresh virtualenv, the pipx and uv flows only where the tool is
installed (a skip says so otherwise)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT
from test_packaging import _copy_project

from majordomus import __version__

pytestmark = pytest.mark.slow

MARKED = re.compile(r"<!-- readme-test: ([\w-]+) -->\n+```(\w*)\n(.*?)^```", re.S | re.M)
TOOLS = ("pip", "pipx", "uv")
CACHE = Path(sys.prefix) / "readme-test-cache" / "pip"


def blocks(text: str | None = None) -> list[tuple[str, str]]:
    """(name, body) of each marked block, in README order."""
    source = text if text is not None else (PROJECT / "README.md").read_text(encoding="utf-8")
    return [(m.group(1), m.group(3)) for m in MARKED.finditer(source)]


def lines_for(tool: str, names: tuple[str, ...]) -> list[str]:
    """The lines a reader with `tool` runs from the blocks called `names`, in order."""
    chosen = []
    for name, body in blocks():
        if name not in names:
            continue
        for line in body.splitlines():
            command = re.sub(r"\s+#.*$", "", line).strip()  # the comment is talk, not a command
            if not command:
                continue
            first = command.split()[0]
            if first in TOOLS and first != tool:
                continue
            chosen.append(command)
    return chosen


def fresh_clone(tmp_path: Path) -> Path:
    clone = tmp_path / "majordomus"
    _copy_project(clone)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "a clone of majordomus"]):
        subprocess.run(["git", *args], cwd=clone, check=True, capture_output=True)
    return clone


def environment(tmp_path: Path, tool: str) -> dict[str, str]:
    """A reader's shell: this checkout's .venv and the test's python off PATH, a home of its own
    (pip, pipx and uv keep caches there), and, for pip, an activated fresh virtualenv."""
    ours = {str(Path(sys.executable).parent), str(PROJECT / ".venv" / "bin")}
    path = [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and p not in ours]
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["HOME"] = str(tmp_path / "reader-home")
    # what pip downloads is kept between runs beside the test's own virtualenv (ignored by git, as
    # .venv/e2e-clients/ is): the installs stay as written, the second run skips the downloads
    env["PIP_CACHE_DIR"] = str(CACHE)
    bin_dir = tmp_path / "bin"
    if tool == "pip":
        base = shutil.which("python3", path=os.pathsep.join(path)) or sys.executable
        venv = tmp_path / "venv"
        subprocess.run([base, "-m", "venv", str(venv)], check=True, env=env)
        env["VIRTUAL_ENV"] = str(venv)
        bin_dir = venv / "bin"
    elif tool == "pipx":
        env.update(PIPX_HOME=str(tmp_path / "pipx"), PIPX_BIN_DIR=str(bin_dir))
    else:
        env.update(UV_TOOL_DIR=str(tmp_path / "uv-tools"), UV_TOOL_BIN_DIR=str(bin_dir),
                   UV_CACHE_DIR=str(tmp_path / "uv-cache"))
    env["PATH"] = os.pathsep.join([str(bin_dir), *path])
    return env


def run_lines(lines: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Each line in one bash, as a reader pastes them: stop at the first that fails."""
    # `set -e` lets the first command of `a && b` fail unnoticed: each line stops the script itself
    script = "set -uo pipefail\n" + "".join(
        f"printf '%s\\n' {shq('$ ' + line)}\n{{ {line}\n}} || exit $?\n" for line in lines)
    proc = subprocess.run(["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


def shq(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def a_repository(tmp_path: Path) -> Path:
    repo = tmp_path / "your-repository"
    repo.mkdir()
    (repo / "README.md").write_text("a project\n")
    for args in (["init", "-q", "-b", "main"], ["add", "README.md"], ["commit", "-qm", "initial"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return repo


def test_the_marked_blocks_are_there_and_name_each_tool() -> None:
    names = [name for name, _ in blocks()]
    for needed in ("clone", "wheel", "repository", "pre-commit-config", "pre-commit"):
        assert needed in names, needed
    for route in ("clone", "wheel"):
        for tool in TOOLS:
            assert any(line.split()[0] == tool for line in lines_for(tool, (route,))), (route, tool)
    assert "pip install majordomus" not in (PROJECT / "README.md").read_text(encoding="utf-8")
    # a reader's pip lines: the others' are left out, a line of no tool stays
    assert lines_for("pip", ("clone",)) == ["pip install .", "majordomus --version"]


UNINSTALL = {"pip": "pip uninstall --yes majordomus", "pipx": "pipx uninstall majordomus",
             "uv": "uv tool uninstall majordomus"}


@pytest.mark.parametrize("tool", TOOLS)
def test_the_readme_install_and_quick_start_run_as_written(tmp_path: Path, tool: str) -> None:
    """Both routes with one tool, in one environment (the install from the clone is uninstalled
    before the wheel's, so the wheel is what the quick start runs), then the quick start."""
    if tool != "pip" and shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed here: the README's {tool} lines were not run "
                    "(the pip lines were, in the pip flow)")
    clone = fresh_clone(tmp_path)
    env = environment(tmp_path, tool)
    found = []
    for route in ("clone", "wheel"):
        shown = run_lines(lines_for(tool, (route,)), clone, env)
        assert f"majordomus {__version__}" in shown, (route, shown)
        found.append(shutil.which("majordomus", path=env["PATH"]))
        if route == "clone":
            run_lines([UNINSTALL[tool]], clone, env)
            assert shutil.which("majordomus", path=env["PATH"]) is None
    assert all(f is not None and f.startswith(str(tmp_path)) for f in found), found  # the ones just installed
    assert list((clone / "dist").glob(f"majordomus-{__version__}-py3-none-any.whl"))
    assert list((clone / "dist").glob(f"majordomus-{__version__}.tar.gz"))

    repo = a_repository(tmp_path)
    said = run_lines(lines_for(tool, ("repository",)), repo, env)
    assert re.search(r"^e1-[0-9a-f]{12}\.md$", said, re.M), said
    assert (repo / ".claude/hooks/majordomus-session-start").is_file()
    log = subprocess.run(["git", "log", "--format=%s"], cwd=repo, capture_output=True, text=True).stdout
    assert log.splitlines()[0] == "Adopt majordomus"
    tracked = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True).stdout
    assert ".ai/repo/policy.yaml" in tracked and ".claude/settings.json" in tracked


def test_the_pre_commit_snippet_runs_against_a_clone(tmp_path: Path) -> None:
    pre_commit = shutil.which("pre-commit", path=str(Path(sys.executable).parent)) or shutil.which("pre-commit")
    if pre_commit is None:
        pytest.skip("pre-commit is not installed here (it is in the test extras)")
    clone = fresh_clone(tmp_path)
    repo = a_repository(tmp_path)
    env = dict(os.environ, HOME=str(tmp_path / "reader-home"), PRE_COMMIT_HOME=str(tmp_path / "pre-commit"),
               PIP_CACHE_DIR=str(CACHE))
    env["PATH"] = os.pathsep.join([str(Path(pre_commit).parent), env.get("PATH", "")])
    subprocess.run([sys.executable, "-m", "majordomus", "init"], cwd=repo, env=env, check=True,
                   capture_output=True)
    (config,) = [body for name, body in blocks() if name == "pre-commit-config"]
    assert "/path/to/majordomus" in config
    (repo / ".pre-commit-config.yaml").write_text(config.replace("/path/to/majordomus", str(clone)))
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=clone, capture_output=True, text=True).stdout.strip()

    said = run_lines(lines_for("pip", ("pre-commit",)), repo, env)
    assert f"updating main -> {head}" in said  # no tag yet: the commit main is at
    assert f"rev: {head}" in (repo / ".pre-commit-config.yaml").read_text()
    assert re.search(r"^majordomus check\.+Passed$", said, re.M), said

    # once a release is tagged, autoupdate pins the tag
    subprocess.run(["git", "tag", "-a", f"v{__version__}", "-m", f"majordomus {__version__}"], cwd=clone,
                   check=True, capture_output=True)
    said = run_lines(["pre-commit autoupdate"], repo, env)
    assert f"rev: v{__version__}" in (repo / ".pre-commit-config.yaml").read_text(), said
