"""How the Python worker hands Pyodide its wasm, and its memory-snapshot start with the fallback
(issue 42; bench/results/2026-12-05-runtime-routes.md).

- Over http pyodide.asm.wasm goes to Pyodide as the browser's own Response (instantiateStreaming,
  whose compiled code Chromium caches), downloaded once; a host that serves it under another
  Content-Type gets the from-memory path, and Python still starts.
- The built site's manifest names its snapshot (sitebuild/snapshot.py): Python starts from it over
  http (numpy imported, never loaded; the wheel and kvlab's zip not downloaded: the files later
  imports read are inside it), except where the browser asks to save data; a snapshot
  that fails to restore, does not arrive, is corrupt or truncated falls back to the usual start in
  the same worker, and the widget goes live (bench/results/2026-12-05-runtime-snapshot-session2.md).
- The snapshot is unpacked as it arrives, not after: its body goes through DecompressionStream on
  the way in, and Pyodide makes its module while the rest downloads
  (bench/results/2026-12-05-runtime-snapshot-session4.md).
"""

from __future__ import annotations

import gzip
import json
import threading
import time
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

from tests.browser.conftest import QuietHandler, serve_directory
from tests.browser.widgets import activate, open_live, open_widget, wait_ready

NUMPY_WHEEL = "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"
STDLIB_MIN = "vendor/pyodide/python_stdlib.min.zip"
# pyodide.loadPackage("numpy") ran (the usual start); a restored runtime never calls it
LOADED_NUMPY = "kvlab.runPython(\"import pyodide_js; 'numpy' in pyodide_js.loadedPackages.to_py()\")"


def wasm_requests(page) -> list[str]:
    seen = []
    page.context.on("request", lambda r: r.url.endswith("/pyodide.asm.wasm") and seen.append(r.url))
    return seen


def test_the_wasm_is_downloaded_once_and_streamed(page_factory, site_url):
    page, _ = page_factory(allowed=[site_url])
    seen = wasm_requests(page)
    open_live(page, site_url + "attention/", "attention")
    assert page.evaluate("kvlab.runPython('import numpy; int(numpy.arange(4).sum())')") == 6
    assert len(seen) == 1, seen


def test_a_wasm_served_under_another_type_still_starts_python(page_factory, site_url):
    """instantiateStreaming refuses a Response that is not application/wasm (and Pyodide would then
    never settle): the worker reads such a one into memory and hands it over as today."""
    page, _ = page_factory(allowed=[site_url])

    def octet(route):
        res = route.fetch()
        route.fulfill(response=res, headers={**res.headers, "content-type": "application/octet-stream"})

    page.context.route("**/pyodide.asm.wasm", octet)
    open_live(page, site_url + "attention/", "attention")
    assert page.evaluate("kvlab.runPython('import numpy; int(numpy.arange(4).sum())')") == 6


@pytest.fixture(scope="module")
def snapshot(built_site) -> bytes:
    """The built site's own (sitebuild/snapshot.py, every http build)."""
    return (built_site / "assets" / manifest_of(built_site)["snapshot"]["file"]).read_bytes()


def manifest_of(site: Path) -> dict:
    return json.loads((site / "assets/kvlab/manifest.js").read_text().split("=", 1)[1].strip().rstrip(";"))


def with_snapshot(page, site: Path, snap: bytes) -> None:
    """The site's snapshot file answered with these bytes."""
    name = manifest_of(site)["snapshot"]["file"].rsplit("/", 1)[-1]
    page.context.route(
        f"**/assets/kvlab/{name}", lambda r: r.fulfill(body=snap, content_type="application/octet-stream")
    )


def broken(snap: bytes) -> bytes:
    """The same snapshot whose header records a function table one slot longer: snapshot.js's check
    fails after Pyodide's module is created and numpy's side modules are loaded again (the deepest
    point a restore can fail before the image is back)."""
    raw = gzip.decompress(snap)
    n = int.from_bytes(raw[8:12], "little")
    header = json.loads(raw[12 : 12 + n])
    header["table"] += 1
    head = json.dumps(header).encode()
    pad = (8 - ((12 + len(head)) % 8)) % 8
    start = 12 + n + ((8 - ((12 + n) % 8)) % 8)
    return gzip.compress(raw[:8] + len(head).to_bytes(4, "little") + head + b"\0" * pad + raw[start:], 1)


def test_python_starts_from_a_snapshot(page_factory, site_url, built_site, snapshot):
    page, problems = page_factory(allowed=[site_url])
    warnings = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    fetched = []
    page.context.on("request", lambda r: "/assets/" in r.url and fetched.append(r.url.rsplit("/", 1)[-1]))
    open_live(page, site_url + "attention/", "attention")  # the site as built: its manifest names its snapshot
    assert page.evaluate(LOADED_NUMPY) is False  # restored, not started
    assert not [w for w in warnings if "snapshot" in w], warnings
    # the files later imports read come inside the snapshot: neither the wheel nor kvlab's zip downloads
    name = manifest_of(built_site)["snapshot"]["file"].rsplit("/", 1)[-1]
    assert name in fetched and "python_stdlib.min.zip" in fetched, fetched
    assert not [f for f in fetched if f.endswith((".whl", ".zip")) and f != "python_stdlib.min.zip"], fetched
    # numpy's C code (the side modules instantiated again), a lazily imported part, and fresh randomness
    assert page.evaluate("kvlab.runPython('import numpy; int(numpy.arange(6).reshape(2, 3).sum())')") == 15
    assert page.evaluate("kvlab.runPython('import numpy.linalg; float(numpy.linalg.det(numpy.eye(3)))')") == 1.0
    assert (
        page.evaluate("kvlab.runPython('import numpy.random; int(numpy.random.default_rng(1).integers(9, 10))')") == 9
    )
    draws = page.evaluate("kvlab.runPython('import random; random.random()')")
    assert 0 <= draws < 1
    # a module the trimmed standard library leaves out: the full one, once (the finder runs here too)
    assert (
        page.evaluate("kvlab.runPython('import difflib; difflib.SequenceMatcher(None, \\'ab\\', \\'ab\\').ratio()')")
        == 1.0
    )
    assert fetched.count("python_stdlib.zip") == 1, fetched


class HalfSnapshotHandler(QuietHandler):
    """The site, with its snapshot's first half sent at once and the rest only once `release` is set:
    a slow link, held still (`drop`: the connection closes instead, the rest never sent)."""

    release: threading.Event
    drop = False

    def do_GET(self):
        if not self.path.split("?")[0].endswith(".snap.gz"):
            return super().do_GET()
        data = Path(self.translate_path(self.path)).read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[: len(data) // 2])
        self.wfile.flush()
        if self.drop:
            self.close_connection = True
            return
        self.release.wait(120)
        self.wfile.write(data[len(data) // 2 :])


# in the worker: snapshot.js has read the header and Pyodide is making its module, which waits
# (snapshot.js's wrapper around pyodide.asm.js's _createPyodideModule) for the rest of the image
RESTORE_BEGUN = """!!self.kvlabSnapshot && typeof self._createPyodideModule === "function"
  && self._createPyodideModule.name !== '_createPyodideModule'"""


def restore_begun(worker, seconds: float = 60) -> bool:
    """Polled from here, not with a timer in the worker: an evaluate that lands while the worker's
    scope is still being set up saw no setInterval there (CI, under load)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if worker.evaluate(RESTORE_BEGUN) is True:
                return True
        except PlaywrightError:
            pass  # the worker's scope is not ready yet
        time.sleep(0.05)
    return False


def test_the_snapshot_is_unpacked_as_it_arrives(page_factory, built_site):
    """Cold, over a real link, the snapshot (10 MB) arrives last: read whole before it was gunzipped,
    it left the reader waiting for the gunzip and for Pyodide's module after the last byte. With half
    of it in and the rest held back, the restore has already begun; the rest arrives and Python is live."""
    release = threading.Event()
    handler = type("Half", (HalfSnapshotHandler,), {"release": release})
    server, url = serve_directory(built_site, 0, handler)
    page = None
    try:
        page, _ = page_factory(allowed=[url])
        root = open_widget(page, url + "attention/", "attention")
        with page.expect_worker() as got:
            activate(root)
        assert restore_begun(got.value)
        # the progress bar counts the snapshot's bytes as they come, out of all of the start's files
        bar = root.locator(".kv-status progress")
        loaded, total = bar.evaluate("b => [b.value, b.max]")
        m = manifest_of(built_site)
        start = ["pyodide.asm.wasm", "python_stdlib.min.zip", "pyodide-lock.json", "pyodide.asm.js", "pyodide.js"]
        snap = m["files"][m["snapshot"]["file"]]["size"]
        assert total == sum(m["files"]["vendor/pyodide/" + f]["size"] for f in start) + snap
        assert snap // 2 <= loaded < total, (loaded, total)
        release.set()
        wait_ready(root)
        assert page.evaluate(LOADED_NUMPY) is False  # restored from the snapshot, not the usual start
    finally:
        release.set()
        if page is not None:  # before the server: a request still open when it stops is reset (a console error)
            page.close()
        server.shutdown()


def test_a_snapshot_whose_download_breaks_off_falls_back(page_factory, built_site):
    """The link drops halfway through the snapshot, while it is being unpacked: the usual start runs."""
    handler = type("Dropped", (HalfSnapshotHandler,), {"release": threading.Event(), "drop": True})
    server, url = serve_directory(built_site, 0, handler)
    page = None
    try:
        page, _ = page_factory(allowed=[url])
        warnings = []
        page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
        open_live(page, url + "attention/", "attention")
        assert any("snapshot did not load" in w for w in warnings), warnings
        assert page.evaluate(LOADED_NUMPY) is True  # the usual start ran
        assert page.evaluate("kvlab.runPython('import numpy; int(numpy.arange(6).reshape(2, 3).sum())')") == 15
    finally:
        if page is not None:  # before the server, as above
            page.close()
        server.shutdown()


def test_a_snapshot_that_fails_falls_back_to_the_usual_start(page_factory, site_url, built_site, snapshot):
    page, _ = page_factory(allowed=[site_url])
    warnings = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    with_snapshot(page, built_site, broken(snapshot))
    open_live(page, site_url + "attention/", "attention")
    assert any("snapshot did not load" in w and "function table" in w for w in warnings), warnings
    assert page.evaluate(LOADED_NUMPY) is True  # the usual start ran
    assert page.evaluate("kvlab.runPython('import numpy; int(numpy.arange(6).reshape(2, 3).sum())')") == 15


@pytest.mark.parametrize("how", ["404", "corrupt", "truncated"])
def test_a_snapshot_that_does_not_arrive_or_is_corrupt_falls_back(page_factory, site_url, built_site, snapshot, how):
    page, problems = page_factory(allowed=[site_url])
    warnings = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    if how == "404":
        name = manifest_of(built_site)["snapshot"]["file"].rsplit("/", 1)[-1]
        page.context.route(f"**/assets/kvlab/{name}", lambda r: r.fulfill(status=404, body="gone"))
        problems.expect_console_error("404")
    else:
        with_snapshot(
            page,
            built_site,
            b"\x1f\x8b" + bytes(range(256)) * 64 if how == "corrupt" else snapshot[: len(snapshot) // 2],
        )
    open_live(page, site_url + "attention/", "attention")
    assert any("snapshot did not load" in w for w in warnings), warnings
    assert page.evaluate(LOADED_NUMPY) is True  # the usual start ran, with the wheel and kvlab's zip
    assert page.evaluate("kvlab.runPython('import numpy; int(numpy.arange(6).reshape(2, 3).sum())')") == 15


def test_the_trimmed_standard_library_fetches_the_full_one_on_a_miss(page_factory, site_url):
    """Over http the worker loads python_stdlib.min.zip (sitebuild/stdlib_min.py); a module it leaves
    out downloads the full library once, and a module that is nowhere downloads nothing."""
    page, _ = page_factory(allowed=[site_url])
    stdlib = []
    page.context.on("request", lambda r: "python_stdlib" in r.url and stdlib.append(r.url.rsplit("/", 1)[-1]))
    open_live(page, site_url + "attention/", "attention")
    assert stdlib == ["python_stdlib.min.zip"], stdlib
    assert page.evaluate("kvlab.runPython('import sys; \\'difflib\\' in sys.modules')") is False
    nowhere = page.evaluate(
        "kvlab.runPython('try:\\n import no_such_module_kv\\nexcept ImportError as e:\\n r = type(e).__name__\\nr')"
    )
    assert nowhere == "ModuleNotFoundError"
    assert stdlib == ["python_stdlib.min.zip"], stdlib  # nothing fetched for it
    got = page.evaluate(
        "kvlab.runPython('import difflib, email.mime.text, json; difflib.SequenceMatcher(None, \\'abc\\', \\'abd\\').ratio()')"
    )
    assert abs(got - 2 / 3) < 1e-9
    assert stdlib == ["python_stdlib.min.zip", "python_stdlib.zip"], stdlib
    # a second miss: already the full library, nothing more downloaded
    assert page.evaluate("kvlab.runPython('import fractions; str(fractions.Fraction(1, 3))')") == "1/3"
    assert stdlib == ["python_stdlib.min.zip", "python_stdlib.zip"], stdlib


def test_under_save_data_python_starts_the_usual_way_and_the_offer_counts_its_bytes(page_factory, site_url, built_site):
    """The snapshot downloads 5.6 MB more than the usual start (sitebuild/snapshot.py): a browser that
    asks to save data gets the usual start, and the "Make it live" offer counts the bytes of the start
    it will get, in both cases."""
    m = manifest_of(built_site)
    size = lambda p: m["files"][p]["size"]  # noqa: E731
    core = sum(
        size("vendor/pyodide/" + f)
        for f in ("pyodide.asm.wasm", "python_stdlib.min.zip", "pyodide-lock.json", "pyodide.asm.js", "pyodide.js")
    )
    usual, snap = core + size("vendor/pyodide/" + NUMPY_WHEEL) + size(m["kvlabZip"]), core + size(m["snapshot"]["file"])
    page, _ = page_factory(allowed=[site_url])
    page.goto(site_url + "attention/")
    assert page.evaluate("kvlab.runtimeBytes('python')") == snap
    page, _ = page_factory(allowed=[site_url])
    page.add_init_script("Object.defineProperty(navigator, 'connection', {value: {saveData: true}})")
    fetched = []
    page.context.on("request", lambda r: "/assets/" in r.url and fetched.append(r.url.rsplit("/", 1)[-1]))
    root = open_widget(page, site_url + "attention/", "attention")
    assert page.evaluate("kvlab.runtimeBytes('python')") == usual
    root.locator(".kv-live-button").click()
    wait_ready(root)
    assert page.evaluate(LOADED_NUMPY) is True
    assert NUMPY_WHEEL in fetched and not [f for f in fetched if f.endswith(".snap.gz")], fetched


def test_on_a_slow_link_python_starts_the_usual_way(page_factory, site_url, built_site):
    """The snapshot start downloads 5.6 MB more; below ~30 Mbps that takes longer than the work it
    saves (bench/results/2026-12-05-runtime-snapshot-session4.md). The worker times the core files
    both starts need (Resource Timing) and, on a slow link, asks for numpy's wheel and kvlab's zip
    instead of the snapshot. Chromium's network emulation throttles the worker's fetches too."""
    page, _ = page_factory(allowed=[site_url])
    info = []
    page.on("console", lambda m: m.type == "info" and info.append(m.text))
    got = []  # answered (a cache probe that finds nothing is a failed request, not an answer)
    page.context.on("response", lambda r: "/assets/" in r.url and got.append(r.url.rsplit("/", 1)[-1]))
    page.goto(site_url + "attention/")
    page.context.new_cdp_session(page).send("Network.emulateNetworkConditions", slow(15))
    root = open_widget(page, site_url + "attention/", "attention")
    root.locator(".kv-live-button").click()
    wait_ready(root)
    assert page.evaluate(LOADED_NUMPY) is True  # the usual start ran
    assert NUMPY_WHEEL in got and not [f for f in got if f.endswith(".snap.gz")], got
    assert any("Mbps measured" in t and "the usual way" in t for t in info), info


def slow(mbps: float) -> dict:
    return {"offline": False, "latency": 5, "downloadThroughput": mbps * 1e6 / 8, "uploadThroughput": 100e6 / 8}


def test_a_second_visit_chooses_by_what_the_cache_holds(browser, site_url, tmp_path):
    """A profile with a disk cache, as a reader's (an incognito context keeps no 10 MB file): after a
    slow first visit (the usual start) the core comes from the cache, nothing can be timed, and the
    usual start's files are cached, so no snapshot download over the slow link; after a fast first
    visit the cached snapshot is taken whatever the link."""
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS

    def visit(ctx, mbps=None) -> tuple[bool, list[str]]:
        page = ctx.new_page()
        got = []
        page.on("response", lambda r: "/assets/" in r.url and got.append(r.url.rsplit("/", 1)[-1]))
        if mbps:
            page.context.new_cdp_session(page).send("Network.emulateNetworkConditions", slow(mbps))
        root = open_widget(page, site_url + "attention/", "attention")
        root.locator(".kv-live-button").click()
        wait_ready(root)
        usual = page.evaluate(LOADED_NUMPY)
        page.close()
        return usual, got

    for first, expect_usual in ((15, True), (None, False)):
        ctx = browser.browser_type.launch_persistent_context(
            str(tmp_path / f"profile-{first}"), executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        try:
            assert visit(ctx, first)[0] is expect_usual
            usual, got = visit(ctx, 15)
            assert usual is expect_usual, got
            if expect_usual:
                assert not [f for f in got if f.endswith(".snap.gz")], got
        finally:
            ctx.close()
