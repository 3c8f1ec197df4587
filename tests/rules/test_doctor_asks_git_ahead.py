"""Doctor starts the git processes its rules read (git's listing, the review acts' `git status`)
before the rules run, so git works while they do; what no rule read (a rule that failed first) is
stopped and reaped at the end of the run, and the answers are those asked where they are read."""
from __future__ import annotations

from typing import Any

import pytest

from conftest import Repo
from majordomus.rules import dispatch as rules_dispatch
from majordomus.rules import validators
from majordomus.store.workspace import open_workspace


def test_git_asked_ahead_answers_as_asked_where_it_is_read(repo: Repo) -> None:
    ws = open_workspace(repo.root)
    curated = repo.root / ".ai/repo/knowledge/curated/k-staged.md"
    curated.write_text("---\nid: k-staged\n---\n", encoding="utf-8")
    repo.git("add", "--", str(curated.relative_to(repo.root)))
    ctx = validators.Context(ws, trusted=True)
    ctx.start({"knowledge_accumulation"})
    asked = ctx.acts()
    assert asked is not None and ctx.acts() is None  # handed out once
    from majordomus.knowledge import accumulation as acc
    assert acc.uncommitted_acts(ws, asked) == acc.uncommitted_acts(ws) == (
        [".ai/repo/knowledge/curated/k-staged.md"], [])
    assert ".ai/repo/knowledge/curated/k-staged.md" in (ctx.listing().files() or [])
    ctx.end()  # nothing left to stop


def test_what_no_rule_read_is_stopped_and_reaped(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[validators.Context] = []
    start = validators.Context.start

    def kept(self: validators.Context, names: set[str]) -> None:
        start(self, names)
        started.append(self)

    def fails(ctx: validators.Context, rule: Any) -> validators.Verdict:
        raise RuntimeError("before it read git's answers")

    monkeypatch.setattr(validators.Context, "start", kept)
    for name in ("knowledge_accumulation", "knowledge_integrity"):
        monkeypatch.setitem(rules_dispatch.REGISTRY, name, fails)
    report = rules_dispatch.run(open_workspace(repo.root), "doctor")
    assert any("before it read git's answers" in f.what for f in report.findings)
    ctx = started[0]
    listing = ctx._listing
    assert listing is not None and listing._running is not None and ctx._acts is not None
    for running in (listing._running, ctx._acts):
        assert running.pid == 0 and running.fds == []  # killed or ended, reaped, its pipes closed
