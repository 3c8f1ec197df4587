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


NUMERIC = [("history", "--limit", "-3"), ("history", "--limit", "0"), ("history", "--limit", "1e3"),
           ("history", "--limit", "many"), ("serve", "--port", "-1"), ("serve", "--port", "70000"),
           ("serve", "--port", "nan"), ("serve", "--port", "80.5"),
           ("finish", "--verify", "true", "--verify-timeout", "0"),
           ("finish", "--verify", "true", "--verify-timeout", "-1"),
           ("finish", "--verify", "true", "--verify-timeout", "nan"),
           ("finish", "--verify", "true", "--verify-timeout", "inf"),
           ("finish", "--verify-timeout", "5")]


def test_numeric_options_refuse_what_they_cannot_mean(store: tuple[Repo, list[str]]) -> None:
    repo, _ = store
    for args in NUMERIC:
        proc = repo.mj(*args)
        assert proc.returncode == 2, (args, proc.returncode, proc.stdout[:200])
        assert proc.stderr.count("\n") == 1 and args[-2] in proc.stderr, (args, proc.stderr)
    assert len(repo.mj("history", "--limit", "2", check=True).stdout.splitlines()) == 2


ABSENT = [
    {"event": "decision.recorded", "task": None, "text": None, "why": None},
    {"event": "question.opened", "question": None, "task": None, "text": None},
    {"event": "question.resolved", "question": "q-1", "text": None, "answer": None},
    {"event": "handover.recorded", "task": None, "next": None},
    {"event": "task.started", "task": None, "title": None},
    {"event": "task.finished", "task": "t-9", "outcome": None},
    {"event": "checkpoint.recorded", "task": None, "note": None, "head": None},
    {"event": "knowledge.derived", "episode": None, "written": None, "unchanged": "x"},
]


def test_no_reader_prints_null_for_something_absent(tmp_path: Path) -> None:
    """Ledger lines and state files with a field missing or null (a hand edit, another version):
    every reader says what is absent in words, never `None` or `null`, and none fails."""
    repo = make_repo(tmp_path / "repo")
    repo.hook("session-start", {"session_id": "e1", "cwd": str(repo.root)})
    with open(repo.root / ".ai/local/ledger.jsonl", "a", encoding="utf-8") as ledger:
        for n, line in enumerate(ABSENT):
            ledger.write(json.dumps({"ts": f"2026-01-01T00:00:0{n}Z", "session": "e1", **line}) + "\n")
    state = repo.root / ".ai/local/state"
    (state / "questions.json").write_text(json.dumps([{"question": "q-2", "text": None, "task": None},
                                                      {"question": None}, {"text": "no id"}]))
    (state / "task.json").write_text(json.dumps({"task": "t-1", "title": None, "scope": None}))
    for args in (("question", "list"), ("context",), ("session", "context"), ("knowledge", "status"),
                 ("session", "start", "--id", "e1"), ("history", "--episode", "e1"), ("knowledge", "candidates")):
        proc = repo.mj(*args)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0 and "internal error" not in out, (args, out)
        assert not re.search(r"\b(?:None|null)\b", out), (args, out)
    briefing = repo.hook("session-start", {"session_id": "e1", "cwd": str(repo.root)}).stdout.decode()
    assert "Active task" in briefing and not re.search(r"\b(?:None|null)\b", briefing), briefing
