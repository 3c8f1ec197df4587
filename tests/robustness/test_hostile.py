"""Hostile input: each is refused or skipped with one line naming what and where; nothing outside
`.ai/` and `.claude/` is written; no traceback reaches the user; hooks still exit 0."""
from __future__ import annotations

import itertools
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import SCALE, Repo, make_repo

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12)
PAYLOADS = st.one_of(
    st.binary(max_size=200),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"session_id": JSON_VALUES | st.text(max_size=60)},
                          optional={"source": JSON_VALUES, "reason": JSON_VALUES, "cwd": JSON_VALUES,
                                    "trigger": JSON_VALUES}).map(lambda d: json.dumps(d).encode()),
    st.sampled_from([b'{"session_id": "../../x"}', b'{"session_id": "/etc/passwd"}',
                     b'{"session_id": "a\\u0000b"}', b'{"session_id": "..", "cwd": "/"}',
                     b'{"session_id": "ok", "cwd": "/nonexistent/dir"}', b"\x00" * 64,
                     b'{"session_id": "' + b"y" * 5000 + b'"}', b"[" * 100000]),
)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Repo:
    return make_repo(tmp_path_factory.mktemp("hostile") / "repo")


@settings(max_examples=40 * SCALE)
@given(raw=PAYLOADS, hook=st.sampled_from(["session-start", "session-end", "pre-compact"]))
def test_hook_stdin(shared: Repo, raw: bytes, hook: str) -> None:
    proc = shared.hook(hook, None, raw=raw)
    assert proc.returncode == 0
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err
    assert err.count("\n") <= 1, err
    assert shared.written_outside() == []
    for line in shared.ledger():  # every line the hooks wrote is whole and registered
        assert isinstance(line["event"], str)


LEDGER_JUNK = st.one_of(
    st.binary(max_size=80).map(lambda b: b.replace(b"\n", b" ")),
    JSON_VALUES.map(lambda v: json.dumps(v).encode()),
    st.fixed_dictionaries({"ts": JSON_VALUES, "event": st.sampled_from(
        ["decision.recorded", "question.resolved", "task.finished", "no.such.event", "session.closed"]) | JSON_VALUES,
        "session": st.just("e1") | JSON_VALUES}, optional={"text": JSON_VALUES, "task": JSON_VALUES,
        "answer": JSON_VALUES, "outcome": JSON_VALUES, "verify": JSON_VALUES, "why": JSON_VALUES})
    .map(lambda d: json.dumps(d).encode()),
)


@pytest.fixture(scope="module")
def one_decision(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository whose open episode e1 recorded one good decision: each example gets a copy."""
    repo = make_repo(tmp_path_factory.mktemp("ledger") / "repo")
    repo.hook("session-start", {"session_id": "e1"})
    repo.mj("decision", "add", "the one good decision", check=True)
    return repo.root


@settings(max_examples=12 * SCALE)
@given(junk=st.lists(LEDGER_JUNK, min_size=1, max_size=6))
def test_ledger_lines(tmp_path_factory: pytest.TempPathFactory, one_decision: Path, junk: list[bytes]) -> None:
    repo = Repo(tmp_path_factory.mktemp("ledger") / "repo")
    shutil.copytree(one_decision, repo.root, symlinks=True)
    with open(repo.root / ".ai/local/ledger.jsonl", "ab") as handle:
        handle.write(b"\n".join(junk) + b"\n")
    proc = repo.mj("knowledge", "derive", "--episode", "e1")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    titles = [p.read_text(encoding="utf-8") for p in repo.candidates()]
    assert any('title: "the one good decision"' in t for t in titles)
    for path in repo.candidates():
        assert path.read_text(encoding="utf-8").count("\n---\n") == 1
    history = repo.mj("history", "--json")
    assert history.returncode == 0 and "Traceback" not in history.stderr
    assert repo.written_outside() == []


POLICY_TEXTS = st.one_of(
    st.dictionaries(st.sampled_from(["session", "knowledge", "ledger", "surprise"]),
                    st.dictionaries(st.text(min_size=1, max_size=12), JSON_VALUES, max_size=3), max_size=3)
    .map(lambda d: json.dumps(d)),
    st.text(max_size=120),
    st.sampled_from(["session: [1, 2", "!!python/object:os.system {}", "session:\n  knowledge_on_end: maybe\n",
                     "ledger:\n  retention_lines: -5\n", "a: 1\na: 2\n", "session:\n  briefing_budget_lines: yes\n"]),
)


EXAMPLE = itertools.count()


@settings(max_examples=30 * SCALE)
@given(text=POLICY_TEXTS)
def test_policy_files(shared: Repo, text: str) -> None:
    policy = shared.root / ".ai/repo/policy.yaml"
    original = policy.read_text()
    episode = f"e-policy-{next(EXAMPLE)}"  # each example opens an episode of its own, never a resume
    try:
        policy.write_text(text, encoding="utf-8")
        proc = shared.mj("knowledge", "derive", "--episode", episode, "--dry-run")
        assert proc.returncode in (0, 3), proc.stderr  # a bad policy costs its bad keys, never the command
        assert "Traceback" not in proc.stderr
        warned = [line for line in proc.stderr.splitlines() if line.startswith("majordomus: warning: ")]
        assert len(warned) <= 1 and all("policy" in line for line in warned), proc.stderr
        hook = shared.hook("session-start", {"session_id": episode})
        assert hook.returncode == 0 and b"Traceback" not in hook.stderr
    finally:
        policy.write_text(original)


@pytest.mark.parametrize("ident", ["..", "../x", "/etc/passwd", "a/b", "-rf", "", "a\x00b", "x" * 300,
                                   "question:q1", "e1..e2"])
def test_ids_are_checked_before_they_become_paths(shared: Repo, ident: str) -> None:
    for args in (["knowledge", "derive", "--episode", ident], ["session", "close", "--id", ident],
                 ["session", "start", "--id", ident]):
        if "\x00" in ident:
            continue  # argv cannot carry NUL; the hook payload test above sends it through JSON
        proc = shared.mj(*args)
        assert proc.returncode in (2, 4), (args, proc.returncode, proc.stderr)
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert shared.written_outside() == []
    assert not Path("/etc/passwd.md").exists()
