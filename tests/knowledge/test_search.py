"""`majordomus knowledge search TEXT [--class C] [--status S] [--json]`: titles and bodies of both
folders, every word, any case; status shown; superseded records found and said to be so."""
from __future__ import annotations

import json

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
