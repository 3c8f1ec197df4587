"""`knowledge:<id>`: one decision, in the proto, that the schema, the integrity check and the graph
all follow. A relation's target may name another record of the store (`knowledge:<id>`, resolved
against the store's ids); provenance's `derived_from` may not (it names the ledger objects and
commits a record came from, seed 001), and the graph draws such an entry as refused, never as an
edge between records."""
from __future__ import annotations

import json

from conftest import PROJECT, Repo

from majordomus.store import allowlist, records
from majordomus.store.schema import record_problems

KB = ".ai/repo/knowledge"

RECORD = """---
id: {id}
kind: knowledge/v1
class: constraint
status: verified
epistemics: decided
title: "{title}"
date: "2026-01-02"
provenance:
  origin: authored
  derived_from:
{derived}
{relations}---
{title}

# Evidence
by hand
"""


def _write(repo: Repo, rid: str, derived: list[str], relations: list[str]) -> None:
    text = RECORD.format(id=rid, title=f"Record {rid}",
                         derived="\n".join(f'    - "{r}"' for r in derived),
                         relations="".join(["relations:\n"] * bool(relations) + [
                             f'  - type: relates_to\n    target: "{t}"\n' for t in relations]))
    path = repo.root / KB / "curated" / f"{rid}.md"
    path.write_text(text, encoding="utf-8")


def _session(repo: Repo) -> None:
    (repo.root / ".ai/repo/sessions/e1.md").write_text("---\nid: e1\n---\n", encoding="utf-8")


def test_the_proto_decides_it_and_the_generated_files_say_it() -> None:
    proto = (PROJECT / "schemas/knowledge.v1.proto").read_text(encoding="utf-8")
    assert 'more_prefixes: "knowledge"' in proto
    assert "knowledge" not in allowlist.reference_prefixes()
    assert allowlist.field_prefixes("relations.target") == ("knowledge",)
    schema = json.loads((PROJECT / "schemas/knowledge.v1.schema.json").read_text(encoding="utf-8"))
    target = schema["properties"]["relations"]["items"]["properties"]["target"]
    assert target["$ref"] == "#/$defs/reference_knowledge"
    derived = schema["properties"]["provenance"]["properties"]["derived_from"]["items"]
    assert derived["$ref"] == "#/$defs/reference"


def test_schema_admits_a_relation_and_refuses_a_derived_from() -> None:
    meta = {"id": "a", "kind": "knowledge/v1", "class": "fact", "status": "verified", "epistemics": "observed",
            "title": "t", "date": "2026-01-02",
            "provenance": {"origin": "authored", "derived_from": ["session:e1"]},
            "relations": [{"type": "relates_to", "target": "knowledge:b"}]}
    assert record_problems(meta) == []
    meta["provenance"]["derived_from"] = ["knowledge:b"]
    ((where, message),) = record_problems(meta)
    assert where == "provenance.derived_from[0]"
    assert "admitted only as a relation's target" in message
    assert records.reference_problem("knowledge:b", "relations.target") is None
    assert records.reference_problem("knowledge:b") is not None
    assert records.reference_problem("question:q-1", "relations.target") is not None  # still refused there


def test_check_and_edges_agree(repo: Repo) -> None:
    _session(repo)
    _write(repo, "c-a", ["session:e1"], ["knowledge:c-b"])  # admitted, resolves
    _write(repo, "c-b", ["session:e1"], ["knowledge:c-ghost"])  # admitted, names no record
    _write(repo, "c-c", ["session:e1", "knowledge:c-a"], [])  # refused in derived_from

    check = json.loads(repo.mj("knowledge", "check", "--json").stdout)
    found = {(f["file"].rsplit("/", 1)[-1], f["field"]): f["what"] for f in check["findings"]}
    assert set(found) == {("c-b.md", "relations[0].target"), ("c-c.md", "provenance.derived_from[1]")}
    assert "knowledge:c-ghost does not resolve" in found[("c-b.md", "relations[0].target")]
    assert "admitted only as a relation's target" in found[("c-c.md", "provenance.derived_from[1]")]

    graph = json.loads(repo.mj("knowledge", "edges", "--json", check=True).stdout)
    edges = {(e["from"], e["type"], e["to"], e["target"]) for e in graph["edges"]}
    assert ("knowledge:c-a", "relates_to", "knowledge:c-b", "record") in edges
    assert ("knowledge:c-b", "relates_to", "knowledge:c-ghost", "dangling") in edges
    assert ("knowledge:c-c", "derived_from", "knowledge:c-a", "refused") in edges
    assert not any(e[2] == "knowledge:c-a" and e[0] == "knowledge:c-c" and e[3] == "record" for e in edges)
    human = repo.mj("knowledge", "edges", check=True)
    assert "knowledge:c-c  derived_from  knowledge:c-a  (refused)" in human.stdout
    assert "1 refused edge(s)" in human.stderr

    _write(repo, "c-c", ["session:e1"], ["knowledge:c-a"])  # the fix the finding names
    _write(repo, "c-b", ["session:e1"], ["knowledge:c-a"])
    check = json.loads(repo.mj("knowledge", "check", "--json").stdout)
    assert check["findings"] == []
