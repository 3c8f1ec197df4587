"""Doctor keeps its judgement of the record folders (`integrity._Judged`, `.ai/local/state/
integrity.judged.json`) with what it was made of, and gives the kept findings while none of it
changed: a record edited in place, a session record removed, ledger lines that resolve a
reference or stop an episode vouching for one, and a hostile clone's committed judgement each
make it judge again, and say what `knowledge check` says."""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import Repo
from rules_helpers import OLD, append_line, findings_of, run_json, write_candidate
from majordomus.knowledge import accumulation, integrity
from majordomus.knowledge.references import Resolver
from majordomus.store import index
from majordomus.store.workspace import open_workspace

INTEGRITY = "majordomus.knowledge-integrity"


@pytest.fixture
def judged(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the references were resolved (a judgement made, not the kept one given)."""
    calls: list[int] = []
    unresolved = Resolver.unresolved

    def counted(self: Resolver, cites: Any) -> Any:
        calls.append(1)
        return unresolved(self, cites)

    monkeypatch.setattr(Resolver, "unresolved", counted)
    monkeypatch.setattr(index, "settled", lambda st, now_ns=None: True)  # the test's files are fresh
    return calls


def _doctor(repo: Repo, judged: list[int]) -> list[tuple[str | None, str | None, str]]:
    """What doctor's integrity rule finds, as doctor runs it (the facts read, the index trusted),
    and what `knowledge check`, which reads every record, finds: the same (its resolving not
    counted in `judged`)."""
    ws = open_workspace(repo.root)
    found = [(f.file, f.field, f.what) for f in integrity.run(ws, accumulation.facts(ws), trusted=True).findings]
    index.of(ws).close()
    index._OPEN.clear()
    assert found == [(f.file, f.field, f.what) for f in integrity.run(open_workspace(repo.root)).findings]
    judged.pop()
    return found


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_kept_judgement_is_given_until_a_record_changes(repo: Repo, judged: list[int]) -> None:
    append_line(repo, "session.opened", OLD, "e1")
    paths = [write_candidate(repo, f"e{k}-00000000000{k}") for k in range(3)]
    assert _doctor(repo, judged) == []
    assert len(judged) == 1  # judged, and kept
    judged.clear()
    assert _doctor(repo, judged) == []
    assert judged == []  # nothing changed: the kept judgement
    _edit(paths[1], "id: e1-000000000001", "id: e1-00000000000x")  # in place, the folder's stamp kept
    (found,) = _doctor(repo, judged)
    assert found[:2] == (".ai/repo/knowledge/candidates/e1-000000000001.md", "id")
    assert len(judged) == 1
    judged.clear()
    assert _doctor(repo, judged) == [found]  # the finding, from the judgement kept
    assert judged == []


def test_ledger_lines_that_resolve_a_reference_are_judged_again(repo: Repo, judged: list[int]) -> None:
    append_line(repo, "session.opened", OLD, "e1")
    path = write_candidate(repo, "e1-000000000001")
    _edit(path, '    - "session:e1"\n', '    - "session:e1"\n    - "task:t-later"\n')
    (found,) = _doctor(repo, judged)
    assert "task:t-later does not resolve" in found[2]
    assert _doctor(repo, judged) == [found]
    append_line(repo, "session.closed", OLD, "e9")  # a line that resolves nothing: still not resolved
    assert _doctor(repo, judged) == [found]
    append_line(repo, "task.started", OLD, "e1", task="t-later", title="later")
    assert _doctor(repo, judged) == []


def test_an_episode_opened_later_no_longer_vouches_for_its_task(repo: Repo, judged: list[int]) -> None:
    """A task the ledger does not name resolves while the record's own episode has its tracked
    session record and the ledger never opened it (a trimmed ledger, another checkout's); a line
    opening that episode ends the vouching: a judgement kept over a grown ledger would not see it."""
    append_line(repo, "session.opened", OLD, "e0")
    path = write_candidate(repo, "e1-000000000001")
    _edit(path, '    - "session:e1"\n', '    - "session:e1"\n    - "task:t-elsewhere"\n')
    assert _doctor(repo, judged) == []
    assert _doctor(repo, judged) == []
    append_line(repo, "session.opened", OLD, "e1")
    (found,) = _doctor(repo, judged)
    assert "task:t-elsewhere does not resolve" in found[2]


def test_a_session_record_removed_is_judged_again(repo: Repo, judged: list[int]) -> None:
    append_line(repo, "session.opened", OLD, "e0")
    write_candidate(repo, "e1-000000000001")
    assert _doctor(repo, judged) == []
    (repo.root / ".ai/repo/sessions/e1.md").unlink()  # its episode is in no ledger line either
    (found,) = _doctor(repo, judged)
    assert "session:e1 does not resolve" in found[2]


def test_a_hostile_clone_s_committed_judgement_is_not_given(repo: Repo, tmp_path: Path) -> None:
    """A clone that commits `.ai/local/state/` (its .gitignore not ignoring it) as doctor left it
    when its records were consistent, with a record made inconsistent since: a clone of it judges
    its own files, and says so. Its ledger is empty: the judgement kept holds for any ledger grown
    from none, so that only the record files' stamps tell the clone's store from the one judged."""
    ledger = repo.root / ".ai/local/ledger.jsonl"
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_bytes(b"")
    path = write_candidate(repo, "e1-000000000001")
    assert findings_of(run_json(repo, "doctor")[1], INTEGRITY) == []
    state = repo.root / ".ai/local/state"
    kept = {p.name: p.read_bytes() for p in state.iterdir() if p.is_file()}
    assert integrity.JUDGED in kept
    _edit(path, "status: candidate", "status: verified")
    assert findings_of(run_json(repo, "doctor")[1], INTEGRITY) != []
    for name, data in kept.items():  # the state of the consistent store, committed with the other record
        (state / name).write_bytes(data)
    (repo.root / ".gitignore").write_text("")
    repo.git("add", "-A", "-f", "--", ".")
    repo.commit("the state too")
    assert integrity.JUDGED in repo.git("ls-files", "--", ".ai/local/state")
    subprocess.run(["git", "clone", "-q", str(repo.root), str(tmp_path / "clone")], check=True)
    clone = Repo(tmp_path / "clone")
    found = findings_of(run_json(clone, "doctor")[1], INTEGRITY)
    assert "status" in {f["field"] for f in found}
