"""A record's references resolved in words (`knowledge record --json`'s `references`): the episode
with its branch and times, the task by its title, a commit by its subject, another record by its
title; what this checkout cannot resolve says so. And a waiting candidate's place in the queue."""
from __future__ import annotations

import json
import subprocess
import sys
import time

from conftest import Repo
from kbstore import RECORD, build


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


def _fact(repo: Repo, rid: str, *derived_from: str) -> None:
    """A verified record written by hand into curated/, citing `derived_from`."""
    cited = "".join(f'    - "{ref}"\n' for ref in derived_from)
    (repo.root / f".ai/repo/knowledge/curated/{rid}.md").write_text(f"""---
id: {rid}
kind: knowledge/v1
class: fact
status: verified
epistemics: observed
title: "A fact"
date: "2026-01-02"
provenance:
  origin: authored
  derived_from:
{cited}---
A fact.
""", encoding="utf-8")


def test_an_unknown_commit_and_episode_say_so(repo: Repo) -> None:
    _fact(repo, "c-x", "session:nowhere", "commit:0123456789abcdef", "task:t-none1")
    rec = json.loads(repo.mj("knowledge", "record", "c-x", "--json", check=True).stdout)
    labels = {r["kind"]: (r["resolved"], r["label"]) for r in rec["references"]}
    assert labels == {"session": (False, "an episode this checkout does not know"),
                      "commit": (False, "no such commit in this repository"),
                      "task": (False, "task t-none1: no ledger line here names it")}


def _cited(repo: Repo) -> dict[str, str]:
    rec = json.loads(repo.mj("knowledge", "record", "c-p", "--json", check=True).stdout)
    return {r["ref"]: r["label"] for r in rec["references"]}


def test_references_follow_the_ledger_as_it_grows_from_the_kept_facts(repo: Repo) -> None:
    """The labels come from the ledger's facts kept in the index: lines appended after they were
    kept change them (a later title, another decision, a close, a branch), as lines already kept
    and a torn last line do not; deleting the index changes no label."""
    _fact(repo, "c-p", "session:ep-1", "task:t-p1", "decision:t-p1")
    ledger = repo.root / ".ai/local/ledger.jsonl"

    def append(*objs: dict[str, object], torn: str = "") -> None:
        with open(ledger, "a", encoding="utf-8") as handle:
            handle.writelines(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)
            handle.write(torn)

    def line(event: str, **data: object) -> dict[str, object]:
        return {"ts": "2026-01-02T03:04:05Z", "event": event, "session": "ep-1", **data}

    append(line("session.opened", branch="feat/a"), line("task.started", task="t-p1", title="First title\nmore"),
           line("decision.recorded", task="t-p1", text="one"), line("decision.recorded", task="t-p1", text=7))
    first = _cited(repo)
    assert first["session:ep-1"] == "episode ep-1, on feat/a, opened 2026-01-02T03:04:05Z"
    assert first["task:t-p1"] == "task “First title”"
    assert first["decision:t-p1"] == "a decision recorded under task “First title”"

    append({**line("session.opened", branch="feat/b"), "ts": "2026-01-03T00:00:00Z"},
           line("task.started", task="t-p1", title="Second title"),
           line("decision.recorded", task="t-p1", text="two"), line("task.finished", task="t-p1", outcome="done"),
           {**line("session.closed"), "ts": "2026-01-04T00:00:00Z"},
           torn=json.dumps(line("decision.recorded", task="t-p1", text="being written")))
    grown = _cited(repo)
    # the episode's session record is not written here: its branch is the last open's that named one
    assert grown["session:ep-1"] == ("episode ep-1, on feat/b, opened 2026-01-02T03:04:05Z, "
                                     "closed 2026-01-04T00:00:00Z")
    assert grown["task:t-p1"] == "task “Second title”, finished done"
    assert grown["decision:t-p1"] == "3 decisions recorded under task “Second title”"  # the last unended
    assert _cited(repo) == grown  # read again from the kept facts alone
    for kept in (repo.root / ".ai/local/state").glob("index.sqlite3*"):
        kept.unlink()
    assert _cited(repo) == grown


def test_a_record_is_found_by_name_as_the_whole_listing_finds_it(repo: Repo) -> None:
    """`knowledge record` looks its id up in git's listing kept in the index: the entry the listing
    made whole finds, for a tracked and an untracked candidate, a candidate beside the curated
    record its review wrote (the curated one), a symbolic link (not read), a record added since
    the listing was kept, and an id nothing lists; and the command's answers are those it gives
    with the index deleted."""
    store = build(repo)
    kb = repo.root / ".ai/repo/knowledge"
    (kb / "candidates/c-tabs.md").write_text((kb / "curated/c-tabs.md").read_text().replace(
        "status: verified", "status: candidate"), encoding="utf-8")
    (kb / "candidates/linked.md").symlink_to(kb / "curated/c-tabs.md")
    ids = [store.decision, store.lesson, "c-tabs", "old-rule", "linked", "no-such-record"]

    def answers() -> list[tuple[int, str, str]]:
        done = [repo.mj("knowledge", "record", rid, "--json") for rid in ids]
        return [(d.returncode, _steady(d.stdout), d.stderr) for d in done]

    def without_index() -> list[tuple[int, str, str]]:
        for kept in (repo.root / ".ai/local/state").glob("index.sqlite3*"):
            kept.unlink()
        return answers()

    found = looked_up(repo, ids)
    assert [f and f[:5] for f in found] == [
        [store.decision, "candidates", str(kb / f"candidates/{store.decision}.md"), True, True],
        [store.lesson, "candidates", str(kb / f"candidates/{store.lesson}.md"), False, True],
        ["c-tabs", "curated", str(kb / "curated/c-tabs.md"), True, True],
        ["old-rule", "candidates", str(kb / "candidates/old-rule.md"), True, True],
        ["linked", "candidates", str(kb / "candidates/linked.md"), False, False],
        None]
    warm = answers()
    assert "not a regular file" in json.loads(warm[4][1])["problem"]
    assert warm[5][0] != 0 and "no knowledge record 'no-such-record'" in warm[5][2]
    assert warm == without_index()
    (kb / "candidates/late.md").write_text(RECORD.format(rid="late", title="Added late"), encoding="utf-8")
    ids.append("late")
    assert looked_up(repo, ids)[-1][:2] == ["late", "candidates"]
    assert answers() == without_index()


def _steady(out: str) -> str:
    """A record's answer without the minutes its review has waited: the clock may turn a minute
    between two readings."""
    if not out:
        return out
    answer = json.loads(out)
    if isinstance(answer.get("review"), dict):
        answer["review"].pop("age_minutes", None)
    return json.dumps(answer, indent=2)


def looked_up(repo: Repo, ids: list[str]) -> list[list[object] | None]:
    """Each id's entry as `listing.find` looks it up in the listing kept in the index, once that
    listing vouches for itself (its inputs settled: a stamp taken within a tick of the clock of a
    change does not), asserted equal to the entry the whole listing finds. In a process of its own,
    as a command is."""
    ask = """
import json, sys
from pathlib import Path
from majordomus.store import listing
from majordomus.store.workspace import Workspace
ws = Workspace(Path(sys.argv[1]))
if not listing.indexed(ws):
    sys.exit(3)
whole = listing.listing(ws)
pairs = [(listing.find(ws, rid), whole.find(rid)) for rid in sys.argv[2:]]
print(json.dumps([[a, b] for a, b in pairs]))
"""
    deadline = time.monotonic() + 10
    while True:
        done = subprocess.run([sys.executable, "-c", ask, str(repo.root), *ids], capture_output=True, text=True,
                              check=False)
        if done.returncode != 3:
            break
        assert time.monotonic() < deadline, "the listing kept in the index never vouched for itself"
        time.sleep(0.05)
    assert done.returncode == 0, done.stderr
    pairs = json.loads(done.stdout)
    assert all(indexed == whole for indexed, whole in pairs), pairs
    return [indexed for indexed, _ in pairs]
