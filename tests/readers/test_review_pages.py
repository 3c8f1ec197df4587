"""The cockpit's review pages without a browser: the queue at `/`, a record, the status and the
evidence pages, rendered from a real store (kbstore: real hooks, real git), every link on them
followed through the same router the server uses — none answers 404 — and what a reviewer needs
on each: the text first, the evidence in words, the wait, the exact commands, short shas."""
from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

from conftest import Repo
from kbstore import KB, build

from majordomus.readers import cockpit, httpd


class Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.hrefs += [v for k, v in attrs if tag == "a" and k == "href" and v]


def links(page: str) -> list[str]:
    parser = Links()
    parser.feed(page)
    return parser.hrefs


def fetch(root: object, href: str) -> tuple[int, str]:
    path = urlsplit(href).path
    if cockpit.owns(path):
        return cockpit.page(root, href)
    status, data = httpd.respond(root, "GET", href)  # type: ignore[arg-type]
    return status, str(data)


def crawl(root: object, *start: str) -> dict[str, int]:
    """Every page reachable from `start`, by its links, with its status."""
    seen: dict[str, int] = {}
    todo = list(start)
    while todo:
        href = todo.pop()
        if href in seen:
            continue
        status, page = fetch(root, href)
        seen[href] = status
        if status == 200 and "<html" in page:
            todo += [h for h in links(page) if h.startswith("/") and h not in seen]
    return seen


def test_the_home_is_the_review_queue(repo: Repo) -> None:
    store = build(repo)
    status, page = cockpit.page(repo.root, "/")
    assert status == 200
    assert "<h1>Review queue (2)</h1>" in page
    first = page.index(f'<article class="card" id="{store.decision}"')
    assert page.index("Tabs are refused in the parser", first) < page.index("<h3>Evidence</h3>", first)  # text first
    assert "episode e1, on main" in page and "/cockpit/evidence/session/e1" in page
    assert "task “a task”" in page and "/cockpit/evidence/task/" in page
    assert f"majordomus knowledge promote {store.decision} &lt;&lt;&#x27;EOF&#x27;" in page
    assert f"majordomus knowledge reject {store.decision} --reason" in page
    assert "waiting " in page
    assert "<h2>Verified records (1)</h2>" in page and 'href="/cockpit/knowledge_base/record/c-tabs"' in page
    assert "<script" not in page


def test_every_link_resolves(repo: Repo) -> None:
    build(repo)
    seen = crawl(repo.root, "/", "/cockpit/knowledge_base/record/old-rule")  # a superseded one, not linked
    bad = {h: s for h, s in seen.items() if s != 200}
    assert not bad, bad
    kinds = {re.sub(r"/[^/]+$", "/…", unquote(h)) for h in seen}
    assert {"/cockpit/evidence/session/…", "/cockpit/evidence/task/…", "/cockpit/knowledge_base/record/…",
            "/"} <= kinds, kinds
    assert "/cockpit/knowledge_base/status" in seen
    assert any(h.startswith("/cockpit/evidence/commit/") for h in seen), sorted(seen)  # old-rule's commit


def test_a_record_shortens_shas_and_the_status_reads_as_sentences(repo: Repo) -> None:
    store = build(repo)
    _, page = cockpit.page(repo.root, "/cockpit/knowledge_base/record/old-rule")
    assert f'<code title="{store.sha}">{store.sha[:12]}</code>' in page
    assert f">{store.sha}<" not in page  # never the whole sha as text
    assert "Superseded by" in page and 'href="/cockpit/knowledge_base/record/c-tabs"' in page
    _, commit = cockpit.page(repo.root, f"/cockpit/evidence/commit/{store.sha}")
    assert "<h1>a candidate</h1>" in commit and f"{KB}/candidates/" in commit
    status, page = cockpit.page(repo.root, "/cockpit/knowledge_base/status")
    assert status == 200 and "<h1>Status</h1>" in page
    assert "candidate(s)</a> await review" in page and "{" not in page.split("<main>")[1].split("</main>")[0]
    _, search = cockpit.page(repo.root, "/cockpit/knowledge_base/search?text=tabs")
    assert 'href="/cockpit/knowledge_base/record/c-tabs"' in search  # search results: ids are links


def test_evidence_pages_refuse_what_names_nothing(repo: Repo) -> None:
    build(repo)
    assert cockpit.page(repo.root, "/cockpit/evidence/session/..%2Fpolicy")[0] in (400, 404)
    assert cockpit.page(repo.root, "/cockpit/evidence/session/nope")[0] == 404
    assert cockpit.page(repo.root, "/cockpit/evidence/commit/--output=x")[0] == 404
    assert cockpit.page(repo.root, "/cockpit/evidence/task/nope")[0] == 404
    assert cockpit.page(repo.root, "/cockpit/evidence/nothing/x")[0] == 404
