"""Free text is unescaped once when read and escaped once when composed: any text survives
ledger → record → parsed front matter and body, and the id is over the text a person wrote.

The property runs under a settings profile: `ci` (the default) is derandomized, so every run
tries the same examples; `MJ_HYPOTHESIS_PROFILE=long` tries many more, at random, by hand:

    MJ_HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest tests/test_derive_roundtrip.py
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from conftest import Repo, make_repo
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from majordomus.derive import table as derive
from majordomus.derive.rows import _after_first_line
from majordomus.derive.text import roots, scrub
from majordomus.store import records
from majordomus.base import yamlio
from majordomus.evidence.commits import first_line
from majordomus.base.transcript import marker_in
from majordomus.store.workspace import Workspace

settings.register_profile(
    "ci", derandomize=True, max_examples=150, deadline=None, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
settings.register_profile(
    "long", max_examples=int(os.environ.get("MJ_HYPOTHESIS_EXAMPLES", "5000")), deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
PROFILE = settings.get_profile(os.environ.get("MJ_HYPOTHESIS_PROFILE", "ci"))

NASTY = ['"', "'", ":", ": ", "#", " #", "- ", "-", "---", "\n---\n", "yes", "no", "null", "~", "on",
         "true", "1e3", "0x1F", "\n", "\r\n", "\r", "\t", "\x00", "\x01", "\x7f", "\x85", "\u2028",
         "\ufeff", "é", "日本語", "🙂", "\\", "\\n", "{", "[", "&a", "*a", "!tag", "%", "@", "`", "|", ">",
         "Human:", "<tool_use>", "  ", "{{ x }}", "{% if %}", "</tool_result>"]
TEXT = st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=12)), max_size=8).map("".join)


def write_ledger(ws: Workspace, lines: list[tuple[str, dict[str, object]]]) -> None:
    ws.ledger.path.unlink(missing_ok=True)
    ws.ledger.append("session.opened", "e1", ts="2026-03-04T05:06:07Z", episode="e1", source="startup",
                     branch="main", head=None)
    for number, (event, data) in enumerate(lines):
        ws.ledger.append(event, "e1", ts=f"2026-03-04T05:07:{number:02d}Z", **data)


def rendered(draft: derive.Draft) -> tuple[dict[str, object], str]:
    """The record as a reader parses it: front matter through yamlio.load, and the body."""
    text = derive.render(draft).decode("utf-8")
    parts = yamlio.split_front_matter(text)
    assert parts is not None
    meta = yamlio.load(parts[0], draft.id)
    assert isinstance(meta, dict)
    assert records.parse(text, draft.id) == (meta, parts[1])
    return meta, parts[1]


@pytest.fixture
def ws(repo: Repo) -> Workspace:
    return Workspace(repo.root)


@PROFILE
@given(text=TEXT, why=TEXT)
def test_any_decision_round_trips(ws: Workspace, text: str, why: str) -> None:
    write_ledger(ws, [("decision.recorded", {"task": "t-1", "text": text, "why": why or None})])
    plan = derive.plan(ws, "e1", ws.candidates)
    if not text.strip():
        assert plan.drafts == [] and plan.skipped == []
        return
    if marker_in(text) or marker_in(why):
        assert plan.drafts == [] and len(plan.skipped) == 1
        return
    (draft,) = plan.drafts
    meta, body = rendered(draft)
    here = roots(ws.root)  # the author's paths are scrubbed from what is tracked; the id is over the text
    assert meta["title"] == scrub(first_line(text), here)  # one assertion in one line; the whole text is the body
    assert body == scrub(text, here) + (f"\n\nWhy: {scrub(why, here)}" if why else "") \
        + "\n\nEvidence: decision.recorded at 2026-03-04T05:07:00Z.\n"
    assert meta["id"] == draft.id == derive.record_id("e1", "decision.recorded", text)
    assert meta["provenance"] == {"origin": "extracted", "derived_from": ["session:e1", "decision:t-1"]}
    assert (meta["class"], meta["epistemics"], meta["date"]) == ("convention", "decided", "2026-03-04")


@PROFILE
@given(question=TEXT, answer=TEXT, reason=TEXT, command=TEXT)
def test_any_question_reason_and_command_round_trip(ws: Workspace, question: str, answer: str,
                                                     reason: str, command: str) -> None:
    write_ledger(ws, [
        ("question.resolved", {"question": "q-1", "task": "t-1", "text": question, "answer": answer}),
        ("task.started", {"task": "t-2", "title": "lessons", "scope": None}),
        ("task.finished", {"task": "t-2", "title": "lessons", "outcome": "blocked", "reason": reason}),
        ("task.started", {"task": "t-3", "title": "proofs", "scope": None}),
        ("task.finished", {"task": "t-3", "title": "proofs", "outcome": "completed", "verify": command}),
    ])
    plan = derive.plan(ws, "e1", ws.candidates)
    by_class: dict[str, list[tuple[dict[str, object], str]]] = {}
    for draft in plan.drafts:
        meta, body = rendered(draft)
        assert meta["id"] == draft.id
        by_class.setdefault(str(meta["class"]), []).append((meta, body))
    expected_skips = sum(bool(x) for x in (
        answer.strip() and (marker_in(question) or marker_in(answer)),
        first_line(reason) and marker_in(reason),
        command.strip() and marker_in(command)))
    assert len(plan.skipped) == expected_skips
    facts = {str(m["provenance"]["derived_from"][1]): (m, b) for m, b in by_class.get("fact", [])}  # type: ignore[index]
    here = roots(ws.root)
    if answer.strip() and not (marker_in(question) or marker_in(answer)):
        meta, body = facts["task:t-1"]
        assert meta["title"] == scrub(first_line(answer), here)  # the answer stands alone
        assert body == (f"{scrub(answer, here)}\n\nQuestion: {scrub(question, here)}" if question.strip()
                        else scrub(answer, here)) + "\n\nEvidence: question.resolved at 2026-03-04T05:07:00Z.\n"
        assert meta["id"] == derive.record_id("e1", "question.resolved", question, answer)
    # a passing verification of a task with no scope and no commit is evidence, not a record
    assert "task:t-3" not in facts
    lessons = by_class.get("lesson", [])
    if first_line(reason) and not marker_in(reason):
        ((meta, body),) = lessons
        assert meta["title"] == f"lessons: {scrub(first_line(reason), here)}"
        rest = scrub(_after_first_line(reason), here)
        assert body == (f"lessons: {scrub(first_line(reason), here)}\n\nTask lessons finished blocked."
                        + (f"\n\n{rest}" if rest else "") + "\n\nEvidence: task.finished at 2026-03-04T05:07:02Z.\n")
    else:
        assert lessons == []


NASTY_CLI = [
    'he said "no": # not a comment',
    "- leading dash: yes",
    "yes",
    "null",
    "line one\nline two\n---\nthree",
    "tab\there, é, 日本語, 🙂, \x01 and \x7f",
    "trailing newline\n",
    "{{ jinja }} {% raw %}",
]


@pytest.mark.parametrize("text", NASTY_CLI)
def test_nasty_text_through_the_command(episode: Repo, text: str) -> None:
    episode.mj("start", "t", check=True)
    episode.mj("decision", "add", text, "--why", 'a "why": #2', check=True)
    episode.mj("knowledge", "derive", check=True)
    (path,) = episode.candidates()
    record = records.load(path)
    assert record.meta["title"] == first_line(text)
    ts = episode.events("decision.recorded")[-1]["ts"]
    assert record.body == f'{text}\n\nWhy: a "why": #2\n\nEvidence: decision.recorded at {ts}.\n'
    assert record.id == path.stem == derive.record_id("e1", "decision.recorded", text)


def _run(repo: Repo, env: dict[str, str]) -> dict[str, bytes]:
    repo.mj("knowledge", "derive", "--episode", "e1", env=env, check=True)
    return {p.name: p.read_bytes() for p in repo.candidates()}


def test_same_ledger_same_git_same_bytes_in_two_repos_and_two_locales(tmp_path: Path) -> None:
    one = make_repo(tmp_path / "one")
    two = make_repo(tmp_path / "two")
    for repo in (one, two):
        repo.mj("session", "start", "--id", "e1", check=True)
        repo.commit("adr", {".ai/repo/adrs/0001-x.md": "# x\n"})
    assert one.git("rev-parse", "HEAD") == two.git("rev-parse", "HEAD")
    one.mj("start", "tâche", check=True)
    one.mj("decision", "add", 'Dates are "UTC": always', "--why", "Zeitzone ≠ locale", check=True)
    qid = one.mj("question", "add", "Quelle heure?", check=True).stdout.strip()
    one.mj("question", "resolve", qid, "2026-01-02T03:04:05Z", check=True)
    one.mj("finish", "--outcome", "blocked", "--reason", "première ligne\nseconde", check=True)
    # The second repository gets the first one's evidence: its ledger and its task notes.
    local = ".ai/local"
    shutil.copy(one.root / local / "ledger.jsonl", two.root / local / "ledger.jsonl")
    shutil.copytree(one.root / local / "state/completed", two.root / local / "state/completed",
                    dirs_exist_ok=True)
    first = _run(one, {"TZ": "UTC", "LANG": "C", "LC_ALL": "C"})
    second = _run(two, {"TZ": "Pacific/Kiritimati", "LANG": "tr_TR.UTF-8", "LC_ALL": "tr_TR.UTF-8"})
    third = _run(two, {"TZ": "America/St_Johns", "LANG": "de_DE.ISO-8859-1", "LC_ALL": "de_DE.ISO-8859-1"})
    assert len(first) == 3
    assert first == second == third
    assert any(b"commit:" in data and b"relates_to" in data for data in first.values())
