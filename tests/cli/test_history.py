"""`majordomus history` filters the ledger as text, then parses, and prints as it reads: what it
prints is what a full parse filtered afterwards prints, byte for byte."""
from __future__ import annotations

import json
import re
from typing import Any

from conftest import Repo


def _expected(repo: Repo, keep: Any, limit: int | None = None) -> str:
    """`history --json` as a full parse of the ledger, filtered after it, would print it."""
    raw = (repo.root / ".ai/local/ledger.jsonl").read_bytes().split(b"\n")
    found = []
    for number, text in enumerate(raw, 1):
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("ts"), str) and isinstance(obj.get("event"), str) and keep(obj):
            ts, event, session = obj.pop("ts"), obj.pop("event"), obj.pop("session", None)
            found.append({"line": number, "ts": ts, "event": event, "session": session, **obj})
    if limit is not None:
        found = found[-limit:]
    text = json.dumps(found, indent=2, ensure_ascii=False)
    return re.sub("[\x7f-\x9f]", lambda m: f"\\u{ord(m.group(0)):04x}", text) + "\n"


def test_history_prints_what_a_full_parse_prints(episode: Repo) -> None:
    episode.mj("decision", "add", "caf\u00e9 \x85 \x7f and a \"quote\"", "--why", "line\nbreak", check=True)
    episode.mj("checkpoint", "--note", "n1", check=True)
    with open(episode.root / ".ai/local/ledger.jsonl", "ab") as ledger:
        ledger.write(b'{"ts": "2026-01-01T00:00:00Z", "event": "decision.recorded", "session": "e1", "text": "spaced"}\n')
        ledger.write(b'{"ts":"2026-01-01T00:00:00Z","event":"decision.rec\n')  # torn before its name
        ledger.write(b'{"ts":"2026-01-01T00:00:00Z","event":"decision.recorded","session":"e1","te\n')  # after
        ledger.write(b'\n{"event":"checkpoint.recorded","ts":"2026-01-01T00:00:00Z","session":null}\n')
    episode.mj("decision", "add", "d2", check=True)
    cases: list[tuple[list[str], Any, int | None]] = [
        (["--event", "decision.recorded"], lambda o: o["event"] == "decision.recorded", None),
        (["--event", "decision.recorded", "--event", "checkpoint.recorded"],
         lambda o: o["event"] in ("decision.recorded", "checkpoint.recorded"), None),
        (["--episode", "e1"], lambda o: o.get("session") == "e1" or o.get("episode") == "e1", None),
        (["--event", "decision.recorded", "--limit", "2"], lambda o: o["event"] == "decision.recorded", 2),
        ([], lambda o: True, None),
        (["--event", "handover.recorded"], lambda o: o["event"] == "handover.recorded", None),
    ]
    for args, keep, limit in cases:
        proc = episode.mj("history", *args, "--json", check=True)
        assert proc.stdout == _expected(episode, keep, limit), args
    text = episode.mj("history", "--event", "decision.recorded", check=True)
    assert [l.split()[1] for l in text.stdout.splitlines()] == ["decision.recorded"] * 3
    assert "\\u0085" in text.stdout and "\x85" not in text.stdout
    # malformed lines are counted among those read: the one torn after the event's name
    assert "(1 malformed ledger line(s) skipped" in text.stderr
    assert "malformed" not in episode.mj("history", "--event", "checkpoint.recorded", check=True).stderr
    assert "(2 malformed ledger line(s) skipped" in episode.mj("history", check=True).stderr
