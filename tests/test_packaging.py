"""The wheel carries templates/, schemas/ and .ai-skeleton/: installed away from this checkout, run
from another directory, majordomus still initialises a repository and derives a record."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import PROJECT, Repo


def _copy_project(dest: Path) -> None:
    tracked = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=PROJECT,
                             capture_output=True, text=True, check=True).stdout.splitlines()
    for rel in tracked:
        source = PROJECT / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The wheel built from a copy of this checkout, and the folder it is installed into (not
    editable: the package and its data are the wheel's copies)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    _copy_project(source)
    dist = tmp / "dist"
    # pip and its build backend keep caches under $HOME: give them their own, not the guarded one
    pip_env = dict(os.environ, HOME=str(tmp / "pip-home"), PIP_NO_CACHE_DIR="1")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "-w", str(dist), str(source)], check=True, capture_output=True, env=pip_env)
    (wheel,) = dist.glob("majordomus-*.whl")
    site = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                    str(wheel)], check=True, capture_output=True, env=pip_env)
    return wheel, site


def test_wheel_installs_and_runs_from_elsewhere(tmp_path: Path, installed: tuple[Path, Path]) -> None:
    wheel, site = installed
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("majordomus/_data/templates/opening-snapshot.md.tmpl",
                     "majordomus/_data/templates/hooks/majordomus-session-end",
                     "majordomus/_data/templates/skills/majordomus/SKILL.md",
                     "majordomus/_data/ai-skeleton/repo/policy.yaml",
                     "majordomus/_data/ai-skeleton/repo/knowledge/candidates/README.md",
                     "majordomus/_data/rules/majordomus.knowledge-observed.yaml"):
        assert expected in names, expected
    assert any(n.startswith("majordomus/_data/schemas/") for n in names)

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


def test_an_installed_copy_generates_from_the_proto_of_the_tree_it_runs_in(
        tmp_path: Path, installed: tuple[Path, Path]) -> None:
    """A non-editable install has its own copy of the proto: `majordomus generate` and `doit
    generate` in a checkout compile the checkout's proto, and say so; elsewhere the package's."""
    _, site = installed
    project = tmp_path / "checkout"
    for rel in ("dodo.py", "schemas"):
        source = PROJECT / rel
        if source.is_dir():
            shutil.copytree(source, project / rel)
        else:
            project.mkdir(exist_ok=True)
            shutil.copy2(source, project / rel)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=project, check=True)
    (project / "pipeline").mkdir()  # a run from a subfolder finds the tree's schemas/ above it
    env = dict(os.environ, PYTHONPATH=str(site))
    proto = project / "schemas/knowledge.v1.proto"
    schema = project / "schemas/knowledge.v1.schema.json"
    packaged = site / "majordomus/_data/schemas/knowledge.v1.proto"
    packaged_before = packaged.read_bytes()

    proto.write_text(proto.read_text().replace("// The assertion, in one line.", "// One claim, one line."))
    cli = subprocess.run([sys.executable, "-m", "majordomus", "generate"], cwd=project / "pipeline",
                         env=env, capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert f"proto: {proto} (this tree's)" in cli.stderr.splitlines()
    assert f"generated {schema}" in cli.stderr
    assert "One claim, one line." in schema.read_text()

    proto.write_text(proto.read_text().replace("// One claim, one line.", "// One claim per record."))
    doit = subprocess.run([sys.executable, "-m", "doit", "generate"], cwd=project, env=env,
                          capture_output=True, text=True)
    assert doit.returncode == 0, doit.stdout + doit.stderr
    assert f"proto: {proto} (this tree's)" in doit.stderr.splitlines()
    assert "One claim per record." in schema.read_text()
    assert packaged.read_bytes() == packaged_before  # the installed copy was read by neither

    # Outside any tree with a proto: the installed package's, named as such (--check writes nothing).
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=elsewhere, check=True)
    check = subprocess.run([sys.executable, "-m", "majordomus", "generate", "--check"], cwd=elsewhere,
                           env=env, capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert (f"proto: {packaged} (the installed package's: no schemas/knowledge.v1.proto here)"
            in check.stderr.splitlines())
