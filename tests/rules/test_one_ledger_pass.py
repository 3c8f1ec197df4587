"""Doctor reads the ledger once: the one streamed pass that counts malformed lines and gathers the
facts references resolve against also keeps the lines of the events the validators read, numbered
as the event reader numbers them, whatever blank, malformed or unstamped lines lie between."""
from __future__ import annotations

from conftest import Repo
from rules_helpers import append_line
from majordomus.rules.validators import EVENTS, Context
from majordomus.store.workspace import open_workspace


def test_the_survey_keeps_the_validators_events_as_the_event_reader_reads_them(repo: Repo) -> None:
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
    ctx = Context(ws)
    read, facts = ctx.survey()
    assert (read.malformed, read.first_malformed) == (2, 8)  # the blank line is no line, not a malformed one
    assert facts.opened == {"e0", "e1", "e2"} and facts.tasks == {"t0", "t1", "t2"}
    for names in (EVENTS, ("session.closed", "knowledge.derived"), ("knowledge.derived",), ("session.opened",)):
        assert ctx.events(*names) == ws.ledger.events(*names), names
    assert [line.number for line in ctx.events("session.closed")] == [5, 10, 15]
    assert ctx.events("task.started") == ws.ledger.events("task.started")  # outside EVENTS: read on its own
