"""The MCP write tools, driven by the official SDK's real client: the same ledger lines, refusals
and episode stamping as the command line; annotated neither read-only nor destructive. And the
server's first answers need nothing but the standard library."""
from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from conftest import MAJORDOMUS, Repo
from mcp import ClientSession
from test_mcp_stdio import session_run

WRITERS = ["record_decision", "ask_question", "resolve_question", "start_task", "finish_task"]


def texts(result: Any) -> str:
    return result.content[0].text


def strip(line: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k != "ts"}


def test_writers_record_what_the_command_line_records(episode: Repo) -> None:
    async def script(session: ClientSession) -> dict[str, Any]:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        got: dict[str, Any] = {"listed": listed}
        got["start"] = await session.call_tool("start_task", {"title": "Refuse tabs", "scope": "src"})
        got["decision"] = await session.call_tool("record_decision", {"text": "Tabs are refused", "why": "one encoding"})
        got["ask"] = await session.call_tool("ask_question", {"text": "Are tabs legal in headers?"})
        qid = got["ask"].structured_content["question"]
        got["resolve"] = await session.call_tool("resolve_question", {"id": qid, "answer": "No"})
        got["finish"] = await session.call_tool("finish_task", {"outcome": "blocked", "reason": "the lexer is shared"})
        return got

    got = session_run(episode, script, env={"MAJORDOMUS_EPISODE": "e1"})
    for name in WRITERS:
        annotations = got["listed"][name].annotations
        assert annotations.read_only_hint is False and annotations.destructive_hint is False, name
    for key in ("start", "decision", "ask", "resolve", "finish"):
        assert got[key].is_error is False, texts(got[key])
        assert json.loads(texts(got[key])) == got[key].structured_content
    task = got["start"].structured_content["task"]
    lines = [line for line in episode.ledger() if line["event"] != "session.opened"]
    assert [(line["event"], line["session"]) for line in lines] == [
        ("task.started", "e1"), ("decision.recorded", "e1"), ("question.opened", "e1"),
        ("question.resolved", "e1"), ("task.finished", "e1")]
    assert strip(lines[1]) == {"event": "decision.recorded", "session": "e1", "task": task,
                               "text": "Tabs are refused", "why": "one encoding"}
    assert strip(got["decision"].structured_content) == strip(lines[1])
    assert lines[4]["outcome"] == "blocked" and lines[4]["reason"] == "the lexer is shared"

    # the command line writes the same line for the same act
    episode.mj("decision", "add", "Tabs are refused", "--why", "one encoding", env={"MAJORDOMUS_EPISODE": "e1"},
               check=True)
    assert strip(episode.ledger()[-1]) == {**strip(lines[1]), "task": None}
    # and at the episode's end they become candidates, as the command line's do
    assert episode.hook("session-end", {"session_id": "e1", "reason": "other"}).returncode == 0
    classes = sorted(p.read_text(encoding="utf-8").split("class: ", 1)[1].split("\n", 1)[0] for p in episode.candidates())
    assert classes == ["convention", "fact", "lesson"]  # one decision: the same text is the same record


def test_writers_refuse_as_the_command_line_does(episode: Repo) -> None:
    async def script(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("record_decision", {"text": "  "}),
            await session.call_tool("finish_task", {}),
            await session.call_tool("resolve_question", {"id": "q-00000000", "answer": "x"}),
            await session.call_tool("resolve_question", {"id": "../x", "answer": "x"}),
            await session.call_tool("start_task", {"title": "t", "verify": "rm -rf /"}),
            await session.call_tool("finish_task", {"outcome": "done"}),
            await session.call_tool("record_decision", {}),
            await session.call_tool("record_decision", {"text": "ok"}),  # still serving
        ]

    *bad, ok = session_run(episode, script, env={"MAJORDOMUS_EPISODE": "e1"})
    said = [texts(r) for r in bad]
    assert all(r.is_error for r in bad) and all(r.structured_content is None for r in bad), said
    cli = episode.mj("decision", "add", "  ")
    assert cli.returncode == 4 and said[0] == "refused: " + cli.stderr.strip().removeprefix("majordomus: ")
    assert said[1] == "refused: finish_task needs the parameter 'outcome'"  # an outcome is stated, never assumed
    assert said[2].startswith("unknown id: no open question q-00000000")
    assert said[3].startswith("refused:")
    assert "takes no parameter 'verify'" in said[4]
    assert "outcome 'done' refused" in said[5]
    assert "needs the parameter 'text'" in said[6]
    assert ok.is_error is False
    assert [line["event"] for line in episode.ledger()] == ["session.opened", "decision.recorded"]


def test_the_first_answers_need_no_sdk(repo: Repo) -> None:
    """initialize and tools/list are answered with the standard library and our own modules: the SDK
    (and pydantic under it) is never imported by the server."""
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "resources/list"},
                {"jsonrpc": "2.0", "id": 4, "method": "ping"}]
    stdin = "".join(json.dumps(m) + "\n" for m in messages) + "not json\n"
    proc = subprocess.run([sys.executable, "-X", "importtime", MAJORDOMUS, "mcp"], cwd=repo.root, input=stdin,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [1, 2, 3, 4, None]
    assert answers[0]["result"]["protocolVersion"] == "2025-06-18"
    assert answers[0]["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert len(answers[1]["result"]["tools"]) == 10
    assert answers[2]["error"]["code"] == -32601 and answers[3]["result"] == {}
    assert answers[4]["error"]["code"] == -32700
    imported = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in proc.stderr.splitlines()
                if line.startswith("import time:")}
    assert not imported & {"mcp", "mcp_types", "pydantic", "anyio", "yaml", "jsonschema", "doit", "jinja2"}


def test_an_agent_disputes_a_verified_record_and_writes_about_files(episode: Repo) -> None:
    """dispute_record: an agent's word on a verified record (a ledger line, no file changed), and
    `about` on the writers: the files a decision is about, refused outside the repository."""
    episode.mj("start", "parser work", check=True)
    episode.mj("decision", "add", "Tabs are refused in the parser", check=True)
    episode.mj("knowledge", "derive", check=True)
    (rid,) = [p.stem for p in episode.candidates()]
    episode.mj("knowledge", "promote", rid, input="read the parser\n", check=True)
    before = (episode.root / ".ai/repo/knowledge/curated" / f"{rid}.md").read_bytes()

    async def script(session: ClientSession) -> dict[str, Any]:
        got: dict[str, Any] = {}
        got["dispute"] = await session.call_tool("dispute_record", {"id": rid, "reason": "tabs parse now"})
        got["about"] = await session.call_tool("record_decision", {"text": "Spaces only", "about": ["README.md"]})
        got["outside"] = await session.call_tool("record_decision", {"text": "Elsewhere", "about": ["../x"]})
        return got

    got = session_run(episode, script, env={"MAJORDOMUS_EPISODE": "e1"})
    assert got["dispute"].is_error is False, texts(got["dispute"])
    assert got["dispute"].structured_content == {"id": rid, "reason": "tabs parse now", "by": "episode e1"}
    (line,) = episode.events("knowledge.disputed")
    assert (line["id"], line["session"], line["reason"]) == (rid, "e1", "tabs parse now")
    assert (episode.root / ".ai/repo/knowledge/curated" / f"{rid}.md").read_bytes() == before
    record = json.loads(episode.mj("knowledge", "record", rid, "--json", check=True).stdout)
    assert record["currency"]["state"] == "disputed" or record["currency"].get("dispute")
    assert got["about"].is_error is False and episode.events("decision.recorded")[-1]["about"] == ["README.md"]
    assert got["outside"].is_error is True and "outside the repository" in texts(got["outside"])
