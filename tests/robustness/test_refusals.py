"""What cannot be meant is refused in one line, and nothing absent is printed as `null`."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import MAJORDOMUS, Repo, make_repo


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, list[str]]:
    repo = make_repo(tmp_path_factory.mktemp("refusals") / "repo")
    repo.hook("session-start", {"session_id": "e1", "cwd": str(repo.root)})
    for n in range(3):
        repo.mj("decision", "add", f"decision {n}", check=True)
    repo.hook("session-end", {"session_id": "e1", "cwd": str(repo.root)})
    ids = sorted(c["id"] for c in json.loads(repo.mj("knowledge", "candidates", "--json", check=True).stdout))
    return repo, ids


NOT_TEXT = [b"\xff\xfe not UTF-8", b"caf\xe9 (Latin-1)", b"a NUL\x00inside", b"\x00" * 16,
            b"an escape \x1b]52;c;b3duZWQ=\x07", b"a C1 \xc2\x9b2J control", b"\x7f"]


def test_promotion_evidence_is_text(store: tuple[Repo, list[str]]) -> None:
    repo, ids = store
    rid = ids[0]
    before = len(repo.ledger())
    for evidence in NOT_TEXT:
        proc = subprocess.run([MAJORDOMUS, "knowledge", "promote", rid], cwd=repo.root, input=evidence,
                              capture_output=True)
        err = proc.stderr.decode("utf-8", "replace")
        assert proc.returncode == 4, (evidence, proc.returncode, err)
        assert err.count("\n") == 1 and "Traceback" not in err and rid in err, err
        assert (repo.root / f".ai/repo/knowledge/candidates/{rid}.md").is_file()
        assert not (repo.root / f".ai/repo/knowledge/curated/{rid}.md").exists()
    reason = repo.mj("knowledge", "reject", ids[1], "--reason", "because\x1b[2J")
    assert reason.returncode == 4 and reason.stderr.count("\n") == 1, reason.stderr
    assert len(repo.ledger()) == before
    ok = subprocess.run([MAJORDOMUS, "knowledge", "promote", rid], cwd=repo.root,
                        input="Checked by hand:\r\n\tthe tests pass, café.\r\n".encode(), capture_output=True)
    assert ok.returncode == 0, ok.stderr
    assert "café" in (repo.root / f".ai/repo/knowledge/curated/{rid}.md").read_text(encoding="utf-8")
