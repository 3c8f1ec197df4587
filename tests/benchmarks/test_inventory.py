"""The benchmark inventory is generated from the declarations: every reader capability and every
hook path has a row in benchmarks/inventory.json, and the bench runner measures every row."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import PROJECT

sys.path.insert(0, str(PROJECT / "benchmarks"))
import inventory  # noqa: E402

from majordomus.hooks.install import REGISTRATIONS
from majordomus.readers import knowledge_base


def test_every_capability_and_hook_path_has_a_row() -> None:
    held = {r["row"] for r in inventory.committed()}
    declared = [c.name for c in knowledge_base.CAPABILITIES]
    hooks = [f"hook {agent} {b}" for agent, reg in REGISTRATIONS.items() for b in reg.events]
    assert "hook claude stop" in hooks
    assert [name for name in declared + hooks if name not in held] == [], \
        "run `python benchmarks/inventory.py --write` and commit benchmarks/inventory.json"
    assert inventory.missing() == []
    assert (PROJECT / "benchmarks/inventory.json").read_text(encoding="utf-8") == inventory.rendered()


def test_a_new_capability_without_a_row_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    extra = knowledge_base.CAPABILITIES[0]._replace(name=f"{knowledge_base.MODULE}.unmeasured")
    monkeypatch.setattr(knowledge_base, "CAPABILITIES", (*knowledge_base.CAPABILITIES, extra))
    assert inventory.missing() == [f"{knowledge_base.MODULE}.unmeasured"]


def test_check_names_the_fix() -> None:
    proc = subprocess.run([sys.executable, str(PROJECT / "benchmarks/inventory.py"), "--check"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "every capability and hook path" in proc.stderr


def test_the_runner_measures_every_row() -> None:
    proc = subprocess.run([sys.executable, str(PROJECT / "benchmarks/inventory.py"), "--runs", "1",
                           "--candidates", "5", "--lines", "100", "--json"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout)
    measured = {(f["row"], f["projection"]) for f in figures}
    for row in inventory.committed():
        projections = ("command", "route", "page") if row["kind"] == "capability" else ("hook",)
        for projection in projections:
            assert (row["row"], projection) in measured, (row["row"], projection)
    assert all(f["median_ms"] > 0 and f["ratio"] > 0 for f in figures)
    assert figures[0]["row"] == "python -c pass" and figures[0]["ratio"] == 1.0
