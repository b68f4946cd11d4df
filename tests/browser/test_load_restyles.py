"""Material's start-up does not restyle the whole page after it has arrived.

- No color-scheme meta is inserted into <head> after the page's content. Chromium restyles every element of the page when a `<meta name="color-scheme">` is
inserted, even one that is not the first (the one that counts). Material's bundle appends
its own when it starts, after the page is parsed: a restyle of the whole page in material's
start-up task (bench/results/2026-12-02-lighthouse-session8.md). palette.js adds the one meta
before the content and skips material's append; material's writes reach it on a change.
- No stylesheet is loaded again. Material's instant navigation writes every relative href
  again when it starts; for a stylesheet that is a new sheet and a restyle of every element
  (bench/results/2026-12-02-lighthouse-session9.md). scope.js makes the stylesheets' hrefs absolute before <body> exists.
- Code blocks get material's copy button when they come into view (content.lazy), not each
  with a forced layout at DOMContentLoaded (23 on the embed gallery); the block keeps the
  button's room from the start.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

WATCH_JS = """
window.__late = [];
let arrived = false;
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) {
    if (n.nodeType !== 1) continue;
    if (n.matches('article, .md-content') || n.querySelector('article')) arrived = true;
    if (arrived && n.matches('meta[name="color-scheme"]')) window.__late.push(n.outerHTML);
  }
}).observe(document, {childList: true, subtree: true});
"""


@pytest.mark.parametrize("path", ["memory/", "embed/kv-memory/"])
def test_no_color_scheme_meta_arrives_after_the_content(page, site_url, path):
    page.add_init_script(WATCH_JS)
    page.goto(site_url + path, wait_until="load")
    page.locator("figure.kv-widget[data-mounted]").first.wait_for(state="attached")
    page.wait_for_timeout(300)  # material's DOMContentLoaded work and its timers
    assert page.evaluate("window.__late") == []
    assert page.locator('meta[name="color-scheme"]').count() == 1
    if path == "memory/":  # material's bundle ran (its palette component is what appended one)
        assert page.evaluate("typeof window.document$") == "object"
        assert page.locator('meta[name="theme-color"]').count() == 1  # its other meta still goes in


SHEETS_JS = """
// the sheets as they are when the page's content arrives, before any of its scripts ran
new MutationObserver((records, observer) => {
  if (!document.querySelector('article')) return;
  window.__sheets = [...document.styleSheets];
  observer.disconnect();
}).observe(document, {childList: true, subtree: true});
"""


@pytest.mark.parametrize("path", ["", "memory/", "embed/"])
def test_no_stylesheet_is_loaded_again_at_start_up(page, site_url, path):
    page.add_init_script(SHEETS_JS)
    page.goto(site_url + path, wait_until="load")
    page.wait_for_function("typeof window.document$ === 'object'")  # material's instant navigation started
    page.wait_for_timeout(500)  # a sheet loaded again arrives in a later task
    same = page.evaluate("[...document.styleSheets].map((s, i) => s === window.__sheets[i])")
    assert len(same) >= 3 and all(same), same
    # material left every stylesheet's href absolute, as its navigation compares them
    hrefs = page.evaluate("[...document.querySelectorAll('link[rel=stylesheet]')].map(l => l.getAttribute('href'))")
    assert hrefs and all(h.startswith(site_url) for h in hrefs), hrefs


def test_instant_navigation_keeps_the_stylesheets(page, site_url):
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(site_url + "memory/", wait_until="load")
    page.wait_for_function("typeof window.document$ === 'object'")
    page.evaluate("window.__sheets = [...document.styleSheets]; window.__same_document = true")
    page.locator("nav.md-nav--primary a[href$='attention/']").first.click()
    page.wait_for_url("**/attention/")
    page.locator("article h1").filter(has_text="Attention").wait_for()
    assert page.evaluate("window.__same_document") is True  # material swapped the page in
    assert page.evaluate("[...document.styleSheets].every((s, i) => s === window.__sheets[i])")


def test_code_blocks_get_their_copy_button_when_they_come_into_view(page, site_url):
    page.set_viewport_size({"width": 375, "height": 700})
    page.goto(site_url + "embed/", wait_until="load")
    page.wait_for_function("typeof window.document$ === 'object'")
    snippets = page.locator("pre.kv-snippet")
    last = snippets.last
    assert snippets.count() > 10
    page.wait_for_timeout(300)
    assert last.locator(".md-code__nav").count() == 0  # far below the fold: not mounted yet
    before = last.evaluate(
        "pre => [getComputedStyle(pre).paddingRight, pre.querySelector('code').getBoundingClientRect().width]"
    )
    last.scroll_into_view_if_needed()
    expect(last.locator(".md-code__nav .md-code__button")).to_have_count(1)
    after = last.evaluate(
        "pre => [getComputedStyle(pre).paddingRight, pre.querySelector('code').getBoundingClientRect().width]"
    )
    assert before == after and before[0] != "0px"  # its room was kept: nothing moved when it came
    assert last.locator(".md-code__nav").get_attribute("aria-label", timeout=2000)  # scope.js names it
