"""`majordomus knowledge search TEXT [--class C] [--status S] [--json]`: titles and bodies of both
folders, every word, any case; status shown; superseded records found and said to be so."""
from __future__ import annotations

import json
from typing import Any

import pytest

from conftest import Repo
from kbstore import Store, build


def search(repo: Repo, *args: str) -> list[dict[str, object]]:
    return json.loads(repo.mj("knowledge", "search", *args, "--json", check=True).stdout)


def test_finds_every_word_in_titles_and_bodies_of_both_folders(repo: Repo) -> None:
    store: Store = build(repo)
    hits = search(repo, "TABS parser")
    assert [(h["id"], h["source"], h["status"], h["matched"]) for h in hits] == [
        ("c-tabs", "curated", "verified", ["title", "body"]),  # constraints first, every word in its title
        (store.decision, "candidates", "candidate", ["title", "body"])]
    assert hits[0]["path"] == ".ai/repo/knowledge/curated/c-tabs.md" and hits[0]["tracked"] is True
    assert [h["id"] for h in search(repo, "lexer formatter")] == [store.lesson]  # the body of a lesson
    assert search(repo, "tabs formatter") == []  # every word must be found
    old = search(repo, "older rule")
    assert [(h["id"], h["status"]) for h in old] == [("old-rule", "superseded"), ("older-rule", "superseded")]


def test_filters_by_class_and_status_and_lists_everything_without_text(repo: Repo) -> None:
    store = build(repo)
    assert [h["id"] for h in search(repo, "--status", "verified")] == ["c-tabs"]
    assert [h["id"] for h in search(repo, "--class", "lesson")] == [store.lesson]
    assert [h["id"] for h in search(repo, "tabs", "--class", "convention", "--status", "candidate")] == [store.decision]
    assert len(search(repo)) == 5
    table = repo.mj("knowledge", "search", "tabs", check=True).stdout.splitlines()
    assert table[0].split() == ["ID", "STATUS", "CLASS", "TITLE"]
    assert table[1].split()[:3] == ["c-tabs", "verified", "constraint"]


def test_refusals_are_one_line(repo: Repo) -> None:
    build(repo)
    bad = repo.mj("knowledge", "search", "x", "--status", "maybe")
    assert bad.returncode == 2 and "invalid choice: 'maybe'" in bad.stderr and len(bad.stderr.splitlines()) == 1
    none = repo.mj("knowledge", "search", "no such words here")
    assert none.returncode == 0 and none.stdout == ""
    assert "no record matches" in none.stderr


def test_served_over_http_and_refused_there_with_a_bad_class(repo: Repo) -> None:
    build(repo)
    from majordomus.readers.httpd import respond

    status, body = respond(repo.root, "GET", "/knowledge_base/search?text=tabs&status=verified")
    assert status == 200 and [h["id"] for h in body] == ["c-tabs"]
    status, body = respond(repo.root, "GET", "/knowledge_base/search?class=rule")
    assert status == 400 and "class 'rule' refused" in body["message"]


def test_the_index_hands_over_every_match_whatever_the_title_s_case_or_script(repo: Repo) -> None:
    """The kept values are narrowed in the index before they are matched (`search._match`): a title
    matched only once casefolded (beyond ASCII, `ß` is `ss`), a word with JSON's escapes in it, a
    word of the body alone are found as when every record is read, with the index and without."""
    import time

    from kbstore import RECORD

    build(repo)
    folder = repo.root / ".ai" / "repo" / "knowledge" / "candidates"
    for rid, title in (("c-strasse", "STRAßE names"), ("c-ecole", "ÉCOLE rules"), ("c-upper", "TABS Everywhere"),
                       ("c-quoted", 'The \\\\\\"quoted\\\\\\" path')):
        text = RECORD.format(rid=rid, title=title).replace(f"{title}, as the work showed.", "As the work showed.")
        (folder / f"{rid}.md").write_text(text, encoding="utf-8")
    time.sleep(2.1)  # settled: their values are kept, and the index narrows them
    queries = ["strasse", "école", "everywhere tabs", '\\"quoted\\"', "work showed", "straße names", "as the",
               "zz-nothing"]
    first = [search(repo, q) for q in queries]
    kept = [search(repo, q) for q in queries]
    (repo.root / ".ai" / "local" / "state" / "index.sqlite3").unlink()
    assert [search(repo, q) for q in queries] == kept == first
    ids = [[h["id"] for h in hits] for hits in kept]
    assert "c-strasse" in ids[0] and "c-strasse" in ids[5] and ids[1] == ["c-ecole"] and "c-upper" in ids[2]
    assert ids[3] == ["c-quoted"] and {"c-strasse", "c-ecole", "c-upper", "c-quoted"} <= set(ids[4]) and ids[7] == []


def test_the_matches_joined_in_the_index_are_those_of_the_listing(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """With git's listing kept in the index, the search joins it with the kept values and makes only
    the entries that may match (`listing.matched`): the same hits as from the whole listing, a
    reviewed record hiding its candidate, an untracked record found, a symbolic link never
    followed, a record that cannot be read passed over, a file too recent to vouch for itself read,
    GLOB's own characters in a word matched as themselves."""
    import os
    import time

    from kbstore import RECORD

    from majordomus.knowledge import search as searching
    from majordomus.store import listing
    from majordomus.store.workspace import Workspace

    build(repo)
    kb = repo.root / ".ai" / "repo" / "knowledge"
    for folder, rid, title in (("candidates", "c-twice", "Tabs twice"), ("curated", "c-twice", "Tabs twice, reviewed"),
                               ("candidates", "c-alone", "Tabs alone"), ("candidates", "c-alone-too", "Tabs too"),
                               ("candidates", "c-glob", "Tabs a[b] c*d e?f [")):
        (kb / folder / f"{rid}.md").write_text(RECORD.format(rid=rid, title=title), encoding="utf-8")
    outside = repo.root / "outside.md"
    outside.write_text(RECORD.format(rid="c-linked", title="Tabs linked"), encoding="utf-8")
    os.symlink(outside, kb / "candidates" / "c-linked.md")
    (kb / "candidates" / "c-broken.md").write_text("---\ntitle: [tabs\n---\nTabs broken\n", encoding="utf-8")
    time.sleep(2.1)  # settled: git's listing and the values are kept
    with open(kb / "curated" / "c-tabs.md", "r+", encoding="utf-8") as handle:  # in place: the folder keeps its stamp
        handle.write(RECORD.format(rid="c-tabs", title="Tabs recent"))
    ws = Workspace(repo.root)
    queries = ["tabs", "", "tabs twice", "reviewed", "linked", "broken", "zz-nothing", "recent", "a[b] c*d e?f [",
               "[", "*", "a?b"]
    listing.listing(ws)  # git's listing kept in the `listed` table

    def both() -> tuple[list[Any], list[Any]]:
        every = listing.matched(ws, "search", searching.VERSION, searching._read, None)
        assert every is not None and [e for e, _ in every] == [e for e in listing.listing(ws).entries if e.readable]
        joined = [searching.search(ws, q) for q in queries]
        with monkeypatch.context() as patched:
            patched.setattr(listing, "matched", lambda *_: None)
            return joined, [searching.search(ws, q) for q in queries]

    joined, listed = both()
    assert joined == listed and joined == both()[0]  # kept values now read from the index
    ids = [h["id"] for h in joined[0]]
    assert ids.count("c-twice") == 1 and [h["source"] for h in joined[0] if h["id"] == "c-twice"] == ["curated"]
    assert {"c-alone", "c-tabs"} <= set(ids) and "c-linked" not in ids and "c-broken" not in ids
    assert joined[4] == [] and joined[5] == [] and joined[6] == [] and [h["id"] for h in joined[7]] == ["c-tabs"]
    assert [[h["id"] for h in hits] for hits in joined[8:]] == [["c-glob"], ["c-glob"], ["c-glob"], []]


def test_the_scan_of_the_kept_values_reads_the_search_s_own_index(repo: Repo) -> None:
    """The kept values are scanned from the index `files_search_text` (folder, name, stamp and the
    search's value), not from the rows, which hold every view's JSON; an index kept by the
    version before it (schema 10, without it) is rebuilt, and answers the same."""
    import sqlite3

    from majordomus.knowledge import search as searching
    from majordomus.store import index, listing
    from majordomus.store.workspace import Workspace

    build(repo)
    expected = search(repo, "tabs")
    path = repo.root / ".ai" / "local" / "state" / index.FILE
    with sqlite3.connect(path) as db:
        db.execute("DROP INDEX files_search_text")
        db.execute("UPDATE meta SET value = '10' WHERE key = 'schema'")
    db.close()
    assert search(repo, "tabs") == expected
    ws = Workspace(repo.root)
    listing.listing(ws)
    scans: list[str] = []
    db = index.of(ws).db()
    assert db is not None
    db.set_trace_callback(scans.append)
    assert [h["id"] for h in searching.search(ws, "tabs")] == [h["id"] for h in expected]
    glob = [s for s in scans if "GLOB" in s]
    assert glob and all("INDEXED BY files_search_text" in s for s in glob)
    plan = db.execute("EXPLAIN QUERY PLAN SELECT stamp, search FROM files INDEXED BY files_search_text "
                      "WHERE folder IN ('a', 'b') AND search GLOB '*x*'").fetchall()
    assert "COVERING INDEX files_search_text" in str(plan)


def test_a_search_and_the_mcp_server_s_search_import_no_typing(repo: Repo) -> None:
    """The readers' modules on a search's path (the command line's and the MCP server's) take
    their annotations' names under TYPE_CHECKING and their records from base/lean.py: `typing`
    (with `contextlib`, ~2-3 ms) is not imported."""
    build(repo)

    def imported(*args: str, input: str | None = None) -> set[str]:
        return _imported(repo, *args, input=input)

    assert "majordomus.knowledge.search" in imported("knowledge", "search", "tabs")
    assert "typing" not in imported("knowledge", "search", "tabs", "--json")
    messages = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "knowledge_base_search", "arguments": {"text": "tabs"}}}]
    served = imported("mcp", input="".join(json.dumps(m) + "\n" for m in messages))
    assert "majordomus.knowledge.search" in served and "typing" not in served


def test_the_queue_readers_import_no_typing(repo: Repo) -> None:
    """`knowledge candidates` (text and `--json`) and `knowledge status` (the queue's order, its
    ages, freshness) declare their records with base/lean.py's NamedTuple: `typing` is not
    imported on their path either."""
    build(repo)
    for args in (("knowledge", "candidates"), ("knowledge", "candidates", "--json"), ("knowledge", "status"),
                 ("knowledge", "status", "--json")):
        modules = _imported(repo, *args)
        assert "majordomus.knowledge.agenda" in modules and "typing" not in modules, args
    assert "majordomus.knowledge.freshness" in _imported(repo, "knowledge", "status")


def _imported(repo: Repo, *args: str, input: str | None = None) -> set[str]:
    """The modules a command imports (`python -X importtime`'s names)."""
    proc = repo.mj(*args, input=input, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
