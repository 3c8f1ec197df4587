"""The projections are generated from one declaration and cannot drift: the committed OpenAPI
document and MCP tool list are regenerated and compared, every capability reaches every
projection, and the slow SDK stays off every path but `majordomus mcp`."""
from __future__ import annotations

import inspect
import json
import subprocess
import sys

import jsonschema
from conftest import PROJECT, Repo

from majordomus.readers.answers import HANDLERS
from majordomus.readers.knowledge_base import CAPABILITIES
from majordomus.readers import mcp_stdio, openapi

REGENERATE = "regenerate with `majordomus openapi > docs/openapi.json` and `majordomus mcp --list > docs/mcp-tools.json`"


def test_committed_openapi_document_is_the_generated_one(repo: Repo) -> None:
    committed = (PROJECT / "docs" / "openapi.json").read_text(encoding="utf-8")
    assert json.loads(committed) == openapi.document(), REGENERATE
    assert repo.mj("openapi", check=True).stdout == committed, REGENERATE


def test_committed_mcp_tool_list_is_the_generated_one(repo: Repo) -> None:
    committed = (PROJECT / "docs" / "mcp-tools.json").read_text(encoding="utf-8")
    assert json.loads(committed) == mcp_stdio.tools(), REGENERATE
    assert repo.mj("mcp", "--list", check=True).stdout == committed, REGENERATE


def test_every_capability_reaches_every_projection(repo: Repo) -> None:
    names = [c.name for c in CAPABILITIES]
    assert names == ["knowledge_base.candidates", "knowledge_base.record", "knowledge_base.status",
                     "knowledge_base.search"]
    doc = openapi.document()
    assert sorted(op["get"]["x-capability"] for op in doc["paths"].values()) == sorted(names)
    assert [t["name"] for t in mcp_stdio.tools()] == [c.flat_name for c in CAPABILITIES] + [
        "record_decision", "ask_question", "resolve_question", "start_task", "finish_task", "dispute_record"]
    for cap in CAPABILITIES:
        jsonschema.Draft202012Validator.check_schema(cap.result)
        route = doc["paths"][openapi.route(cap)]["get"]
        assert route["responses"]["200"]["content"]["application/json"]["schema"] == cap.result
        assert [p["name"] for p in route.get("parameters", [])] == [p.name for p in cap.parameters]
        help_text = repo.mj("knowledge", cap.verb, "--help", check=True).stdout
        assert "--json" in help_text and cap.name in help_text
        for param in cap.parameters:
            assert (param.name.upper() if param.positional else f"--{param.name}") in help_text
    tool = {t["name"]: t for t in mcp_stdio.tools()}["knowledge_base_record"]
    assert tool["inputSchema"]["required"] == ["id"] and tool["inputSchema"]["additionalProperties"] is False


def test_the_mcp_sdk_stays_off_every_other_path(repo: Repo) -> None:
    """`import mcp` costs most of a second: only `majordomus mcp` may pay it. Neither may the
    parser every hook builds pull in YAML or jsonschema because of the readers."""
    code = """
import contextlib, io, sys
from pathlib import Path
from majordomus.cli.main import build_parser, main
build_parser()
heavy = sorted(m for m in ("yaml", "jsonschema", "mcp") if m in sys.modules)
with contextlib.redirect_stdout(io.StringIO()):
    for argv in (["knowledge", "status", "--json"], ["knowledge", "candidates"], ["openapi"], ["mcp", "--list"],
                 ["knowledge", "edges"]):
        assert main(argv) == 0, argv
from majordomus.readers.httpd import respond
assert respond(Path(".").resolve(), "GET", "/knowledge_base/status")[0] == 200
print(heavy, sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "mcp_types", "pydantic", "starlette")))
"""
    proc = subprocess.run([sys.executable, "-c", code], cwd=repo.root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[] []"


def test_each_declaration_has_its_handler_with_the_declared_parameters() -> None:
    assert set(HANDLERS) == {c.verb for c in CAPABILITIES}
    for cap in CAPABILITIES:
        params = list(inspect.signature(HANDLERS[cap.verb]).parameters.values())
        assert params[0].name == "ws", cap.name
        named = [p.name for p in params[1:] if p.kind is not inspect.Parameter.VAR_KEYWORD]
        takes_more = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
        declared = [p.name for p in cap.parameters]
        assert named == declared[:len(named)] and (takes_more or named == declared), cap.name
        for p in params[1:]:  # what a declaration leaves optional, the handler defaults
            if p.kind is not inspect.Parameter.VAR_KEYWORD:
                required = next(d.required for d in cap.parameters if d.name == p.name)
                assert (p.default is inspect.Parameter.empty) == required, (cap.name, p.name)


def test_describing_the_readers_imports_nothing_that_answers(repo: Repo) -> None:
    code = ("import sys; from majordomus.readers import openapi; openapi.document(); "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('majordomus.'))))")
    loaded = subprocess.run([sys.executable, "-c", code], cwd=repo.root, capture_output=True, text=True,
                            check=True).stdout.split()
    assert "majordomus.readers.knowledge_base" in loaded
    assert not {"majordomus.readers.answers", "majordomus.knowledge.agenda", "majordomus.base.git"} & set(loaded)
