"""The start's prebuilt briefing (`context/prebuilt.py`) under this checkout's git settings that
make git's status trust less of a file's stat: after an edit git's status cannot see, the start
prints what it prints with the derived state deleted."""
from __future__ import annotations

import os
import time

from conftest import Repo
from test_clone_caches import AGES
from kbstore import KB, build
from rules_helpers import OLD, append_line, write_candidate


def _start(repo: Repo, episode: str) -> str:
    time.sleep(2.1)  # every write above vouches for itself
    proc = repo.hook("session-start", {"session_id": episode, "source": "startup", "cwd": str(repo.root)})
    assert proc.returncode == 0, proc.stderr
    return AGES.sub("AGE", proc.stdout.decode())  # a minute's tick between two starts


def test_a_record_edited_where_git_trusts_no_ctime_is_briefed_as_it_is(repo: Repo) -> None:
    build(repo)
    repo.git("add", "-A")
    repo.commit("the store")
    repo.git("config", "core.trustctime", "false")
    repo.git("config", "core.checkStat", "minimal")
    record = repo.root / KB / "curated/c-tabs.md"
    old = time.time_ns() - 3600 * 10**9
    os.utime(record, ns=(old, old))
    repo.git("update-index", "--refresh")
    first = _start(repo, "e7")
    assert "Tabs are refused by the parser" in first
    assert _start(repo, "e8").replace("e8", "e7") == first
    st = record.stat()
    text = record.read_text(encoding="utf-8")
    with open(record, "r+", encoding="utf-8") as handle:
        handle.write(text.replace("Tabs are refused by the parser", "Tabs are welcome in the parser"))
    os.utime(record, ns=(st.st_atime_ns, st.st_mtime_ns))
    through = _start(repo, "e9")
    (repo.root / ".ai/local/state/briefing.prebuilt.json").unlink()
    truth = _start(repo, "e9")
    assert "Tabs are welcome" in truth
    assert through == truth


def test_an_untracked_record_git_folds_into_a_tracked_name_is_briefed_as_it_is(repo: Repo) -> None:
    """With `core.ignorecase` set, git's status does not name an untracked `E1-….md` beside a
    tracked `e1-….md`: its edits in place are seen only by its own stamp."""
    append_line(repo, "session.opened", OLD, "e1")
    write_candidate(repo, "e1-000000000001")
    repo.git("add", "-A", "--", ".ai/repo")
    repo.commit("records")
    repo.git("config", "core.ignorecase", "true")
    upper = write_candidate(repo, "e1-000000000002", file_name="E1-000000000001")
    first = _start(repo, "e7")
    assert "A decision of e1-000000000002" in first, first
    assert _start(repo, "e8").replace("e8", "e7") == first
    text = upper.read_text(encoding="utf-8")
    with open(upper, "r+", encoding="utf-8") as handle:
        handle.write(text.replace("A decision of e1-000000000002", "A decision of e1-00000000000X"))
    through = _start(repo, "e9")
    (repo.root / ".ai/local/state/briefing.prebuilt.json").unlink()
    truth = _start(repo, "e9")
    assert through == truth
