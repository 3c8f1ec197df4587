"""`knowledge record` (and its MCP tool) resolves a record's references without `dataclasses`:
that module imports `inspect` (with `ast`, `dis` and `tokenize`, ~6 ms of a record's read)."""
from __future__ import annotations

import json

from conftest import Repo
from kbstore import build


def test_a_record_s_references_are_resolved_without_dataclasses_or_inspect(repo: Repo) -> None:
    build(repo)
    rid = sorted(p.stem for p in (repo.root / ".ai/repo/knowledge/curated").glob("*.md") if p.name != "README.md")[0]
    proc = repo.mj("knowledge", "record", rid, "--json", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, [line for line in proc.stderr.splitlines() if not line.startswith("import time:")]
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert "majordomus.knowledge.provenance" in imported
    assert imported & {"dataclasses", "inspect"} == set()
    assert json.loads(proc.stdout)["references"]  # resolved, each as its dict
