"""The ledger index is derived from the ledger and never a second source of truth: whatever was
appended, trimmed, torn, truncated, replaced or deleted, every reader that goes through it answers
what a full parse of the file answers. (The ledger is append-only: the index checks its inode, its
length and the bytes just before where it stopped; an edit in place of older lines at the same
length is the one change it cannot see.)"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from majordomus.store import ledger as ledger_module
from majordomus.store.ledger import Ledger, ReadResult, parse_line

EPISODES = ("e1", "e2", "ep-\u00e9", 'q"uote', "e12")


def _reference(path: Path) -> list[tuple[bytes, Any]]:
    """Every parseable line as a full parse reads it, with its bytes (the readers' needles are
    searched in the bytes: an id or an event written with an escape is not found, as before)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    found = []
    for number, raw in enumerate(lines, 1):
        parsed = parse_line(number, raw.decode("utf-8", errors="replace"))
        if parsed is not None:
            found.append((raw, parsed))
    return found


def _count(path: Path) -> int:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


def _raw(path: Path, text: bytes) -> None:
    with open(path, "ab") as handle:
        handle.write(text)


def _line(**fields: Any) -> bytes:
    return (json.dumps(fields, ensure_ascii=False) + "\n").encode("utf-8")


ACTIONS = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(EPISODES + (None,)),
              st.sampled_from(("session.opened", "checkpoint.recorded", "handover.recorded", "decision.recorded")),
              st.sampled_from(("main", "feature", None))),
    st.tuples(st.just("odd"), st.sampled_from(EPISODES),
              st.sampled_from(("spaced", "blanks", "reordered", "twice", "escaped", "torn", "blank", "nested", "binary"))),
    st.tuples(st.just("trim"), st.integers(1, 12)),
    st.tuples(st.just("forget"), st.sampled_from(("delete", "garble", "foreign"))),
    st.tuples(st.just("rewrite"), st.sampled_from(("truncate", "replace", "grow-back", "last-line"))),
    st.tuples(st.just("reader"),),
)


def _act(ledger: Ledger, action: tuple[Any, ...], n: int) -> None:
    kind = action[0]
    if kind == "append":
        _, episode, event, branch = action
        extra = {"branch": branch} if event == "session.opened" else {"next": f"step {n}" if n % 3 else " "}
        ledger.append(event, episode, **extra)
    elif kind == "odd":
        _, episode, shape = action
        if shape == "spaced":  # json.dumps' default separators
            _raw(ledger.path, _line(ts="2026-01-01T00:00:00Z", event="session.opened", session=episode, branch="sp"))
        elif shape == "blanks":  # JSON's every blank, between every token
            _raw(ledger.path, ('{ \t"ts" :\t"2026-01-01T00:00:00Z" ,\r"event" : "session.opened" , "session" : '
                               + json.dumps(episode, ensure_ascii=False) + ' , "branch" : "bl" }\n').encode("utf-8"))
        elif shape == "reordered":
            _raw(ledger.path, _line(event="handover.recorded", session=episode, ts="2026-01-01T00:00:00Z", next="r"))
        elif shape == "twice":  # JSON keeps the last of two keys
            _raw(ledger.path, ('{"ts":"2026-01-01T00:00:00Z","event":"checkpoint.recorded","session":"e1",'
                               f'"session":{json.dumps(episode)}}}\n').encode("utf-8"))
        elif shape == "escaped":
            _raw(ledger.path, ('{"ts":"2026-01-01T00:00:00Z","event":"session.opened","session":'
                               + json.dumps(episode, ensure_ascii=True).replace("e", "\\u0065") + ',"branch":"esc"}\n')
                 .encode("utf-8"))
        elif shape == "torn":
            _raw(ledger.path, b'{"ts":"2026-01-01T00:00:00Z","event":"handover.recorded","session":"e1","ne')
        elif shape == "blank":
            _raw(ledger.path, b"\n   \n")
        elif shape == "nested":
            _raw(ledger.path, _line(ts="2026-01-01T00:00:00Z", event="checkpoint.recorded", session=None,
                                    note={"session": episode}, scope="session"))
        else:
            _raw(ledger.path, b'\xff\xfe{"session":"e2"}\n')
    elif kind == "trim":
        ledger.trim(action[1])
    elif kind == "forget":
        index = ledger.index_path
        if action[1] == "delete":
            index.unlink(missing_ok=True)
        elif action[1] == "garble" and index.exists():
            index.write_bytes(index.read_bytes()[:7])
        elif action[1] == "foreign" and index.exists():  # an index of another file
            head, _, rest = index.read_bytes().partition(b"\n")
            meta = json.loads(head)
            meta["ino"] += 1
            index.write_bytes(json.dumps(meta).encode() + b"\n" + rest)
    elif kind == "rewrite" and ledger.path.exists():
        data = ledger.path.read_bytes()
        if action[1] == "truncate":  # in place: same inode, shorter
            with open(ledger.path, "r+b") as handle:
                handle.truncate(len(data) // 2)
        elif action[1] == "replace":  # by hand, through a new file
            tmp = ledger.path.with_name("by-hand")
            tmp.write_bytes(data[len(data) // 3:])
            os.replace(tmp, ledger.path)
        elif action[1] == "grow-back":  # in place: shorter, then as long again with other lines
            with open(ledger.path, "r+b") as handle:
                handle.truncate(max(0, len(data) - 150))
            _raw(ledger.path, _line(ts="2026-01-01T00:00:00Z", event="session.opened", session="e2", branch="gb"))
        elif data.endswith(b"\n") and len(data) > 2:  # in place, same length: the last line's bytes
            with open(ledger.path, "r+b") as handle:
                handle.seek(len(data) - 2)
                handle.write(b"#")
    # "reader": another process's reader: a fresh Ledger object, nothing cached in memory


def _agree(ledger: Ledger) -> None:
    fresh = Ledger(ledger.path.parent)
    lines = _reference(ledger.path)
    for reader in (ledger, fresh):
        for episode in EPISODES + ("never",):
            needle = json.dumps(episode, ensure_ascii=False).encode("utf-8")
            want = [(l.number, l.ts, l.event, l.data) for raw, l in lines if l.session == episode and needle in raw]
            got = [(l.number, l.ts, l.event, l.data) for l in reader.window(episode)]
            assert got == want, episode
        handovers = [l for raw, l in lines if l.event == "handover.recorded" and b'"handover.recorded"' in raw
                     and isinstance(l.get("next"), str) and l.get("next").strip()]
        last = reader.last_handover()
        assert (last.data if last else None) == (handovers[-1].data if handovers else None)
        opened: dict[str, Any] = {}
        for raw, l in lines:
            if l.event == "session.opened" and l.session and b'"session.opened"' in raw:
                branch = l.get("branch")
                opened[l.session] = branch if isinstance(branch, str) else None
        assert reader.opened_branches(EPISODES + ("never",)) == opened
        assert reader.count() == _count(ledger.path)
    # the block-parsing reader of every line agrees with a line-by-line parse, malformed count included
    whole, blocks = ledger.read(), ReadResult(lines=[])
    objects = list(ledger.objects(blocks))
    assert [(o["ts"], o["event"], o.get("session"), {k: v for k, v in o.items() if k not in ("ts", "event", "session")})
            for o in objects] == [(l.ts, l.event, l.session, l.data) for l in whole.lines]
    assert (blocks.malformed, blocks.first_malformed) == (whole.malformed, whole.first_malformed)


@pytest.mark.parametrize("chunk,save_after,few", [(64, 1, 64), (257, 300, 0), (1 << 22, 1 << 18, 2)])
@given(actions=st.lists(ACTIONS, max_size=40))
def test_every_reader_through_the_index_answers_what_a_full_parse_answers(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
        chunk: int, save_after: int, few: int, actions: list[tuple[Any, ...]]) -> None:
    monkeypatch.setattr(ledger_module, "CHUNK", chunk)
    monkeypatch.setattr(ledger_module, "FEW", few)
    monkeypatch.setattr(ledger_module, "SAVE_AFTER", save_after)
    local = tmp_path_factory.mktemp("local")
    ledger = Ledger(local)
    for n, action in enumerate(actions):
        _act(ledger, action, n)
        if action[0] == "reader":
            ledger = Ledger(local)
        _agree(ledger)


def test_the_retention_cap_reads_nothing_under_it(tmp_path: Path) -> None:
    """Under the cap the trim leaves the file alone; over it, it keeps the newest lines, and the
    index it leaves answers for the trimmed file."""
    ledger = Ledger(tmp_path)
    for n in range(30):
        ledger.append("checkpoint.recorded", "e1" if n % 2 else "e2", note=str(n))
    inode = os.stat(ledger.path).st_ino
    assert ledger.trim(30) == 0 and os.stat(ledger.path).st_ino == inode
    assert ledger.trim(10) == 20
    assert [l.get("note") for l in ledger.window("e1")] == [str(n) for n in range(21, 30, 2)]
    assert [l.number for l in ledger.window("e2")] == [1, 3, 5, 7, 9]
    index = json.loads(ledger.index_path.read_bytes().split(b"\n")[0])
    assert index["lines"] == 10 and index["ino"] == os.stat(ledger.path).st_ino


def test_a_window_reads_from_its_episode_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window of a recent episode reads the bytes from its first line on, not the file."""
    monkeypatch.setattr(ledger_module, "CHUNK", 4096)
    ledger = Ledger(tmp_path)
    for n in range(2000):
        ledger.append("checkpoint.recorded", f"old{n % 7}", note="x" * 100)
    ledger.index()  # built once
    ledger.append("session.opened", "new", branch="main")
    ledger.append("checkpoint.recorded", "new", note="y")
    starts: list[int] = []
    blocks = Ledger._blocks

    def spy(self: Ledger, start: int = 0) -> Any:
        starts.append(start)
        return blocks(self, start)

    monkeypatch.setattr(Ledger, "_blocks", spy)
    reader = Ledger(tmp_path)
    assert [l.number for l in reader.window("new")] == [2001, 2002]
    size = ledger.path.stat().st_size
    assert starts and min(starts) > size - 1000


def test_a_window_searches_the_unindexed_tail_and_leaves_the_index(tmp_path: Path) -> None:
    """A reader of one episode does not extend the index over what was appended since it was
    saved (that is the start briefing's work): an episode the index knows is read from its first
    line, one that began in the tail is found there, and the saved index is left as it was."""
    ledger = Ledger(tmp_path)
    ledger.append("session.opened", "known", branch="main")
    ledger.index()  # saved: it knows "known"
    saved = ledger.index_path.read_bytes()
    for n in range(3000):  # past SAVE_AFTER: an extending reader would save
        ledger.append("checkpoint.recorded", f"noise{n % 9}", note="z" * 80)
    ledger.append("checkpoint.recorded", "known", note="later")
    ledger.append("session.opened", "tail", branch="main")
    ledger.append("decision.recorded", "tail", text="d", why=None)
    reader = Ledger(tmp_path)
    assert [(l.number, l.event) for l in reader.window("known")] == [(1, "session.opened"), (3002, "checkpoint.recorded")]
    assert [(l.number, l.event) for l in reader.window("tail")] == [(3003, "session.opened"), (3004, "decision.recorded")]
    assert reader.window("never") == []
    assert ledger.index_path.read_bytes() == saved
    assert reader.count() == 3004  # the reader that needs the whole index extends it, and saves it
    assert ledger.index_path.read_bytes() != saved


_STAMPED = st.builds(lambda ts, event, session, extra: json.dumps(
    {"ts": ts, "event": event, "session": session, **extra}, ensure_ascii=False).encode("utf-8"),
    st.text(max_size=5), st.sampled_from(("decision.recorded", "x")), st.sampled_from(EPISODES + (None,)),
    st.dictionaries(st.sampled_from(("text", "n", "ts2")), st.one_of(st.text(max_size=8), st.integers(),
                                                                     st.lists(st.integers(), max_size=3))))
_JUNK = st.one_of(
    st.binary(max_size=12),
    st.sampled_from((b"", b"  ", b"[1,2]", b'"text"', b"{}", b'{"ts":"t","event":"e"}', b'{"ts":1,"event":"e"}',
                     b'{"ts":"t","event":"e","session":"s"},{"ts":"t","event":"e","session":"s"}',
                     b'{"ts":"t","event":"e","session":"s","x":"open', b'close"}',
                     b'{"ts":"t","event":"e","session":"\xed\xa0\x80"}', b'\xa0{"ts":"t","event":"e"}',
                     b'{"ts":"t","event":"e","session":"s","n":NaN}')),
)


@given(lines=st.lists(st.one_of(_STAMPED, _STAMPED, _JUNK), max_size=30), batch=st.sampled_from((1, 3, 4096)))
def test_lines_parsed_in_batches_are_the_lines_parsed_one_by_one(
        monkeypatch: pytest.MonkeyPatch, lines: list[bytes], batch: int) -> None:
    """The readers of matching lines parse many lines in one call: whatever the lines (junk,
    halves of a string, two objects on a line, a surrogate's bytes), they read what a parse of
    each line reads."""
    monkeypatch.setattr(ledger_module, "BATCH", batch)
    hits = [(n, raw.replace(b"\n", b" ")) for n, raw in enumerate(lines, 1)]
    want = [line for n, raw in hits if (line := parse_line(n, raw.decode("utf-8", errors="replace")))]
    assert list(ledger_module._parsed(hits)) == want


KEYS = st.text(alphabet=st.sampled_from(['e', '1', '"', '\\', ',', ':', '{', '[', ']', '\u00e9', '\n']),
               min_size=0, max_size=4)


@given(st.dictionaries(KEYS, st.lists(st.integers(-1, 10**9), min_size=3, max_size=3), max_size=6),
       st.lists(KEYS, max_size=4))
def test_an_episode_found_in_the_saved_text_is_what_the_parsed_map_holds(
        saved: dict[str, list[int]], asked: list[str]) -> None:
    """A lookup searches the saved map's text, as `_save` writes it, for the first few episodes:
    whatever the ids hold (quotes, backslashes, commas, colons), it answers what the map does."""
    text = (json.dumps(saved, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
    for episode in [*asked, *saved]:
        index = ledger_module.LedgerIndex(1, 1, saved=text)
        assert index.episode(episode) == saved.get(episode)


def test_one_episode_looked_up_does_not_parse_the_saved_map() -> None:
    saved = {f"e{n}": [n * 100, n + 1, -1] for n in range(1000)}
    text = (json.dumps(saved, separators=(",", ":")) + "\n").encode("utf-8")
    index = ledger_module.LedgerIndex(1, 1, saved=text)
    assert index.episode("e999") == [99900, 1000, -1] and index.episode("e9") == [900, 10, -1]
    assert index.episode("e1000") is None
    assert index._known is None  # searched, not parsed
    for n in range(ledger_module.SEARCHED):
        index.episode(f"e{n}")
    assert index._known is not None  # past the first few, the map is parsed once
