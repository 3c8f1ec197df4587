"""Commits named where anyone may write them: an episode's open record under `.ai/local/state/`
(which a repository can commit by force) and a record's cited `commit:` relations (records are
sources anyone commits). A name that reads as one of git's options (`--output=FILE`, which has git
create, empty or overwrite FILE) never reaches git's command line."""
from __future__ import annotations

import json
from pathlib import Path

from conftest import Repo


def test_an_open_record_s_head_that_reads_as_an_option_is_not_handed_to_git(repo: Repo, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("a person's file\n", encoding="utf-8")
    assert repo.hook("session-start", {"session_id": "e1", "source": "startup"}).returncode == 0
    opened = repo.root / ".ai/local/state/episodes/e1.json"
    record = json.loads(opened.read_text(encoding="utf-8"))
    record["head"] = f"--output={victim}"
    opened.write_text(json.dumps(record), encoding="utf-8")
    repo.git("add", "-f", "--", ".ai/local/state/episodes/e1.json")  # as a hostile repository commits it
    repo.commit("an episode's open record")
    done = repo.mj("checkpoint", "--note", "where it stands", env={"MAJORDOMUS_EPISODE": "e1"})
    assert done.returncode == 0, done.stderr
    assert victim.read_text(encoding="utf-8") == "a person's file\n"
    line = json.loads((repo.root / ".ai/local/ledger.jsonl").read_text(encoding="utf-8").splitlines()[-1])
    assert line["event"] == "checkpoint.recorded" and "changed_error" in line, line


def test_a_record_citing_an_option_as_its_commit_is_not_handed_to_git(repo: Repo, tmp_path: Path) -> None:
    """A candidate's relation `commit:--output=FILE` (a record is a source anyone commits): its
    promotion reads the cited commits' files for its anchors, and never hands git the option."""
    from rules_helpers import write_candidate

    victim = tmp_path / "victim.txt"
    victim.write_text("a person's file\n", encoding="utf-8")
    path = write_candidate(repo, "e1-000000000001")
    path.write_text(path.read_text(encoding="utf-8").replace(
        "provenance:", f"relations:\n  - type: relates_to\n    target: \"commit:--output={victim}\"\nprovenance:"),
        encoding="utf-8")
    repo.git("add", "-A")
    repo.commit("a candidate")
    done = repo.mj("knowledge", "promote", "e1-000000000001", input="## Evidence\nREADME.md says so.\n")
    assert done.returncode == 0, done.stderr
    assert victim.read_text(encoding="utf-8") == "a person's file\n"
