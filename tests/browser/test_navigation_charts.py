"""Charts keep their layout after instant navigation.

Plotly puts its layout rules (`.main-svg { position: absolute }` ...) in a <style> it adds to <head>
once, when its bundle runs; material's instant navigation replaces <head>'s content on each page
change. Without loader.js putting the rules back, every chart drawn on the next page had its overlay
(axis titles, legend) fall below the plot, over the widget's own text and forms.
"""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import swap_to
from tests.browser.widgets import open_live, wait_ready

OVERLAY_POSITIONS = """root => Array.from(root.querySelectorAll('.js-plotly-plot .main-svg'),
    svg => getComputedStyle(svg).position)"""


def test_charts_on_the_next_page_keep_plotlys_layout(warm_page, site_url):
    page = warm_page
    # start the runtime on one page (its chart loads Plotly, if no page of the visit did), then go on by instant navigation
    first = open_live(page, site_url + "quadratic-wall/", "race")
    expect(first.locator(".js-plotly-plot").first).to_be_visible()
    page.evaluate("() => { window.kvSameVisit = true }")  # gone if the next page is a real load
    assert swap_to(page, site_url + "memory/", site_url), "instant navigation is off for this build"
    assert page.evaluate("() => window.kvSameVisit === true"), "a full page load, not instant navigation"
    root = page.locator('[data-widget="kv-memory"]').first
    wait_ready(root)
    expect(root.locator(".js-plotly-plot").first).to_be_visible()
    positions = root.evaluate(OVERLAY_POSITIONS)
    assert positions and set(positions) == {"absolute"}, positions
