"""The OpenAPI 3.1 projection: one read-only `GET` route per declared capability, its
parameters and its 200 schema taken from the declaration, its errors in one `Error` shape.
`majordomus openapi` prints this document; `majordomus serve` serves it at `/openapi.json` and
routes requests with `match` — so the document and the server cannot disagree."""
from __future__ import annotations

from typing import Any

from majordomus import __version__
from majordomus.base.errors import NOT_INITIALISED, REFUSED, UNKNOWN, USAGE
from majordomus.readers.knowledge_base import CAPABILITIES, MODULE, Capability

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["error", "message"],
    "properties": {
        "error": {"enum": ["unknown_id", "refused", "unknown_route", "method_not_allowed",
                           "misdirected", "unavailable", "internal"]},
        "message": {"type": "string", "description": "what was refused, why, and the fix"}}}

# exit code of a FatalError -> (HTTP status, error kind)
STATUS_OF = {UNKNOWN: (404, "unknown_id"), REFUSED: (400, "refused"), USAGE: (400, "refused"),
             NOT_INITIALISED: (503, "unavailable")}
INTERNAL = (500, "internal")


def route(cap: Capability) -> str:
    """`/knowledge_base/record/{id}`: the dotted name as folders, positional parameters after."""
    return "/" + cap.name.replace(".", "/") + "".join(f"/{{{p.name}}}" for p in cap.parameters if p.in_path)


def _error(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}


def operation(cap: Capability) -> dict[str, Any]:
    params = [{"name": p.name, "in": "path" if p.in_path else "query",
               "required": p.required, "description": p.summary, "schema": p.schema}
              for p in cap.parameters]
    responses: dict[str, Any] = {
        "200": {"description": cap.summary, "content": {"application/json": {"schema": cap.result}}},
        "400": _error("a refused request: a bad id pattern or an unknown parameter"),
    }
    if any(p.in_path for p in cap.parameters):
        responses["404"] = _error("no record with this id in the knowledge store")
    responses["421"] = _error("the Host header names no host this server answers for (only localhost, "
                              "127.0.0.1, ::1 and the configured ones: a web page cannot read the store "
                              "through DNS rebinding)")
    responses["500"] = _error("an internal error; the message names it")
    responses["503"] = _error("the repository cannot be read as set up (not initialised, or its policy "
                              "or sources.yaml unreadable); the message names the fix")
    op: dict[str, Any] = {"operationId": cap.flat_name, "summary": cap.summary,
                          "description": cap.description, "tags": [MODULE], "responses": responses,
                          "x-capability": cap.name}
    if params:
        op["parameters"] = params
    return op


def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document of every declared capability."""
    return {
        "openapi": "3.1.0",
        "info": {"title": "majordomus knowledge base (read-only)", "version": __version__,
                 "description": "The reader capabilities of the knowledge_base module, generated from "
                                "their declarations in pipeline/majordomus/readers/knowledge_base.py. Served by "
                                "`majordomus serve`; the same capabilities are MCP tools (`majordomus mcp`) "
                                "and commands (`majordomus knowledge ...`)."},
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "tags": [{"name": MODULE, "description": "reads .ai/repo/knowledge/, the ledger and git"}],
        "paths": {route(cap): {"get": operation(cap)} for cap in CAPABILITIES},
        "components": {"schemas": {"Error": ERROR_SCHEMA}},
    }


def match(path: str) -> tuple[Capability, dict[str, str]] | None:
    """The capability whose route `path` matches, with its path parameters (decoded, unchecked:
    the handler checks them, so `..%2F` arrives as `../` and is refused there)."""
    from urllib.parse import unquote

    parts = path.strip("/").split("/")
    for cap in CAPABILITIES:
        template = route(cap).strip("/").split("/")
        if len(template) != len(parts):
            continue
        found: dict[str, str] = {}
        for want, got in zip(template, parts):
            if want.startswith("{") and want.endswith("}"):
                found[want[1:-1]] = unquote(got)
            elif want != got:
                break
        else:
            return cap, found
    return None
