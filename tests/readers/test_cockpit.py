"""The cockpit's pages in a real headless browser (Debian's chromium, driven by selenium through
chromium-driver): the review queue at its home, a record, the status, the evidence pages and the
catalogue, loaded by `majordomus serve` on 127.0.0.1, followed link by link as a person would (no
link answers 404), checked for sideways scrolling at 320 px and at 1,600 px, asserted on what the
page shows, and saved as screenshots in the test's temporary folder (docs/cockpit-*.png were taken so).

`make browser` (run by .ci/run) installs chromium and chromium-driver where they are missing; where
they cannot be installed these tests skip and say why."""
from __future__ import annotations

import re
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import MAJORDOMUS, Repo
from kbstore import KB, Store, build

TIMEOUT = 30
CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser")) if p), None)
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip("no headless browser: chromium and chromium-driver are not installed here (`make browser` "
                "installs them with apt-get; .ci/run does it)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium (a test dependency: pip install -e '.[test]')")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.wait import WebDriverWait  # noqa: E402

HOSTILE = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script> & \"quoted\""
TEN = [f"Decision {n:02d} of the browser review" for n in range(1, 9)]


def _serve(root: Path) -> Iterator[str]:
    proc = subprocess.Popen([MAJORDOMUS, "serve", "--port", "0"], cwd=root, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline() if proc.stderr else ""
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", first)
        assert found, f"no address on the first stderr line: {first!r}"
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=TIMEOUT)


@pytest.fixture
def store(repo: Repo) -> Store:
    """kbstore's store (two candidates of e1, a curated record, two superseded) plus eight more
    candidates from episode e2 — ten in the queue — one of them with a hostile title and body."""
    built = build(repo)
    assert repo.hook("session-start", {"session_id": "e2", "source": "startup"}).returncode == 0
    repo.mj("start", "browser task", check=True)
    for text in TEN:
        repo.mj("decision", "add", text, "--why", "seen in the browser", check=True)
    repo.mj("decision", "add", HOSTILE + "\n\n# Heading <b>bold</b>\n\n- item `<code>`", check=True)
    assert repo.hook("session-end", {"session_id": "e2", "reason": "other"}).returncode == 0
    return built


@pytest.fixture
def served(store: Store) -> Iterator[tuple[Store, str]]:
    yield from ((store, base) for base in _serve(store.repo.root))


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A fresh headless chromium with a throwaway profile; it, its driver and selenium keep their
    caches and settings in a home of their own under the test's folder, never the user's."""
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    home = tmp_path / "browser-home"
    home.mkdir()
    for key, value in (("HOME", home), ("XDG_CONFIG_HOME", home / ".config"), ("XDG_CACHE_HOME", home / ".cache"),
                       ("SE_CACHE_PATH", home / ".cache" / "selenium")):
        monkeypatch.setenv(key, str(value))
    monkeypatch.setenv("SE_OFFLINE", "true")  # selenium never looks anything up on the network

    options = Options()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1280,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=str(DRIVER)), options=options)
    driver.set_page_load_timeout(TIMEOUT)
    try:
        yield driver
    finally:
        driver.quit()


def shot(driver: Any, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    assert driver.save_screenshot(str(path)), f"no screenshot saved at {path}"
    assert path.stat().st_size > 1000
    return path


def text(driver: Any, css: str) -> str:
    return str(driver.find_element(By.CSS_SELECTOR, css).text)


def no_horizontal_scroll(driver: Any) -> bool:
    return bool(driver.execute_script(
        "return document.documentElement.scrollWidth <= window.innerWidth + 1"))


def too_wide(driver: Any) -> list[str]:
    """The elements that reach past the window's right edge (what makes a page scroll sideways)."""
    return list(driver.execute_script(
        "const w = window.innerWidth; return Array.from(document.querySelectorAll('body *'))"
        ".filter(e => e.getBoundingClientRect().right > w + 1)"
        ".map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right) + ' '"
        " + (e.textContent || '').slice(0, 60))"))


def test_a_person_reviews_ten_candidates_in_the_browser(served: tuple[Store, str], browser: Any,
                                                       tmp_path: Path) -> None:
    """The home is the review queue, read like a pull-request review: each candidate's title and
    body first, its evidence in words, its wait, the commands that act on it; its page one click away."""
    store, base = served
    browser.set_window_size(960, 720)  # the screenshots' size (docs/cockpit-*.png)
    browser.get(base + "/")
    assert browser.title == "review queue · majordomus"
    assert text(browser, "h1") == "Review queue (11)"
    assert browser.find_elements(By.TAG_NAME, "script") == []
    cards = browser.find_elements(By.CSS_SELECTOR, "article.card")
    assert len(cards) == 11
    titles = [c.find_element(By.CSS_SELECTOR, "h2").text for c in cards]
    assert set(TEN) <= set(titles) and "Tabs are refused in the parser" in titles
    assert HOSTILE in titles  # shown as text, never as markup
    first = cards[0].text
    assert first.index(titles[0]) < first.index("Evidence") < first.index("majordomus knowledge promote")
    assert "episode e" in first and ", on main" in first and "waiting" in first and "(main)" in first
    codes = [c.text for c in cards[0].find_elements(By.CSS_SELECTOR, "pre code")]
    rid = cards[0].get_attribute("id")
    assert codes == [f"majordomus knowledge promote {rid} <<'EOF'\nhow you checked it, in your own words\nEOF",
                     f'majordomus knowledge reject {rid} --reason "why, in your own words"']
    verified = browser.find_elements(By.CSS_SELECTOR, "ul.lines li a")
    assert [a.text for a in verified] == ["Tabs are refused by the parser"]
    shot(browser, tmp_path, "queue")

    reviewed = []
    for n in range(10):  # ten candidates, each reached from the queue by its link: no id typed
        browser.get(base + "/")
        card = browser.find_elements(By.CSS_SELECTOR, "article.card")[n]
        title = card.find_element(By.CSS_SELECTOR, "h2").text
        rid = card.get_attribute("id")
        card.find_element(By.CSS_SELECTOR, "h2 a").click()
        WebDriverWait(browser, TIMEOUT).until(lambda d: d.current_url.endswith(f"/record/{rid}"))
        assert text(browser, "h1") == title
        assert title.split("\n")[0][:20] in text(browser, ".body")
        page = str(browser.find_element(By.TAG_NAME, "main").text)
        assert page.index("Evidence") < page.index("Act on it") < page.index("Front matter")
        assert "episode e" in page and "waiting" in page  # provenance in words, its wait
        assert f"majordomus knowledge reject {rid}" in page
        reviewed.append(rid)
        if n == 0:
            shot(browser, tmp_path, "record")
    assert len(set(reviewed)) == 10

    browser.get(base + "/cockpit/knowledge_base/record/c-tabs")  # a provenance link to another record
    assert text(browser, "h1") == "Tabs are refused by the parser"
    assert "# Evidence" not in text(browser, ".body") and browser.find_elements(By.CSS_SELECTOR, ".body h3")
    browser.find_element(By.PARTIAL_LINK_TEXT, "Tabs are refused in the parser").click()
    WebDriverWait(browser, TIMEOUT).until(lambda d: d.current_url.endswith(store.decision))
    assert browser.current_url.endswith(f"/cockpit/knowledge_base/record/{store.decision}")
    assert text(browser, "h1") == "Tabs are refused in the parser"

    browser.get(base + "/cockpit/knowledge_base/status")
    assert text(browser, "h1") == "Status"
    status = str(browser.find_element(By.TAG_NAME, "main").text)
    assert "candidate(s) await review" in status and "The knowledge writer" in status and "{" not in status
    shot(browser, tmp_path, "status")


def _crawl(browser: Any, base: str, start: list[str]) -> dict[str, str]:
    """Every cockpit page reachable from `start` by its links: url -> its h1."""
    seen: dict[str, str] = {}
    todo = [base + s for s in start]
    while todo:
        url = todo.pop()
        if url in seen:
            continue
        browser.get(url)
        seen[url] = text(browser, "h1")
        hrefs = [a.get_attribute("href") for a in browser.find_elements(By.CSS_SELECTOR, "a[href]")]
        todo += [h.split("#")[0] for h in hrefs if h.startswith(base) and "/openapi.json" not in h
                 and not h.startswith(base + "/knowledge_base/") and h.split("#")[0] not in seen]
    return seen


def test_every_link_resolves_and_nothing_overflows(served: tuple[Store, str], browser: Any, tmp_path: Path) -> None:
    """Followed link by link from the queue: no page is a 404 (nor any other refusal), and at 320 px
    and at 1,600 px none scrolls sideways."""
    store, base = served
    seen = _crawl(browser, base, ["/", "/cockpit/knowledge_base/record/old-rule"])
    refused = {u: h for u, h in seen.items() if h.isdigit()}
    assert not refused, refused
    paths = {re.sub(r"/[^/]+$", "/…", u[len(base):]) for u in seen}
    assert {"/", "/cockpit/evidence/session/…", "/cockpit/evidence/task/…", "/cockpit/evidence/commit/…",
            "/cockpit/knowledge_base/record/…", "/cockpit/"} <= paths, paths
    for status, _, _ in (_request(u) for u in seen):
        assert status == 200
    for width in (320, 1600):
        browser.set_window_size(width, 900)
        for url in seen:
            browser.get(url)
            assert browser.execute_script("return window.innerWidth") <= width
            assert no_horizontal_scroll(browser), (f"{url} scrolls sideways at {width} px", too_wide(browser))
        if width == 320:
            browser.get(base + "/")
            shot(browser, tmp_path, "phone-queue")


def test_records_are_text_never_markup(served: tuple[Store, str], browser: Any, tmp_path: Path) -> None:
    store, base = served
    browser.get(base + "/cockpit/knowledge_base/candidates")
    row = next(r for r in browser.find_elements(By.CSS_SELECTOR, "tbody tr") if "window.pwned" in r.text)
    row.find_element(By.CSS_SELECTOR, "td a").click()
    WebDriverWait(browser, TIMEOUT).until(lambda d: "/record/" in d.current_url)
    assert text(browser, "h1") == HOSTILE
    body = browser.find_element(By.CSS_SELECTOR, ".body")
    assert HOSTILE in body.text
    assert [h.text for h in body.find_elements(By.TAG_NAME, "h3")] == ["Heading <b>bold</b>"]
    assert [c.text for c in body.find_elements(By.TAG_NAME, "code")] == ["<code>"]
    assert browser.find_elements(By.TAG_NAME, "script") == [] and browser.find_elements(By.TAG_NAME, "img") == []
    assert browser.execute_script("return window.pwned === undefined")
    resources = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert resources == []  # nothing loaded: no script, no style sheet, no image, no font
    shot(browser, tmp_path, "hostile")


def test_the_catalogue_form_and_the_refusals(served: tuple[Store, str], browser: Any, tmp_path: Path) -> None:
    store, base = served
    browser.get(base + "/cockpit/")
    field = browser.find_element(By.CSS_SELECTOR, "form input[name=id]")
    field.send_keys(store.lesson)
    browser.find_element(By.CSS_SELECTOR, "form button").click()
    WebDriverWait(browser, TIMEOUT).until(lambda d: "?id=" in d.current_url)  # a submit navigates later
    assert browser.current_url == f"{base}/cockpit/knowledge_base/record?id={store.lesson}"
    assert text(browser, "h1") == "a task: the lexer is shared with the formatter"  # a lesson names its task
    browser.get(base + "/cockpit/knowledge_base/record/no-such-record")
    assert text(browser, "h1") == "404"
    assert "no knowledge record 'no-such-record'" in text(browser, ".error")
    browser.get(base + "/cockpit/knowledge_base/record/..%2Fpolicy")
    assert text(browser, "h1") == "400"
    shot(browser, tmp_path, "refused")


def _request(url: str, method: str = "GET", host: str | None = None) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, method=method, data=b"x" if method == "POST" else None)
    if host:
        request.add_header("Host", host)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return response.status, dict(response.headers), response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode("utf-8")


def test_read_only_loopback_and_headers(served: tuple[Store, str]) -> None:
    store, base = served
    status, headers, page = _request(base + "/cockpit/knowledge_base/candidates")
    assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
    assert headers["Content-Security-Policy"].startswith("default-src 'none'; style-src 'sha256-")
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert "<script" not in page and "http://" not in page.split("</footer>")[0].split("<main>")[1]
    assert status == 200 and store.decision in page
    status, headers, page = _request(base + "/cockpit/knowledge_base/candidates", method="POST")
    assert status == 405 and headers["Allow"] == "GET, HEAD" and "read-only" in page
    status, _, page = _request(base + "/cockpit/", host="attacker.example")
    assert status == 421 and "attacker.example" in page and "<h1>421</h1>" in page
    assert (store.repo.root / KB / "candidates" / f"{store.decision}.md").is_file()  # nothing changed
