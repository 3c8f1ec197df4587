"""Doctor's currency rule keeps its answer beside the knowledge index (`validators._attention`,
`index.kept/doctor.attention.json`) while what it was judged from holds: a commit that changes an
anchored file (HEAD), a record edited in place (the index), a dispute appended to the ledger (the
facts' tail) and a shallow clone deepened (its cut) each make it say what it says without the
kept answer."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from conftest import Repo
from kbstore import anchored
from rules_helpers import append_line, stamp
from majordomus.rules import dispatch, validators
from majordomus.store import index
from majordomus.store.workspace import open_workspace

RULE = "majordomus.knowledge-stale"


def _stale(root: Path) -> tuple[list[str], str | None]:
    """(what doctor's currency rule finds, its detail), past one tick of the file system's clock;
    the same with the kept answer deleted (and kept again)."""
    time.sleep(0.06)
    found = _run(root)
    kept = os.path.join(root, ".ai/local/state/index.kept", f"{validators._ATTENTION}.json")
    if not os.path.exists(kept):  # the first run wrote the index's views: kept by the next
        assert _run(root) == found
    assert os.path.exists(kept)
    assert _run(root) == found  # from the kept answer
    os.unlink(kept)
    assert _run(root) == found  # without the kept answer: the same
    return found


def _run(root: Path) -> tuple[list[str], str | None]:
    ws = open_workspace(root)
    ws.warn = False
    report = dispatch.run(ws, "doctor")
    index.of(ws).close()
    index._OPEN.clear()
    (ran,) = [r for r in report.ran if r.rule.id == RULE]
    return [f.what for f in ran.verdict.findings], ran.verdict.detail


def test_a_commit_changing_an_anchored_file_is_judged(repo: Repo) -> None:
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    anchored(repo, "r-one", ("src/a.py",), at, title="A is one")
    append_line(repo, "session.opened", stamp(60), "e1")
    repo.commit("record", {})
    assert _stale(repo.root)[0] == []
    repo.commit("a is two", {"src/a.py": "a = 2\n"})  # HEAD moved, no record changed
    (what,), _ = _stale(repo.root)
    assert what.startswith("r-one (constraint: A is one) may be stale: src/a.py modified")


def test_a_record_edited_in_place_is_judged(repo: Repo) -> None:
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    anchored(repo, "r-one", ("src/a.py",), at, title="A is one")
    append_line(repo, "session.opened", stamp(60), "e1")
    repo.commit("a is two", {"src/a.py": "a = 2\n"})
    (what,), _ = _stale(repo.root)
    assert "(constraint: A is one)" in what
    path = repo.root / ".ai/repo/knowledge/curated/r-one.md"
    st = path.stat()
    path.write_text(path.read_text(encoding="utf-8").replace("A is one", "A is won"), encoding="utf-8")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the folder's stamp and the file's mtime kept
    (what,), _ = _stale(repo.root)
    assert "(constraint: A is won)" in what


def test_a_dispute_appended_is_judged(repo: Repo) -> None:
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    anchored(repo, "r-one", ("src/a.py",), at, title="A is one")
    append_line(repo, "session.opened", stamp(60), "e1")
    repo.commit("record", {})
    assert _stale(repo.root)[0] == []
    with open(repo.root / ".ai/local/ledger.jsonl", "a", encoding="utf-8") as ledger:  # its newline not yet
        # written: the facts' tail, in no table of the index
        ledger.write(json.dumps({"ts": stamp(), "event": "knowledge.disputed", "session": "e1", "id": "r-one",
                                 "by": "Bo", "reason": "a is two now"}))
    (what,), _ = _stale(repo.root)
    assert what.startswith("r-one (constraint: A is one) disputed")


def test_a_shallow_clone_deepened_is_judged(repo: Repo, tmp_path: Path) -> None:
    at = repo.commit("code", {"src/a.py": "a = 1\n"})
    anchored(repo, "r-one", ("src/a.py",), at, title="A is one")
    append_line(repo, "session.opened", stamp(60), "e1")
    repo.commit("a is two", {"src/a.py": "a = 2\n"})
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("other", {"src/b.py": "b = 1\n"})
    clone = Path(tmp_path) / "clone"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{repo.root}", clone], check=True)
    ledger = clone / ".ai/local/ledger.jsonl"
    ledger.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_text(json.dumps({"ts": stamp(60), "event": "session.opened", "session": "e1"}) + "\n",
                      encoding="utf-8")
    found, detail = _stale(clone)
    assert found == [] and detail is not None and "1 unknown" in detail  # its commit is past the cut
    subprocess.run(["git", "-C", clone, "fetch", "-q", "--unshallow"], check=True)
    (what,), _ = _stale(clone)
    assert what.startswith("r-one (constraint: A is one) may be stale: src/a.py modified")
