"""The start's prebuilt briefing (`context/prebuilt.py`) under this checkout's git settings that
make git's status trust less of a file's stat: after an edit git's status cannot see, the start
prints what it prints with the derived state deleted."""
from __future__ import annotations

import os
import time

from conftest import Repo
from kbstore import KB, build


def _start(repo: Repo, episode: str) -> str:
    time.sleep(2.1)  # every write above vouches for itself
    proc = repo.hook("session-start", {"session_id": episode, "source": "startup", "cwd": str(repo.root)})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


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
