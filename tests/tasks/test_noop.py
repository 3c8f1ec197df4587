"""The no-op re-derive told from stamps (`tasks/noop.py`): with every input as the close left it,
`knowledge derive --episode` prints and appends what the derivation itself would, without
importing the deriver; after any input changed, the derivation itself runs."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import Repo
from majordomus.store.workspace import Workspace
from majordomus.tasks import noop

DERIVER = "majordomus.tasks.derive"


def rederive(repo: Repo, episode: str = "e1") -> tuple[str, set[str]]:
    """A re-derive's stdout and the modules it imported."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "majordomus", "knowledge", "derive",
                           "--episode", episode], cwd=repo.root, capture_output=True, text=True,
                          env={k: v for k, v in os.environ.items() if k != "MAJORDOMUS_EPISODE"})
    assert proc.returncode == 0, proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    return proc.stdout, imported


def _derived(repo: Repo) -> dict[str, object]:
    line = dict(repo.events("knowledge.derived")[-1])
    line.pop("ts")
    return line


@pytest.fixture
def closed(episode: Repo) -> Repo:
    """An episode with two decisions, closed by the end hook (which derived it)."""
    episode.mj("decision", "add", "use sqlite for the dep file", "--why", "one file", check=True)
    episode.mj("decision", "add", "keep the outbox local", check=True)
    proc = episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert noop.path(Workspace(episode.root), "e1").is_file()
    return episode


def test_an_unchanged_rederive_is_told_from_stamps_as_the_derivation_tells_it(closed: Repo) -> None:
    before = {p: p.read_bytes() for p in closed.candidates()}
    said, imported = rederive(closed)
    assert DERIVER not in imported and not any(m.split(".")[0] == "doit" for m in imported)
    assert said == "derive e1: nothing changed (2 records up to date)\n"
    fast = _derived(closed)
    noop.path(Workspace(closed.root), "e1").unlink()  # the derivation itself, on the same inputs
    said_again, imported = rederive(closed)
    assert DERIVER in imported
    assert said_again == said and _derived(closed) == fast
    assert {p: p.read_bytes() for p in closed.candidates()} == before
    assert DERIVER not in rederive(closed)[1]  # the derivation kept the stamps again


def test_a_line_appended_to_the_window_derives(closed: Repo) -> None:
    closed.mj("decision", "add", "a late decision", env={"MAJORDOMUS_EPISODE": "e1"}, check=False)
    Workspace(closed.root).ledger.append("decision.recorded", "e1", text="one more, stamped with e1", why="late")
    said, imported = rederive(closed)
    assert DERIVER in imported and "wrote 1" in said
    assert DERIVER not in rederive(closed)[1]


def test_a_line_of_another_episode_naming_it_is_still_a_noop(closed: Repo) -> None:
    Workspace(closed.root).ledger.append("checkpoint.recorded", "e9", text="about e1", episode="e1")
    said, imported = rederive(closed)
    assert DERIVER not in imported and "nothing changed" in said


def test_an_edited_record_derives(closed: Repo) -> None:
    record = closed.candidates()[0]
    record.write_text(record.read_text(encoding="utf-8") + "\nA person's note.\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "majordomus", "knowledge", "derive", "--episode", "e1"],
                          cwd=closed.root, capture_output=True, text=True)
    assert "edited by hand" in proc.stderr
    assert not noop.path(Workspace(closed.root), "e1").exists()  # an edit's re-run derives each time


def test_a_removed_record_derives(closed: Repo) -> None:
    record = closed.candidates()[0]
    record.unlink()
    said, imported = rederive(closed)
    assert DERIVER in imported and "wrote 1" in said and record.is_file()


def test_a_changed_policy_derives(closed: Repo) -> None:
    policy = closed.root / ".ai/repo/policy.yaml"
    policy.write_text(policy.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    assert DERIVER in rederive(closed)[1]


def test_a_new_commit_derives(closed: Repo) -> None:
    closed.commit("elsewhere", {"src/x.py": "x = 1\n"})
    assert DERIVER in rederive(closed)[1]


def test_the_record_writer_and_the_schemas_are_stamped(closed: Repo) -> None:
    """A change to the deriver's code or the proto/schema shows in its stamp: the derivation runs."""
    ws = Workspace(closed.root)
    where = noop.path(ws, "e1")
    record = json.loads(where.read_text(encoding="utf-8"))
    sources = [Path(p) for p in record["sources"]]
    writer = next(p for p in sources if p.parts[-2:] == ("store", "records.py"))
    proto = next(p for p in sources if p.name.endswith(".proto"))
    for changed in (writer, proto):
        altered = dict(record, stamps=[[0, 0, 0, 0, 0] if Path(p) == changed else s
                                       for p, s in zip(record["sources"], record["stamps"])])
        where.write_text(json.dumps(altered), encoding="utf-8")
        assert not noop.answered(ws, "e1")
    where.write_text(json.dumps(record), encoding="utf-8")
    assert DERIVER not in rederive(closed)[1]


def test_stamps_taken_again_after_a_close_only_when_nothing_else_changed(closed: Repo) -> None:
    """`after_close` re-stamps for the close's own changes alone: a record changed since the
    derivation's stamps makes it forget them, and the re-run derives."""
    ws = Workspace(closed.root)
    noop.after_close(ws, "e1", None, [])
    assert noop.path(ws, "e1").is_file()  # nothing changed: kept
    record = closed.candidates()[0]
    record.write_text(record.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    noop.after_close(ws, "e1", None, [])
    assert not noop.path(ws, "e1").exists()
    Workspace(closed.root).ledger.append("decision.recorded", "e1", text="stamped with e1", why="late")
    assert DERIVER in rederive(closed)[1]


def test_another_episodes_record_beside_its_own_is_still_a_noop(closed: Repo) -> None:
    """The derivation reads no listing of the record folders, only its own ids' paths: a record
    written beside its own (another episode's close) leaves the stamps holding."""
    other = closed.candidates()[0]
    (other.parent / "e9-000000000000.md").write_bytes(other.read_bytes().replace(b"e1", b"e9"))
    said, imported = rederive(closed)
    assert DERIVER not in imported and "nothing changed" in said


def test_a_record_placed_in_curated_under_its_id_derives(closed: Repo) -> None:
    """A promotion (the id's name in curated) changes what the derivation keeps: it runs."""
    record = closed.candidates()[0]
    curated = closed.root / ".ai/repo/knowledge/curated"
    curated.mkdir(parents=True, exist_ok=True)
    (curated / record.name).write_bytes(record.read_bytes())
    said, imported = rederive(closed)
    assert DERIVER in imported and "1 kept" in said


def test_a_changed_hand_edit_digest_derives(closed: Repo) -> None:
    """The derivation reads its ids' hand-edit digests (and remembers the bytes it finds its own)."""
    entry = Workspace(closed.root).state / "derived" / f"{closed.candidates()[0].stem}.sha256"
    kept = entry.read_bytes()
    entry.write_text("0" * 64 + "\n", encoding="ascii")
    said, imported = rederive(closed)
    assert DERIVER in imported and "nothing changed" in said and entry.read_bytes() == kept


def test_a_record_folder_replaced_by_a_link_derives(closed: Repo, tmp_path: Path) -> None:
    """A folder swapped for a link to a copy of it shows in its records' stats."""
    folder = closed.candidates()[0].parent
    copy = tmp_path / "elsewhere"
    os.rename(folder, copy)
    os.symlink(copy, folder)
    proc = subprocess.run([sys.executable, "-m", "majordomus", "knowledge", "derive", "--episode", "e1"],
                          cwd=closed.root, capture_output=True, text=True)
    assert "nothing changed" not in proc.stdout
