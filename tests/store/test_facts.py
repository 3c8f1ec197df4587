"""The ledger's facts kept in the knowledge index (store/facts.py) are those a pass over the whole
ledger gives, however the ledger came to be: appended to (the facts extended), ending in a torn
line (read, never kept), replaced by a trim (read again), rewritten in place (read again, said).
And the readers built on them answer the same with the index and without it."""
from __future__ import annotations

import difflib
import json
import os
import re
from typing import Any

import pytest

from conftest import Repo
from rules_helpers import append_line, write_candidate
from majordomus.knowledge import accumulation, freshness, references
from majordomus.store import facts as store_facts
from majordomus.store import index as store_index
from majordomus.store.ledger import ReadResult
from majordomus.store.workspace import Workspace, open_workspace

NOW = 1.9e9
ASKED = {"t0", "t3", "u1", "nope"}  # the tasks `Facts.having` is asked about


def truth(ws: Workspace) -> dict[str, Any]:
    """What the readers found by a pass over the whole ledger, before the facts."""
    read = ReadResult(lines=[])
    found = references.ledger_facts(ws, read)
    derived = ws.ledger.events("knowledge.derived")
    ages = accumulation.ledger_ages(derived)
    judged = freshness.judge(ws, ws.ledger.events(*freshness.EVENTS), now=NOW)
    agents = {line.get("agent") for line in ws.ledger.events("session.opened")} - {None}
    disputes = [(line.number, line.get("id"), str(line.get("by") or ""), str(line.get("reason") or ""), line.ts)
                for line in ws.ledger.events("knowledge.disputed") if isinstance(line.get("id"), str)]
    return {"ages": ages, "sets": (found.sessions, found.opened, found.tasks, found.decisions, agents),
            "counts": (found.lines, read.malformed, read.first_malformed), "fresh": judged,
            "disputes": disputes, "having": found.tasks & ASKED}


def answered(ws: Workspace) -> dict[str, Any]:
    """The same, from the facts."""
    store_index._OPEN.clear()  # a new process's view: the index is opened again
    got = accumulation.facts(ws)
    names = {p.rsplit("/", 1)[-1] for line in ws.ledger.events("knowledge.derived")
             for p in line.get("paths") or [] if isinstance(p, str)}
    return {"ages": accumulation.indexed_ages(ws, names, got),
            "sets": tuple(got.ids(kind) for kind in ("session", "opened", "task", "decision", "agent")),
            "counts": (got.parsed, got.malformed, got.first_malformed),
            "fresh": freshness.judge(ws, got.freshness_lines(), now=NOW),
            "disputes": got.disputes(), "having": got.having("task", ASKED)}


def grow(repo: Repo, k: int) -> None:
    e = f"e{k % 3}"
    append_line(repo, "session.opened", f"2025-01-0{k % 9 + 1}T00:00:00Z", e, episode=e, agent=f"agent{k % 2}")
    append_line(repo, "task.started", f"2025-01-0{k % 9 + 1}T00:01:00Z", e, task=f"t{k}")
    if k % 2:
        append_line(repo, "decision.recorded", f"2025-01-0{k % 9 + 1}T00:01:30Z", e, task=f"t{k}", text="x")
    append_line(repo, "knowledge.derived", f"2025-01-0{k % 9 + 1}T00:02:{k:02d}Z", e, episode=e if k % 4 else None,
                paths=[f".ai/repo/knowledge/candidates/{e}-{k % 5}.md", ".ai/repo/sessions/x.md"])
    append_line(repo, "session.closed", f"2025-01-0{k % 9 + 1}T00:03:00Z", e, episode=e)


def dispute(repo: Repo, k: int) -> None:
    """A dispute of a record, and one naming none (no id: not kept)."""
    append_line(repo, "knowledge.disputed", f"2025-01-0{k % 9 + 1}T00:04:00Z", f"e{k}", id=f"r{k}", by="p", reason="why")
    append_line(repo, "knowledge.disputed", f"2025-01-0{k % 9 + 1}T00:04:30Z", f"e{k}", reason="no id")


def test_the_facts_are_a_pass_over_the_ledger_after_appends_a_torn_line_a_trim_and_a_rewrite(
        repo: Repo, capfd: pytest.CaptureFixture[str]) -> None:
    ws = open_workspace(repo.root)
    ledger = ws.ledger.path
    states = []
    for k in range(4):
        grow(repo, k)
        if k % 2 == 0:
            dispute(repo, k)
        with open(ledger, "a", encoding="utf-8") as handle:  # what a reader skips, and counts
            handle.write(["\n", "{not json\n", '{"ts": 1, "event": "session.closed"}\n', "[]\n"][k])
        states.append(f"appended {k}")
        assert answered(ws) == truth(ws), states[-1]
    with open(ledger, "a", encoding="utf-8") as handle:  # a line being written, or torn
        handle.write('{"ts":"2025-02-01T00:00:00Z","event":"knowledge.derived","session":"e7","episode":"e7",'
                     '"paths":[".ai/repo/knowledge/candidates/e7-1.md"]}')
    assert answered(ws) == truth(ws), "torn, parseable"
    assert "e7-1.md" in answered(ws)["ages"]
    with open(ledger, "a", encoding="utf-8") as handle:
        handle.write('\n{"ts":"2025-02-01T00:00:0')
    assert answered(ws) == truth(ws), "torn, malformed"
    with open(ledger, "a", encoding="utf-8") as handle:
        handle.write('1Z","event":"session.closed","session":"e7","episode":"e7"}\n')
    assert answered(ws) == truth(ws), "the torn line ended"
    before = os.stat(ledger).st_ino
    assert ws.ledger.trim(12) > 0 and os.stat(ledger).st_ino != before  # a trim replaces the file
    grow(repo, 5)
    dispute(repo, 5)
    assert answered(ws) == truth(ws), "trimmed"
    assert "r5" in [d[1] for d in answered(ws)["disputes"]]  # appended after the trim, kept
    capfd.readouterr()
    text = ledger.read_text(encoding="utf-8")  # rewritten in place: the same file, other bytes
    ledger.write_text(text.replace('"t', '"u').replace('"e1"', '"e8"'), encoding="utf-8")
    assert answered(ws) == truth(ws), "rewritten in place"
    assert "rewritten in place" in capfd.readouterr().err
    (ws.state / store_index.FILE).unlink()
    assert answered(ws) == truth(ws), "index deleted"
    for suffix in ("", "-journal"):
        (ws.state / f"{store_index.FILE}{suffix}").unlink(missing_ok=True)
    (ws.state / store_index.FILE).mkdir()  # an index that cannot be opened: one pass, the same facts
    store_index._OPEN.clear()
    assert store_index.of(ws).db() is None
    assert answered(ws) == truth(ws), "no index"


def test_the_facts_are_read_once_and_extended(repo: Repo) -> None:
    """The lines are read once: a second reader reads only what was appended since (its count of
    parsed lines comes from the kept ones, not from a pass that would see a line removed)."""
    ws = open_workspace(repo.root)
    grow(repo, 1)
    first = accumulation.facts(ws).parsed
    db = store_index.of(ws).db()
    assert db is not None
    kept = store_facts._head(db)
    assert kept is not None and kept["size"] == os.stat(ws.ledger.path).st_size and kept["parsed"] == first
    grow(repo, 2)
    store_index._OPEN.clear()
    assert accumulation.facts(ws).parsed == first + 4


def normalised(text: str) -> str:
    """An answer without what moves with the clock between two runs (minutes waited, doctor's own
    timings)."""
    return re.sub(r'\d+(\.\d+)? min|"(age_minutes|minutes_since_close|age|\w+_ms)": [\d.]+|[\d.]+ ?ms\b', "N", text)


def answers(repo: Repo) -> list[str]:
    out = []
    for argv in (("knowledge", "candidates", "--json"), ("knowledge", "status", "--json"), ("doctor", "--json"),
                 ("doctor",)):
        proc = repo.mj(*argv)
        assert proc.returncode in (0, 10, 11), proc.stderr
        text = proc.stdout
        if argv == ("doctor", "--json"):  # doctor's own timings are no answer
            data = json.loads(text)
            data.pop("timing", None)
            text = json.dumps(data, indent=1)
        out.append(normalised(text))
    return out


def test_candidates_status_and_doctor_answer_the_same_without_the_index(episode: Repo) -> None:
    repo = episode
    for k in range(3):
        path = write_candidate(repo, f"e{k}-00000000000{k}", date="2020-01-0" + str(k + 1))
        append_line(repo, "knowledge.derived", f"2020-02-0{k + 1}T00:00:00Z", f"e{k}", episode=f"e{k}",
                    paths=[f".ai/repo/knowledge/candidates/{path.name}"])
        append_line(repo, "session.closed", f"2020-02-0{k + 1}T00:01:00Z", f"e{k}", episode=f"e{k}")
    index = repo.root / ".ai/local/state" / store_index.FILE
    ledger = repo.root / ".ai/local/ledger.jsonl"

    def same(why: str) -> None:
        kept = answers(repo)  # with the index (built or extended by the first of them)
        assert index.exists()
        index.unlink()
        again = answers(repo)
        assert again == kept, (why, [list(difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=1))
                                     for a, b in zip(kept, again) if a != b])
        assert '"age_source": "ledger"' in kept[0]

    same("built")
    append_line(repo, "knowledge.derived", "2020-03-01T00:00:00Z", "e3", episode="e3",
                paths=[".ai/repo/knowledge/candidates/e0-000000000000.md"])
    answers(repo)  # the index, extended
    append_line(repo, "session.opened", "2020-03-02T00:00:00Z", "e4", episode="e4")
    same("appended")
    with open(ledger, "a", encoding="utf-8") as handle:
        handle.write('{"ts":"2020-03-03T00:00:00Z","event":"session.clo')
    same("torn")
    text = ledger.read_bytes()
    scratch = ledger.with_name("ledger.jsonl.new")
    scratch.write_bytes(text[text.index(b"\n", len(text) // 2) + 1:])  # what a trim leaves: the newest lines
    os.replace(scratch, ledger)
    same("trimmed")
    listed = json.loads(repo.mj("knowledge", "candidates", "--json").stdout)
    # the trim dropped the line that dated one of them: the facts were read again, not kept
    assert sorted(c["age_source"] for c in listed) == ["date", "ledger", "ledger"]
