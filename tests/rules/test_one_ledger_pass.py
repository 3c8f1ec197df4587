"""Doctor reads the ledger's facts (kept in the knowledge index, store/facts.py), not the ledger: the
malformed lines counted, the facts references resolve against, the freshness judgement's lines
and the queue's ages are those the event reader finds, numbered as it numbers them, whatever
blank, malformed or unstamped lines lie between."""
from __future__ import annotations

from conftest import Repo
from rules_helpers import append_line
from majordomus.knowledge import accumulation, freshness
from majordomus.rules.validators import Context
from majordomus.store.workspace import open_workspace


def test_doctor_reads_the_facts_the_event_reader_finds(repo: Repo) -> None:
    ledger = repo.root / ".ai/local/ledger.jsonl"
    for k in range(3):
        append_line(repo, "session.opened", f"2025-01-0{k + 1}T00:00:00Z", f"e{k}", episode=f"e{k}")
        append_line(repo, "task.started", f"2025-01-0{k + 1}T00:01:00Z", f"e{k}", task=f"t{k}")
        with open(ledger, "a", encoding="utf-8") as handle:  # what a reader must skip, and count
            handle.write(["\n", "{not json\n", '{"ts": 1, "event": "session.closed"}\n'][k])
        append_line(repo, "knowledge.derived", f"2025-01-0{k + 1}T00:02:00Z", f"e{k}", episode=f"e{k}",
                    paths=[f".ai/repo/knowledge/candidates/e{k}-a.md"])
        append_line(repo, "session.closed", f"2025-01-0{k + 1}T00:03:00Z", f"e{k}", episode=f"e{k}",
                    note='"session.opened" in a value is not the event')
    ws = open_workspace(repo.root)
    ctx = Context(ws, now=1.9e9)
    read = ctx.ledger()
    assert (read.malformed, read.first_malformed) == (2, 8)  # the blank line is no line, not a malformed one
    assert ctx.facts().ids("opened") == {"e0", "e1", "e2"} and ctx.facts().ids("task") == {"t0", "t1", "t2"}
    assert ctx.facts().having("task", {"t1", "t9"}) == {"t1"}
    assert freshness.judge(ws, ctx.facts().freshness_lines(), now=ctx.now) \
        == freshness.judge(ws, ws.ledger.events(*freshness.EVENTS), now=ctx.now)
    names = {f"e{k}-a.md" for k in range(3)}
    assert accumulation.indexed_ages(ws, names, ctx.facts()) \
        == accumulation.ledger_ages(ws.ledger.events("knowledge.derived"))
    assert [a.detail for a in accumulation.indexed_ages(ws, names).values()] == [
        f"knowledge.derived at ledger line {n}, 2025-01-0{k + 1}T00:02:00Z" for k, n in enumerate((4, 9, 14))]
    assert ctx.events("task.started") == ws.ledger.events("task.started")  # read on its own
