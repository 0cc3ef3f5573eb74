"""The built documentation site renders in a real headless browser (Debian's Chromium) with the
network blocked.

Serves ``docs/_build/html`` on 127.0.0.1 and opens every HTML page of the site (all but the
theme's template fragments under ``_static/``) in one Chromium session whose every request to
another host goes to a local proxy that refuses it (and whose name lookups all fail but for
127.0.0.1).  On each page:

* the page asked for nothing from another host: no such request was made, and no script,
  style sheet, font, image or frame of the page points at one (links to other sites are fine);
* no request for a file of the site failed, and the browser logged no severe error;
* every image loaded (complete, with a natural width), and a gallery page shows a figure;
* no raw TeX (``\\frac``, ``\\(``, ``$$``, ...) is left in the page's text outside code, and
  on a page with math every formula is typeset by the site's own MathJax
  (``_static/mathjax``): as many ``mjx-container`` elements as math elements, no MathJax error;
* no link or address points at a ``.invalid`` host (a placeholder address);
* no table runs past the text column unless it sits in a box that scrolls sideways.

The checker itself is tested on every run: pages planted in a temporary site (a script from a
CDN, a font from another host, a broken image, raw TeX, a placeholder link) must be reported,
and a clean one must not.

Screenshots (1280 px wide, up to the full page height) of the index, "Which estimator?", the
benchmarks, a user-guide page and a gallery page go to ``$STRUCTREG_DOCS_SCREENSHOTS``
(default: a temporary folder, printed); ``.ci/run`` copies them to CI's output folder.

Skipped when the site has not been built (``make -C docs html``) or Chromium, its driver or
Selenium is missing -- unless ``STRUCTREG_DOCS_BROWSER=require`` (CI), where that fails.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import shutil
import socketserver
import tempfile
import threading
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[1] / "docs" / "_build" / "html"
REQUIRE = os.environ.get("STRUCTREG_DOCS_BROWSER", "") == "require"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
GALLERY_PAGE = "auto_examples/plot_gfhf_vs_label_spreading.html"
SCREENSHOT_PAGES = (
    "index.html",
    "which_estimator.html",
    "benchmarks.html",
    "user_guide/structures.html",
    GALLERY_PAGE,
)
# files the theme copies into _static/ (webpack-macros.html: Jinja macros), not pages
NOT_PAGES = ("_static/",)
WIDTH, MAX_HEIGHT = 1280, 4000
MATH_MARK = 'class="math notranslate'


def _unavailable(why: str):
    if REQUIRE:
        pytest.fail(f"STRUCTREG_DOCS_BROWSER=require, but {why}")
    pytest.skip(why)


def _pages(site: Path = SITE) -> list[str]:
    """Every page of the built site: the screenshot pages, then the others in order."""
    found = [path.relative_to(site).as_posix() for path in sorted(site.rglob("*.html"))]
    rest = [page for page in found if not page.startswith(NOT_PAGES)]
    return [page for page in SCREENSHOT_PAGES if page in rest] + [
        page for page in rest if page not in SCREENSHOT_PAGES
    ]


def _has_math(html: str) -> bool:
    return MATH_MARK in html


@contextlib.contextmanager
def _serve(folder: Path):
    """A local HTTP server of `folder`; yields its origin (``http://127.0.0.1:PORT``)."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(scope="module")
def server():
    if not (SITE / "index.html").is_file():
        _unavailable(f"the site is not built ({SITE}/index.html; run `make -C docs html`)")
    with _serve(SITE) as origin:
        yield origin


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


class _RefusingProxy(socketserver.ThreadingTCPServer):
    """An HTTP proxy on 127.0.0.1 that answers every request (CONNECT included) with 403 and
    remembers what was asked: the browser's only way to another host."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _RefuseHandler)
        self.asked: list[str] = []


class _RefuseHandler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline(8192).decode("latin-1").strip()
        if line:
            self.server.asked.append(line)
        self.wfile.write(
            b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )


@pytest.fixture(scope="module")
def proxy():
    server = _RefusingProxy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(proxy):
    """One Chromium session for all the pages of the module."""
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
        # the network is blocked: every request to another host goes to the refusing proxy
        # (requests to 127.0.0.1, the site, bypass it), and no other name resolves
        f"--proxy-server=http://127.0.0.1:{proxy.server_address[1]}",
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
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


# wait until every image has loaded or failed (a lazy one is asked to load now)
IMAGES_SETTLED = """
const done = arguments[arguments.length - 1];
Promise.all(Array.from(document.images).map(img => {
    if (img.loading === 'lazy') { img.loading = 'eager'; }
    return img.complete ? null : new Promise(ok => { img.onload = img.onerror = ok; });
})).then(() => done(true));
"""
# wait until MathJax 3 has typeset the page (true), failed (false), or is absent (null)
TYPESET = """
const done = arguments[arguments.length - 1];
const mj = window.MathJax;
if (mj && mj.startup && mj.startup.promise) {
    mj.startup.promise.then(() => done(true), () => done(false));
} else { done(null); }
"""
# everything the checker reads from the page, in one call
INSPECT = r"""
const here = location.origin;
const resolve = (value, base) => {
    try { return new URL(value.trim(), base || document.baseURI); } catch (e) { return null; }
};
const offsite = url => url && /^(https?|wss?):$/.test(url.protocol) && url.origin !== here;

// math and raw TeX: the text outside code, typeset formulas and scripts
const maths = Array.from(document.querySelectorAll('.math'));
const body = document.body.cloneNode(true);
for (const el of body.querySelectorAll(
        'pre, code, kbd, samp, script, style, textarea, mjx-container')) {
    el.remove();
}
const text = body.textContent;
const tex = new RegExp(
    String.raw`\\(?:d?frac|sum|prod|int|sqrt|mathbf|mathrm|mathcal|mathbb|operatorname`
    + String.raw`|text|top|alpha|beta|gamma|delta|lambda|sigma|mu|ell|left|right|begin|end`
    + String.raw`|cdot|times|le|ge|leq|geq|in|hat|tilde|bar)(?![A-Za-z])`
    + String.raw`|\\[()\[\]]|\$\$`
    + String.raw`|(?<![\w$\\])\$(?=\S)[^$\n]{0,80}[\\^_{}][^$\n]{0,80}(?<=\S)\$(?![\w$])`, 'g');
const raw = (text.match(tex) || []).slice(0, 5);

// images
const images = Array.from(document.images).map(img => ({
    src: img.currentSrc || img.src, complete: img.complete, width: img.naturalWidth,
    shown: img.getClientRects().length > 0}));

// what the page loads from another host: scripts, style sheets, fonts, images, frames
const loads = new Set();
const SRC = 'script[src], img[src], iframe[src], frame[src], embed[src], source[src], '
    + 'video[src], audio[src], track[src], input[type=image][src]';
for (const el of document.querySelectorAll(SRC)) {
    const url = resolve(el.getAttribute('src'));
    if (offsite(url)) { loads.add(`<${el.localName}> ${url.href}`); }
}
for (const el of document.querySelectorAll('img[srcset], source[srcset]')) {
    for (const part of el.getAttribute('srcset').split(',')) {
        const url = resolve(part.trim().split(/\s+/)[0] || '');
        if (offsite(url)) { loads.add(`<${el.localName} srcset> ${url.href}`); }
    }
}
for (const el of document.querySelectorAll('object[data], video[poster]')) {
    const url = resolve(el.getAttribute(el.localName === 'object' ? 'data' : 'poster'));
    if (offsite(url)) { loads.add(`<${el.localName}> ${url.href}`); }
}
const LOADING_RELS = ['stylesheet', 'preload', 'modulepreload', 'prefetch', 'preconnect',
    'dns-prefetch', 'prerender', 'icon', 'apple-touch-icon', 'mask-icon', 'manifest'];
for (const el of document.querySelectorAll('link[href]')) {
    const rels = (el.getAttribute('rel') || '').toLowerCase().split(/\s+/);
    const url = resolve(el.getAttribute('href'));
    if (rels.some(rel => LOADING_RELS.includes(rel)) && offsite(url)) {
        loads.add(`<link rel="${rels.join(' ')}"> ${url.href}`);
    }
}
// url(...) and @import in the page's style sheets and style attributes (fonts, images); a
// style sheet file already read on an earlier page (arguments[0]) is not read again: the caller
// keeps what was found in it
const CSS_URL = /(?:url\(\s*["']?|@import\s+["'])([^"')\s]+)/g;
const cssUrls = (css, base, where, into) => {
    for (const match of css.matchAll(CSS_URL)) {
        const url = resolve(match[1], base);
        if (offsite(url)) { into.add(`${where} ${url.href}`); }
    }
};
const known = new Set(arguments[0]);
const sheets = [], found = {};
for (const sheet of document.styleSheets) {
    if (sheet.href) { sheets.push(sheet.href); }
    if (sheet.href && known.has(sheet.href)) { continue; }
    let rules;
    try { rules = sheet.cssRules; } catch (e) { continue; }  // another host's: reported above
    const into = sheet.href ? new Set() : loads;
    const where = sheet.href ? `css ${sheet.href.replace(here, '')}:` : 'css <style>:';
    const base = sheet.href || document.baseURI;
    for (const rule of rules) { cssUrls(rule.cssText, base, where, into); }
    if (sheet.href) { found[sheet.href] = Array.from(into); }
}
for (const el of document.querySelectorAll('[style]')) {
    cssUrls(el.getAttribute('style'), document.baseURI, `<${el.localName} style>`, loads);
}

// addresses at a .invalid host (placeholders), in any attribute or in the text
const invalid = new Set();
const HOST = /(?:^|[\s,("'=])(?:[a-z][a-z0-9+.-]*:)?\/\/([^\/?#\s:"'),]+)/gi;
const isInvalid = host => /(^|\.)invalid\.?$/i.test(host);
for (const el of document.querySelectorAll('*')) {
    for (const attr of el.attributes) {
        for (const match of attr.value.matchAll(HOST)) {
            if (isInvalid(match[1])) {
                invalid.add(`<${el.localName} ${attr.name}> ${attr.value}`);
            }
        }
    }
}
for (const match of document.body.textContent.matchAll(HOST)) {
    if (isInvalid(match[1])) { invalid.add(`text: ${match[0].trim()}`); }
}

// tables whose right edge passes the text column's and that no sideways-scrolling box holds
const article = document.querySelector('.bd-article') || document.body;
const right = article.getBoundingClientRect().right;
const cut = Array.from(article.querySelectorAll('table')).filter(table => {
    if (table.getBoundingClientRect().right <= right + 1) { return false; }
    for (let el = table; el && el !== article; el = el.parentElement) {
        const overflow = getComputedStyle(el).overflowX;
        if ((overflow === 'auto' || overflow === 'scroll') && el.scrollWidth > el.clientWidth
            && el.getBoundingClientRect().right <= right + 1) { return false; }
    }
    return true;
}).map(table => (table.querySelector('th') || table).textContent.trim().slice(0, 60));

return {
    math: maths.length,
    typeset: maths.filter(m => m.querySelector('mjx-container')).length,
    errors: document.querySelectorAll('mjx-merror').length,
    raw: raw, images: images, loads: Array.from(loads), invalid: Array.from(invalid), cut: cut,
    sheets: sheets, found: found,
};
"""


def _requests(driver, origin: str) -> tuple[list[str], list[str]]:
    """(failed requests for the site's files, requests for anything of another origin)."""
    urls: dict[str, str] = {}
    failed, offsite = [], []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls[params["requestId"]] = url
            # the network: http(s) and web sockets (not data:, blob:, nor Chromium's own
            # chrome:// pages, which its new-tab page loads)
            if url.startswith(("http", "ws")) and not url.startswith(origin):
                offsite.append(url)
        elif message["method"] == "Network.responseReceived":
            if params["response"]["status"] >= 400:
                failed.append(params["response"]["url"])
        elif message["method"] == "Network.loadingFailed" and not params.get("canceled"):
            failed.append(urls.get(params["requestId"], params["requestId"]))
    own = [url for url in failed if url.startswith(origin)]
    return list(dict.fromkeys(own)), list(dict.fromkeys(offsite))


# each style sheet file the pages use (its address): what it loads from another host; read
# once, on the first page that has it
_SHEETS: dict[str, list[str]] = {}


def _check_page(driver, origin: str, page: str, html: str) -> dict[str, list[str]]:
    """What is wrong with `page` (served at `origin`; `html` its file's text) in the browser:
    the kinds of fault found, each with its instances; empty when nothing is."""
    driver.get_log("browser"), driver.get_log("performance")  # drop earlier pages' entries
    driver.get(f"{origin}/{page}")
    driver.execute_async_script(IMAGES_SETTLED)
    problems: dict[str, list[str]] = {}
    if _has_math(html):  # Sphinx puts MathJax only on pages with math
        state = driver.execute_async_script(TYPESET)
        if state is not True:
            problems["MathJax did not run"] = [{None: "no MathJax", False: "it failed"}[state]]
    seen = driver.execute_script(INSPECT, list(_SHEETS))
    _SHEETS.update(seen["found"])
    for sheet in seen["sheets"]:
        seen["loads"] += _SHEETS.get(sheet, [])

    if _has_math(html):
        if seen["math"] == 0:
            problems["the math elements are gone"] = [f"{MATH_MARK} in the file"]
        elif seen["typeset"] != seen["math"]:
            problems["formulas not typeset"] = [f"{seen['typeset']} of {seen['math']}"]
        if seen["errors"]:
            problems["formulas MathJax could not typeset"] = [str(seen["errors"])]
    if seen["raw"]:
        problems["raw TeX in the page's text"] = seen["raw"]

    images = seen["images"]
    broken = [img["src"] for img in images if not img["complete"] or img["width"] == 0]
    if broken:
        problems["images that did not load"] = broken
    if page.startswith("auto_examples/plot_"):
        if not [img for img in images if "/_images/sphx_glr_" in img["src"] and img["shown"]]:
            problems["a gallery page without a figure"] = [page]
    if seen["cut"]:
        problems[f"tables cut off at {WIDTH} px (no sideways scrolling)"] = seen["cut"]
    if seen["invalid"]:
        problems["addresses at a .invalid host (placeholders)"] = seen["invalid"]
    if seen["loads"]:
        problems["scripts, styles, fonts or images from another host"] = seen["loads"]

    own, offsite = _requests(driver, origin)
    if own:
        problems["requests for files of the site that failed"] = own
    # the page's own requests (the proxy also sees Chromium's background services)
    if offsite:
        problems["requests to another host (the page needs the network)"] = offsite
    severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    if severe:
        problems["browser errors"] = severe
    return problems


def _report(page: str, problems: dict[str, list[str]]) -> str:
    lines = [f"{page}:"] + [f"  {kind}: {found}" for kind, found in problems.items()]
    return "\n".join(lines)


def test_the_network_is_blocked(server, browser, proxy):
    """An off-site request from a page of the site reaches only the refusing proxy."""
    browser.get(f"{server}/index.html")
    outcome = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "fetch('http://offsite.invalid/probe.js').then(r => done('status ' + r.status),"
        " e => done('blocked'));"
    )
    assert outcome == "blocked", outcome
    assert any("offsite.invalid" in line for line in proxy.asked), proxy.asked


@pytest.mark.parametrize("page", _pages() if (SITE / "index.html").is_file() else ["index.html"])
def test_page_renders_offline(page, server, browser, screenshots):
    if not (SITE / page).is_file():
        _unavailable(f"{page} is not in the built site (rebuild it)")
    html = (SITE / page).read_text(encoding="utf-8", errors="replace")
    problems = _check_page(browser, server, page, html)
    if problems:
        pytest.fail(_report(page, problems), pytrace=False)

    if page in SCREENSHOT_PAGES:
        height = browser.execute_script("return document.documentElement.scrollHeight")
        browser.set_window_size(WIDTH, min(max(int(height), 900), MAX_HEIGHT))
        name = page.removesuffix(".html").replace("/", "__") + ".png"
        assert browser.save_screenshot(str(screenshots / name))
        browser.set_window_size(WIDTH, 900)


def test_the_site_has_the_pages_to_check():
    if not (SITE / "index.html").is_file():
        _unavailable(f"the site is not built ({SITE}/index.html; run `make -C docs html`)")
    missing = [page for page in SCREENSHOT_PAGES if not (SITE / page).is_file()]
    if missing:  # a site built from older sources (CI builds afresh, so there it fails)
        _unavailable(f"pages missing from the built site (rebuild it): {missing}")
    pages = _pages()
    with_math = [page for page in pages if _has_math((SITE / page).read_text(encoding="utf-8"))]
    assert len(with_math) >= 5, f"the built site has too few pages with math: {with_math}"
    assert (SITE / "_static" / "mathjax" / "tex-chtml.js").is_file(), "the site lacks MathJax"
    # every page but the theme's fragments under _static/ is checked
    every = {path.relative_to(SITE).as_posix() for path in SITE.rglob("*.html")}
    assert set(pages) == {page for page in every if not page.startswith(NOT_PAGES)}
    assert {"genindex.html", "search.html", GALLERY_PAGE} <= set(pages)


# -- the checker finds what it is there to find -----------------------------------------------
# Each planted page: its body, and what the checker must report there: kinds of fault, each with
# a string that must be among the instances reported.  A clean page must give no fault at all.
DOT_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><circle r="2"/></svg>'
FAR_CSS = (
    "@font-face { font-family: Far; src: url(https://fonts.example.com/far.woff2); }\n"
    "p { font-family: Far; }\n"
)
OFFSITE_REQUEST = "requests to another host (the page needs the network)"
OFFSITE_PART = "scripts, styles, fonts or images from another host"
PLANTED = {
    "clean.html": ('<p>Nothing is wrong here.</p><img src="dot.svg" alt="a dot">', {}),
    "cdn_script.html": (
        '<script src="https://cdn.example.com/x.js"></script><p>A script from a CDN.</p>',
        {
            OFFSITE_REQUEST: "https://cdn.example.com/x.js",
            OFFSITE_PART: "<script> https://cdn.example.com/x.js",
        },
    ),
    "cdn_font.html": (
        "<style>@font-face { font-family: Far; src: url(https://fonts.example.com/far.woff2); }"
        " p { font-family: Far; }</style><p>A font from another host.</p>",
        {
            OFFSITE_REQUEST: "https://fonts.example.com/far.woff2",
            OFFSITE_PART: "css <style>: https://fonts.example.com/far.woff2",
        },
    ),
    # a style sheet file with a font from another host: reported on every page that uses it
    # (on the second one from what was found in the file on the first)
    **{
        name: (
            '<link rel="stylesheet" href="far.css"><p>A font from another host.</p>',
            {
                OFFSITE_REQUEST: "https://fonts.example.com/far.woff2",
                OFFSITE_PART: "css /far.css: https://fonts.example.com/far.woff2",
            },
        )
        for name in ("font_in_sheet.html", "font_in_sheet_again.html")
    },
    "broken_image.html": (
        '<p>An image that is not there.</p><img src="missing.png" alt="missing">',
        {
            "images that did not load": "/missing.png",
            "requests for files of the site that failed": "/missing.png",
        },
    ),
    "raw_tex.html": (
        r"<p>The loss \(\frac{1}{n} \sum_i \ell_i\) was not typeset.</p>",
        {"raw TeX in the page's text": r"\frac"},
    ),
    "raw_dollars.html": (
        r"<p>Neither was $$\lVert w \rVert^2$$ nor $x_i^\top w$.</p>",
        {"raw TeX in the page's text": "$x_i^\\top w$"},
    ),
    "placeholder_link.html": (
        '<p>The <a href="https://structreg.invalid/repo">repository</a>.</p>',
        {"addresses at a .invalid host (placeholders)": "https://structreg.invalid/repo"},
    ),
}


@pytest.fixture(scope="module")
def planted_site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("planted-site")
    (folder / "dot.svg").write_text(DOT_SVG, encoding="utf-8")
    (folder / "far.css").write_text(FAR_CSS, encoding="utf-8")
    for name, (body, _) in PLANTED.items():
        (folder / name).write_text(
            "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>planted</title>"
            f"<link rel='icon' href='dot.svg'></head><body>{body}</body></html>\n",
            encoding="utf-8",
        )
    with _serve(folder) as origin:
        yield folder, origin


@pytest.mark.parametrize("page", list(PLANTED))
def test_the_checker_reports_a_planted_fault(page, planted_site, browser):
    folder, origin = planted_site
    expected = PLANTED[page][1]
    problems = _check_page(browser, origin, page, (folder / page).read_text(encoding="utf-8"))
    report = _report(page, problems)
    if not expected:
        assert not problems, report
    for kind, instance in expected.items():
        assert kind in problems, f"the checker missed {kind!r} on {report}"
        assert any(instance in found for found in problems[kind]), f"{instance!r} not in {report}"
