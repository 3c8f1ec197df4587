"""Doctor keeps its judgement (`integrity._Judged`, `.ai/local/state/integrity.judged.json`) with
what it was made of (git's index and its word on the files under `.ai/repo/`, the folders' stamps,
the ledger), and gives the kept findings while none of it changed: a record edited in place, a
session record removed, a tracked session record edited behind git's back (its mtime put back,
git told not to look), ledger lines that resolve a reference or stop an episode vouching for one,
and a hostile clone's committed judgement each make it judge again, and say what `knowledge
check` says."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import Repo
from rules_helpers import OLD, append_line, findings_of, run_json, write_candidate
from majordomus.knowledge import accumulation, integrity
from majordomus.knowledge.references import Resolver
from majordomus.store import filecache, index
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
    return calls


def _doctor(repo: Repo, judged: list[int]) -> list[tuple[str | None, str | None, str]]:
    """What doctor's integrity rule finds, as doctor runs it (the facts read, the index trusted),
    and what `knowledge check`, which reads every record, finds: the same (its resolving not
    counted in `judged`). Past one tick of the file system's clock first, and two seconds past
    git's last write of its index: what git and the test just wrote vouches for itself
    (`filecache.settled`, `integrity.Worktree`)."""
    _settle(repo)
    ws = open_workspace(repo.root)
    found = [(f.file, f.field, f.what) for f in integrity.run(ws, accumulation.facts(ws), trusted=True).findings]
    index.of(ws).close()
    index._OPEN.clear()
    assert found == [(f.file, f.field, f.what) for f in integrity.run(open_workspace(repo.root)).findings]
    judged.pop()
    return found


def _settle(repo: Repo) -> None:
    """Wait until git's index file was written two seconds ago (the test's files one tick ago)."""
    time.sleep(0.06)
    st = os.stat(repo.root / ".git/index")
    time.sleep(max(0.0, (max(st.st_ctime_ns, st.st_mtime_ns) + filecache.RACY_NS - time.time_ns()) / 1e9 + 0.01))


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
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("records")  # tracked, as git's index holds them: nothing of the files' own in the key
    _settle(repo)
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
    _settle(clone)
    found = findings_of(run_json(clone, "doctor")[1], INTEGRITY)
    assert "status" in {f["field"] for f in found}


@pytest.mark.parametrize("flag", ["", "--assume-unchanged", "--skip-worktree", "config"])
def test_a_tracked_session_record_edited_behind_git_s_back_is_judged_again(repo: Repo, judged: list[int],
                                                                           flag: str) -> None:
    """A committed session record given a credential in place, same size, its mtime put back: git's
    index still holds its old stat; with a flag git is told not to look at it at all, and with
    `config` this checkout's git trusts no ctime and compares few fields of a stat."""
    append_line(repo, "session.opened", OLD, "e1")
    write_candidate(repo, "e1-000000000001")
    session = repo.root / ".ai/repo/sessions/e1.md"
    session.write_text(session.read_text(encoding="utf-8") + "note: " + "x" * 40 + "\n", encoding="utf-8")
    old = time.time_ns() - 3600 * 10**9
    os.utime(session, ns=(old, old))  # older than git's index: git trusts its stat, never racily clean
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("records")
    if flag == "config":
        repo.git("config", "core.trustctime", "false")
        repo.git("config", "core.checkStat", "minimal")
    elif flag:
        repo.git("update-index", flag, "--", ".ai/repo/sessions/e1.md")
    assert _doctor(repo, judged) == []
    judged.clear()
    assert _doctor(repo, judged) == []
    assert judged == []  # git says every file is as its index holds it: the kept judgement
    st = session.stat()
    text = session.read_text(encoding="utf-8")
    with open(session, "r+", encoding="utf-8") as handle:
        handle.write(text.replace("x" * 40, "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"))
    os.utime(session, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert session.stat().st_size == st.st_size
    found = _doctor(repo, judged)
    assert [(f[0], "credential" in f[2]) for f in found] == [(".ai/repo/sessions/e1.md", True)]
    assert judged == [1]
