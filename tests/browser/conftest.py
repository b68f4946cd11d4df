"""Real-browser fixtures: Debian's Chromium driven by Playwright, over http.

Every test that uses `page` gets these checks for free, at teardown:
- no console error and no uncaught page error,
- no request to any origin other than the site's own.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
import zipfile
import sys
import subprocess
from pathlib import Path
from urllib.parse import urlparse

import pytest

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


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
    }

    def log_message(self, *args):  # keep pytest output readable
        pass


def serve_directory(directory: Path, port: int = 0):
    """A static server on 127.0.0.1 (port 0: chosen by the OS); returns (server, base_url)."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="session")
def site_url(built_site, site_port):
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
    """A page on the built site (served over http) with the standard checks."""
    p, _ = page_factory(allowed=[site_url])
    p.set_default_timeout(90_000)
    return p


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
    return make_zip(tmp_path_factory.mktemp("dist"))


@pytest.fixture(scope="session")
def unzipped(offline_zip, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("unzipped")
    with zipfile.ZipFile(offline_zip) as zf:
        zf.extractall(where)
    (top,) = where.iterdir()
    return top
