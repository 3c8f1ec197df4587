"""The prebuilt briefing: a boundary composes it, the next start prints it when its inputs are
unchanged, and never when one changed. Each test plants a marker in the prebuilt text: a start
that prints the marker reused it; after each input's change, the start must print exactly what a
fresh composition prints, and no marker."""
from __future__ import annotations

import json
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import Repo, published
from kbstore import curated
from majordomus.base import git
from majordomus.base.output import escape
from majordomus.context import briefing, prebuilt
from majordomus.store import filecache
from majordomus.store.workspace import Workspace

MARK = "PREBUILT-MARKER"
CANDIDATE = """---
id: {rid}
kind: knowledge/v1
class: convention
status: candidate
epistemics: decided
title: "{title}"
date: "2026-01-02"
provenance:
  origin: extracted
  derived_from:
    - "session:{episode}"
---
{title}
"""


def start(repo: Repo, episode: str, source: str = "startup") -> str:
    proc = repo.hook("session-start", {"session_id": episode, "source": source})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    return proc.stdout.decode("utf-8")


def end(repo: Repo, episode: str) -> None:
    proc = repo.hook("session-end", {"session_id": episode, "reason": "other"})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr


def fresh(repo: Repo, episode: str, source: str = "startup") -> str:
    """What a start composes, as the hook prints it (after the start's own writes)."""
    return briefing.capped(escape(briefing.compose(Workspace(repo.root), episode, source)))


def plant(repo: Repo) -> None:
    """Mark the prebuilt text, so that a start that prints it shows it reused it."""
    path = repo.root / ".ai/local/state" / prebuilt.FILE
    record = json.loads(path.read_text(encoding="utf-8"))
    record["body"] = MARK + "\n" + record["body"]
    path.write_text(json.dumps(record), encoding="utf-8")


def ledger_line(repo: Repo, event: str, **data: object) -> None:
    Workspace(repo.root).ledger.append(event, None, **data)


def candidate(repo: Repo, rid: str, episode: str, title: str = "A waiting candidate") -> Path:
    path = repo.root / ".ai/repo/knowledge/candidates" / f"{rid}.md"
    path.write_text(CANDIDATE.format(rid=rid, episode=episode, title=title), encoding="utf-8")
    return path


@pytest.fixture
def store(tmp_path: Path) -> Repo:
    """A published repository with two verified conventions relating to files, one candidate, a
    closed episode (its end built the prebuilt text), all committed and pushed."""
    repo = published(tmp_path)
    (repo.root / "src").mkdir()
    (repo.root / "src/a.py").write_text("a = 1\n", encoding="utf-8")
    (repo.root / "src/b.py").write_text("b = 1\n", encoding="utf-8")
    curated(repo, "kb-a", "convention", "Module a keeps its state in one place", date="2026-01-01",
            relates=("src/a.py",))
    curated(repo, "kb-b", "convention", "Module b is pure", date="2026-01-02", relates=("src/b.py",))
    candidate(repo, "e0-c1", "e0")
    repo.git("add", "-A")
    repo.commit("records")
    repo.git("push", "-q", "origin", "main")  # so no path is this branch's own change yet
    start(repo, "e0")
    end(repo, "e0")
    assert (repo.root / ".ai/local/state" / prebuilt.FILE).is_file()
    return repo


def test_an_unchanged_start_prints_the_prebuilt_text_and_its_own_writes_keep_it(store: Repo) -> None:
    plant(store)
    first = start(store, "e1")
    assert MARK in first and first.startswith("# Majordomus briefing: episode e1 (startup)\n")
    second = start(store, "e2", "resume")  # e1's session.opened, open record and snapshot change nothing
    assert MARK in second and second.startswith("# Majordomus briefing: episode e2 (resume)\n")
    # a re-derivation that wrote nothing, and a decision: lines the briefing never reads
    ledger_line(store, "knowledge.derived", episode="e0", written=0, unchanged=1, skipped=0, paths=[])
    ledger_line(store, "decision.recorded", task=None, text="keep b pure", why="tests")
    assert MARK in start(store, "e3")


def test_the_boundary_builds_what_a_fresh_composition_prints(store: Repo) -> None:
    assert start(store, "e1") == fresh(store, "e1")


def _commit(repo: Repo) -> None:
    repo.commit("moves HEAD", {"src/c.py": "c = 1\n"})


def _record_added(repo: Repo) -> None:
    candidate(repo, "e7-new", "e7", "A new candidate")


def _record_edited(repo: Repo) -> None:  # in place: the folder's stat does not change, git's status does
    path = repo.root / ".ai/repo/knowledge/curated/kb-b.md"
    path.write_text(path.read_text(encoding="utf-8").replace("Module b is pure", "Module b is impure"),
                    encoding="utf-8")


def _record_rejected(repo: Repo) -> None:
    path = repo.root / ".ai/repo/knowledge/candidates/e0-c1.md"
    path.write_text(path.read_text(encoding="utf-8").replace("status: candidate", "status: superseded"),
                    encoding="utf-8")


def _record_promoted(repo: Repo) -> None:
    curated(repo, "kb-c", "convention", "A third convention", date="2026-01-03")


def _policy(repo: Repo) -> None:
    path = repo.root / ".ai/repo/policy.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "\n# a comment changes no key\n", encoding="utf-8")
    path.write_text(path.read_text(encoding="utf-8").replace("# a comment changes no key", "knobs: 1"),
                    encoding="utf-8")


def _branch(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "topic")


def _ordering(repo: Repo) -> None:  # kb-a (older) now relates to a changed path: it comes first
    (repo.root / "src/a.py").write_text("a = 2\n", encoding="utf-8")


def _task(repo: Repo) -> None:
    repo.mj("start", "A task", "--scope", "src", check=True)


def _question(repo: Repo) -> None:
    repo.mj("question", "add", "Is b pure?", check=True)


def _handover(repo: Repo) -> None:
    ledger_line(repo, "handover.recorded", task=None, next="Finish module b")


def _task_finished(repo: Repo) -> None:
    ledger_line(repo, "task.finished", task="t-1", title="Finish module b", outcome="completed")


def _dispute(repo: Repo) -> None:
    ledger_line(repo, "knowledge.disputed", id="kb-b", reason="b writes files", by="tester")


def _outbox(repo: Repo) -> None:
    folder = repo.root / ".ai/local/state/outbox/candidates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "e8-out.md").write_text(CANDIDATE.format(rid="e8-out", episode="e8", title="From the outbox"),
                                      encoding="utf-8")


def _foreign(repo: Repo) -> None:
    repo.git("add", "-f", ".ai/local/ledger.jsonl")


def _ledger_rewritten(repo: Repo) -> None:  # same length, other bytes (the retention cap's rewrite)
    path = repo.root / ".ai/local/ledger.jsonl"
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"reason":"other"', b'"reason":"OTHER"'))
    ledger_line(repo, "handover.recorded", task=None, next="Start over")


def _resume_of_a_candidate_episode(repo: Repo) -> None:
    ledger_line(repo, "session.opened", episode="e0", source="resume", branch="elsewhere", head=None)


def _trunk_moved(repo: Repo) -> None:  # a branch commit touching src/a.py, then the trunk moves past it
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("a on topic", {"src/a.py": "a = 3\n"})
    start(repo, "e5")
    end(repo, "e5")
    plant(repo)
    repo.git("push", "-q", "origin", "topic:main")
    repo.git("fetch", "-q", "origin")


CHANGES: dict[str, Callable[[Repo], None]] = {
    "HEAD moved": _commit, "record added": _record_added, "record edited in place": _record_edited,
    "record rejected": _record_rejected, "record promoted": _record_promoted, "policy": _policy,
    "branch switched": _branch, "working tree reorders": _ordering, "task started": _task,
    "question opened": _question, "handover": _handover, "task finished": _task_finished,
    "dispute": _dispute, "outbox": _outbox, "foreign .ai/local": _foreign, "ledger rewritten": _ledger_rewritten,
    "a candidate's episode reopened": _resume_of_a_candidate_episode, "trunk moved": _trunk_moved,
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_changed_input_is_never_printed_stale(store: Repo, change: str) -> None:
    plant(store)
    CHANGES[change](store)
    text = start(store, "e9")
    assert MARK not in text
    assert text == fresh(store, "e9")


def test_a_record_edited_twice_while_changed_is_seen_by_its_stamp(store: Repo) -> None:
    _record_edited(store)
    start(store, "e1")  # composes, and keeps it with kb-b changed in the tree
    plant(store)
    assert MARK in start(store, "e2")
    path = store.root / ".ai/repo/knowledge/curated/kb-b.md"
    path.write_text(path.read_text(encoding="utf-8").replace("impure", "unclear"), encoding="utf-8")
    text = start(store, "e3")
    assert MARK not in text and "Module b is unclear" in text
    assert text == fresh(store, "e3")


def test_the_episode_a_candidate_names_and_a_compact_start_compose(store: Repo) -> None:
    plant(store)
    assert MARK not in start(store, "e0", "resume")  # e0's candidate is this branch's work
    assert MARK not in start(store, "e1", "compact")  # its working context comes first


def test_deleting_it_changes_no_output(store: Repo) -> None:
    (store.root / ".ai/local/state" / prebuilt.FILE).unlink()
    assert start(store, "e1") == fresh(store, "e1")


def test_the_start_asks_git_once(store: Repo, tmp_path: Path) -> None:
    trace = tmp_path / "trace"
    proc = store.hook("session-start", {"session_id": "e1", "source": "startup"}, env={"GIT_TRACE": str(trace)})
    assert proc.returncode == 0 and proc.stderr == b""
    calls = [line.split("built-in: git ", 1)[1] for line in trace.read_text().splitlines()
             if "trace: built-in: git " in line]
    assert len(calls) == 1 and "status --porcelain=v2" in calls[0], calls


def _git_processes(trace: Path) -> list[str]:
    """The git commands a run started, from GIT_TRACE (one `built-in` line a process)."""
    return [line.split("built-in: git ", 1)[1].split()[0] for line in trace.read_text().splitlines()
            if "trace: built-in: git " in line] if trace.exists() else []


def test_an_end_hook_with_a_trunk_and_records_about_paths_runs_one_git_process(store: Repo, tmp_path: Path) -> None:
    """The refs come from git's files and the branch's own paths from the own cache (the last
    boundary's, same refs): the whole end hook starts one git process, the prebuilt's status."""
    assert (store.root / ".ai/local/state" / prebuilt.OWN_CACHE).is_file()
    start(store, "e1")
    store.mj("decision", "add", "one more", env={"MAJORDOMUS_EPISODE": "e1"}, check=True)
    trace = tmp_path / "trace"
    proc = store.hook("session-end", {"session_id": "e1", "reason": "other"}, env={"GIT_TRACE": str(trace)})
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert _git_processes(trace) == ["status"]
    assert start(store, "e2") == fresh(store, "e2")


def test_the_own_cache_is_recomputed_when_head_or_the_trunk_moves(store: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unchanged refs: the cached answer, no git. A new commit, or the remote's default branch
    moved: git is asked again, and its answer is the one kept."""
    from majordomus.base import git

    asked: list[int] = []
    real = git.worktree_own

    def counted(root: Path) -> frozenset[str]:
        asked.append(1)
        return real(root)

    monkeypatch.setattr(git, "worktree_own", counted)
    assert prebuilt.own(store.root) == frozenset() and not asked  # the fixture's end kept it
    store.git("switch", "-q", "-c", "feature")
    (store.root / "src/a.py").write_text("a = 2\n", encoding="utf-8")
    store.git("commit", "-q", "-am", "a changes")
    assert prebuilt.own(store.root) == {"src/a.py"} and len(asked) == 1
    assert prebuilt.own(store.root) == {"src/a.py"} and len(asked) == 1  # kept under the new refs
    store.git("push", "-q", "origin", "feature")
    store.git("remote", "set-head", "origin", "feature")  # the trunk now holds the commit
    assert prebuilt.own(store.root) == frozenset() and len(asked) == 2
    store.git("pack-refs", "--all")  # the same refs, packed: the same key
    assert prebuilt.own(store.root) == frozenset() and len(asked) == 2


def test_a_remote_whose_name_holds_a_slash_is_no_trunk_so_its_moves_leave_the_own_cache_true(
        store: Repo, tmp_path: Path) -> None:
    """`git.own_key` lists the remotes one folder deep (`refs/remotes/<name>/HEAD`); git's log
    would take `refs/remotes/team/alice/HEAD` as a trunk too (`--glob`'s `*` crosses `/`), so a
    fetch that moved it changed the answer under an unchanged key. Such a remote is no trunk for
    either: the kept answer stays git's."""
    from majordomus.base import git

    alice = tmp_path / "alice.git"
    subprocess.run(["git", "clone", "-q", "--bare", store.git("remote", "get-url", "origin").strip(), str(alice)],
                   check=True, capture_output=True)
    store.git("remote", "add", "team/alice", str(alice))
    store.git("fetch", "-q", "team/alice")
    store.git("remote", "set-head", "team/alice", "main")
    store.git("switch", "-q", "-c", "feature")
    (store.root / "src/a.py").write_text("a = 2\n", encoding="utf-8")
    store.git("commit", "-q", "-am", "a changes")
    assert prebuilt.own(store.root) == {"src/a.py"} == git.worktree_own(store.root)
    store.git("push", "-q", "team/alice", "feature:main")  # alice's main now holds the commit
    store.git("fetch", "-q", "team/alice")
    assert prebuilt.own(store.root) == git.worktree_own(store.root) == {"src/a.py"}


def _settle() -> None:
    time.sleep(filecache.FINE_NS / 1e9 + 0.02)  # a stat taken after this vouches for the change before it


def test_a_digest_taken_at_a_boundary_is_kept_as_a_stat_only_while_it_holds(store: Repo) -> None:
    folder = store.root / ".ai/repo/knowledge/candidates"
    candidate(store, "e5-a", "e5")  # the folder changed just now: its stat cannot vouch for it yet
    kept = filecache.vouch(folder)
    assert kept[:1] == ["d"]
    _settle()
    assert prebuilt._settled(folder, kept) == filecache.stamp(folder) != []
    kept = filecache.vouch(candidate(store, "e5-b", "e5"))
    assert kept[:1] == ["d"]
    candidate(store, "e5-b", "e5", "Rewritten after the stamp")  # in place: the bytes differ from the digest
    _settle()
    assert prebuilt._settled(store.root / ".ai/repo/knowledge/candidates/e5-b.md", kept) == kept


def _outboxed(repo: Repo, rid: str, title: str) -> None:
    """A candidate in the outbox (ignored by git: only its folder's stamp tells it came)."""
    folder = repo.root / ".ai/local/state/outbox/candidates"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{rid}.md").write_text(CANDIDATE.format(rid=rid, episode="e6", title=title), encoding="utf-8")


def test_a_record_added_while_the_boundary_composes_is_never_printed_stale(
        store: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The boundary's stamps are taken before it composes (a digest for its own fresh writes);
    a candidate added during the composition fails the next start's check."""
    _outboxed(store, "e6-first", "Written by the boundary")  # too recent for its folder's stat
    real = briefing.compose

    def composing(*args: Any, **kwargs: Any) -> str:
        text = real(*args, **kwargs)
        _outboxed(store, "e6-later", "Added while the boundary composed")
        _settle()
        return text

    monkeypatch.setattr(briefing, "compose", composing)
    assert prebuilt.refresh(Workspace(store.root))
    monkeypatch.setattr(briefing, "compose", real)
    plant(store)
    text = start(store, "e7")
    assert MARK not in text and "Added while the boundary composed" in text
    assert text == fresh(store, "e7")


def test_the_boundary_warms_the_index_while_git_answers_and_still_composes_what_is_there(
        store: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """While git answers the boundary's status, the knowledge index is brought up to date with the
    record folders (here trusted to their stamps at any size); a candidate added after that scan
    and before the composition is in the briefing composed and kept."""
    from majordomus.store import index as store_index

    monkeypatch.setattr(store_index, "SCAN_BELOW", 0)  # every folder trusted to its stamp, as a big one is
    candidate(store, "e8-a", "e8", "Written by the derivation")
    _settle()
    real = briefing.warm
    warmed: list[object] = []

    def warming(ws: Workspace, running: Any = None) -> None:
        real(ws, running)
        db = sqlite3.connect(store.root / ".ai/local/state" / store_index.FILE)
        warmed.append(db.execute("SELECT stamp FROM folders WHERE folder = ?",
                                 (".ai/repo/knowledge/candidates",)).fetchone())
        db.close()
        candidate(store, "e8-b", "e8", "Added after the index was warmed")
        _settle()

    monkeypatch.setattr(briefing, "warm", warming)
    assert prebuilt.refresh(Workspace(store.root))
    monkeypatch.setattr(briefing, "warm", real)
    assert warmed and warmed[0] is not None  # the scan happened: the folder's stamp was kept
    body = json.loads((store.root / ".ai/local/state" / prebuilt.FILE).read_text(encoding="utf-8"))["body"]
    assert "Written by the derivation" in body and "Added after the index was warmed" in body
    # (git, asked before the second candidate came, may not list it: the start then composes)
    assert start(store, "e9") == fresh(store, "e9")


def test_a_tracked_session_record_edited_in_place_is_never_printed_stale(store: Repo) -> None:
    """The session record of the episode a candidate names places the candidate on a branch. Its
    edit in place leaves the sessions folder's stamp as it was: only git's status sees it, which
    is why the start's status covers `.ai/repo/sessions/` (docs/PERFORMANCE.md, the start hook)."""
    store.git("checkout", "-q", "-b", "topic")
    start(store, "e1")  # on a branch, the start drains the trunk outbox: e0's record into the tree
    path = store.root / ".ai/repo/sessions/e0.md"
    store.git("add", "-A")
    store.commit("the session record")
    before = start(store, "e2")  # HEAD moved: composed, and kept
    plant(store)
    assert MARK in start(store, "e3")
    text = path.read_text(encoding="utf-8")
    assert '\nbranch: "main"\n' in text
    path.write_text(text.replace('\nbranch: "main"\n', '\nbranch: "topic"\n'), encoding="utf-8")
    after = start(store, "e4")
    assert MARK not in after and after == fresh(store, "e4")
    assert after.split("\n", 1)[1] != before.split("\n", 1)[1]  # an input: e0-c1 is on this branch now


def test_a_folder_the_index_checks_file_by_file_is_not_warmed(store: Repo) -> None:
    """A folder under the index's SCAN_BELOW is checked file by file at every read: a scan while
    git answers would only be repeated by the composition, so none is made."""
    from majordomus.store import index as store_index

    db_path = store.root / ".ai/local/state" / store_index.FILE

    def kept_stamp() -> object:
        db = sqlite3.connect(db_path)
        try:
            return db.execute("SELECT stamp FROM folders WHERE folder = ?",
                              (".ai/repo/knowledge/candidates",)).fetchone()
        finally:
            db.close()

    db = sqlite3.connect(db_path)
    db.execute("DELETE FROM folders WHERE folder = ?", (".ai/repo/knowledge/candidates",))
    db.commit()
    db.close()
    briefing.warm(Workspace(store.root))
    assert kept_stamp() is None  # not scanned: a handful of candidates
    assert "A waiting candidate" in fresh(store, "e12")  # the composition reads them


def _kept_folder_stamp(store: Repo) -> object:
    from majordomus.store import index as store_index

    db = sqlite3.connect(store.root / ".ai/local/state" / store_index.FILE)
    try:
        return db.execute("SELECT stamp FROM folders WHERE folder = ?", (".ai/repo/knowledge/candidates",)).fetchone()
    finally:
        db.close()


@pytest.mark.parametrize("git_still_works", [True, False])
def test_a_folder_just_written_is_waited_for_while_git_works_then_scanned(
        store: Repo, monkeypatch: pytest.MonkeyPatch, git_still_works: bool) -> None:
    """A folder the derivation has just written to cannot vouch for itself yet; while git still
    answers, warming waits the rest of the clock's window and scans it (its stamp kept for the
    composition); once git has answered it is left to the composition, as before."""
    from majordomus.store import index as store_index

    monkeypatch.setattr(store_index, "SCAN_BELOW", 0)  # every folder trusted to its stamp, as a big one is
    candidate(store, "e8-a", "e8", "Written by the derivation just now")
    folder = store.root / ".ai/repo/knowledge/candidates"
    if filecache.settles_in(folder) is None:
        pytest.skip("a change time on a whole second: the window is the whole-second clock's")
    waited: list[float] = []

    def running(seconds: float) -> bool:
        waited.append(seconds)
        if git_still_works:
            time.sleep(seconds)
        return git_still_works

    briefing.warm(Workspace(store.root), running)
    assert waited and 0 < waited[0] <= filecache.FINE_NS / 1e9
    time.sleep(filecache.FINE_NS / 1e9)
    now = json.dumps(filecache.stamp(folder), separators=(",", ":"))
    assert (_kept_folder_stamp(store) == (now,)) == git_still_works  # scanned as it is now, or not
    assert "Written by the derivation just now" in fresh(store, "e9")


def test_git_running_after_leaves_its_answer_to_wait(store: Repo) -> None:
    asked = git.ask_status(store.root)
    assert asked.running_after(60) is False  # it ended well within a minute
    assert git.status_of(store.root, asked).head.sha == store.git("rev-parse", "HEAD").strip()
    assert asked.running_after(0) is False  # collected: nothing runs


def _relevant_by_parts(paths: frozenset[str], targets: list[str]) -> list[str]:
    """`prebuilt.relevant` as it was written first: each leading run of components joined."""
    wanted = {t.rstrip("/") for t in targets}
    found = []
    for p in paths:
        parts = p.rstrip("/").split("/")
        if any("/".join(parts[:n]) in wanted for n in range(1, len(parts) + 1)) \
                or (p.endswith("/") and any(t.startswith(p) for t in wanted)):
            found.append(p)
    return sorted(found) if wanted else []


_PATHS = ["src/a.py", "src/", "src", "srcx/a.py", "src/deep/b.py", "src//c.py", "/abs", "a/b/c/d/e.py", "a/b/",
          "docs/x.md", ".ai/repo/knowledge/candidates/k.md", "new/", "new/sub/", "s", "src/a.py/"]


@given(st.lists(st.sampled_from(_PATHS), max_size=8), st.lists(st.sampled_from(
    ["src", "src/", "src/a.py", "a/b", "a/b/c", "new/sub/x.py", "", "/", "s", "docs/x.md", "src//c.py", "a"]),
    max_size=4))
def test_the_paths_a_record_relates_to_are_those_its_targets_name(paths: list[str], targets: list[str]) -> None:
    assert prebuilt.relevant(frozenset(paths), targets) == _relevant_by_parts(frozenset(paths), targets)


# --- a folder the index trusts to its stamp --------------------------------------------------

def _truth(repo: Repo, episode: str) -> str:
    """What a start composes without any derived state (the index, its kept answers, the prebuilt
    text): the records as they are."""
    import shutil

    state = repo.root / ".ai/local/state"
    for name in ("index.sqlite3", "index.kept", prebuilt.FILE):
        where = state / name
        if where.is_dir():
            shutil.rmtree(where)
        elif where.exists():
            where.unlink()
    return fresh(repo, episode)


@pytest.fixture
def big(store: Repo) -> Repo:
    """`store` with a candidates folder the index trusts to its stamp (SCAN_BELOW records), the
    newest of them shown by the briefing, committed; its end built the prebuilt text."""
    from majordomus.store import index as store_index

    folder = store.root / ".ai/repo/knowledge/candidates"
    for n in range(store_index.SCAN_BELOW):
        (folder / f"e0-c{n:04}.md").write_text(
            CANDIDATE.format(rid=f"e0-c{n:04}", episode="e0", title=f"Old candidate {n}").replace(
                '"2026-01-02"', '"2025-06-01"'), encoding="utf-8")
    candidate(store, "e0-shown", "e0", "The newest candidate")
    store.git("add", "-A")
    store.commit("a thousand candidates")
    start(store, "e1")
    end(store, "e1")
    return store


def _rewrite_in_place(path: Path, old: str, new: str) -> None:
    """As an editor that saves in place does: same inode, the folder's entries untouched."""
    text = path.read_text(encoding="utf-8")
    assert old in text
    with path.open("r+", encoding="utf-8") as handle:
        handle.write(text.replace(old, new))
        handle.truncate()


def test_a_record_edited_in_place_in_a_folder_trusted_to_its_stamp_is_never_printed_stale(big: Repo) -> None:
    """The index trusts a big folder to its stamp, which an edit in place leaves as it was; git's
    status, which the start asks anyway, names the file, and the composition reads it again."""
    path = big.root / ".ai/repo/knowledge/candidates/e0-shown.md"
    folder = path.parent.stat()
    plant(big)
    _rewrite_in_place(path, "The newest candidate", "The newest candidate, edited")
    assert (path.parent.stat().st_mtime_ns, path.parent.stat().st_ino) == (folder.st_mtime_ns, folder.st_ino)
    text = start(big, "e2")
    assert MARK not in text and "The newest candidate, edited" in text
    # restored in place: git names it no more; it was named at the last start, so it is read again
    _settle()
    plant(big)
    _rewrite_in_place(path, "The newest candidate, edited", "The newest candidate")
    text = start(big, "e3")
    assert MARK not in text and "The newest candidate, edited" not in text and "The newest candidate" in text
    assert text.split("\n", 1)[1] == _truth(big, "e3").split("\n", 1)[1]


def test_a_record_edited_in_place_is_seen_by_the_boundary_that_builds_the_next_text(big: Repo) -> None:
    path = big.root / ".ai/repo/knowledge/candidates/e0-shown.md"
    start(big, "e2")
    _rewrite_in_place(path, "The newest candidate", "Edited before the end")
    end(big, "e2")
    kept = json.loads((big.root / ".ai/local/state" / prebuilt.FILE).read_text(encoding="utf-8"))
    assert "Edited before the end" in kept["body"]
    assert "Edited before the end" in start(big, "e3")


@pytest.mark.parametrize("how", ["committed", "staged"])
def test_a_record_edited_in_place_then_committed_is_never_printed_stale(big: Repo, how: str) -> None:
    """A person edits a record in an editor that saves in place, then commits it, no session in
    between: git's status names nothing at the next start, but the commits since the last
    composition name the file."""
    path = big.root / ".ai/repo/knowledge/candidates/e0-shown.md"
    start(big, "e2")  # composes (the fixture's end was e1's), and checks what git names
    plant(big)
    _rewrite_in_place(path, "The newest candidate", "Edited, then committed")
    big.git("add", "-A")
    if how == "committed":
        big.commit("the candidate's title")
    text = start(big, "e3")
    assert MARK not in text and "Edited, then committed" in text
    assert text.split("\n", 1)[1] == _truth(big, "e3").split("\n", 1)[1]


def test_commits_git_cannot_compare_have_every_big_folder_checked_file_by_file(big: Repo) -> None:
    """The commit the last composition ran at is gone (a rebase, then a gc): git cannot say what
    changed since, so every folder is checked by each file's stamp."""
    import sqlite3 as sql

    path = big.root / ".ai/repo/knowledge/candidates/e0-shown.md"
    start(big, "e2")
    db = sql.connect(big.root / ".ai/local/state/index.sqlite3")
    db.execute("UPDATE meta SET value = ? WHERE key = 'named'", (json.dumps({"head": "f" * 40, "named": []}),))
    db.commit()
    db.close()
    _rewrite_in_place(path, "The newest candidate", "Edited, committed, its base gone")
    big.git("add", "-A")
    big.commit("the candidate's title")
    assert "Edited, committed, its base gone" in start(big, "e3")


def test_a_committed_index_naming_folders_outside_the_store_is_not_followed(big: Repo, tmp_path: Path) -> None:
    """The folders and the last recheck's paths the index keeps are read, not believed: a folder
    outside the store, or a path that climbs out of it, is never listed or stat'ed as a record
    folder, and the briefing is still composed from the records."""
    import sqlite3 as sql

    outside = tmp_path / "outside"
    outside.mkdir()
    for n in range(3):
        (outside / f"x{n}.md").write_text(CANDIDATE.format(rid=f"x{n}", episode="e0", title=f"Outside {n}"),
                                          encoding="utf-8")
    db = sql.connect(big.root / ".ai/local/state/index.sqlite3")
    db.execute("INSERT OR REPLACE INTO folders VALUES (?, ?)", (str(outside), "[]"))
    db.execute("INSERT OR REPLACE INTO folders VALUES (?, ?)", (".ai/repo/../../outside", "[]"))
    db.execute("INSERT OR REPLACE INTO meta VALUES ('named', ?)",
               (json.dumps({"head": "f" * 40, "named": [f"{outside}/x0.md", ".ai/repo/../../outside/x1.md"]}),))
    db.commit()
    db.close()
    plant(big)
    _commit(big)
    text = start(big, "e3")
    assert MARK not in text and "The newest candidate" in text and "Outside" not in text
    db = sql.connect(big.root / ".ai/local/state/index.sqlite3")
    try:
        assert db.execute("SELECT count(*) FROM files WHERE folder LIKE '%outside%'").fetchone() == (0,)
        kept = json.loads(db.execute("SELECT value FROM meta WHERE key = 'named'").fetchone()[0])
        assert kept["head"] == big.git("rev-parse", "HEAD").strip()  # the index was used, not given up
    finally:
        db.close()


@pytest.mark.parametrize("how", ["amend", "stash"])
def test_a_record_edited_in_place_and_committed_before_a_start_is_never_printed_stale(big: Repo, how: str) -> None:
    """Edited in place and committed (or stashed) before any composition: no status names it at
    the next start, and none named it at the last recheck."""
    path = big.root / ".ai/repo/knowledge/candidates/e0-shown.md"
    _settle()
    _rewrite_in_place(path, "The newest candidate", "The newest candidate, edited")
    if how == "stash":
        big.git("stash", "-q")  # the file written again from HEAD: then popped, in place again
        _settle()
        _rewrite_in_place(path, "The newest candidate", "The newest candidate, edited")
        big.git("add", "-A")
        big.commit("the candidate edited")
    else:
        big.git("add", "-A")
        big.commit("the candidate edited")
        if how == "amend":
            big.git("commit", "-q", "--amend", "-m", "the candidate edited, amended")
    text = start(big, "e2")
    assert text.split("\n", 1)[1] == _truth(big, "e2").split("\n", 1)[1]
    assert "The newest candidate, edited" in text


def test_a_record_read_again_by_a_check_then_restored_in_place_is_never_printed_stale(big: Repo) -> None:
    """Edited in place, read again by `knowledge check` (which checks every file by its stamp) and
    the queue's reader, restored in place: git names it neither now nor at the last start's
    recheck."""
    path = big.root / ".ai/repo/knowledge/candidates/e0-shown.md"
    _settle()
    _rewrite_in_place(path, "The newest candidate", "The newest candidate, edited")
    big.mj("knowledge", "check")
    assert "The newest candidate, edited" in big.mj("knowledge", "candidates", "--all").stdout  # read as it is
    _settle()
    _rewrite_in_place(path, "The newest candidate, edited", "The newest candidate")
    (big.root / ".ai/local/state" / prebuilt.FILE).unlink()  # the start composes (through the index)
    text = start(big, "e2")
    assert text.split("\n", 1)[1] == _truth(big, "e2").split("\n", 1)[1]
    assert "The newest candidate, edited" not in text


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_record_git_was_told_to_trust_in_a_folder_trusted_to_its_stamp_is_never_printed_stale(
        big: Repo, flag: str) -> None:
    """Flagged in git's index, a record edited in place is named by no status: the start composes
    (no prebuilt text while a file is flagged) and reads it again."""
    path = big.root / ".ai/repo/knowledge/candidates/e0-shown.md"
    big.git("update-index", flag, path.relative_to(big.root).as_posix())
    start(big, "e2")
    _settle()
    _rewrite_in_place(path, "The newest candidate", "The newest candidate, edited")
    text = start(big, "e3")
    assert text.split("\n", 1)[1] == _truth(big, "e3").split("\n", 1)[1]
    assert "The newest candidate, edited" in text


def test_a_committed_index_naming_an_option_as_its_last_head_is_not_handed_to_git(big: Repo, tmp_path: Path) -> None:
    """The last recheck's HEAD the index keeps is read, not believed: one that reads as an option
    (`--output=FILE`, which would have git write where the index says) is never on git's command
    line; the records are checked as when git cannot say what changed."""
    import sqlite3 as sql

    written = tmp_path / "written-by-git"
    db = sql.connect(big.root / ".ai/local/state/index.sqlite3")
    db.execute("INSERT OR REPLACE INTO meta VALUES ('named', ?)",
               (json.dumps({"head": f"--output={written}", "named": []}),))
    db.commit()
    db.close()
    plant(big)
    _commit(big)
    text = start(big, "e3")
    assert MARK not in text and "The newest candidate" in text
    assert not written.exists()
