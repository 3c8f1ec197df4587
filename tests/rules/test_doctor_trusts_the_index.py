"""Doctor's integrity rule trusts the index's integrity view for the record files that kept their
stamp (one `lstat` each), reads again the ones that changed, and says what `knowledge check`,
which reads every record, says: the sources stay the truth, deleting the index changes no output."""
from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import Repo
from rules_helpers import findings_of, run_json, write_candidate
from majordomus.knowledge import integrity
from majordomus.rules import dispatch as rules_dispatch
from majordomus.store import filecache, index
from majordomus.store.workspace import open_workspace

INTEGRITY = "majordomus.knowledge-integrity"


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The record files the integrity check reads, from now on."""
    read: list[str] = []
    load = integrity._load

    def counted(path: Path, rel: str) -> Any:
        read.append(path.name)
        return load(path, rel)

    monkeypatch.setattr(integrity, "_load", counted)
    monkeypatch.setattr(index, "settled", lambda st, now_ns=None: True)  # the test's files are fresh
    return read


def test_doctor_reads_only_the_records_that_changed(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    paths = [write_candidate(repo, f"e{k}-00000000000{k}") for k in range(3)]
    read = _reads(monkeypatch)
    ws = open_workspace(repo.root)
    assert integrity.run(ws, trusted=True).findings == []
    assert sorted(read) == sorted(p.name for p in paths)  # the first run builds the view
    read.clear()
    assert integrity.run(ws, trusted=True).findings == []
    assert read == []  # every file kept its stamp: nothing read
    # An edit in place, behind the index's back: the folder's stamp is unchanged, the file's is not.
    text = paths[1].read_text(encoding="utf-8")
    with open(paths[1], "r+", encoding="utf-8") as handle:
        handle.write(text.replace("id: e1-000000000001", "id: e1-00000000000x"))
    (found,) = integrity.run(ws, trusted=True).findings
    assert read == [paths[1].name]
    assert found.file == ".ai/repo/knowledge/candidates/e1-000000000001.md" and found.field == "id"
    read.clear()
    assert [f.what for f in integrity.run(ws).findings] == [found.what]  # `knowledge check` reads them all
    assert sorted(read) == sorted(p.name for p in paths)


def _findings(data: dict[str, Any]) -> str:
    return json.dumps({k: data[k] for k in ("exit", "rules", "findings", "notes")}, sort_keys=True)


def test_doctor_sees_an_edit_and_deleting_the_index_changes_nothing(repo: Repo) -> None:
    path = write_candidate(repo, "e1-000000000001")
    write_candidate(repo, "e2-000000000002")
    code, data = run_json(repo, "doctor")
    assert findings_of(data, INTEGRITY) == []
    path.write_text(path.read_text(encoding="utf-8").replace("status: candidate", "status: verified"),
                    encoding="utf-8")
    code, data = run_json(repo, "doctor")
    assert code == 10
    assert {f["field"] for f in findings_of(data, INTEGRITY)} == {"status"}
    (repo.root / ".ai/local/state" / index.FILE).unlink()
    again, rebuilt = run_json(repo, "doctor")
    assert _findings(rebuilt) == _findings(data)
    assert _findings(run_json(repo, "doctor")[1]) == _findings(data)  # and from the view it rebuilt


def test_an_index_of_another_version_is_rebuilt_with_a_line(repo: Repo) -> None:
    write_candidate(repo, "e1-000000000001")
    repo.mj("doctor", check=False)
    db = sqlite3.connect(repo.root / ".ai/local/state" / index.FILE)
    with db:
        db.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    db.close()
    proc = repo.mj("doctor")
    assert ("majordomus: the knowledge index index.sqlite3 was of another version: rebuilt it from the "
            "records") in proc.stderr
    assert "was of another version" not in repo.mj("doctor").stderr


def _git_processes(trace: Path) -> list[str]:
    """The git commands a run started, from GIT_TRACE (one `built-in` line a process)."""
    return [line.split("built-in: git ", 1)[1].split()[0] for line in trace.read_text().splitlines()
            if "trace: built-in: git " in line] if trace.exists() else []


def test_one_listing_answers_every_question_of_what_git_tracks(repo: Repo, tmp_path: Path) -> None:
    """The queue's tracking, the credential screen's files and the `file:` references are answered
    by one `git ls-files` (`git.Listing`): doctor starts 3 git processes (4 here, where the queue's
    ages come from git's log: the candidate was derived by no ledger line), `knowledge check` 2."""
    sha = repo.git("rev-parse", "HEAD").strip()
    path = write_candidate(repo, "e1-000000000001")
    path.write_text(path.read_text(encoding="utf-8").replace(
        '    - "session:e1"\n', f'    - "session:e1"\n    - "commit:{sha}"\n'
        "relations:\n  - type: relates_to\n    target: \"file:README.md\"\n"), encoding="utf-8")
    repo.git("add", "--", str(path.relative_to(repo.root)))
    # ls-files and status are started before the rules run (`Context.start`): git lists while they work
    for command, expected in ((("doctor",), ["ls-files", "status", "log", "cat-file"]),
                              (("knowledge", "check"), ["ls-files", "cat-file"])):
        trace = tmp_path / f"trace-{command[-1]}"
        proc = repo.mj(*command, "--json", env={"GIT_TRACE": str(trace)})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert findings_of(json.loads(proc.stdout), INTEGRITY) == []
        started = _git_processes(trace)
        # ls-files and status run at once: which says its trace line first is theirs to race
        assert sorted(started[:2]) == sorted(expected[:2]) and started[2:] == expected[2:], command


def test_doctor_names_what_is_not_a_regular_record_file_as_knowledge_check_does(repo: Repo) -> None:
    """Doctor lists a record folder through its integrity view (the view's scan keeps regular files
    only): a link, a pipe, each named in the order `knowledge check`'s scan names them; a folder
    named like a record, and the README contract, are not records at all."""
    write_candidate(repo, "e1-000000000001")
    folder = repo.root / ".ai/repo/knowledge/candidates"
    (folder / "b-link.md").symlink_to("e1-000000000001.md")
    os.mkfifo(folder / "a-pipe.md")
    (folder / "c-folder.md").mkdir()
    run_json(repo, "doctor")  # the view is built
    check = json.loads(repo.mj("knowledge", "check", "--json").stdout)["findings"]
    for _ in range(2):  # and read back
        code, data = run_json(repo, "doctor")
        found = findings_of(data, INTEGRITY)
        assert code == 10 and [(f["file"], f["what"][:22]) for f in found] == [
            (".ai/repo/knowledge/candidates/a-pipe.md", "not a regular file (a "),
            (".ai/repo/knowledge/candidates/b-link.md", "not a regular file (a ")]
        assert [{k: v for k, v in f.items() if k != "rule"} for f in found] == \
            [{k: v for k, v in f.items() if k != "rule"} for f in check]


def test_the_queue_rule_names_the_candidates_of_the_folder_as_it_is_now(repo: Repo,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The queue's rule takes the candidates' names from the index, trusted to the folder's stamp
    (as every folder is at a million lines): a file added or removed changes that stamp."""
    monkeypatch.setattr(index, "SCAN_BELOW", 0)
    monkeypatch.setattr(index, "settled", lambda st, now_ns=None: True)
    monkeypatch.setattr(filecache, "settled", lambda st, now_ns=None: True)

    def untracked() -> list[str]:
        report = rules_dispatch.run(open_workspace(repo.root), "doctor")
        return [f.file or "" for f in report.findings if f.rule == "majordomus.candidates-reviewed"
                and f.what.startswith("git does not track this candidate")]

    first = write_candidate(repo, "e1-000000000001")
    assert untracked() == [".ai/repo/knowledge/candidates/e1-000000000001.md"]
    write_candidate(repo, "e1-000000000002")
    assert untracked() == [".ai/repo/knowledge/candidates/e1-000000000001.md",
                           ".ai/repo/knowledge/candidates/e1-000000000002.md"]
    first.unlink()
    assert untracked() == [".ai/repo/knowledge/candidates/e1-000000000002.md"]
