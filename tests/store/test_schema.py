"""The runtime reads only the generated files: record validation (pipeline.schema), the policy
(pipeline.policy) and the reference vocabulary (pipeline.allowlist) agree with the proto."""
from __future__ import annotations

import datetime
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import PROJECT, Repo

from majordomus.store import allowlist, policy, records, schema
from majordomus.base import yamlio

SKELETON_POLICY = PROJECT / ".ai-skeleton" / "repo" / "policy.yaml"
# DESIGN.md §2, as written there.
DESIGN_KEYS = {"session.knowledge_on_end", "session.knowledge_on_compact", "session.checkpoint_on_compact",
               "session.briefing_budget_lines", "session.freshness.stale_minutes", "session.remind_after_commits",
               "session.orphan_after_minutes",
               "knowledge.candidates_max_files", "knowledge.candidate_max_age_minutes", "ledger.retention_lines"}


def record(**changes: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "id": "e1-0123456789ab", "kind": "knowledge/v1", "class": "convention", "status": "candidate",
        "epistemics": "decided", "title": "Tabs are refused in the parser", "date": "2026-01-02",
        "provenance": {"origin": "extracted", "derived_from": ["session:e1", "decision:t1", "commit:abc123"]},
        "relations": [{"type": "relates_to", "target": "file:.ai/repo/adrs/0001 tabs.md"}]}
    meta.update(changes)
    return meta


def test_the_skeleton_policy_agrees_with_the_proto() -> None:
    from jsonschema import Draft202012Validator

    tree = yamlio.load(SKELETON_POLICY.read_text(encoding="utf-8"), str(SKELETON_POLICY))
    declared = allowlist.policy_keys()
    assert set(policy.flatten(tree)) == set(declared) == DESIGN_KEYS
    loaded = policy.load(SKELETON_POLICY)
    assert loaded.values == {key: spec["default"] for key, spec in declared.items()}
    assert loaded.values == policy.defaults().values
    policy_schema = json.loads((PROJECT / "schemas" / "policy.v1.schema.json").read_text())
    Draft202012Validator.check_schema(policy_schema)
    assert list(Draft202012Validator(policy_schema).iter_errors(tree)) == []
    assert {k: s["type"] for k, s in declared.items() if s["type"] == "switch"} == {
        "session.knowledge_on_end": "switch", "session.knowledge_on_compact": "switch",
        "session.checkpoint_on_compact": "switch"}


def test_the_record_constants_agree_with_the_proto() -> None:
    assert allowlist.load()["kind"] == records.KIND
    assert allowlist.enum("class") == records.CLASSES
    assert allowlist.enum("status") == records.STATUSES
    assert allowlist.enum("epistemics") == records.EPISTEMICS
    assert allowlist.enum("provenance.origin") == records.ORIGINS
    assert set(records.RELATION_TYPES) <= set(allowlist.enum("relations.type"))
    assert allowlist.refused_prefixes() == ("question",) and allowlist.refused_targets() == ("none",)
    assert allowlist.reference_prefixes() == ("decision", "session", "commit", "issue", "file", "test", "task")


def test_a_derived_candidate_is_valid_knowledge_v1(episode: Repo) -> None:
    episode.mj("start", "a task", "--scope", "lib", check=True)
    episode.mj("decision", "add", 'Tabs are "refused" in the parser', "--why", "two encodings", check=True)
    episode.mj("finish", "--outcome", "blocked", "--reason", "the lexer is shared", check=True)
    end = episode.hook("session-end", {"session_id": "e1", "reason": "other"})
    assert end.returncode == 0, end.stderr
    found = episode.candidates()
    assert len(found) == 2
    for path in found:
        meta = records.load(path).meta
        assert schema.record_problems(meta) == [], path.read_text()


def test_a_valid_record_has_no_problems_and_the_validator_is_built_once() -> None:
    assert schema.record_problems(record()) == []
    assert schema.record_problems(record(superseded_by="e2-0123456789ab", status="superseded",
                                         description="longer")) == []
    # An unquoted YAML date is the same day the template writes as a string.
    assert schema.record_problems(record(date=datetime.date(2026, 1, 2))) == []
    assert schema.validator() is schema.validator()


@pytest.mark.parametrize(("change", "problem"), [
    ({"promoted": {"by": "e2"}}, ("promoted", "unknown key promoted: remove it")),
    ({"class": "rumour"}, ("class", "'rumour' is not one of fact|convention|constraint|memory|lesson")),
    ({"kind": "knowledge/v2"}, ("kind", "'knowledge/v2' must be 'knowledge/v1'")),
    ({"date": "2026-02-30"}, ("date", "'2026-02-30' is not a valid date")),
    ({"date": "2026-01-02\n"}, ("date", "'2026-01-02\\n' does not have the form")),
    ({"id": "../escape"}, ("id", "'../escape' does not have the form")),
    ({"title": ""}, ("title", "'' is too short: at least 1 character")),
    ({"provenance": {"origin": "extracted", "derived_from": ["session:e1", "question:q1"]}},
     ("provenance.derived_from[1]", "'question:q1': question: is not a reference")),
    ({"provenance": {"origin": "extracted", "derived_from": ["decision:none"]}},
     ("provenance.derived_from[0]", "'decision:none' refers to nothing")),
    ({"provenance": {"origin": "extracted", "derived_from": []}},
     ("provenance.derived_from", "[] is too short: at least 1 item")),
    ({"provenance": {"origin": "guessed", "derived_from": ["session:e1"]}},
     ("provenance.origin", "'guessed' is not one of extracted|authored")),
    ({"relations": [{"type": "relates_to", "target": "adr:0001"}]},
     ("relations[0].target", "'adr:0001': unknown prefix 'adr'")),
    ({"relations": [{"type": "cites", "target": "file:a"}]}, ("relations[0].type", "'cites' is not one of")),
])
def test_each_problem_names_its_field(change: dict[str, Any], problem: tuple[str, str]) -> None:
    found = schema.record_problems(record(**change))
    assert [p for p in found if p[0] == problem[0] and p[1].startswith(problem[1])], found


def test_a_missing_key_is_named() -> None:
    meta = record()
    del meta["provenance"]["origin"], meta["title"]
    assert schema.record_problems(meta) == [
        ("provenance.origin", "missing: every knowledge/v1 record carries it"),
        ("title", "missing: every knowledge/v1 record carries it")]


def test_an_unknown_policy_key_names_itself_the_file_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("session:\n  knowledge_on_ned: off\n  briefing_budget_lines: 7\n")
    loaded = policy.load(path)
    [(key, message)] = loaded.problems
    assert key == "session.knowledge_on_ned"
    assert message.startswith(f"{path}: unknown policy key 'session.knowledge_on_ned': "
                              "did you mean session.knowledge_on_end? rename or remove it")
    assert "schemas/knowledge.v1.proto, message Policy" in message
    # the typo costs that key only: the others stand, the misspelt one keeps its default
    assert loaded["session.briefing_budget_lines"] == 7 and loaded.on("session.knowledge_on_end")
    assert loaded.summary(".ai/repo/policy.yaml") == (
        ".ai/repo/policy.yaml has 1 bad key (session.knowledge_on_ned): its default stands in; "
        "`majordomus doctor` names the fix")


@pytest.mark.parametrize(("text", "expected"), [
    ("session:\n  briefing_budget_lines: forty\n",
     "session.briefing_budget_lines is 'forty', not a whole number >= 0: set it to 40 (the default)"),
    ("session:\n  briefing_budget_lines: -1\n", "session.briefing_budget_lines is -1, not a whole number >= 0"),
    ("session:\n  knowledge_on_end: maybe\n",
     "session.knowledge_on_end is 'maybe', not on|off: set it to \"on\" (the default)"),
])
def test_a_mistyped_policy_value_names_key_file_and_fix(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text(text)
    loaded = policy.load(path)
    [(key, message)] = loaded.problems
    assert message.startswith(f"{path}: {expected}")
    assert loaded[key] == policy.defaults()[key]  # the default stands in


@pytest.mark.parametrize("text", ["session:\n  knowledge_on_end: \"off\"\n   bad: [\n", "- a list\n", "just words\n"])
def test_a_policy_that_is_not_yaml_keys_falls_back_whole_and_names_the_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "repo" / "policy.yaml"
    path.parent.mkdir()
    path.write_text(text)
    loaded = policy.load(path)
    assert loaded.values == policy.defaults().values and loaded.declared == frozenset()
    [(key, message)] = loaded.problems
    assert key == "" and "majordomus init" not in message  # init lays only what is missing
    assert "git checkout -- .ai/repo/policy.yaml" in message
    summary = loaded.summary(".ai/repo/policy.yaml")
    assert summary is not None and summary.endswith(": every policy key has its default; "
                                                    "`majordomus doctor` names the fix")
    if "bad" in text:
        assert summary.startswith(".ai/repo/policy.yaml:3: ") and "not valid YAML" in summary


def test_an_unreadable_policy_falls_back_whole(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.symlink_to("/dev/zero")
    loaded = policy.load(path)
    assert loaded.values == policy.defaults().values
    [(key, message)] = loaded.problems
    assert key == "" and "symbolic link" in message and "remove it, then `majordomus init`" in message


def test_a_bare_yaml_switch_reads_as_on_or_off(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("session:\n  knowledge_on_end: off\n  knowledge_on_compact: on\n")
    loaded = policy.load(path)
    assert loaded["session.knowledge_on_end"] == "off" and loaded.on("session.knowledge_on_compact")
    assert policy.DECLARED == policy.declared()


def test_loading_the_policy_imports_neither_jsonschema_nor_the_toolchain() -> None:
    code = ("import sys; from pathlib import Path; from majordomus.store import policy; "
            f"policy.load(Path({str(SKELETON_POLICY)!r})); "
            "print(sorted(m for m in ('jsonschema', 'google', 'grpc_tools', 'doit') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PROJECT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
