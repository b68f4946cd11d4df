"""Quality gates on every page of the built site, with its widgets live.

- axe-core: no serious and no critical violation, light scheme at desktop width
  and dark scheme at phone width (so both schemes and both layouts are covered);
  each pass's browser context has its colour preference before the first load, as a
  reader's system does (and the page's first content arrives in that scheme), no
  toggle involved; and every widget button's text contrast while focused or
  hovered ("Make it live" before the widget goes live, the others after),
- Content-Security-Policy: the meta tag is on every page and nothing the page
  does (material, Plotly, Pyodide, onnxruntime-web, the embed gallery's
  iframes) violates it,
- scrolling is not intent: in the light pass, every page scrolled top to bottom on its
  first load downloads no runtime and leaves its widgets static,
- keyboard: in the light pass, every widget is reached with Tab and one of its
  controls used, keyboard only, before axe runs: one embed page from a cold start
  (the runtime started by keyboard alone), the others on their content pages,
- the content pages' widgets are checked live in one warm visit (instant navigation,
  the runtimes started once per pass, as a reader moving through the site has them);
  the embed pages as they load (their widgets are the content pages' widgets),
- no uncaught page error,
- at a phone's width (the dark pass) no content page scrolls sideways with its widgets
  live, and a table wider than the column sits in a scroll container,
- the step-through's Play does not animate under prefers-reduced-motion.

Pages are found on disk (tests/browser/gates.py: site_pages), so a page added
later is checked the day it is added. One test per scheme loops over all pages
to keep one browser context (the machine has two cores).
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import threading
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import QuietHandler, swap_to
from tests.browser.gates import (
    ALL_STATIC_AFTER_IDLE_JS,
    LOAD_TIMEOUT_MS,
    SCROLL_THROUGH_JS,
    LIVE_BUTTONS,
    SCHEME_AT_CONTENT_JS,
    WAIT_LIVE_JS,
    WIDGET_BUTTONS,
    GateWatch,
    describe,
    drive_by_keyboard,
    heavy_requests,
    go_live,
    is_embed,
    run_axe,
    run_axe_focused,
    sideways,
    site_pages,
)

SCHEMES = {
    # (color scheme, viewport): material follows prefers-color-scheme (mkdocs.yml's
    # palette entries carry a media query) until the reader picks one with its toggle.
    "light-desktop": ("light", {"width": 1280, "height": 900}),
    "dark-phone": ("dark", {"width": 375, "height": 812}),
}
MATERIAL_SCHEME = {"light": "default", "dark": "slate"}


def pages_to_check(site) -> list[str]:
    """Every page; KVLAB_GATE_PAGES="attention/,embed/tokens/" narrows it while working on a fix."""
    only = [p for p in os.environ.get("KVLAB_GATE_PAGES", "").split(",") if p]
    pages = site_pages(site)
    return [p for p in pages if p in only] if only else pages


def csp_of(html: str) -> str | None:
    m = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    return m.group(1) if m else None


def test_every_page_carries_the_csp_and_no_inline_script_or_handler(built_site):
    pages = site_pages(built_site)
    assert "" in pages and "embed/attention/" in pages and "404.html" in pages
    for path in pages:
        html = (built_site / (path + "index.html" if not path.endswith(".html") else path)).read_text(encoding="utf-8")
        policy = csp_of(html)
        assert policy, f"{path or 'home'}: no Content-Security-Policy meta"
        directives = {d.split()[0]: d.split()[1:] for d in policy.split("; ")}
        assert directives["default-src"] == ["'self'"]
        assert directives["script-src"][:2] == ["'self'", "'wasm-unsafe-eval'"], directives["script-src"]
        assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in directives["script-src"]
        # every <script> without src holds data (JSON, <template>), never code
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert "src=" in tag or re.search(r'type="application/(json|ld\+json)"', tag), (
                f"{path}: inline script {tag}"
            )
        assert not re.search(r"\son[a-z]+=\"", html), f"{path}: inline event handler"


def check_live(page, roots, path: str, where: str, failures: list[str]) -> None:
    """Make every widget live, then the checks of `check_axe`."""
    for root in roots:
        state = go_live(root)
        if state not in ("ready", "idle"):
            status = root.locator(".kv-status").inner_text()
            failures.append(f"{where}: {root.get_attribute('data-widget')} is {state}: {status}")
    if not is_embed(path):
        page.wait_for_timeout(300)  # the last render's layout settles
    check_axe(page, path, where, failures)


def check_axe(page, path: str, where: str, failures: list[str], focus: str = WIDGET_BUTTONS) -> None:
    """axe on the page and on each of `focus`'s buttons while focused, the CSP events every
    frame has seen, and at a phone's width whether the page scrolls sideways."""
    failures += [f"{where}: {line}" for line in describe(run_axe(page))]
    failures += [f"{where}: focused {line}" for line in describe(run_axe_focused(page, focus))]
    failures += [f"{where}: CSP {line}" for line in GateWatch.csp_events(page)]
    if page.viewport_size["width"] < 400 and not is_embed(path):
        failures += [f"{where}: sideways: {line}" for line in sideways(page)]


# The embed page driven by keyboard on a cold start (Tab from the top meets "Make it live"
# or a control: the runtime starts by keyboard alone); the other widgets are driven on
# their content pages, in the warm visit.
COLD_KEYBOARD = "embed/attention/"


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("mode", list(SCHEMES))
def test_axe_and_csp_on_every_page_with_widgets_live(browser, built_site, site_url, mode):
    """Two rounds in one browser context. First every page as a reader's first visit (a
    real load): the scheme of the first paint, in the light pass a scroll to the bottom that
    starts nothing, "Make it live" while focused, axe on pages
    without widgets and on the embed pages as they load (one of them, in the light pass,
    driven by keyboard from a cold start and checked live). Then the content pages with
    widgets in one warm visit, as a reader moves through the site (instant navigation: the
    runtimes start once, not once a page): in the light pass each widget reached with Tab
    and used, keyboard only; every widget live, axe, focused buttons, CSP."""
    scheme, viewport = SCHEMES[mode]
    keyboard = mode == "light-desktop"  # once is enough: the same widgets, the same keys
    driven: dict[str, str | None] = {}
    # the system's preference, set before the first load: no page is ever toggled here
    context = browser.new_context(color_scheme=scheme, viewport=viewport)
    context.add_init_script(SCHEME_AT_CONTENT_JS)
    watch = GateWatch.attach(context)
    page = context.new_page()
    page.set_default_timeout(90_000)
    failures: list[str] = []
    with_widgets: list[str] = []

    def drive(root, where: str, from_top: bool) -> None:
        name = root.get_attribute("data-widget")
        if name in driven:
            return
        driven[name], problem = drive_by_keyboard(page, root, from_top=from_top)
        if problem:
            failures.append(f"{where}: keyboard: {name}: {problem}")

    heavy = heavy_requests(page)

    def scrolled_to_no_avail(where: str) -> None:
        """After the scroll and the checks that are not intent: no runtime downloaded, every widget static."""
        if heavy or not page.evaluate(ALL_STATIC_AFTER_IDLE_JS):
            failures.append(f"{where}: scrolling started a runtime: {heavy or 'a widget left static'}")

    try:
        for path in pages_to_check(built_site):
            heavy.clear()
            page.goto(site_url + path)
            where = f"{mode} {path or 'home'}"
            first = page.evaluate("window.__schemeAtContent")
            assert first == MATERIAL_SCHEME[scheme], f"{where}: the content arrived in {first}"
            assert page.evaluate("document.body.dataset.mdColorScheme") == MATERIAL_SCHEME[scheme], path
            if keyboard:  # scrolling is not intent (once is enough: the same pages)
                page.evaluate(SCROLL_THROUGH_JS)
            roots = page.locator("[data-widget]").all()
            if roots:  # widgets mount one per task after the page's scripts ran
                page.wait_for_function(
                    "() => [...document.querySelectorAll('[data-widget]')].every((r) => r.dataset.mounted)"
                )
            if roots and (not is_embed(path) or (keyboard and path == COLD_KEYBOARD)):
                # "Make it live" now; the page's other checks once its widgets are live
                for line in describe(run_axe_focused(page, LIVE_BUTTONS)):
                    failures.append(f"{where}: focused {line}")
            if roots and not is_embed(path):
                with_widgets.append(path)
            elif keyboard and path == COLD_KEYBOARD:
                scrolled_to_no_avail(where)
                drive(roots[0], where, from_top=True)
                check_live(page, roots, path, where, failures)
                continue
            else:  # as it loaded: every button focused in one check, "Make it live" among them
                check_axe(page, path, where, failures, focus=f"{LIVE_BUTTONS}, {WIDGET_BUTTONS}")
            if keyboard:
                scrolled_to_no_avail(where)
        # the warm visit: the first page loads for real, the others are swapped in
        for i, path in enumerate(with_widgets):
            if not (i and swap_to(page, site_url + path, site_url)):
                page.goto(site_url + path)
            where = f"{mode} {path} (warm)"
            roots = page.locator("[data-widget]").all()
            page.wait_for_function(
                "() => [...document.querySelectorAll('[data-widget]')].every((r) => r.dataset.mounted)"
            )
            if keyboard:
                for root in roots:
                    drive(root, where, from_top=False)
            check_live(page, roots, path, where, failures)
    finally:
        context.close()
    failures += [f"{mode}: CSP (console) {t}" for t in watch.console_csp]
    failures += [f"{mode}: page error {t}" for t in watch.page_errors]
    if keyboard and not os.environ.get("KVLAB_GATE_PAGES"):
        widgets = {p.split("/")[1] for p in site_pages(built_site) if is_embed(p)}
        missing = sorted(w for w in widgets if not driven.get(w))
        failures += [f"{mode}: keyboard: {w} was not driven" for w in missing if not any(w in f for f in failures)]
    print("driven by keyboard:", driven)
    assert not failures, "\n".join(failures)


# ------------------------------------------------ the policy as a response header

README = Path(__file__).resolve().parents[2] / "README.md"


def header_policy_in_readme() -> str:
    m = re.search(r"^Content-Security-Policy: (.+)$", README.read_text(encoding="utf-8"), re.M)
    assert m, "README: no 'Content-Security-Policy: ...' header line for hosts"
    return m.group(1).strip()


def test_readme_header_policy_is_the_meta_policy(built_site):
    meta = csp_of((built_site / "index.html").read_text(encoding="utf-8"))
    assert header_policy_in_readme() == meta


def run_python_and_the_model(page, embed_url) -> list[str]:
    """Run a Python widget and the model widget once each; returns what went wrong."""
    problems = []
    page.goto(embed_url("attention"))  # an embed page over http, the content page offline
    root = page.locator('[data-widget="attention"]').first
    if (state := go_live(root)) != "ready":
        problems.append(f"attention is {state}: {root.locator('.kv-status').inner_text()}")
    else:
        root.locator('input[name="d"]').focus()
        page.keyboard.press("ArrowRight")  # Python runs again in the worker
        page.wait_for_function(
            "r => r.dataset.state === 'ready' && /d = (?!8\\b)/.test(r.textContent)", arg=root.element_handle()
        )
    page.goto(embed_url("generate"))
    root = page.locator('[data-widget="generate"]').first
    go_live(root)
    root.get_by_role("button", name="Generate").click()
    if (state := go_live(root)) != "ready":
        problems.append(f"generate is {state}: {root.locator('.kv-status').inner_text()}")
    return problems + [f"CSP {line}" for line in GateWatch.csp_events(page)]


@pytest.mark.timeout(900)
def test_policy_as_a_response_header_lets_pyodide_and_onnxruntime_run(browser, built_site):
    """Sent as a header, the policy governs the runtime's worker too (a meta tag does not)."""
    policy = header_policy_in_readme()

    class WithPolicy(QuietHandler):
        def end_headers(self):
            self.send_header("Content-Security-Policy", policy)
            super().end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(WithPolicy, directory=str(built_site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    context = browser.new_context()
    watch = GateWatch.attach(context)
    try:
        page = context.new_page()
        page.set_default_timeout(90_000)
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        problems = run_python_and_the_model(page, lambda name: f"{base}embed/{name}/")
    finally:
        context.close()
        server.shutdown()
    assert not problems + watch.console_csp + watch.page_errors


@pytest.mark.timeout(900)
def test_policy_holds_from_file_urls(browser, unzipped):
    """The offline zip (its policy adds 'unsafe-inline' for the iframe-worker shim and drops the hosted site's
    https://huggingface.co from connect-src: the zip reaches no other origin, see main.html).

    Workers made from blob: URLs inherit the page's policy, so Python and the
    model run under it here.
    """
    policy = csp_of((unzipped / "attention.html").read_text(encoding="utf-8"))
    hosted = header_policy_in_readme()
    assert policy == hosted.replace("blob:;", "blob: 'unsafe-inline';", 1).replace(" https://huggingface.co;", ";")
    context = browser.new_context()
    watch = GateWatch.attach(context)
    try:
        page = context.new_page()
        page.set_default_timeout(90_000)
        problems = run_python_and_the_model(page, lambda name: (unzipped / f"{name}.html").as_uri())
    finally:
        context.close()
    assert not problems + watch.console_csp + watch.page_errors


# ------------------------------------------------ motion


def test_step_through_play_respects_reduced_motion(browser, site_url):
    context = browser.new_context(reduced_motion="reduce")
    page = context.new_page()
    try:
        page.goto(site_url + "embed/step-through/")
        root = page.locator('[data-widget="step-through"]')
        play = root.locator('[data-action="play"]')
        play.focus()
        expect(play).to_be_visible()
        assert root.evaluate(WAIT_LIVE_JS, LOAD_TIMEOUT_MS) in ("ready", "idle")
        before = root.get_attribute("data-step")
        page.keyboard.press("Enter")
        page.wait_for_timeout(3000)  # Play's interval is 1.1 s: it would have moved on twice
        assert int(root.get_attribute("data-step")) == int(before or 0) + 1
        expect(play).to_have_attribute("aria-pressed", "false")
        expect(root.locator(".kv-status")).to_contain_text("Reduced motion")
    finally:
        context.close()
