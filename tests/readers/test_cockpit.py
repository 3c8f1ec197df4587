"""The cockpit's pages in a real headless browser (Debian's chromium, driven by selenium through
chromium-driver): the catalogue, the queue, a record, the status — generated from the reader
declarations — loaded by `majordomus serve` on 127.0.0.1, followed link by link as a person would,
asserted on what the page shows, and saved as screenshots in the test's temporary folder.

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


def test_a_person_reviews_ten_candidates_in_the_browser(served: tuple[Store, str], browser: Any,
                                                       tmp_path: Path) -> None:
    store, base = served
    browser.get(base + "/")
    assert browser.title == "knowledge_base · majordomus"
    assert text(browser, "h1") == "knowledge_base"
    sections = [s.text for s in browser.find_elements(By.CSS_SELECTOR, "main h2")]
    assert sections == ["knowledge_base.candidates", "knowledge_base.record", "knowledge_base.status",
                        "knowledge_base.search"]
    assert browser.find_elements(By.TAG_NAME, "script") == []
    shot(browser, tmp_path, "catalogue")

    browser.find_element(By.LINK_TEXT, "knowledge_base.candidates").click()
    WebDriverWait(browser, TIMEOUT).until(lambda d: d.current_url.endswith("/candidates"))
    assert browser.current_url == base + "/cockpit/knowledge_base/candidates"
    assert text(browser, "h1") == "the candidates awaiting review (11)"
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "thead th")]
    assert headers == ["id", "title", "class", "branch", "waiting", "tracked by git"]
    rows = browser.find_elements(By.CSS_SELECTOR, "tbody tr")
    titles = [r.find_elements(By.TAG_NAME, "td")[1].text for r in rows]
    assert set(TEN) <= set(titles) and "Tabs are refused in the parser" in titles
    assert HOSTILE in titles  # shown as text, never as markup
    shot(browser, tmp_path, "queue")

    reviewed = []
    for n in range(10):  # ten candidates, each reached from the queue by its link: no id typed
        browser.get(base + "/cockpit/knowledge_base/candidates")
        row = browser.find_elements(By.CSS_SELECTOR, "tbody tr")[n]
        title = row.find_elements(By.TAG_NAME, "td")[1].text
        link = row.find_element(By.CSS_SELECTOR, "td a")
        rid = link.text
        link.click()
        WebDriverWait(browser, TIMEOUT).until(lambda d: d.current_url.endswith(f"/record/{rid}"))
        assert browser.current_url == f"{base}/cockpit/knowledge_base/record/{rid}"
        assert text(browser, "h1") == title
        body = text(browser, ".body")
        assert title.split("\n")[0][:20] in body
        page = str(browser.find_element(By.TAG_NAME, "main").text)
        assert "derived_from" in page and "episode e" in page  # provenance, resolved in words
        assert "waiting" in page and "this branch" in page  # its place in the queue
        reviewed.append(rid)
        if n == 0:
            shot(browser, tmp_path, "record")
    assert len(set(reviewed)) == 10

    browser.get(base + "/cockpit/knowledge_base/record/c-tabs")  # a provenance link to another record
    assert text(browser, "h1") == "Tabs are refused by the parser"
    assert "# Evidence" not in text(browser, ".body") and browser.find_elements(By.CSS_SELECTOR, ".body h3")
    browser.find_element(By.LINK_TEXT, store.decision).click()
    WebDriverWait(browser, TIMEOUT).until(lambda d: d.current_url.endswith(store.decision))
    assert browser.current_url.endswith(f"/cockpit/knowledge_base/record/{store.decision}")
    assert text(browser, "h1") == "Tabs are refused in the parser"

    browser.get(base + "/cockpit/knowledge_base/status")
    assert text(browser, "h1") == "counts, review queue, last derivation, writer freshness"
    status = str(browser.find_element(By.TAG_NAME, "main").text)
    assert "by status" in status and "candidate" in status and "writer" in status
    shot(browser, tmp_path, "status")


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


def test_readable_on_a_phone(served: tuple[Store, str], browser: Any, tmp_path: Path) -> None:
    store, base = served
    browser.set_window_size(390, 844)
    for path, name in (("/", "phone-catalogue"), ("/cockpit/knowledge_base/candidates", "phone-queue"),
                       (f"/cockpit/knowledge_base/record/{store.decision}", "phone-record"),
                       ("/cockpit/knowledge_base/status", "phone-status")):
        browser.get(base + path)
        assert browser.execute_script("return window.innerWidth") <= 400
        assert no_horizontal_scroll(browser), f"{path} scrolls sideways on a phone"
        shot(browser, tmp_path, name)
    browser.get(base + "/cockpit/knowledge_base/candidates")
    cell = browser.find_element(By.CSS_SELECTOR, "tbody td")
    assert cell.value_of_css_property("display") == "block"  # rows stacked as cards


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
