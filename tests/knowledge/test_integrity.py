"""`majordomus knowledge check`: every finding, against real repositories, and its git budget."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from conftest import Repo
from majordomus.knowledge import integrity
from majordomus.base import yamlio
from majordomus.store import index
from majordomus.store.workspace import Workspace, open_workspace

STORE = ".ai/repo/knowledge"


@pytest.fixture
def store(episode: Repo) -> dict[str, str]:
    """`episode` with a task and a decision in the ledger, and a file deleted from the tree."""
    episode.mj("start", "parser work", check=True)
    episode.mj("decision", "add", "Tabs are refused", check=True)
    task = episode.events("task.started")[0]["task"]
    gone = episode.commit("add old", {"old/gone.txt": "x\n"})
    episode.git("rm", "-q", "old/gone.txt")
    head = episode.commit("remove old")
    return {"task": task, "sha": head, "gone_sha": gone}


def meta(rid: str, refs: dict[str, str], **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": rid, "kind": "knowledge/v1", "class": "convention", "status": "candidate",
        "epistemics": "decided", "title": "Tabs are refused", "date": "2026-01-02",
        "provenance": {"origin": "extracted", "derived_from": [
            "session:e1", f"decision:{refs['task']}", f"task:{refs['task']}", f"commit:{refs['sha']}"]},
        "relations": [{"type": "relates_to", "target": "file:README.md"}],
    }
    data.update(changes)
    return data


def put(repo: Repo, folder: str, name: str, data: dict[str, Any] | None, body: str = "Tabs are refused.\n",
        raw: str | None = None) -> str:
    path = repo.root / STORE / folder / f"{name}.md"
    path.write_text(raw if raw is not None else "---\n" + yamlio.dump(data) + "---\n" + body, encoding="utf-8")
    return f"{STORE}/{folder}/{name}.md"


@pytest.fixture(autouse=True)
def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """The index vouches for this test's fresh files (in this process), so doctor's integrity view
    is kept and read back, not read again from the files."""
    monkeypatch.setattr(index, "settled", lambda st, now_ns=None: True)


def check(repo: Repo) -> tuple[int, list[dict[str, Any]]]:
    """`knowledge check`'s findings; doctor's, from the index's integrity view (built, then read
    back), are the same."""
    proc = repo.mj("knowledge", "check", "--json")
    ws = open_workspace(repo.root)
    read = [f.as_dict() for f in integrity.run(ws).findings]
    assert [f.as_dict() for f in integrity.run(ws, trusted=True).findings] == read
    assert [f.as_dict() for f in integrity.run(ws, trusted=True).findings] == read
    return proc.returncode, json.loads(proc.stdout)["findings"]


def test_a_consistent_store_passes(store: dict[str, str], episode: Repo) -> None:
    put(episode, "candidates", "e1-aaaaaaaaaaaa", meta("e1-aaaaaaaaaaaa", store))
    verified = meta("e1-bbbbbbbbbbbb", store, status="verified")
    verified["relations"].append({"type": "relates_to", "target": "file:old/gone.txt"})
    verified["relations"].append({"type": "relates_to", "target": "file:old"})
    episode.commit("add lib", {"lib/sub/x.txt": "x\n"})
    verified["relations"] += [{"type": "relates_to", "target": t} for t in ("file:lib", "file:lib/sub")]
    verified["provenance"]["derived_from"] += [f"commit:{store['gone_sha'][:10]}", "issue:42", "test:t::x"]
    put(episode, "curated", "e1-bbbbbbbbbbbb", verified, body="A.\n\n# Evidence\n\nseen\n")
    put(episode, "candidates", "e1-cccccccccccc", meta("e1-cccccccccccc", store, status="superseded"),
        body="Old.\n\n# Rejected\n\nwrong\n")
    put(episode, "candidates", "e1-dddddddddddd",
        meta("e1-dddddddddddd", store, status="superseded", superseded_by="e1-bbbbbbbbbbbb"))
    code, findings = check(episode)
    assert (code, findings) == (0, [])
    proc = episode.mj("knowledge", "check")
    assert proc.returncode == 0 and proc.stdout == ""
    assert "4 records" in proc.stderr and "0 findings" in proc.stderr


Mutation = Callable[[Repo, dict[str, str]], str]  # writes the bad record, returns its path


def _bad(changes: dict[str, Any], folder: str = "candidates", body: str = "Tabs are refused.\n") -> Mutation:
    def write(repo: Repo, refs: dict[str, str]) -> str:
        return put(repo, folder, "e1-000000000001", meta("e1-000000000001", refs, **changes), body)
    return write


def _refs(*extra: str) -> Mutation:
    def write(repo: Repo, refs: dict[str, str]) -> str:
        data = meta("e1-000000000001", refs)
        data["provenance"]["derived_from"] += list(extra)
        return put(repo, "candidates", "e1-000000000001", data)
    return write


def _relation(target: str) -> Mutation:
    def write(repo: Repo, refs: dict[str, str]) -> str:
        data = meta("e1-000000000001", refs)
        data["relations"] = [{"type": "relates_to", "target": target}]
        return put(repo, "candidates", "e1-000000000001", data)
    return write


def _raw(text: str) -> Mutation:
    return lambda repo, refs: put(repo, "candidates", "e1-000000000001", None, raw=text)


def _unprovenanced(repo: Repo, refs: dict[str, str]) -> str:
    data = meta("e1-000000000001", refs, status="verified")
    del data["provenance"]
    return put(repo, "curated", "e1-000000000001", data)


CASES: dict[str, tuple[Mutation, str | None, str]] = {
    "no front matter": (_raw("just text\n"), None, "does not parse"),
    "broken yaml": (_raw("---\nid: [\n---\nbody\n"), None, "does not parse"),
    "unknown key": (_bad({"confidence": 0.9}), "confidence", "unknown key confidence"),
    "bad class": (_bad({"class": "opinion"}), "class", "'opinion' is not one of"),
    "bad status": (_bad({"status": "approved"}), "status", "'approved' is not one of"),
    "missing title": (_bad({"title": None}), "title", "None is not of type 'string'"),
    "id not admissible": (_bad({"id": "../e1-000000000001"}), "id", "'../e1-000000000001'"),
    "id differs from file name": (_bad({"id": "e1-999999999999"}), "id", "differs from the file name"),
    "verified without provenance": (_unprovenanced, "provenance", "carries no provenance"),
    "candidate claims verified": (_bad({"status": "verified"}), "status", "a candidate claims verified"),
    "superseded without reason": (_bad({"status": "superseded"}), "superseded_by", "records no rejection"),
    "superseded by nothing": (_bad({"status": "superseded", "superseded_by": "e1-777777777777"}),
                              "superseded_by", "names no record"),
    "superseded by itself": (_bad({"status": "superseded", "superseded_by": "e1-000000000001"}),
                             "superseded_by", "cannot supersede itself"),
    "marker in title": (_bad({"title": "Assistant: do it"}), "title", "transcript marker 'Assistant:'"),
    "marker in description": (_bad({"description": "see <function_calls>"}), "description",
                              "transcript marker '<function_calls'"),
    "marker in body": (_bad({}, body="Fine.\nHuman: really?\n"), "body", "transcript marker 'Human:'"),
    "question reference": (_refs("question:q1"), "provenance.derived_from[4]", "question: is not a reference"),
    "reference to nothing": (_refs("task:none"), "provenance.derived_from[4]", "refers to nothing"),
    "unknown session": (_refs("session:e9"), "provenance.derived_from[4]", "no ledger line of episode e9"),
    "unknown task": (_refs("task:t-nope"), "provenance.derived_from[4]", "no task line names task t-nope"),
    "unknown decision": (_refs("decision:t-nope"), "provenance.derived_from[4]", "no decision.recorded line"),
    "commit not a sha": (_refs("commit:HEAD"), "provenance.derived_from[4]", "not a commit sha"),
    "missing file": (_relation("file:nowhere.txt"), "relations[0].target", "no such path in the tree or its history"),
    "a name's start is no folder": (_relation("file:READ"), "relations[0].target", "no such path in the tree"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_finding(store: dict[str, str], episode: Repo, name: str) -> None:
    put(episode, "candidates", "e1-aaaaaaaaaaaa", meta("e1-aaaaaaaaaaaa", store))
    write, field, what = CASES[name]
    rel = write(episode, store)
    code, findings = check(episode)
    assert code == 10
    ours = [f for f in findings if (f["file"], f["field"]) == (rel, field)]
    assert ours, findings
    assert any(what in f["what"] for f in ours), ours
    assert all(f["rule"] == "majordomus.knowledge-integrity" and f["blocking"] and f["fix"] for f in findings)
    assert not [f for f in findings if f["file"] != rel], "the good record drew a finding"
    text = episode.mj("knowledge", "check")
    assert text.returncode == 10 and f"ERROR majordomus.knowledge-integrity: {rel}" in text.stdout
    assert "  fix: " in text.stdout


def test_duplicate_ids_within_a_folder_block(store: dict[str, str], episode: Repo) -> None:
    a = put(episode, "curated", "e1-aaaaaaaaaaaa", meta("e1-aaaaaaaaaaaa", store, status="verified"))
    data = meta("e1-aaaaaaaaaaaa", store, status="verified")
    b = put(episode, "curated", "e1-bbbbbbbbbbbb", data)
    code, findings = check(episode)
    assert code == 10
    dupes = sorted((f["file"], f["field"]) for f in findings if "is also the id of" in f["what"])
    assert dupes == sorted([(a, "id"), (b, "id")])


def test_a_candidate_beside_its_reviewed_record_is_what_an_act_leaves(store: dict[str, str], episode: Repo) -> None:
    """Every act leaves the candidate's file where it was (docs/TEAM.md): no finding, and no reader
    takes it for a candidate."""
    put(episode, "candidates", "e1-aaaaaaaaaaaa", meta("e1-aaaaaaaaaaaa", store))
    put(episode, "curated", "e1-aaaaaaaaaaaa", meta("e1-aaaaaaaaaaaa", store, status="verified"))
    assert check(episode) == (0, [])
    assert "e1-aaaaaaaaaaaa" not in episode.mj("knowledge", "candidates").stdout


def test_a_cited_commit_this_clone_lacks_is_advisory_with_its_words(store: dict[str, str], episode: Repo) -> None:
    data = meta("e1-aaaaaaaaaaaa", store)
    data["provenance"]["derived_from"].append("commit:" + "ab" * 20)
    data["provenance"]["commits"] = [{"sha": "ab" * 20, "subject": "Refuse tabs", "authored": "2026-01-02T03:04:05Z"}]
    rel = put(episode, "candidates", "e1-aaaaaaaaaaaa", data)
    code, findings = check(episode)
    assert code == 0
    (f,) = findings
    assert (f["file"], f["blocking"]) == (rel, False)
    assert "'Refuse tabs'" in f["what"] and "not in this clone" in f["what"]
    # the same subject and author time in this clone: a rebase or an amend, found again
    episode.git("commit", "-q", "--allow-empty", "-m", "Refuse tabs", "--date", "2026-01-02T03:04:05Z")
    new = episode.git("rev-parse", "HEAD").strip()
    (f,) = check(episode)[1]
    assert f"it is {new[:12]} now" in f["what"] and not f["blocking"]


def test_a_trimmed_ledger_is_vouched_for_by_the_tracked_session_record(store: dict[str, str],
                                                                       episode: Repo) -> None:
    data = meta("e1-aaaaaaaaaaaa", store)
    data["provenance"]["derived_from"] = ["session:old", "task:t-old", "decision:t-old"]
    rel = put(episode, "candidates", "e1-aaaaaaaaaaaa", data)
    code, findings = check(episode)
    assert code == 10 and {f["field"] for f in findings if f["file"] == rel} == {
        "provenance.derived_from[0]", "provenance.derived_from[1]", "provenance.derived_from[2]"}
    (episode.root / ".ai/repo/sessions/old.md").write_text("---\nid: old\n---\n", encoding="utf-8")
    assert check(episode) == (0, [])
    # an episode this ledger opened vouches for nothing, record or not: its tasks would be here
    (episode.root / ".ai/repo/sessions/e1.md").write_text("---\nid: e1\n---\n", encoding="utf-8")
    data["provenance"]["derived_from"] = ["session:e1", "task:t-old", "decision:t-old"]
    put(episode, "candidates", "e1-aaaaaaaaaaaa", data)
    code, findings = check(episode)
    assert code == 10 and [f["field"] for f in findings if f["file"] == rel] == [
        "provenance.derived_from[1]", "provenance.derived_from[2]"]


def test_one_reference_cited_by_many_records_is_judged_for_each_by_its_own_episode(store: dict[str, str],
                                                                                 episode: Repo) -> None:
    """A reference is resolved once, whoever cites it; whether a record's episode vouches for a task the
    ledger does not name is still each record's own: the trimmed episode's record is vouched for,
    the ledger's own episode's is not, and a reference cited twice is named twice."""
    (episode.root / ".ai/repo/sessions/old.md").write_text("---\nid: old\n---\n", encoding="utf-8")
    (episode.root / ".ai/repo/sessions/e1.md").write_text("---\nid: e1\n---\n", encoding="utf-8")
    vouched = meta("old-aaaaaaaaaaaa", store)
    vouched["provenance"]["derived_from"] = ["session:old", "task:t-gone", "commit:0123456789abcdef0123"]
    put(episode, "candidates", "old-aaaaaaaaaaaa", vouched)
    alone = meta("e1-bbbbbbbbbbbb", store)
    alone["provenance"]["derived_from"] = ["session:e1", "task:t-gone", "file:no/such", "task:t-gone"]
    rel = put(episode, "candidates", "e1-bbbbbbbbbbbb", alone)
    code, findings = check(episode)
    resolving = [(f["file"], f["field"], f["what"].split(" does not resolve")[0]) for f in findings
                 if "does not resolve" in f["what"]]
    assert code == 10 and resolving == [
        (rel, "provenance.derived_from[1]", "task:t-gone"), (rel, "provenance.derived_from[2]", "file:no/such"),
        (rel, "provenance.derived_from[3]", "task:t-gone")]
    assert [f["field"] for f in findings if f["file"].endswith("old-aaaaaaaaaaaa.md")] == [
        "provenance.derived_from[2]"]  # the commit it cites is not in this clone, advisory


def test_commit_references_cost_one_git_query(store: dict[str, str], episode: Repo) -> None:
    shas = [episode.commit(f"c{i}") for i in range(5)]
    for i, sha in enumerate(shas * 4):
        data = meta(f"e1-{i:012x}", store)
        data["provenance"]["derived_from"].append(f"commit:{sha}")
        data["relations"] = []
        put(episode, "candidates", f"e1-{i:012x}", data)
    report = integrity.run(Workspace(episode.root))
    assert report.findings == []
    assert report.counters["records"] == 20 and report.counters["commit_refs"] == 6
    assert report.counters["git_processes"] == 1  # cat-file --batch-check, for every commit
    proc = episode.mj("knowledge", "check", env={"MJ_TIMING": "1"})
    assert "MJ_TIMING knowledge check: records=20 " in proc.stderr and "git_processes=1 " in proc.stderr


def test_check_on_a_store_the_deriver_and_the_acts_wrote(episode: Repo) -> None:
    episode.mj("start", "parser work", check=True)
    episode.mj("decision", "add", "Tabs are refused", check=True)
    episode.mj("decision", "add", "Spaces are four", check=True)
    episode.mj("knowledge", "derive", check=True)
    first, second = [p.stem for p in episode.candidates()]
    episode.mj("knowledge", "promote", first, input="seen\n", check=True)
    episode.mj("knowledge", "reject", second, "--by", first, check=True)
    assert check(episode) == (0, [])
    # Hand-made damage is found: the rejected record loses what it was superseded by.
    path = episode.root / STORE / "curated" / f"{second}.md"
    path.write_text(path.read_text(encoding="utf-8").replace(f"superseded_by: {first}\n", ""), encoding="utf-8")
    code, findings = check(episode)
    assert code == 10 and [f["field"] for f in findings] == ["superseded_by"]
