"""The readers' caches answer as the files do: a record's status and class (status), and the
source classes (every reader of the store), whatever changed since they were kept."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import Repo
from majordomus.store import filecache
from majordomus.store import listing as kstore
from majordomus.store.workspace import Workspace

RECORD = "---\nid: {rid}\nkind: knowledge/v1\nclass: {cls}\nstatus: {status}\n---\nbody\n"


def _by_reading(ws: Workspace) -> tuple[list[tuple[str, str, str]], list[dict[str, str]]]:
    bad: list[dict[str, str]] = []
    good = [(e.rel, str(m.get("status", "(none)")), str(m.get("class", "(none)")))
            for e, m in kstore.readable(ws, kstore.listing(ws), bad)]
    return good, bad


def _by_cache(ws: Workspace) -> tuple[list[tuple[str, str, str]], list[dict[str, str]]]:
    bad: list[dict[str, str]] = []
    good = [(e.rel, s, c) for e, s, c in kstore.summaries(ws, kstore.listing(ws), bad)]
    return good, bad


def _later(path: Path, n: int) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10_000_000 * n))


def test_status_counts_through_the_cache_are_the_files(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filecache, "RACY_NS", 0)
    ws = Workspace(repo.root)
    folder = ws.candidates
    (folder / "a.md").write_text(RECORD.format(rid="a", cls="fact", status="candidate"))
    (folder / "b.md").write_text(RECORD.format(rid="b", cls="lesson", status="superseded"))
    (folder / "c.md").write_bytes(b"---\nid: c\nstatus: \xff\n---\n")  # not UTF-8
    (ws.curated / "d.md").write_text("no front matter\n")
    os.symlink(folder / "a.md", folder / "e.md")
    assert _by_cache(ws) == _by_reading(ws)
    assert _by_cache(ws) == _by_reading(ws)  # from the cache now
    with open(folder / "a.md", "r+") as handle:  # in place, same size
        handle.write(RECORD.format(rid="a", cls="lore", status="verified"))
    _later(folder / "a.md", 1)
    (folder / "c.md").write_text(RECORD.format(rid="c", cls="fact", status="candidate"))
    (folder / "b.md").unlink()
    assert _by_cache(ws) == _by_reading(ws)
    statuses = {rel: s for rel, s, _ in _by_cache(ws)[0]}
    assert statuses[".ai/repo/knowledge/candidates/a.md"] == "verified"


def test_a_changed_sources_file_is_read_again(repo: Repo) -> None:
    ws = Workspace(repo.root)
    first = kstore.pathspecs(ws)
    assert (ws.state / "sources.cache.json").is_file() and kstore.pathspecs(ws) == first
    sources = ws.knowledge / "sources.yaml"
    sources.write_text(sources.read_text().replace("candidates/*.md", "candidates/*.markdown"))
    assert kstore.pathspecs(ws)["candidates"].endswith("candidates/*.markdown")
    sources.write_text("classes: [not, a, mapping]\n")
    with pytest.raises(Exception, match="declares no `classes:`"):
        kstore.pathspecs(ws)


def test_a_stat_is_trusted_once_the_clock_has_ticked_past_the_change(tmp_path: Path) -> None:
    """On a file system with sub-second times, a file changed 50 ms ago is answered by its stat;
    one changed just now is not (it could change again within the same tick, unseen)."""
    path = tmp_path / "f.md"
    path.write_text("x\n")
    st = os.lstat(path)
    if st.st_ctime_ns % 1_000_000_000 == 0:
        pytest.skip("this file system keeps whole seconds: the two-second window applies")
    fresh = filecache.FileCache(tmp_path / "c.json", 1, tmp_path)
    fresh.put("", "f.md", st, "read")
    assert fresh.get("", "f.md", st) == (False, None)
    time.sleep(filecache.FINE_NS / 1e9 + 0.02)
    later = filecache.FileCache(tmp_path / "c.json", 1, tmp_path)
    later.put("", "f.md", st, "read")
    assert later.get("", "f.md", st) == (True, "read")
    path.write_text("y\n")  # changed since: the stat no longer matches
    assert later.get("", "f.md", os.lstat(path)) == (False, None)


def test_all_vouched_answers_as_vouched_for_each(tmp_path: Path) -> None:
    """`all_vouched` (the start's check of its briefing's sources) says what `vouched` says of
    each: a stamp that holds, a file changed, replaced, gone or come, a stamp too recent, a folder's
    digest and identity."""
    old, gone, edited, replaced, folder = (tmp_path / n for n in ("old", "gone", "edited", "replaced", "folder"))
    for p in (old, gone, edited, replaced):
        p.write_text("x\n")
    folder.mkdir()
    past = time.time_ns() - 10 * filecache.RACY_NS
    for p in (old, gone, edited, replaced, folder):
        os.utime(p, ns=(past, past))
    time.sleep(filecache.FINE_NS / 1e9 + 0.02)
    if os.lstat(old).st_ctime_ns % 1_000_000_000 == 0:
        time.sleep(filecache.RACY_NS / 1e9)
    absent = tmp_path / "absent"
    paths = [old, gone, edited, replaced, folder, absent, tmp_path / "come", folder, old]
    kept = [filecache.vouch(old), filecache.vouch(gone), filecache.vouch(edited), filecache.vouch(replaced),
            ["d", filecache._content(folder)], filecache.vouch(absent), filecache.vouch(tmp_path / "come"),
            filecache.identity(folder), []]
    gone.unlink()
    edited.write_text("y\n")
    replaced.unlink()
    replaced.write_text("x\n")
    os.utime(replaced, ns=(past, past))
    (tmp_path / "come").write_text("new\n")
    each = [filecache.vouched(k, str(p)) for k, p in zip(kept, paths)]
    assert each == [True, False, False, False, True, True, False, True, False]
    for i in range(len(paths)):
        assert filecache.all_vouched(kept[i:i + 1], [str(paths[i])]) == each[i]
    assert filecache.all_vouched([kept[0], kept[4], kept[5], kept[7]], [str(p) for p in (old, folder, absent, folder)])
    assert not filecache.all_vouched(kept, [str(p) for p in paths])


def test_a_few_entries_kept_wait_for_a_later_save_and_a_dropped_one_never_waits(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`save(unless_fewer=N)` leaves the file as it was while fewer than N entries were kept since
    (a reader reads those files again); it writes once N are, and always when an entry was
    dropped (a file changed within its tick may keep the stat an old entry holds)."""
    monkeypatch.setattr(filecache, "RACY_NS", 0)  # every stat settled at once, until the last step
    root = tmp_path
    (root / "state").mkdir()
    files = []
    for n in range(4):
        path = root / f"f{n}"
        path.write_text(str(n))
        files.append(path)
    where = root / "state" / "c.json"

    def cache() -> filecache.FileCache:
        return filecache.FileCache(where, 1, root)

    first = cache()
    first.put("d", "f0", files[0].stat(), "zero")
    first.save()
    second = cache()
    assert second.get("d", "f0", files[0].stat()) == (True, "zero")
    second.put("d", "f1", files[1].stat(), "one")
    second.put("d", "f2", files[2].stat(), "two")
    second.save(unless_fewer=3)
    third = cache()
    assert third.get("d", "f1", files[1].stat()) == (False, None)  # not written: read again
    for n in (1, 2, 3):
        third.put("d", f"f{n}", files[n].stat(), str(n))
    third.save(unless_fewer=3)
    assert cache().get("d", "f3", files[3].stat()) == (True, "3")
    fourth = cache()
    fourth.keep_only("d", {"f1", "f2", "f3"})
    fourth.save(unless_fewer=3)
    assert cache().get("d", "f0", files[0].stat()) == (False, None)
    monkeypatch.undo()
    racy = cache()
    files[1].write_text("one again")  # changed now: its entry is dropped, not kept
    racy.put("d", "f1", files[1].stat(), "x")
    racy.save(unless_fewer=3)
    assert "f1" not in cache().folders["d"]
