"""The command-line projection of the readers: `knowledge candidates | record | status | edges`,
against a real repository, its real hooks and git."""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from conftest import Repo
from kbstore import KB, Store, build


@pytest.fixture
def store(repo: Repo) -> Store:
    return build(repo)


def test_candidates_are_the_queue_with_tracking_flagged(store: Store) -> None:
    repo = store.repo
    listed = json.loads(repo.mj("knowledge", "candidates", "--json", check=True).stdout)
    # their order is the evidence's time, then the id: the two lines may fall in two seconds
    assert sorted((c["id"], c["class"], c["branch"], c["episode"], c["tracked"]) for c in listed) == sorted([
        (store.decision, "convention", "main", "e1", True),
        (store.lesson, "lesson", "main", "e1", False)])
    # superseded records under candidates/ are not in the queue
    assert not {"old-rule", "older-rule"} & {c["id"] for c in listed}
    human = repo.mj("knowledge", "candidates", check=True)
    header, *rows = human.stdout.splitlines()
    assert header.split() == ["ID", "CLASS", "BRANCH", "WAITING", "TITLE"]
    assert any(r.split()[:3] == [store.decision, "convention", "main"] and " min " in r for r in rows)
    assert [r.split()[0] for r in rows] == [c["id"] for c in listed]  # one order, text and JSON
    assert f"git add {KB}/candidates/{store.lesson}.md" in human.stderr


def test_record_reads_one_record_parsed(store: Store) -> None:
    repo = store.repo
    rec = json.loads(repo.mj("knowledge", "record", "c-tabs", "--json", check=True).stdout)
    assert rec["source"] == "curated" and rec["tracked"] is True and rec["problem"] is None
    assert rec["meta"]["status"] == "verified" and rec["meta"]["class"] == "constraint"
    assert rec["meta"]["date"] == "2026-01-02"  # an unquoted YAML date comes back as its text
    assert rec["body"].startswith("The parser refuses a tab.")
    cand = json.loads(repo.mj("knowledge", "record", store.lesson, "--json", check=True).stdout)
    assert (cand["source"], cand["tracked"], cand["meta"]["class"]) == ("candidates", False, "lesson")
    human = repo.mj("knowledge", "record", "c-tabs", check=True)
    assert "status: verified" in human.stdout and "The parser refuses a tab." in human.stdout
    assert f"{KB}/curated/c-tabs.md (curated, tracked)" in human.stderr


@pytest.mark.parametrize("bad", ["../policy", "..", "a/b", "-x", "", "README/..", ".hidden", "a..b"])
def test_record_refuses_a_bad_id_with_exit_4(store: Store, bad: str) -> None:
    proc = store.repo.mj("knowledge", "record", "--", bad)
    assert proc.returncode == 4, proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1
    assert "refused" in proc.stderr


@pytest.mark.parametrize("missing", ["nope", "README", "policy", "sources"])
def test_record_unknown_id_exits_3(store: Store, missing: str) -> None:
    proc = store.repo.mj("knowledge", "record", missing)
    assert proc.returncode == 3 and proc.stdout == ""
    assert f"no knowledge record {missing!r}" in proc.stderr


def test_nothing_outside_the_store_is_read(store: Store, tmp_path: Path) -> None:
    repo = store.repo
    secret = tmp_path / "secret.md"
    secret.write_text("---\nid: leak\nstatus: candidate\nclass: fact\ntitle: SECRET\n---\nSECRET\n")
    os.symlink(secret, repo.root / KB / "candidates" / "leak.md")
    # a sources.yaml edited to reach outside the store names files that are never read
    sources = repo.root / KB / "sources.yaml"
    sources.write_text(sources.read_text() + "  outside:\n    pathspec: \":(glob)*.md\"\n")
    for args in (("record", "leak", "--json"), ("record", "README", "--json"), ("candidates", "--json"),
                 ("status", "--json"), ("edges", "--json")):
        proc = repo.mj("knowledge", *args)
        assert "SECRET" not in proc.stdout and "a project" not in proc.stdout, args
    leak = json.loads(repo.mj("knowledge", "record", "leak", "--json", check=True).stdout)
    assert leak["meta"] is None and "symbolic link" in leak["problem"]
    assert repo.mj("knowledge", "record", "README").returncode == 3  # README.md of the root: not a record


def test_status_counts_queue_and_writer(store: Store) -> None:
    st = json.loads(store.repo.mj("knowledge", "status", "--json", check=True).stdout)
    assert st["records"] == 5
    assert st["by_status"] == {"candidate": 2, "superseded": 2, "verified": 1}
    assert st["by_class"] == {"constraint": 1, "convention": 3, "lesson": 1}
    assert st["by_source"] == {"candidates": 4, "curated": 1}
    assert st["untracked"] == [f"{KB}/candidates/{store.lesson}.md"]
    queue = st["queue"]
    assert (queue["length"], queue["max_files"], queue["over_cap"], queue["max_age_minutes"]) == (2, 25, False, 10080)
    assert queue["oldest"]["source"] == "ledger" and queue["overdue"] == []
    assert st["last_derivation"]["episode"] == "e1" and st["last_derivation"]["written"] == 2
    assert st["writer"] == {"judged": True, "fresh": True, "episode": "e1", "stale_minutes": 30,
                            "reason": "fresh: the newest closed episode e1 was derived"}
    human = store.repo.mj("knowledge", "status", check=True).stdout
    assert "queue: 2 waiting (cap 25)" in human and "measured from knowledge.derived at ledger line" in human


def test_queue_age_falls_back_to_the_commit_then_the_date(repo: Repo) -> None:
    """No knowledge.derived line names these files: the commit that added one, else its date."""
    old = "---\nid: {id}\nkind: knowledge/v1\nclass: fact\nstatus: candidate\ntitle: t\ndate: \"2026-01-01\"\n---\nb\n"
    repo.commit("one candidate", {f"{KB}/candidates/by-commit.md": old.format(id="by-commit")})
    (repo.root / KB / "candidates" / "by-date.md").write_text(old.format(id="by-date"))
    st = json.loads(repo.mj("knowledge", "status", "--json", check=True).stdout)
    oldest = st["queue"]["oldest"]
    # the commit is dated 2026-01-02T03:04:05Z (the fixture's identity); the untracked file's
    # date is 2026-01-01, one day older: the date source wins the age, and says so
    assert (oldest["id"], oldest["source"], oldest["since"]) == ("by-date", "date", "2026-01-01T00:00:00Z")
    assert sorted(st["queue"]["overdue"]) == ["by-commit", "by-date"]  # older than 7 days by now
    (repo.root / KB / "candidates" / "by-date.md").unlink()
    oldest = json.loads(repo.mj("knowledge", "status", "--json", check=True).stdout)["queue"]["oldest"]
    assert (oldest["id"], oldest["source"], oldest["since"]) == ("by-commit", "commit", "2026-01-02T03:04:05Z")
    assert oldest["detail"].startswith("commit ") and oldest["detail"].endswith(" added it")


def test_status_reports_a_stopped_writer_from_the_policy(store: Store) -> None:
    repo = store.repo
    ledger = repo.root / ".ai" / "local" / "ledger.jsonl"
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    with ledger.open("a") as handle:
        handle.write(json.dumps({"ts": stamp, "event": "session.closed", "session": "e2", "episode": "e2"}) + "\n")
    writer = json.loads(repo.mj("knowledge", "status", "--json", check=True).stdout)["writer"]
    assert (writer["judged"], writer["fresh"], writer["episode"]) == (True, False, "e2")
    (repo.root / ".ai/repo/policy.yaml").write_text("session:\n  freshness:\n    stale_minutes: 120\n")
    writer = json.loads(repo.mj("knowledge", "status", "--json", check=True).stdout)["writer"]
    assert (writer["fresh"], writer["stale_minutes"]) == (True, 120)


def test_status_on_an_empty_store(repo: Repo) -> None:
    st = json.loads(repo.mj("knowledge", "status", "--json", check=True).stdout)
    assert st["records"] == 0 and st["queue"]["oldest"] is None and st["last_derivation"] is None
    assert st["writer"]["judged"] is False
    assert "none (`majordomus knowledge derive` runs one)" in repo.mj("knowledge", "status", check=True).stdout


def test_edges(store: Store) -> None:
    repo = store.repo
    graph = json.loads(repo.mj("knowledge", "edges", "--json", check=True).stdout)
    edges = {(e["from"], e["type"], e["to"], e["target"]) for e in graph["edges"]}
    tabs = "knowledge:c-tabs"
    assert (tabs, "relates_to", f"knowledge:{store.decision}", "record") in edges
    assert (tabs, "relates_to", f"knowledge:{store.lesson}", "record") in edges
    assert (tabs, "derived_from", "session:e1", "external") in edges
    assert (tabs, "relates_to", "file:README.md", "external") in edges
    assert ("knowledge:old-rule", "superseded_by", tabs, "record") in edges
    assert ("knowledge:older-rule", "superseded_by", "knowledge:ghost", "dangling") in edges
    assert ("knowledge:old-rule", "derived_from", f"commit:{store.sha}", "external") in edges
    assert graph["dangling"] == 1  # session:, commit:, file:, decision: are external, never dangling
    assert all(e["target"] != "dangling" for e in graph["edges"] if not e["to"].startswith("knowledge:"))
    assert "knowledge:ghost" not in graph["nodes"] and tabs in graph["nodes"]

    sup = json.loads(repo.mj("knowledge", "edges", "--type", "superseded_by", "--json", check=True).stdout)
    assert {e["from"] for e in sup["edges"]} == {"knowledge:old-rule", "knowledge:older-rule"}
    one = json.loads(repo.mj("knowledge", "edges", store.lesson, "--json", check=True).stdout)
    assert {(e["from"], e["to"]) for e in one["edges"] if e["target"] == "record"} == {
        (tabs, f"knowledge:{store.lesson}")}
    assert all(store.lesson in e["from"] or store.lesson in e["to"] for e in one["edges"])
    human = repo.mj("knowledge", "edges", "--type", "superseded_by", check=True)
    assert f"knowledge:old-rule  superseded_by  {tabs}\n" in human.stdout
    assert "knowledge:older-rule  superseded_by  knowledge:ghost  (dangling)" in human.stdout
    assert "1 dangling edge(s)" in human.stderr
    assert repo.mj("knowledge", "edges", "ghost").returncode == 3
    assert repo.mj("knowledge", "edges", "--", "../x").returncode == 4
    assert repo.mj("knowledge", "edges", "--type", "bogus").returncode == 2


def test_an_unknown_capability_is_a_usage_error(repo: Repo) -> None:
    proc = repo.mj("knowledge", "recrod", "x")
    assert proc.returncode == 2 and "invalid choice: 'recrod'" in proc.stderr


def test_readers_refuse_an_uninitialised_repository(bare_repo: Repo) -> None:
    for verb in ("candidates", "status"):
        assert bare_repo.mj("knowledge", verb).returncode == 5


def test_a_tracked_record_missing_from_the_tree_is_reported_not_fatal(store: Store) -> None:
    (store.repo.root / KB / "curated" / "c-tabs.md").unlink()
    st = json.loads(store.repo.mj("knowledge", "status", "--json", check=True).stdout)
    assert [(u["id"], "missing from the tree" in u["problem"]) for u in st["unreadable"]] == [("c-tabs", True)]
    rec = json.loads(store.repo.mj("knowledge", "record", "c-tabs", "--json", check=True).stdout)
    assert rec["meta"] is None and "git restore" in rec["problem"]


def test_a_store_outside_git_is_refused(tmp_path: Path, repo: Repo) -> None:
    import shutil

    copy = tmp_path / "nogit"
    shutil.copytree(repo.root / ".ai", copy / ".ai")
    proc = repo.mj("knowledge", "status", env={"MAJORDOMUS_ROOT": str(copy), "GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert proc.returncode == 5 and "read through git" in proc.stderr


def test_candidates_lists_the_head_of_a_long_queue_and_all_with_all(repo: Repo) -> None:
    """A person reads the first 40 rows and how many more wait; `--all` lists every one, and
    `--json` (the data, as the cockpit and MCP return it) always has them all."""
    folder = repo.root / KB / "candidates"
    ids = [f"e1-{k:012d}" for k in range(45)]
    for k, rid in enumerate(ids):
        (folder / f"{rid}.md").write_text(
            f"---\nid: {rid}\nkind: knowledge/v1\nclass: lesson\nstatus: candidate\nepistemics: observed\n"
            f"title: \"lesson {k}\"\ndate: \"2026-01-{1 + k % 28:02d}\"\nprovenance:\n  origin: extracted\n"
            "  derived_from:\n    - \"session:e1\"\n---\nA lesson.\n", encoding="utf-8")
    listed = json.loads(repo.mj("knowledge", "candidates", "--json", check=True).stdout)
    assert sorted(c["id"] for c in listed) == ids
    human = repo.mj("knowledge", "candidates", check=True)
    header, *rows = human.stdout.splitlines()
    assert header.split() == ["ID", "CLASS", "BRANCH", "WAITING", "TITLE"]
    assert [r.split()[0] for r in rows] == [c["id"] for c in listed[:40]]  # the head, in review order
    assert "5 more candidate(s) await review: run `majordomus knowledge candidates --all` to list them all" \
        in human.stderr
    every = repo.mj("knowledge", "candidates", "--all", check=True)
    assert [r.split()[0] for r in every.stdout.splitlines()[1:]] == [c["id"] for c in listed]
    assert "more candidate(s)" not in every.stderr
    # none is tracked: the first three named in review order, then how to name them all
    untracked = [c["path"] for c in listed]
    assert f"45 candidate(s) not tracked by git, so reviewed on no other checkout: git add " \
        f"{' '.join(untracked[:3])} and 42 more (`majordomus knowledge candidates --all` names them all)\n" \
        in human.stderr
    assert f"git add {' '.join(untracked)}\n" in every.stderr


def test_status_lists_the_overdue_oldest_first_then_by_id(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The queue's oldest entry and its overdue ones, in that order: by age, ties by id, then as
    the queue lists them (the first of two entries alike is the oldest)."""
    from majordomus.knowledge import agenda
    from majordomus.knowledge.accumulation import Age
    from majordomus.readers import status as reader
    from majordomus.store import listing
    from majordomus.store.workspace import Workspace

    build(repo)
    now = 2_000_000_000.0
    day = 86400.0
    rows = [agenda.Row(f"/x/{rid}.md", rid, None, "", Age(now - days * day, "ledger", f"line {9 - n}"))
            for n, (rid, days) in enumerate([("b", 9), ("a", 9), ("c", 30), ("d", 1), ("b", 9), ("e", 8)])]
    rows.append(agenda.Row("/x/u.md", "u", None, "", None))
    monkeypatch.setattr(listing, "tally", lambda ws: listing.Tally(0, {}, {}, {}, [], []))
    monkeypatch.setattr(agenda, "ages", lambda ws: [(r.id, r.age) for r in rows])
    queue = reader.status(Workspace(repo.root), now=now)["queue"]
    assert queue["length"] == 7
    assert queue["overdue"] == ["c", "a", "b", "b", "e"]
    assert (queue["oldest"]["id"], queue["oldest"]["age_minutes"], queue["oldest"]["detail"]) == ("c", 30 * 1440, "line 7")
    rows[:] = [r for r in rows if r.id != "c"]
    oldest = reader.status(Workspace(repo.root), now=now)["queue"]["oldest"]
    assert (oldest["id"], oldest["detail"]) == ("a", "line 8")
    rows[:] = [r for r in rows if r.id != "a"]
    oldest = reader.status(Workspace(repo.root), now=now)["queue"]["oldest"]
    assert (oldest["id"], oldest["detail"]) == ("b", "line 9")  # two alike: the first listed


def test_status_s_ages_are_the_queue_s_own(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """`knowledge status` ages the queue's candidates from a query of their dates alone
    (`agenda.ages`): each the age `agenda.dated` gives the entry, dated by the ledger, by the
    commit that added it, or by its date."""
    from majordomus.knowledge import agenda
    from majordomus.store import filecache
    from majordomus.store.workspace import Workspace

    monkeypatch.setattr(filecache, "RACY_NS", 0)  # no input too recent to vouch for itself: the index answers
    monkeypatch.setattr(filecache, "FINE_NS", 0)
    repo = store.repo
    old = "---\nid: {id}\nkind: knowledge/v1\nclass: fact\nstatus: candidate\ntitle: t\ndate: \"2026-01-01\"\n---\nb\n"
    repo.commit("one candidate", {f"{KB}/candidates/by-commit.md": old.format(id="by-commit")})
    (repo.root / KB / "candidates" / "by-date.md").write_text(old.format(id="by-date"))
    repo.mj("knowledge", "status", check=True)
    ws = Workspace(repo.root)
    aged = agenda.ages(ws)
    rows = agenda.dated(ws)
    assert aged is not None and rows is not None
    assert sorted(aged, key=repr) == sorted(((r.id, r.age) for r in rows if r.source == "candidates"), key=repr)
    sources = {rid: age.source for rid, age in aged if age is not None}
    assert (sources["by-commit"], sources["by-date"]) == ("commit", "date") and "ledger" in sources.values()
