"""The runtime's promises to the reader, in real Chromium:

- nothing heavy downloads until the reader shows intent (scrolling is not intent: every
  page is scrolled so in the gate, test_gates.py),
- intent starts it, with progress shown, and the work runs in Web Workers,
- instant navigation keeps the same workers: the next page's widget is live at once,
- a hostile paste is refused before Python, and a crashed runtime restarts,
- where no worker can start, the page runs it and says so;
also from the unzipped offline zip (file://) and inside an embed.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import QuietHandler, serve_directory
from tests.browser.gates import SCROLL_THROUGH_JS, heavy_requests
from tests.browser.widgets import LOAD_TIMEOUT_MS, activate, open_live, open_widget, set_range, wait_ready


def scroll_through(page) -> None:
    """Top to bottom, as a reader skimming the page would, without touching anything, then an
    idle moment (the old runtime started widgets in view after one). Every page is scrolled
    so, on its first load, in the gate's light pass (test_gates.py)."""
    page.evaluate(SCROLL_THROUGH_JS)
    page.wait_for_timeout(600)


@pytest.mark.parametrize(
    "path", ["embed/attention/", "embed/kv-memory/", "embed/generate/", "embed/step-through/", "attention/"]
)
def test_mounting_a_widget_moves_nothing(page, site_url, path):
    """The parts a widget shows when it mounts hold their space from the first paint
    (kvlab.css, "kv-js"): layout shift, the metric Lighthouse scores, stays near 0 at this width
    (what is left: widgets that fill in text at mount). 0.1 is "good"."""
    page.add_init_script(
        """window.kvShifts = [];
        new PerformanceObserver((l) => l.getEntries().forEach((e) => e.hadRecentInput || kvShifts.push(e.value)))
          .observe({type: "layout-shift", buffered: true});"""
    )
    page.goto(site_url + path)
    expect(page.locator("[data-widget]").first).to_have_attribute("data-mounted", "true")
    page.wait_for_timeout(800)
    shifts = page.evaluate("kvShifts")
    assert sum(shifts) < 0.05, shifts


def test_the_gallery_fetches_previews_only_when_asked_and_they_start_nothing(page, site_url):
    heavy = heavy_requests(page)
    embeds: list[str] = []
    page.on("request", lambda r: re.search(r"/embed/[a-z-]+/", r.url) and embeds.append(r.url))
    page.goto(site_url + "embed/")
    links = page.locator("a[data-embed-preview]")
    assert links.count() >= 15
    scroll_through(page)
    assert embeds == [] and heavy == []
    assert page.locator("iframe").count() == 0
    # a click opens that one preview in place (focus goes to it); still no runtime
    item = page.locator('.kv-gallery-item[data-embed-name="kv-memory"]')
    item.get_by_role("link", name=re.compile("Show the preview here")).click()
    frame = item.locator("iframe[data-kvlab-embed]")
    expect(frame).to_have_attribute("title", re.compile(r"\(live preview\)$"))
    expect(frame).to_be_focused()
    root = page.frame_locator('.kv-gallery-item[data-embed-name="kv-memory"] iframe').locator(
        '[data-widget="kv-memory"]'
    )
    expect(root).to_have_attribute("data-mounted", "true")
    page.wait_for_timeout(600)
    assert [u for u in embeds if "/embed/kv-memory/" not in u] == [] and heavy == []
    assert page.locator("iframe").count() == 1


def test_intent_starts_python_in_a_worker_with_progress(page, site_url):
    heavy = heavy_requests(page)
    root = open_widget(page, site_url + "attention/", "attention")
    status = root.locator(".kv-status-text")
    expect(status).to_contain_text("MB, once per visit")
    # record every status line the reader sees while it loads
    root.evaluate("""r => { r.seen = []; new MutationObserver(() => r.seen.push(r.querySelector('.kv-status-text').textContent))
                          .observe(r.querySelector('.kv-status'), {subtree: true, childList: true, characterData: true}); }""")
    set_range(root, "d", 16)  # a slider moved: intent
    wait_ready(root)
    seen = root.evaluate("r => r.seen")
    assert any(re.search(r"Loading Python .*: [\d.]+ MB of [\d.]+ MB", s) for s in seen), seen
    assert "d = 16" in status.text_content()
    assert any("/kvlab/worker.js" in u for u in heavy)
    assert len(page.workers) >= 1  # Python runs in a Web Worker, not on the page
    assert page.evaluate("typeof window.loadPyodide") == "undefined"


def test_a_slow_download_can_be_cancelled_and_started_again(page_factory, site_url):
    """On a slow link the reader can stop the 18 MB runtime: Cancel beside the progress bar ends the
    download, the build's figure stays, "Make it live" is offered again, and it then goes live."""
    page, _ = page_factory(allowed=[site_url])
    page.set_default_timeout(90_000)
    stalled = []
    # Python's standard library (over http the trimmed one, python_stdlib.min.zip) never arrives: a stalled link
    page.context.route("**/python_stdlib*.zip*", lambda route: stalled.append(route))
    root = open_widget(page, site_url + "attention/", "attention")
    figure = root.locator(".kv-plot").inner_html()
    root.locator(".kv-live-button").click()
    cancel = root.locator(".kv-cancel-button")
    expect(cancel).to_be_visible()
    expect(root.locator(".kv-status progress")).to_be_visible()
    cancel.click()
    expect(root).to_have_attribute("data-state", "static")
    expect(root.locator(".kv-status-text")).to_contain_text("Download cancelled")
    expect(cancel).to_be_hidden()
    expect(root.locator(".kv-status progress")).to_be_hidden()
    assert root.locator(".kv-plot").inner_html() == figure
    assert page.evaluate("kvlab.runtimeState('python')") == "idle"
    assert stalled, "the stalled request was never made"
    # the link is back: Make it live again, and the widget goes live
    page.context.unroute("**/python_stdlib*.zip*")
    root.locator(".kv-live-button").click()
    wait_ready(root)
    assert page.evaluate("kvlab.runPython('6 * 7')") == 42


@pytest.mark.parametrize("width", [1280, 375])
def test_the_first_press_on_a_cold_widget_gets_its_click(page_factory, site_url, width):
    """Going live rewrites the status line above the controls (the offer and its button go,
    progress comes). A press goes live when it ends, so the button under the pointer stays
    put from pointerdown to pointerup and gets its click; going live on pointerdown moved Reset
    out from under the pointer, so the reader's first click only made the widget live."""
    page, _ = page_factory(allowed=[site_url], viewport={"width": width, "height": 900})
    root = open_widget(page, site_url + "embed/generate/", "generate")
    page.wait_for_function("r => r.dataset.mounted === 'true'", arg=root.element_handle())
    tokens = root.locator(".kv-gen-new .kv-tok")
    assert tokens.count() > 0  # the build-time run
    reset = root.locator('[data-action="reset"]')
    reset.scroll_into_view_if_needed()
    before = reset.bounding_box()
    page.mouse.move(before["x"] + before["width"] / 2, before["y"] + before["height"] / 2)
    page.mouse.down()
    page.wait_for_timeout(200)  # a reader's press
    during = reset.bounding_box()
    page.mouse.up()
    assert during["y"] == before["y"], (before, during)
    expect(root).to_have_attribute("data-activated", "true")
    expect(tokens).to_have_count(0)  # Reset did what it says


def test_a_touch_taken_for_scrolling_is_not_intent(page_factory, site_url):
    """On a phone a finger that lands on a widget to scroll the page ends in pointercancel
    (the browser took the touch): nothing loads. A tap (pointerdown, pointerup) is intent."""
    page, _ = page_factory(allowed=[site_url], viewport={"width": 375, "height": 812})
    heavy = heavy_requests(page)
    root = open_widget(page, site_url + "attention/", "attention")
    page.wait_for_function("r => r.dataset.mounted === 'true'", arg=root.element_handle())
    target = root.locator(".kv-heatmap").first
    press = """(el, type) => el.dispatchEvent(new PointerEvent(type, {bubbles: true, pointerType: "touch", isPrimary: true}))"""
    target.evaluate(press, "pointerdown")
    target.evaluate(press, "pointercancel")
    page.wait_for_timeout(2500)  # past the held-press fallback
    assert root.get_attribute("data-activated") is None and heavy == []
    target.evaluate(press, "pointerdown")
    target.evaluate(press, "pointerup")
    expect(root).to_have_attribute("data-activated", "true")
    wait_ready(root)


def test_navigation_keeps_the_same_runtime(page, site_url):
    open_live(page, site_url + "attention/", "attention")
    page.evaluate("window.kvlabSameVisit = true")
    heavy = heavy_requests(page)
    page.locator("a.md-footer__link--next").click()  # attention → quadratic-wall
    page.wait_for_url("**/quadratic-wall/")
    race = page.locator('[data-widget="race"]')
    # live without a touch: Python is already running in this visit
    wait_ready(race, timeout=20_000)
    assert page.evaluate("window.kvlabSameVisit") is True  # the page was swapped, not reloaded
    assert heavy == []
    set_range(race, "n", 40)
    expect(race.locator(".kv-status-text")).to_contain_text("n = 40")


def test_a_10000_level_json_paste_is_refused_and_the_widget_keeps_working(page, site_url):
    # a fresh page, like the pasted-config test in test_memory_widgets.py: in the warm visit
    # the kv-memory chart drawn as the widget mounts live covers the config form
    root = open_live(page, site_url + "memory/", "kv-memory")
    root.locator("details.kv-config summary").click()
    area = root.locator("textarea[name=config]")
    area.fill("[" * 10_000 + "]" * 10_000)
    root.locator(".kv-config-form button[type=submit]").click()
    error = root.locator(".kv-config-form .kv-error")
    expect(error).to_be_visible()
    expect(error).to_contain_text("10,000 levels deep")
    # the status line above says nothing was computed (it kept saying "Computed … rebuilt from the config")
    expect(root.locator(".kv-status-text")).to_contain_text("Not computed: the config.json was refused")
    # the next change still computes, in the same runtime
    set_range(root, "context_step", 3)
    wait_ready(root)
    assert page.evaluate("kvlab.runPython('1 + 1')") == 2


def test_a_crashed_python_runtime_restarts_on_the_next_call(page_factory, site_url):
    page, problems = page_factory(allowed=[site_url])
    for fragment in (
        "Pyodide has suffered a fatal error",
        "The cause of the fatal error",
        "Maximum call stack size exceeded",
    ):
        problems.expect_console_error(fragment)  # Pyodide's own report, from the worker
    page.goto(site_url + "attention/")
    assert page.evaluate("kvlab.runPython('6 * 7')") == 42
    # json.loads of 100,000 nested lists overflows the wasm stack: Pyodide itself dies
    crash = page.evaluate(
        """kvlab.runPython('import json\\njson.loads("[" * 100000 + "]" * 100000)')
             .then(() => 'survived', (e) => [e.name, e.message])"""
    )
    assert crash[0] == "RuntimeCrashed", crash
    assert "restarts on your next change" in crash[1]
    # the next call starts a fresh runtime, and a widget works
    assert page.evaluate("kvlab.runPython('import numpy; int(numpy.arange(4).sum())')") == 6
    root = page.locator('[data-widget="attention"]').first
    activate(root)
    wait_ready(root)


def test_a_worker_killed_during_a_call_leaves_no_widget_waiting(page_factory, site_url):
    """The worker dies without a word while three widgets wait on it (terminated, as a browser
    does for memory): the watchdog (bridge.js) takes it for dead, every waiting widget's call is
    made again on a fresh runtime, and each shows a figure for what the reader asked."""
    page, _ = page_factory(allowed=[site_url])
    page.goto(site_url + "quadratic-wall/")
    roots = [page.locator(f'[data-widget="{name}"]') for name in ("race", "reprocessing", "quadratic-wall")]
    for root in roots:
        activate(root)
        wait_ready(root)
    page.evaluate("kvlab.runtimes.python.silentMs = 3000")
    # three changes, then the worker is gone before it can answer any of them
    page.evaluate(
        """() => {
            const set = (name, v) => {
                const el = document.querySelector(`[data-widget="${name}"] input[name="n"]`);
                el.value = String(v);
                el.dispatchEvent(new Event("input", {bubbles: true}));
            };
            set("race", 7);
            set("reprocessing", 9);
            set("quadratic-wall", 40);
            window.deadPort = kvlab.runtimes.python.port;
            kvlab.runtimes.python.port.terminate();
        }"""
    )
    for root in roots:
        expect(root).to_have_attribute("data-state", "loading")
    # the watchdog (3 s here) takes the silent worker for dead; the fresh one then boots with the default patience,
    # since a boot on a loaded machine can be silent for longer than 3 s and is not a dead worker
    page.wait_for_function("() => kvlab.runtimes.python.port !== window.deadPort", timeout=30_000)
    page.evaluate("kvlab.runtimes.python.silentMs = 45000")
    for root in roots:
        wait_ready(root, 60_000)  # was: "loading" for good
    assert roots[0].locator('input[name="n"]').input_value() == "7"
    for root in roots:
        expect(root.locator(".kv-status-text")).to_contain_text("Computed in your browser")
    assert page.evaluate("kvlab.runPython('6 * 7')") == 42


def test_python_imports_the_shipped_bytecode(warm_page, site_url):
    """Every module the widgets import from site-packages (kvlab's, numpy's) comes with the
    unchecked-hash .pyc the build made (sitebuild/bytecode.py), so Pyodide compiles none. Python
    restored from the build's snapshot (sitebuild/snapshot.py) has the modules imported when it was
    made in its image, with no file on disk; every module imported after that reads its .pyc."""
    warm_page.goto(site_url + "attention/")
    missing = warm_page.evaluate(
        """kvlab.runPython(`
import importlib.util, os, sys, kvlab.bridge
while kvlab.bridge.warm_one():
    pass
site = os.path.dirname(os.path.dirname(kvlab.__file__)) + "/"  # site-packages (sysconfig says "//lib/…")
def shipped(path):
    try:
        with open(importlib.util.cache_from_source(path), "rb") as f:
            return f.read(8)[4:] == bytes([1, 0, 0, 0])
    except OSError:
        return False
mods = [m.__file__ for m in list(sys.modules.values()) if (getattr(m, "__file__", None) or "").startswith(site) and m.__file__.endswith(".py")]
on_disk = [f for f in mods if os.path.exists(f)]
[len(mods), len(on_disk), [f for f in on_disk if not shipped(f)]]
`)"""
    )
    n_imported, n_read_from_disk, without_pyc = missing
    # kvlab.widgets' pages are imported by warm_one, after any snapshot was made
    assert n_imported > 100 and n_read_from_disk > 20 and without_pyc == [], missing


def test_python_errors_come_back_as_one_line(warm_page, site_url):
    warm_page.goto(site_url + "attention/")
    msg = warm_page.evaluate("kvlab.call('attention_figure', {d: 'x'}).then(() => 'ran', (e) => e.message)")
    assert msg.startswith("ValueError:") and "\n" not in msg and "Traceback" not in msg
    msg = warm_page.evaluate("kvlab.runPython('1/0').then(() => 'ran', (e) => e.message)")
    assert msg == "ZeroDivisionError: division by zero"


def test_without_workers_the_page_runs_it_and_says_so(page_factory, site_url):
    page, _ = page_factory(allowed=[site_url])
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    page.add_init_script("delete window.Worker")
    root = open_widget(page, site_url + "quadratic-wall/", "race")
    activate(root)
    wait_ready(root, LOAD_TIMEOUT_MS)
    assert any("no Web Worker available" in w and "main thread" in w for w in warnings), warnings


def test_save_data_waits_for_the_button(page_factory, site_url):
    page, _ = page_factory(allowed=[site_url])
    page.add_init_script("Object.defineProperty(navigator, 'connection', {value: {saveData: true}})")
    heavy = heavy_requests(page)
    root = open_widget(page, site_url + "quadratic-wall/", "race")
    expect(root.locator(".kv-status-text")).to_contain_text("Data saver is on")
    root.locator('input[name="n"]').focus()
    page.wait_for_timeout(800)
    assert heavy == [] and root.get_attribute("data-state") == "static"
    root.locator(".kv-live-button").click()
    wait_ready(root)


@pytest.mark.parametrize("path", ["index.html", "attention.html", "embed/race.html"])  # no directory URLs offline
def test_offline_pages_download_nothing_until_asked(page_factory, unzipped, path):
    page, _ = page_factory(allowed=["file:///"])
    heavy = heavy_requests(page)
    page.goto((unzipped / path).as_uri())
    scroll_through(page)
    assert heavy == []


def test_offline_site_runs_python_in_a_worker(page_factory, unzipped):
    page, _ = page_factory(allowed=["file:///"])
    open_live(page, (unzipped / "quadratic-wall.html").as_uri(), "race")
    assert len(page.workers) >= 1
    assert page.evaluate("typeof window.loadPyodide") == "undefined"


def test_an_embed_starts_only_when_touched(page_factory, site_url, tmp_path):
    (tmp_path / "host.html").write_text(
        '<!doctype html><title>host</title><link rel="icon" href="data:,"><p>My post</p>'
        f'<iframe src="{site_url}embed/race/" title="race" width="100%" height="700" data-kvlab-embed></iframe>'
    )
    server, host_url = serve_directory(tmp_path)
    try:
        page, _ = page_factory(allowed=[site_url, host_url])
        heavy = heavy_requests(page)
        page.goto(host_url + "host.html")
        root = page.frame_locator("iframe").locator('[data-widget="race"]')
        expect(root).to_have_attribute("data-mounted", "true")
        page.wait_for_timeout(800)
        assert heavy == []
        root.locator(".kv-live-button").click()
        expect(root).to_have_attribute("data-state", "ready", timeout=LOAD_TIMEOUT_MS)
    finally:
        server.shutdown()


class NoWasmCSPHandler(QuietHandler):
    """A host that sends a stricter policy than the site's: scripts from self, no 'wasm-unsafe-eval'."""

    def end_headers(self):
        self.send_header("Content-Security-Policy", "script-src 'self' blob:; worker-src 'self' blob:")
        super().end_headers()


def test_a_host_policy_that_blocks_webassembly_is_named(page_factory, built_site):
    handler = functools.partial(NoWasmCSPHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    page = None
    try:
        page, problems = page_factory(allowed=[base])
        problems.expect_console_error("WebAssembly")  # the browser's own report of the refusal
        root = open_widget(page, base + "attention/", "attention")
        activate(root)
        expect(root).to_have_attribute("data-state", "error", timeout=LOAD_TIMEOUT_MS)
        status = root.locator(".kv-status")
        expect(status).to_contain_text("Content-Security-Policy does not allow WebAssembly")
        expect(status).to_contain_text("'wasm-unsafe-eval'")
    finally:
        # the page first, as in test_distribution: a request still open when this server stops is reset, and the
        # browser logs ERR_CONNECTION_RESET as a console error (a fresh-clone CI run, session 17, at teardown)
        if page is not None:
            page.close()
        server.shutdown()
