"""The release artefacts: `python -m build` makes an sdist and a wheel (the wheel built from the
sdist, as an installer from the index would), `twine check --strict` passes them, their metadata
is complete, and the version is written in one place and printed by `majordomus --version`."""
from __future__ import annotations

import email
import os
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

from conftest import MAJORDOMUS, PROJECT
from test_packaging import _copy_project

from majordomus import __version__

TWINE = str(Path(sys.executable).parent / "twine")


def test_build_makes_an_sdist_and_a_wheel_that_twine_check_passes(tmp_path: Path) -> None:
    source = tmp_path / "src"
    _copy_project(source)
    dist = tmp_path / "dist"
    # no isolation: hatchling is in the test extras, so the check needs no network
    env = dict(os.environ, HOME=str(tmp_path / "build-home"), PIP_NO_CACHE_DIR="1")
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
                           capture_output=True, text=True, env=env)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    sdist, wheel = dist / f"majordomus-{__version__}.tar.gz", dist / f"majordomus-{__version__}-py3-none-any.whl"
    assert sorted(p.name for p in dist.iterdir()) == sorted([sdist.name, wheel.name])

    check = subprocess.run([TWINE, "check", "--strict", str(sdist), str(wheel)], capture_output=True,
                           text=True, env=env)
    assert check.returncode == 0, check.stdout + check.stderr
    assert check.stdout.count("PASSED") == 2, check.stdout

    with zipfile.ZipFile(wheel) as whl:
        meta = email.message_from_bytes(whl.read(f"majordomus-{__version__}.dist-info/METADATA"))
        names = whl.namelist()
    assert meta["Name"] == "majordomus" and meta["Version"] == __version__
    assert meta["License-Expression"] == "MIT" and meta["License-File"] == "LICENSE"
    assert f"majordomus-{__version__}.dist-info/licenses/LICENSE" in names
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().startswith("# Majordomus\n")  # the README is the long description
    assert meta["Requires-Python"] == ">=3.10"
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.10" in classifiers
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert any(name.endswith("entry_points.txt") for name in names)
    assert "majordomus/_data/mcp-tools.json" in names  # what `majordomus mcp` answers tools/list with

    with tarfile.open(sdist) as tar:
        members = {m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name}
    for needed in ("LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "schemas/knowledge.v1.proto",
                   "pipeline/majordomus/__init__.py", ".ai-skeleton/repo/policy.yaml", "rules/README.md"):
        assert needed in members, needed
    assert not any("__pycache__" in name for name in members)


def test_the_version_is_written_once_and_printed_by_version() -> None:
    pyproject = (PROJECT / "pyproject.toml").read_text(encoding="utf-8")
    assert re.search(r'^dynamic = \["version"\]$', pyproject, re.M)
    assert not re.search(r"^version\s*=", pyproject, re.M)
    assert 'path = "pipeline/majordomus/__init__.py"' in pyproject
    init = (PROJECT / "pipeline/majordomus/__init__.py").read_text(encoding="utf-8")
    assert re.findall(r'^__version__ = "([^"]+)"$', init, re.M) == [__version__]
    shown = subprocess.run([MAJORDOMUS, "--version"], capture_output=True, text=True)
    assert shown.returncode == 0 and shown.stdout == f"majordomus {__version__}\n"
    from importlib.metadata import version
    assert version("majordomus") == __version__  # what the installer recorded, from the same line
    changelog = (PROJECT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## ({re.escape(__version__)}|Unreleased)$", changelog, re.M)
