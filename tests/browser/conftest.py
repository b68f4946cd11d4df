"""Real-browser fixtures: Debian's Chromium driven by Playwright, over http.

Every test that uses `page` gets these checks for free, at teardown:
- no console error and no uncaught page error,
- no request to any origin other than the site's own.
"""

from __future__ import annotations

import os
import re
import zipfile
import sys
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import pytest

from tests.conftest import build_py

CHROMIUM = os.environ.get("KVLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


# build.py's static server (`build.py test` serves the site's build with it): tests that
# need other headers subclass the handler.
QuietHandler = build_py().StaticHandler


def serve_directory(directory: Path, port: int = 0, handler=QuietHandler):
    """A static server on 127.0.0.1 (port 0: chosen by the OS); returns (server, base_url)."""
    server = build_py().serve_static(directory, port, handler)
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="session")
def site_url(built_site, site_port):
    if served := os.environ.get("KVLAB_SITE_SERVED"):  # `build.py test` serves its build to both site shards
        yield served
        return
    server, url = serve_directory(built_site, site_port)
    yield url
    server.shutdown()


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: apt-get install -y chromium")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


class PageProblems:
    """What a page did wrong: console errors, page errors, foreign requests."""

    def __init__(self, allowed_origins: set[str]):
        self.allowed = allowed_origins
        self.console_errors: list[str] = []
        self.page_errors: list[str] = []
        self.foreign_requests: list[str] = []
        self.expected_console: list[str] = []

    def expect_console_error(self, fragment: str) -> None:
        """A test that breaks something on purpose names the error it expects."""
        self.expected_console.append(fragment)

    def on_console(self, msg):
        if msg.type == "error" and not any(f in msg.text for f in self.expected_console):
            self.console_errors.append(msg.text)

    def on_request(self, request):
        url = urlparse(request.url)
        if url.scheme in ("data", "blob", "about"):
            return
        origin = f"{url.scheme}://{url.netloc}" if url.scheme != "file" else "file://"
        if origin not in self.allowed:
            self.foreign_requests.append(request.url)

    def assert_clean(self):
        assert not self.page_errors, f"uncaught page errors: {self.page_errors}"
        assert not self.console_errors, f"console errors: {self.console_errors}"
        assert not self.foreign_requests, f"requests to other origins: {self.foreign_requests}"


def origin_of(url: str) -> str:
    u = urlparse(url)
    return "file://" if u.scheme == "file" else f"{u.scheme}://{u.netloc}"


@pytest.fixture
def page_factory(browser):
    """Open pages that fail the test on console/page errors or foreign requests.

    page_factory(allowed=[urls...]) → (page, problems); the site's origin is
    always allowed. Problems are asserted when the test ends.
    """
    opened = []

    def make(*, allowed=(), viewport=None):
        context = browser.new_context(viewport=viewport or {"width": 1200, "height": 900})
        page = context.new_page()
        problems = PageProblems({origin_of(u) for u in allowed})
        page.on("console", problems.on_console)
        page.on("pageerror", lambda exc: problems.page_errors.append(str(exc)))
        page.on("request", problems.on_request)
        opened.append((context, problems))
        return page, problems

    yield make
    for context, _ in opened:
        context.close()
    for _, problems in opened:
        problems.assert_clean()


@pytest.fixture
def page(page_factory, site_url):
    """A fresh page on the built site (served over http) with the standard checks: its own
    browser context, so its runtimes start cold (what a reader's first visit does)."""
    p, _ = page_factory(allowed=[site_url])
    p.set_default_timeout(90_000)
    return p


# ---------------------------------------------------------------- the warm visit
#
# A fresh page starts Pyodide (and the model) again for every test: seconds each on two
# cores. A reader does that once per visit: material's instant navigation swaps the next
# page in without a reload and the runtime workers stay (site_src/runtime/context.js).
# `warm_page` is that visit, kept for the whole session: one page whose `goto` moves
# between the site's pages by instant navigation, so a test on it finds the runtimes
# already running (its widgets go live as they mount) and the DOM of a freshly fetched page.
# Tests of cold start, intent, fault injection or page-level settings (init scripts,
# routes, viewports) keep `page` or `page_factory`.

# Click a link to `href` as a reader would; material's handler on <body> takes it (instant
# navigation) once it has the sitemap. Resolves when document$ emits a page whose content
# is new (material swaps the container, so the <article> is another element) at the
# target's path. Material fetches again only when the path changes, so a visit to the page
# already shown goes by way of another (home, or the gallery), one hop after the other:
# firing both at once let a stray emission resolve the visit with the previous page's
# widget still in the document (a test then drove the old widget).
INSTANT_NAV_JS = """async ([href, spacers]) => {
  const follow = (url) => {
    const a = document.createElement("a");
    a.href = url;
    let taken = false;
    window.addEventListener("click", (ev) => { taken = ev.defaultPrevented; if (!taken) ev.preventDefault(); }, {once: true});
    document.body.append(a);
    a.click();
    a.remove();
    return taken;
  };
  const hop = async (url) => {
    const path = new URL(url, location.href).pathname;
    const old = document.querySelector("article");
    let sub;
    const arrived = new Promise((resolve) => {
      sub = window.document$.subscribe(() => {
        const now = document.querySelector("article");
        if (location.pathname === path && now && now !== old) resolve(true);
      });
    });
    for (let tries = 0; !follow(url); tries++) {
      if (tries > 30) {  // its sitemap names another site (a build for another port): never again
        sub.unsubscribe();
        window.kvNoInstantNav = true;
        return "not taken";
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const timeout = new Promise((r) => setTimeout(() => r(`no new page at ${path} within 60 s`), 60000));
    const done = await Promise.race([arrived, timeout]);
    sub.unsubscribe();
    return done;
  };
  const target = new URL(href, location.href);
  if (target.pathname === location.pathname) {
    const done = await hop(spacers.find((u) => new URL(u).pathname !== target.pathname));
    if (done !== true) return done;
  }
  const done = await hop(target.href);
  return done === true ? location.href : done;
}"""

# Pages material swaps in: the site's own pages, not an embed (no material there) nor 404.html.
NOT_SWAPPABLE = re.compile(r"^embed/[^/]+/|\.html$")


def swap_to(page, url: str, site_url: str) -> bool:
    """Go to `url` by instant navigation, as a reader's click would, when both the page shown
    and `url` are pages of the site that material manages; False (nothing done) otherwise."""
    here = page.url
    if not (url.startswith(site_url) and here.startswith(site_url)):
        return False
    if NOT_SWAPPABLE.search(url[len(site_url) :].split("?")[0]) or NOT_SWAPPABLE.search(here[len(site_url) :]):
        return False
    if not page.evaluate("typeof window.document$ === 'object' && !window.kvNoInstantNav"):
        return False
    done = page.evaluate(INSTANT_NAV_JS, [url, [site_url, site_url + "embed/"]])
    if done == "not taken":
        return False
    assert done.startswith(site_url), f"instant navigation to {url}: {done}"
    return True


class WarmVisit:
    """One browser context and page on the site, kept across tests (see above)."""

    def __init__(self, browser, site_url: str):
        self.site_url = site_url
        self.context = browser.new_context(viewport={"width": 1200, "height": 900})
        self.page = self.context.new_page()
        self.page.set_default_timeout(90_000)
        self._goto = self.page.goto
        self.page.goto = self.goto  # tests call page.goto as on any page
        self.loads = 0  # real navigations: each starts the runtimes again

    def goto(self, url: str, **kwargs):
        """Instant navigation where the site allows it, else a real navigation (a cold start)."""
        if swap_to(self.page, url, self.site_url):
            return None
        self.loads += 1
        return self._goto(url, **kwargs)

    def close(self):
        self.context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Each phase's report on the item, so a fixture's teardown knows whether its test failed."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"kv_report_{report.when}", report)


@pytest.fixture(scope="session")
def warm_visits(browser):
    """The session's warm visit (at most one at a time; see `warm_page`)."""
    held: list[WarmVisit] = []
    yield held
    for visit in held:
        visit.close()


@pytest.fixture
def warm_page(warm_visits, browser, site_url, request):
    """The session's warm page (above), with the standard checks for this test's part of it.

    It starts on the site's home page; the first test that needs a runtime starts it, the
    tests after find it running. A test that fails or leaves a problem behind ends the
    visit: the next test starts a new one, so a failure spoils no other test.
    """
    if not warm_visits:
        visit = WarmVisit(browser, site_url)
        visit.goto(site_url)
        warm_visits.append(visit)
    visit = warm_visits[0]
    page = visit.page
    problems = PageProblems({origin_of(site_url)})
    handlers = {
        "console": problems.on_console,
        "pageerror": lambda exc: problems.page_errors.append(str(exc)),
        "request": problems.on_request,
    }
    for event, handler in handlers.items():
        page.on(event, handler)
    yield page
    for event, handler in handlers.items():
        page.remove_listener(event, handler)
    call = getattr(request.node, "kv_report_call", None)
    dirty = problems.page_errors or problems.console_errors or problems.foreign_requests
    if call is None or call.failed or dirty:
        warm_visits.remove(visit)
        visit.close()
    problems.assert_clean()


# ---------------------------------------------------------------- the offline zip

ROOT = Path(__file__).resolve().parents[2]


def make_zip(dist: Path) -> Path:
    done = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "zip", "--dist-dir", str(dist)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (zip_path,) = dist.glob("kvlab-offline-*.zip")
    return zip_path


@pytest.fixture(scope="session")
def offline_zip(tmp_path_factory) -> Path:
    """`build.py zip`, or KVLAB_OFFLINE_ZIP as it is (`build.py test` builds it once for both site shards)."""
    if given := os.environ.get("KVLAB_OFFLINE_ZIP"):
        return Path(given)
    return make_zip(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def unzipped(offline_zip, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(offline_zip) as zf:
        zf.extractall(where)
    (top,) = where.iterdir()
    return top
