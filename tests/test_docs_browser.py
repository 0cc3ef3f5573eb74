"""The built documentation site renders in a real headless browser (Debian's Chromium).

Opens the index page, a user-guide page and the gallery's example pages from
``docs/_build/html`` (served on 127.0.0.1), and checks that every image loaded (complete, with
a natural width), that a gallery page has at least one figure, that the browser logged no
severe error from the site's own scripts and that no request for a file of the site failed.
Screenshots (1280 px wide, up to the full page height) go to ``$STRUCTREG_DOCS_SCREENSHOTS``
(default: a temporary folder, printed).

Skipped when the site has not been built (``make -C docs html``) or Chromium, its driver or
Selenium is missing -- unless ``STRUCTREG_DOCS_BROWSER=require`` (CI), where that fails.
Resources of other origins (MathJax from its CDN) are outside the test: the machine may be
offline; their failures are printed, not counted.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[1] / "docs" / "_build" / "html"
REQUIRE = os.environ.get("STRUCTREG_DOCS_BROWSER", "") == "require"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
USER_GUIDE_PAGE = "user_guide/structures.html"
WIDTH, MAX_HEIGHT = 1280, 4000


def _unavailable(why: str):
    if REQUIRE:
        pytest.fail(f"STRUCTREG_DOCS_BROWSER=require, but {why}")
    pytest.skip(why)


def _pages() -> list[str]:
    gallery = sorted(p.name for p in (SITE / "auto_examples").glob("plot_*.html"))
    return ["index.html", USER_GUIDE_PAGE] + [f"auto_examples/{name}" for name in gallery[:2]]


@pytest.fixture(scope="module")
def server():
    if not (SITE / "index.html").is_file():
        _unavailable(f"the site is not built ({SITE}/index.html; run `make -C docs html`)")
    handler = functools.partial(_QuietHandler, directory=str(SITE))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


@pytest.fixture(scope="module")
def browser():
    if not (Path(CHROMIUM).is_file() and Path(CHROMEDRIVER).is_file()):
        _unavailable(f"Chromium or its driver is missing ({CHROMIUM}, {CHROMEDRIVER})")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable('Selenium is not installed (pip install -e ".[docs]")')
    profile = tempfile.mkdtemp(prefix="structreg-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
        f"--window-size={WIDTH},900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # Debian's driver, so that Selenium Manager never downloads one
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def screenshots() -> Path:
    folder = os.environ.get("STRUCTREG_DOCS_SCREENSHOTS")
    path = Path(folder) if folder else Path(tempfile.mkdtemp(prefix="structreg-docs-shots-"))
    path.mkdir(parents=True, exist_ok=True)
    print(f"screenshots: {path}")
    return path


# wait until MathJax (2 from Debian's package, or 3/4 from the CDN) has typeset the page
TYPESET = """
const done = arguments[arguments.length - 1];
const mj = window.MathJax;
if (mj && mj.Hub && mj.Hub.Queue) { mj.Hub.Queue(() => done(true)); }
else if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(() => done(true), () => done(false));
} else { done(null); }
"""
IMAGES = """
return Array.from(document.images).map(img => ({
    src: img.currentSrc || img.src, complete: img.complete, width: img.naturalWidth,
    shown: img.getClientRects().length > 0}));
"""


def _failed_requests(driver, origin: str) -> tuple[list[str], list[str]]:
    """URLs of failed requests (network errors or HTTP >= 400): (same origin, other origins)."""
    urls: dict[str, str] = {}
    failed = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            urls[params["requestId"]] = params["request"]["url"]
        elif message["method"] == "Network.responseReceived":
            if params["response"]["status"] >= 400:
                failed.append(params["response"]["url"])
        elif message["method"] == "Network.loadingFailed" and not params.get("canceled"):
            failed.append(urls.get(params["requestId"], params["requestId"]))
    own = [url for url in failed if url.startswith(origin)]
    return own, [url for url in failed if not url.startswith(origin)]


@pytest.mark.parametrize("page", _pages() if (SITE / "index.html").is_file() else ["index.html"])
def test_page_renders_with_its_figures(page, server, browser, screenshots):
    if not (SITE / page).is_file():
        pytest.fail(f"{page} is not in the built site")
    browser.get_log("browser"), browser.get_log("performance")  # drop earlier pages' entries
    browser.get(f"{server}/{page}")
    browser.execute_script(
        "return Promise.all(Array.from(document.images).map(img => img.complete ? null :"
        " new Promise(done => { img.onload = img.onerror = done; })))"
    )

    assert browser.execute_async_script(TYPESET) is not False, f"{page}: MathJax failed"

    images = browser.execute_script(IMAGES)
    broken = [img["src"] for img in images if not img["complete"] or img["width"] == 0]
    assert not broken, f"{page}: images that did not load: {broken}"
    if page.startswith("auto_examples/"):
        figures = [img for img in images if "/_images/sphx_glr_" in img["src"] and img["shown"]]
        assert figures, f"{page}: a gallery page without a figure"

    own, other = _failed_requests(browser, server)
    assert not own, f"{page}: requests for files of the site failed: {own}"
    severe = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    errors = [m for m in severe if not any(m.startswith(url) for url in other)]
    if other:
        print(f"{page}: resources of other origins did not load (offline?): {other}")
    assert not errors, f"{page}: browser errors: {errors}"

    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(WIDTH, min(max(int(height), 900), MAX_HEIGHT))
    name = page.removesuffix(".html").replace("/", "__") + ".png"
    assert browser.save_screenshot(str(screenshots / name))
    browser.set_window_size(WIDTH, 900)


def test_the_gallery_has_two_pages_to_check():
    if not (SITE / "index.html").is_file():
        _unavailable(f"the site is not built ({SITE}/index.html; run `make -C docs html`)")
    gallery = [page for page in _pages() if page.startswith("auto_examples/")]
    assert len(gallery) == 2, f"the built gallery has fewer than two example pages: {gallery}"
