"""The wheel carries templates/, schemas/ and .ai-skeleton/: installed away from this checkout, run
from another directory, majordomus still initialises a repository and derives a record."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import PROJECT, Repo


def _copy_project(dest: Path) -> None:
    tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=PROJECT,
                             capture_output=True, text=True, check=True).stdout.splitlines()
    for rel in tracked:
        source = PROJECT / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)


def test_wheel_installs_and_runs_from_elsewhere(tmp_path: Path) -> None:
    source = tmp_path / "src"
    _copy_project(source)
    dist = tmp_path / "dist"
    # pip and its build backend keep caches under $HOME: give them their own, not the guarded one
    pip_env = dict(os.environ, HOME=str(tmp_path / "pip-home"), PIP_NO_CACHE_DIR="1")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(dist), str(source)], check=True, capture_output=True, env=pip_env)
    (wheel,) = dist.glob("majordomus-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("majordomus/_data/templates/session-record.md.j2",
                     "majordomus/_data/templates/hooks/majordomus-session-end",
                     "majordomus/_data/templates/skills/majordomus/SKILL.md",
                     "majordomus/_data/ai-skeleton/repo/policy.yaml",
                     "majordomus/_data/ai-skeleton/repo/knowledge/candidates/README.md",
                     "majordomus/_data/rules/majordomus.knowledge-observed.yaml"):
        assert expected in names, expected
    assert any(n.startswith("majordomus/_data/schemas/") for n in names)
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                    str(wheel)], check=True, capture_output=True, env=pip_env)

    work = Repo(tmp_path / "elsewhere")
    work.root.mkdir()
    work.git("init", "-q", "-b", "main")
    env = dict(os.environ, PYTHONPATH=str(site))

    def mj(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "majordomus", *args], cwd=work.root, env=env,
                              capture_output=True, text=True, input=stdin)

    where = subprocess.run([sys.executable, "-c", "import majordomus; print(majordomus.__file__)"],
                           cwd=work.root, env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(site)), where  # the installed copy, not this checkout
    # The wheel installs one top-level package: `pipeline` is a common folder name in adopters'
    # repositories and a distribution on PyPI, so it must not be taken.
    assert not (site / "pipeline").exists()
    lonely = subprocess.run([sys.executable, "-c", "import pipeline"], cwd=work.root, env=env,
                            capture_output=True, text=True)
    assert lonely.returncode != 0 and "No module named 'pipeline'" in lonely.stderr
    assert mj("init").returncode == 0
    assert (work.root / ".ai/repo/knowledge/candidates/README.md").is_file()
    assert mj("session", "start", "--id", "w1").returncode == 0
    assert mj("decision", "add", "Installed copies work").returncode == 0
    closed = mj("session", "close")
    assert closed.returncode == 0, closed.stderr
    assert len(list((work.root / ".ai/repo/knowledge/candidates").glob("w1-*.md"))) == 1
    # The vendored rules come from the wheel, and the wiring is read from the installed source.
    assert (work.root / ".ai/repo/rules/vendor/majordomus.knowledge-observed.yaml").is_file()
    watch = mj("watch")
    assert watch.returncode == 0 and "ok   majordomus.knowledge-observed" in watch.stdout, watch.stderr
