"""The MCP projection: a real client session of the official SDK spawns `majordomus mcp` over
stdio in a temporary repository, lists the tools and calls each; bad requests are tool
errors. The client itself validates each structured result against the tool's output schema."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import anyio
from conftest import MAJORDOMUS, Repo
from kbstore import Store, build
from mcp import ClientSession  # the `mcp` extra: `pip install -e '.[test]'` brings it
from mcp.client.stdio import StdioServerParameters, stdio_client

TIMEOUT = 60


def session_run(repo: Repo, script: Any, env: dict[str, str] | None = None) -> Any:
    """Run `script(session)` inside one real client session with `majordomus mcp` in `repo`."""
    params = StdioServerParameters(command=MAJORDOMUS, args=["mcp"], cwd=str(repo.root),
                                   env={**{k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME"))},
                                        **(env or {})})

    async def main() -> Any:
        with anyio.fail_after(TIMEOUT):
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    return await script(session)

    return anyio.run(main)


def test_lists_the_reader_tools_and_calls_each(repo: Repo) -> None:
    store: Store = build(repo)
    from majordomus.readers.mcp_stdio import tools

    async def script(session: ClientSession) -> dict[str, Any]:
        listed = (await session.list_tools()).tools
        results = {
            "candidates": await session.call_tool("knowledge_base_candidates", {}),
            "record": await session.call_tool("knowledge_base_record", {"id": "c-tabs"}),
            "status": await session.call_tool("knowledge_base_status", {}),
            "search": await session.call_tool("knowledge_base_search", {"text": "TABS", "status": "verified"}),
        }
        return {"tools": listed, **results}

    got = session_run(repo, script)
    assert [t.name for t in got["tools"]] == ["knowledge_base_candidates", "knowledge_base_record",
                                              "knowledge_base_status", "knowledge_base_search",
                                              "record_decision", "ask_question", "resolve_question",
                                              "start_task", "finish_task", "dispute_record"]
    assert all(t.annotations.read_only_hint for t in got["tools"][:4])
    listed = [{"name": t.name, "title": t.title, "description": t.description, "inputSchema": t.input_schema,
               "outputSchema": t.output_schema,
               "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True)} for t in got["tools"]]
    assert listed == tools()[: len(listed)]
    for name in ("candidates", "record", "status", "search"):
        assert got[name].is_error is False, got[name].content
        assert json.loads(got[name].content[0].text) == got[name].structured_content
    assert sorted(c["id"] for c in got["candidates"].structured_content["result"]) == sorted(
        [store.decision, store.lesson])
    assert got["record"].structured_content["meta"]["status"] == "verified"
    assert got["status"].structured_content["records"] == 5
    assert [h["id"] for h in got["search"].structured_content["result"]] == ["c-tabs"]
    # the same answers as the command line's --json
    cli = json.loads(repo.mj("knowledge", "record", "c-tabs", "--json", check=True).stdout)
    assert got["record"].structured_content == cli


def test_bad_requests_are_tool_errors(repo: Repo) -> None:
    build(repo)

    async def script(session: ClientSession) -> list[Any]:
        return [
            await session.call_tool("knowledge_base_record", {"id": "nope"}),
            await session.call_tool("knowledge_base_record", {"id": "../../policy"}),
            await session.call_tool("knowledge_base_record", {"id": "README"}),
            await session.call_tool("knowledge_base_record", {}),
            await session.call_tool("knowledge_base_status", {"verbose": True}),
            await session.call_tool("knowledge_base_nope", {}),
            await session.call_tool("knowledge_base_record", {"id": "c-tabs"}),  # still serving
        ]

    unknown, bad, readme, missing, extra, tool, ok = session_run(repo, script)
    texts = [r.content[0].text for r in (unknown, bad, readme, missing, extra, tool)]
    assert all(r.is_error for r in (unknown, bad, readme, missing, extra, tool)), texts
    assert texts[0].startswith("unknown id: no knowledge record 'nope'")
    assert texts[1].startswith("refused: id '../../policy' refused")
    assert texts[2].startswith("unknown id: no knowledge record 'README'")
    assert "needs the parameter 'id'" in texts[3]
    assert "takes no parameter 'verbose'" in texts[4]
    assert texts[5].startswith("unknown tool 'knowledge_base_nope'")
    assert all(r.structured_content is None for r in (unknown, bad, readme, missing, extra, tool))
    assert ok.is_error is False and ok.structured_content["id"] == "c-tabs"


def test_mcp_refuses_an_uninitialised_repository(bare_repo: Repo) -> None:
    proc = bare_repo.mj("mcp", input="")
    assert proc.returncode == 5 and "majordomus init" in proc.stderr


def test_initialize_and_tools_list_import_nothing_that_reads_the_store(repo: Repo) -> None:
    """The server's first answers cost the same on any store: they read no record, no ledger line,
    and import neither the readers, nor the writers, nor the workspace; the list they answer is the
    published one, equal to the list the declarations generate. A call then imports its reader."""
    from majordomus.readers.mcp_stdio import tools

    build(repo)
    code = """
import io, json, sys
from majordomus.cli.main import main
ask = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
       {"jsonrpc": "2.0", "method": "notifications/initialized"},
       {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
sys.stdin = io.TextIOWrapper(io.BytesIO("".join(json.dumps(m) + "\\n" for m in ask).encode()))
class Kept(io.BytesIO):
    def close(self):  # main closes stdout as it ends: keep what was written
        pass
out = Kept()
sys.stdout = io.TextIOWrapper(out)
code = main(["mcp"])
listed = json.loads(out.getvalue().splitlines()[1])["result"]["tools"]
mine = sorted(m for m in sys.modules if m.startswith("majordomus.") and m.split(".")[1] not in ("cli", "base"))
sys.__stdout__.write(json.dumps({"code": code, "tools": listed, "modules": mine,
                                 "yaml": "yaml" in sys.modules, "subprocess": "subprocess" in sys.modules}))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo.root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["code"] == 0 and got["tools"] == tools()
    assert got["modules"] == ["majordomus.readers", "majordomus.readers.mcp_stdio", "majordomus.store",
                              "majordomus.store.root"]
    assert not got["yaml"] and not got["subprocess"]


def test_a_call_answers_as_the_command_line_does(repo: Repo) -> None:
    build(repo)

    async def script(session: ClientSession) -> Any:
        return await session.call_tool("knowledge_base_status", {})

    got = session_run(repo, script)
    assert got.is_error is False
    cli = json.loads(repo.mj("knowledge", "status", "--json", check=True).stdout)
    assert got.structured_content == cli


def _wire(repo: Repo, msg_id: object) -> tuple[bytes, Any]:
    """The server's raw answer line to one `knowledge_base_candidates` call, and it parsed."""
    ask = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}},
           {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call",
            "params": {"name": "knowledge_base_candidates", "arguments": {}}}]
    proc = subprocess.run([MAJORDOMUS, "mcp"], cwd=repo.root, capture_output=True,
                          input="".join(json.dumps(m) + "\n" for m in ask).encode())
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.splitlines(keepends=True)[1]
    return line, json.loads(line)


def test_the_queue_s_answer_is_json_s_encoding_of_it_byte_for_byte(repo: Repo) -> None:
    """The review queue's answer is written from pieces encoded once (`lean.rows_twice`): the line is
    the one json writes for the whole answer, its text the structured content indented; titles
    holding quotes, backslashes, non-ASCII text and `": ` (which the pieces decline) included."""
    build(repo)
    odd = [None, 'Quotes "x" and \\ backslash, é and \u2028', 'Say "a": b, then },\n  { in a title']
    for number, title in enumerate(odd):
        if title is not None:
            assert repo.hook("session-start", {"session_id": f"q{number}", "source": "startup"}).returncode == 0
            repo.mj("decision", "add", title, "--why", "a title of its own",
                    env={"MAJORDOMUS_EPISODE": f"q{number}"}, check=True)
            assert repo.hook("session-end", {"session_id": f"q{number}", "reason": "other"}).returncode == 0
        for msg_id in ("x\u00e9", 7, 2.5, None):
            line, got = _wire(repo, msg_id)
            result = got["result"]
            assert got["id"] == msg_id and result["isError"] is False
            assert result["content"] == [{"type": "text", "text": json.dumps(result["structuredContent"], indent=2,
                                                                              ensure_ascii=False)}]
            assert line == json.dumps(got, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        titles = [c["title"] for c in result["structuredContent"]["result"]]
        assert len(titles) == 2 + number and (title is None or title.split(",")[0] in "".join(titles)), titles
