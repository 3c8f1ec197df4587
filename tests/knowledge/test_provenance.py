"""A record's references resolved in words (`knowledge record --json`'s `references`): the episode
with its branch and times, the task by its title, a commit by its subject, another record by its
title; what this checkout cannot resolve says so. And a waiting candidate's place in the queue."""
from __future__ import annotations

import json

from conftest import Repo
from kbstore import build


def test_references_are_resolved_in_words(repo: Repo) -> None:
    store = build(repo)
    rec = json.loads(repo.mj("knowledge", "record", "c-tabs", "--json", check=True).stdout)
    refs = {(r["field"], r["ref"]): r for r in rec["references"]}
    session = refs[("derived_from", "session:e1")]
    assert session["resolved"] is True and session["label"].startswith("episode e1, on main, opened ")
    assert ", closed " in session["label"]
    decision = refs[("relates_to", f"knowledge:{store.decision}")]
    assert decision["resolved"] is True and decision["record"] == store.decision
    assert decision["label"] == "Tabs are refused in the parser (candidate)"
    assert refs[("relates_to", "file:README.md")]["resolved"] is None  # not looked up
    assert rec["review"] is None  # a verified record waits in no queue

    old = json.loads(repo.mj("knowledge", "record", "old-rule", "--json", check=True).stdout)
    by_ref = {r["ref"]: r for r in old["references"]}
    assert by_ref[f"commit:{store.sha}"]["label"] == "a candidate"  # the commit's subject
    assert by_ref["knowledge:c-tabs"]["field"] == "superseded_by"
    assert by_ref["knowledge:c-tabs"]["label"] == "Tabs are refused by the parser (verified)"
    ghost = json.loads(repo.mj("knowledge", "record", "older-rule", "--json", check=True).stdout)
    (missing,) = [r for r in ghost["references"] if r["field"] == "superseded_by"]
    assert missing["resolved"] is False and missing["label"] == "no record with this id in the store"

    cand = json.loads(repo.mj("knowledge", "record", store.decision, "--json", check=True).stdout)
    refs = {r["kind"]: r for r in cand["references"]}
    assert refs["decision"]["label"] == "a decision recorded under task “a task”"
    assert cand["review"]["this_branch"] is True and cand["review"]["age_source"] == "ledger"
    assert cand["review"]["branch"] == "main" and cand["review"]["episode"] == "e1"

    human = repo.mj("knowledge", "record", store.decision, check=True)
    assert "derived_from session:e1: episode e1, on main, opened" in human.stderr
    assert "in the review queue: " in human.stderr


def test_an_unknown_commit_and_episode_say_so(repo: Repo) -> None:
    (repo.root / ".ai/repo/knowledge/curated/c-x.md").write_text("""---
id: c-x
kind: knowledge/v1
class: fact
status: verified
epistemics: observed
title: "A fact"
date: "2026-01-02"
provenance:
  origin: authored
  derived_from:
    - "session:nowhere"
    - "commit:0123456789abcdef"
    - "task:t-none1"
---
A fact.
""", encoding="utf-8")
    rec = json.loads(repo.mj("knowledge", "record", "c-x", "--json", check=True).stdout)
    labels = {r["kind"]: (r["resolved"], r["label"]) for r in rec["references"]}
    assert labels == {"session": (False, "an episode this checkout does not know"),
                      "commit": (False, "no such commit in this repository"),
                      "task": (False, "task t-none1: no ledger line here names it")}
