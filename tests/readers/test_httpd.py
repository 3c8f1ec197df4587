"""The HTTP projection: `majordomus serve` in a subprocess on a free port of 127.0.0.1, bounded
requests, and every response validated against the OpenAPI document the server itself serves."""
from __future__ import annotations

import json
import re
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest
from conftest import MAJORDOMUS, Repo
from kbstore import Store, build

TIMEOUT = 10


@pytest.fixture
def served(repo: Repo) -> Iterator[tuple[Store, str]]:
    store = build(repo)
    proc = subprocess.Popen([MAJORDOMUS, "serve", "--port", "0"], cwd=repo.root, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline() if proc.stderr else ""
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", first)
        assert found, f"no address on the first stderr line: {first!r}"
        yield store, found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)


def get(base: str, path: str, method: str = "GET") -> tuple[int, Any]:
    request = urllib.request.Request(base + path, method=method)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            assert response.headers["Content-Type"].startswith("application/json")
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        assert exc.headers["Content-Type"].startswith("application/json")
        return exc.code, json.loads(exc.read())


def check(doc: dict[str, Any], route: str, status: int, body: Any) -> None:
    """`body` is valid against the response schema `doc` declares for `route` and `status`."""
    response = doc["paths"][route]["get"]["responses"][str(status)]
    schema = response["content"]["application/json"]["schema"]
    rooted = {"allOf": [schema], "components": doc["components"]}  # `#/components/...` resolves here
    jsonschema.Draft202012Validator(rooted).validate(body)


def test_every_route_answers_what_the_document_declares(served: tuple[Store, str]) -> None:
    store, base = served
    status, doc = get(base, "/openapi.json")
    assert status == 200 and doc["openapi"] == "3.1.0"
    from majordomus.readers.openapi import document

    assert doc == document()
    for route, item in doc["paths"].items():
        jsonschema.Draft202012Validator.check_schema(item["get"]["responses"]["200"]["content"]
                                                     ["application/json"]["schema"])
    status, cands = get(base, "/knowledge_base/candidates")
    assert status == 200
    check(doc, "/knowledge_base/candidates", 200, cands)
    assert sorted(c["id"] for c in cands) == sorted([store.decision, store.lesson])
    status, st = get(base, "/knowledge_base/status")
    assert status == 200 and st["records"] == 5
    check(doc, "/knowledge_base/status", 200, st)
    for rid in ("c-tabs", store.decision, store.lesson, "old-rule"):
        status, rec = get(base, f"/knowledge_base/record/{rid}")
        assert status == 200 and rec["id"] == rid
        check(doc, "/knowledge_base/record/{id}", 200, rec)
    # the same answers as the command line's --json
    cli = json.loads(store.repo.mj("knowledge", "record", "c-tabs", "--json", check=True).stdout)
    assert get(base, "/knowledge_base/record/c-tabs")[1] == cli


@pytest.mark.parametrize("path, status, error", [
    ("/knowledge_base/record/nope", 404, "unknown_id"),
    ("/knowledge_base/record/..%2F..%2Fpolicy.yaml", 400, "refused"),
    ("/knowledge_base/record/..", 400, "refused"),
    ("/knowledge_base/record/-x", 400, "refused"),
    ("/knowledge_base/record/README", 404, "unknown_id"),
    ("/knowledge_base/status?verbose=1", 400, "refused"),
    ("/knowledge_base/record/c-tabs?id=x", 400, "refused"),
])
def test_bad_requests_get_the_declared_error(served: tuple[Store, str], path: str, status: int,
                                             error: str) -> None:
    _, base = served
    doc = get(base, "/openapi.json")[1]
    got, body = get(base, path)
    assert (got, body["error"]) == (status, error), body
    route = "/knowledge_base/record/{id}" if "/record/" in path else "/knowledge_base/status"
    check(doc, route, status, body)
    assert "knowledge_on_end" not in json.dumps(body)  # nothing of .ai/repo/policy.yaml is read back


def test_unknown_routes_and_writes_are_refused(served: tuple[Store, str]) -> None:
    _, base = served
    doc = get(base, "/openapi.json")[1]
    error = {"allOf": [{"$ref": "#/components/schemas/Error"}], "components": doc["components"]}
    for path in ("/knowledge_base/unknown", "/knowledge_base/record", "/knowledge_base/record/a/b",
                 "/../../etc/passwd"):  # `/` is the cockpit's catalogue (tests/readers/test_cockpit.py)
        status, body = get(base, path)
        assert status == 404 and body["error"] == "unknown_route", path
        jsonschema.Draft202012Validator(error).validate(body)
    for method in ("POST", "PUT", "DELETE"):
        status, body = get(base, "/knowledge_base/status", method=method)
        assert status == 405 and body["error"] == "method_not_allowed"
        jsonschema.Draft202012Validator(error).validate(body)


def test_serve_refuses_an_uninitialised_repository(bare_repo: Repo) -> None:
    proc = bare_repo.mj("serve", "--port", "0")
    assert proc.returncode == 5 and "majordomus init" in proc.stderr


def test_serve_refuses_a_bad_port(repo: Repo) -> None:
    proc = repo.mj("serve", "--port", "70000")
    assert proc.returncode == 2 and "'70000' is not a port" in proc.stderr


def test_a_store_that_cannot_be_read_is_503(served: tuple[Store, str]) -> None:
    store, base = served
    doc = get(base, "/openapi.json")[1]
    (store.repo.root / ".ai/repo/knowledge/sources.yaml").unlink()
    status, body = get(base, "/knowledge_base/status")
    assert (status, body["error"]) == (503, "unavailable") and "majordomus init" in body["message"]
    check(doc, "/knowledge_base/status", 503, body)
