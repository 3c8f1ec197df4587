"""The ledger: registered events, locked appends, tolerant readers, the retention cap."""
from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from majordomus.store.ledger import EVENTS, Ledger, ReadResult


def _append_many(local: str, writer: int, count: int) -> None:
    ledger = Ledger(Path(local))
    for n in range(count):
        ledger.append("decision.recorded", f"w{writer}", task=None, text=f"writer {writer} line {n} " + "x" * 300)


def test_eight_processes_append_1600_whole_lines(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), w, 200)) for w in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    raw = (tmp_path / "ledger.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(raw) == 1600
    parsed = [json.loads(line) for line in raw]  # every line whole
    for w in range(8):
        mine = [p["text"].split()[3] for p in parsed if p["session"] == f"w{w}"]
        assert mine == [str(n) for n in range(200)]  # in order, none lost


def test_unregistered_event_is_a_programming_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unregistered ledger event"):
        Ledger(tmp_path).append("decision.invented", None)
    assert not (tmp_path / "ledger.jsonl").exists()


def test_every_line_is_stamped(tmp_path: Path) -> None:
    line = Ledger(tmp_path).append("checkpoint.recorded", "e9", note="n")
    assert set(line) >= {"ts", "event", "session"}
    assert line["ts"].endswith("Z") and line["session"] == "e9"
    assert "knowledge.derived" in EVENTS and "outbox.drained" in EVENTS


def test_malformed_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    ledger.append("checkpoint.recorded", "e1")
    with open(ledger.path, "ab") as handle:
        handle.write(b'{"ts": "2026-01-01T00:00:00Z", "event": "checkpoint.rec\n')  # torn
        handle.write(b"\xff\xfe binary\n[1, 2]\n")
        handle.write(b'{"ts": 5, "event": "x", "session": null}\n')  # wrong type
    ledger.append("checkpoint.recorded", "e1")
    result = ledger.read()
    assert [l.number for l in result.lines] == [1, 6]
    assert result.malformed == 4 and result.first_malformed == 2


def test_window_selects_one_episode(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    ledger.append("checkpoint.recorded", "e1", note="mentions e2")
    ledger.append("checkpoint.recorded", "e2")
    ledger.append("checkpoint.recorded", "e12")
    assert [l.number for l in ledger.window("e2")] == [2]


def test_retention_keeps_the_newest_lines(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path)
    for n in range(10):
        ledger.append("checkpoint.recorded", "e1", note=str(n))
    assert ledger.trim(4) == 6
    assert [l.get("note") for l in ledger.read().lines] == ["6", "7", "8", "9"]
    assert ledger.trim(4) == 0


def test_a_trim_is_due_only_past_the_cap_by_its_margin(tmp_path: Path) -> None:
    """A boundary rewrites the ledger once it is over the cap by a tenth, down to the cap; lines of
    an open episode that hold it above the cap move the next trim's threshold up, so a long open
    episode never makes every close rewrite the file."""
    ledger = Ledger(tmp_path)
    for n in range(110):
        ledger.append("checkpoint.recorded", "old", note=str(n))
    assert not ledger.trim_due(100)  # 110 lines: over the cap of 100 by no more than its tenth
    ledger.append("checkpoint.recorded", "old", note="110")
    assert ledger.trim_due(100)
    assert ledger.trim(100) == 11 and ledger.count() == 100
    assert not ledger.trim_due(100)
    for n in range(200):
        ledger.append("checkpoint.recorded", "open", note=str(n))
    assert ledger.trim_due(100)
    assert ledger.trim(100, open_episodes=["open"]) == 100  # only "old" lines go: 200 stay
    assert ledger.count() == 200 and not ledger.trim_due(100)
    for n in range(10):
        ledger.append("checkpoint.recorded", "later", note=str(n))
    assert not ledger.trim_due(100)  # 210: over what the trim left by no more than the margin
    ledger.append("checkpoint.recorded", "later", note="10")
    assert ledger.trim_due(100)
    ledger.index_path.unlink()  # the index (and the floor it kept) is derived: rebuilt, due again
    assert Ledger(tmp_path).trim_due(100)


def _append_numbered(local: str, writer: int, count: int, trimmed: Any) -> None:
    """Append `count` numbered lines; halfway, wait until the trimmer has removed some, so the
    trims overlap the appends however the scheduler starts the processes."""
    ledger = Ledger(Path(local))
    for n in range(count):
        if n == count // 2:
            trimmed.wait(120)
        ledger.append("checkpoint.recorded", f"w{writer}", note=f"{writer}.{n}")


def _trim_often(local: str, keep: int, trimmed: Any, done: Any, out: str) -> None:
    """Trim to `keep` again and again until the writers are `done`, then once more."""
    ledger = Ledger(Path(local))
    removed, trims = 0, 0
    while not done.is_set():
        got = ledger.trim(keep)
        removed, trims = removed + got, trims + (1 if got else 0)
        if got:
            trimmed.set()
    removed += ledger.trim(keep)
    Path(out).write_text(f"{removed} {trims}")


def test_appends_during_trims_lose_nothing(tmp_path: Path) -> None:
    """Four processes append while another trims the ledger again and again: every line appended
    is either still there or among those a trim counted as removed, each writer's lines that
    remain are the newest ones it wrote, in order, and every line is whole."""
    ctx = multiprocessing.get_context("spawn")
    out = tmp_path / "removed"
    done, trimmed = ctx.Event(), ctx.Event()
    writers = [ctx.Process(target=_append_numbered, args=(str(tmp_path), w, 300, trimmed)) for w in range(4)]
    trimmer = ctx.Process(target=_trim_often, args=(str(tmp_path), 150, trimmed, done, str(out)))
    for p in [trimmer, *writers]:
        p.start()
    for p in writers:
        p.join(120)
        assert p.exitcode == 0
    done.set()
    trimmer.join(120)
    assert trimmer.exitcode == 0
    removed, trims = map(int, out.read_text().split())
    assert trims >= 1, "no trim ran while the writers appended"
    lines = [json.loads(raw) for raw in (tmp_path / "ledger.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 150 and len(lines) + removed == 4 * 300
    for w in range(4):
        mine = [int(line["note"].split(".")[1]) for line in lines if line["session"] == f"w{w}"]
        assert mine == list(range(300 - len(mine), 300))
    assert Ledger(tmp_path).count() == len(lines)


# `Ledger.reversed_lines`: the ledger newest first, read from its end in blocks.
LINE = st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), max_size=30)


@given(st.lists(LINE, max_size=40), st.integers(1, 64), st.booleans())
def test_reversed_lines_are_the_lines_newest_first(tmp_path_factory, lines: list[str], block: int,  # type: ignore[no-untyped-def]
                                                   trailing: bool) -> None:
    folder: Path = tmp_path_factory.mktemp("ledger")
    ledger = Ledger(folder)
    data = "\n".join(lines) + ("\n" if trailing and lines else "")
    ledger.path.write_bytes(data.encode("utf-8"))
    expected = [l for l in reversed(data.split("\n")) if l.strip()]
    assert list(ledger.reversed_lines(block=block)) == expected


def test_a_missing_ledger_has_no_lines(tmp_path: Path) -> None:
    assert list(Ledger(tmp_path).reversed_lines()) == []


def test_a_line_longer_than_the_bound_is_skipped_counted_and_never_written(tmp_path: Path) -> None:
    """Every reader holds at most CHUNK + LINE_LIMIT bytes: a longer line (one ending in a
    newline, one the file ends in) is skipped and counted malformed, the lines around it read;
    the trim drops it; `append` refuses to write one."""
    from majordomus.base.errors import FatalError
    from majordomus.store.ledger import CHUNK, LINE_LIMIT

    def line(text: str) -> bytes:
        return (json.dumps({"ts": "2026-03-04T05:06:07Z", "event": "decision.recorded", "session": "e1",
                            "task": None, "text": text}) + "\n").encode()

    ledger = Ledger(tmp_path)
    ledger.path.write_bytes(line("one") + b"x" * (CHUNK + LINE_LIMIT + 10) + b"\n" + line("two")
                            + b"y" * (LINE_LIMIT + 10))
    result = ledger.read()
    assert [l.get("text") for l in result.lines] == ["one", "two"]
    assert (result.malformed, result.first_malformed) == (2, 2)
    assert [json.loads(t)["text"] for t in ledger.reversed_lines(block=4096)] == ["two", "one"]
    assert [l.get("text") for l in ledger.window("e1")] == ["one", "two"]
    assert ledger.count() == 4
    counted = ReadResult([])
    assert [o["text"] for o in ledger.objects(counted)] == ["one", "two"] and counted.malformed == 2
    assert ledger.trim(1, open_episodes=["e1"]) == 2  # the two overlong lines; e1's are kept
    assert ledger.path.read_bytes() == line("one") + line("two")
    with pytest.raises(FatalError) as refused:
        ledger.append("decision.recorded", "e1", task=None, text="z" * LINE_LIMIT)
    assert refused.value.code == 4 and "longer than" in refused.value.message
    assert ledger.path.read_bytes() == line("one") + line("two")


def test_a_tail_stamp_tells_the_same_ledger_grown_from_what_was_appended(tmp_path: Path) -> None:
    """`tail_stamp` + `appended_since`, the prebuilt briefing's and the no-op's one check of the
    ledger: the bytes appended since, or None for another ledger (rewritten, trimmed, replaced,
    grown past the limit, a stamp of another shape)."""
    ledger = Ledger(tmp_path)
    empty = ledger.tail_stamp()
    assert empty == [0, 0, 0, ""] and ledger.appended_since(empty, 1 << 20) == b""
    ledger.append("checkpoint.recorded", "e1", note="one")
    assert ledger.appended_since(empty, 1 << 20) == ledger.path.read_bytes()  # created since: all of it
    kept = ledger.tail_stamp()
    assert ledger.appended_since(kept, 1 << 20) == b""
    ledger.append("checkpoint.recorded", "e2", note="two")
    grown = ledger.appended_since(kept, 1 << 20)
    assert grown is not None and json.loads(grown)["note"] == "two"
    assert ledger.appended_since(kept, len(grown) - 1) is None  # more than the check may read
    for wrong in (None, [], [1, 2, 3], ["1", 2, 3, ""], [1, 2, 3, 4]):
        assert ledger.appended_since(wrong, 1 << 20) is None
    data = ledger.path.read_bytes()
    ledger.path.write_bytes(data.replace(b"one", b"two"))  # the stamped bytes rewritten in place
    assert ledger.appended_since(kept, 1 << 20) is None
    ledger.path.unlink()
    assert ledger.appended_since(kept, 1 << 20) is None
    ledger.path.write_bytes(data)  # the same bytes in another file
    st = ledger.path.stat()
    assert ledger.appended_since(kept, 1 << 20) is None or (st.st_dev, st.st_ino) == tuple(kept[:2])
