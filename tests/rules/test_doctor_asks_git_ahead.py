"""Doctor starts the git processes its rules read (git's listing, the review acts' `git status`)
before the rules run, so git works while they do; what no rule read (a rule that failed first) is
stopped and reaped at the end of the run, and the answers are those asked where they are read."""
from __future__ import annotations

from typing import Any

import pytest

from conftest import Repo
from majordomus.rules import dispatch as rules_dispatch
from majordomus.rules import validators
from majordomus.store.workspace import open_workspace


def test_git_asked_ahead_answers_as_asked_where_it_is_read(repo: Repo) -> None:
    ws = open_workspace(repo.root)
    curated = repo.root / ".ai/repo/knowledge/curated/k-staged.md"
    curated.write_text("---\nid: k-staged\n---\n", encoding="utf-8")
    repo.git("add", "--", str(curated.relative_to(repo.root)))
    ctx = validators.Context(ws, trusted=True)
    ctx.start({"knowledge_accumulation"})
    asked = ctx.acts()
    assert asked is not None and ctx.acts() is None  # handed out once
    from majordomus.knowledge import accumulation as acc
    assert acc.uncommitted_acts(ws, asked) == acc.uncommitted_acts(ws) == (
        [".ai/repo/knowledge/curated/k-staged.md"], [])
    assert ".ai/repo/knowledge/curated/k-staged.md" in (ctx.listing().files() or [])
    ctx.end()  # nothing left to stop


def test_what_no_rule_read_is_stopped_and_reaped(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[validators.Context] = []
    start = validators.Context.start

    def kept(self: validators.Context, names: set[str], *ahead: Any) -> None:
        start(self, names, *ahead)
        started.append(self)

    def fails(ctx: validators.Context, rule: Any) -> validators.Verdict:
        raise RuntimeError("before it read git's answers")

    monkeypatch.setattr(validators.Context, "start", kept)
    for name in ("knowledge_accumulation", "knowledge_integrity"):
        monkeypatch.setitem(rules_dispatch.REGISTRY, name, fails)
    report = rules_dispatch.run(open_workspace(repo.root), "doctor")
    assert any("before it read git's answers" in f.what for f in report.findings)
    ctx = started[0]
    listing = ctx._listing
    assert listing is not None and listing._running is not None and ctx._acts is not None
    for running in (listing._running, ctx._acts):
        assert running.pid == 0 and running.fds == []  # killed or ended, reaped, its pipes closed


def test_the_sessions_folder_is_listed_once_a_run(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The queue rule's tracking and the integrity rule's `session:` references read one listing of
    the sessions folder; each still finds what it found (an untracked session record; a reference
    resolved by a session record the ledger does not name, one resolved by nothing)."""
    import os

    from majordomus.store import records
    from rules_helpers import write_candidate

    write_candidate(repo, "e5-000000000005")  # session:e5, resolved by its tracked session record
    orphan = write_candidate(repo, "e6-000000000006")
    orphan.write_text(orphan.read_text(encoding="utf-8").replace('"session:e6"', '"session:e8"'), encoding="utf-8")
    (repo.root / ".ai/repo/sessions/e7.md").write_text("---\nid: e7\nkind: session/v1\n---\n", encoding="utf-8")
    sessions = os.fspath(repo.root / ".ai/repo/sessions")
    listed: list[str] = []
    scandir, listdir, open_dir = os.scandir, os.listdir, records._open_dir

    def counted(lister: Any) -> Any:  # a listing by path; one of a descriptor is counted where it was opened
        def listing(path: Any = ".") -> Any:
            if not isinstance(path, int):
                listed.append(os.fspath(path))
            return lister(path)
        return listing

    monkeypatch.setattr(os, "scandir", counted(scandir))
    monkeypatch.setattr(os, "listdir", counted(listdir))
    monkeypatch.setattr(records, "_open_dir", lambda folder: listed.append(os.fspath(folder)) or open_dir(folder))
    report = rules_dispatch.run(open_workspace(repo.root), "doctor")
    assert listed.count(sessions) == 1
    found = [(f.file, f.what) for f in report.findings]
    assert any(file == ".ai/repo/sessions/e7.md" and "does not track this session record" in what
               for file, what in found)
    unresolved = [(file, what) for file, what in found if "does not resolve" in what]
    assert unresolved == [(".ai/repo/knowledge/candidates/e6-000000000006.md",
                           "session:e8 does not resolve: no ledger line of episode e8 and no .ai/repo/sessions/e8.md")]


_AT_REST = """
import sys
from majordomus.cli.main import main
sys.argv = ["majordomus", "doctor"]
try:
    main()
except SystemExit:
    pass
from majordomus.base import transcript
from majordomus.knowledge import anchored, integrity, queue
from majordomus.rules import dispatch
asked = {"transcript._MARKER": transcript._MARKER, "integrity._REJECTED": integrity._REJECTED,
         "queue._EVIDENCE": queue._EVIDENCE, "anchored._HEX": anchored._HEX, "dispatch._FIX": dispatch._FIX}
print(sorted(name for name, get in asked.items()
             if any(isinstance(c.cell_contents, list) and c.cell_contents for c in get.__closure__ or ())),
      file=sys.stderr)
"""


def test_doctor_at_rest_compiles_no_pattern_that_only_a_record_read_needs(repo: Repo) -> None:
    """The patterns a record read (or a policy problem) asks for are compiled on first use
    (`lean.pattern`): doctor, reading no record on most runs, compiles none of them; one that reads
    a record compiles what it reads with and finds what it found."""
    import subprocess
    import sys
    import time

    from rules_helpers import write_candidate

    path = write_candidate(repo, "e5-000000000005")
    time.sleep(2.1)  # every file settled: the index vouches for them
    assert repo.mj("doctor").returncode == 0
    rest = subprocess.run([sys.executable, "-c", _AT_REST], cwd=repo.root, capture_output=True, text=True)
    assert rest.stderr.strip().splitlines()[-1] == "[]", rest.stderr
    path.write_text(path.read_text(encoding="utf-8").replace("A decision of e5-000000000005\n",
                                                             "Human: a quoted turn\n"), encoding="utf-8")
    read = subprocess.run([sys.executable, "-c", _AT_REST], cwd=repo.root, capture_output=True, text=True)
    assert "transcript._MARKER" in read.stderr.strip().splitlines()[-1], read.stderr
    assert "transcript" in read.stdout, read.stdout  # the marker found: the record refused as a quotation


def test_doctor_s_command_asks_git_s_word_before_the_rules_load(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """`majordomus doctor` asks git's word on `.ai/repo/` first thing (`cli.commands.doctor`), and the
    integrity rule and the queue rule read that very answer; `check` asks none."""
    import os
    import time

    from majordomus.cli.commands import doctor
    from majordomus.store import filecache

    seen: list[Any] = []
    run = rules_dispatch.run

    def observed(ws: Any, command: str, **ahead: Any) -> rules_dispatch.Report:
        seen.append(ahead.get("worktree"))
        return run(ws, command, **ahead)

    monkeypatch.setattr(rules_dispatch, "run", observed)
    monkeypatch.setenv("MAJORDOMUS_ROOT", str(repo.root))
    st = os.stat(repo.root / ".git/index")  # git's index two seconds old: its word can key the judgement
    time.sleep(max(0.0, (max(st.st_ctime_ns, st.st_mtime_ns) + filecache.RACY_NS - time.time_ns()) / 1e9 + 0.01))
    doctor.doctor()
    doctor.check()
    ahead, none = seen
    assert none is None and ahead is not None and ahead.root == repo.root
    assert ahead.asked is None and ahead.odd is not None  # asked ahead, and read by the rules


def test_git_s_word_asked_ahead_is_stopped_when_the_run_fails_first(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import os
    import time

    from majordomus.base.errors import FatalError
    from majordomus.cli.commands import doctor
    from majordomus.store import filecache

    seen: list[Any] = []

    def fails(ws: Any, command: str, **ahead: Any) -> rules_dispatch.Report:
        seen.append(ahead.get("worktree"))
        raise FatalError("the index is locked")

    monkeypatch.setattr(rules_dispatch, "run", fails)
    monkeypatch.setenv("MAJORDOMUS_ROOT", str(repo.root))
    st = os.stat(repo.root / ".git/index")
    time.sleep(max(0.0, (max(st.st_ctime_ns, st.st_mtime_ns) + filecache.RACY_NS - time.time_ns()) / 1e9 + 0.01))
    with pytest.raises(FatalError):
        doctor.doctor()
    (ahead,) = seen
    assert ahead is not None and ahead.asked is not None
    assert ahead.asked.pid == 0 and ahead.asked.fds == []  # killed or ended, reaped, its pipes closed
