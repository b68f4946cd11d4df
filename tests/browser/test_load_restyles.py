"""No color-scheme meta is inserted into <head> after a page's content has arrived.

Chromium restyles every element of the page when a `<meta name="color-scheme">` is
inserted, even one that is not the first (the one that counts). Material's bundle appends
its own when it starts, after the page is parsed: on /memory/ a restyle of ~1,450 elements
in material's start-up task (bench/README.md, session 8). palette.js adds the one meta
before the content and skips material's append; material's writes reach it on a change.
"""

from __future__ import annotations

import pytest

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
