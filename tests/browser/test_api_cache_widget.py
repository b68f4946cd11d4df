"""Prompt caching in the API page: the api-cache widget, static and live in Chromium, equal CPython's kvlab."""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import assert_one_table_size, open_live, set_range, wait_ready

PAGE = "api-prompt-caching/"
SHOWN = ("verdict", "break_even", "cached_per_day", "uncached_per_day", "cached_per_month", "hit_rate", "gap")


def test_static_page_holds_the_numbers_kvlab_computes(built_site):
    html = (built_site / "api-prompt-caching" / "index.html").read_text()
    data = kvlab.api_cache_figure()
    for key in ("cached_per_day", "uncached_per_day", "cached_per_request", "hit_rate", "requests_per_day"):
        assert f'data-field="{key}">{data["view"][key]}<' in html, key
    for row in data["view"]["compare"]:
        assert f'data-bind=".">{row["cells"][1]}</td>' in html


def test_api_cache_widget_recomputes_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "api-cache")
    root.locator('select[name="model"]').select_option("gpt-5.4")
    set_range(root, "requests_per_hour", 4)
    set_range(root, "prefix_tokens", 20000)
    want = kvlab.api_cache_figure(prefix_tokens=20000, requests_per_hour=4, model="gpt-5.4")
    expect(root.locator('[data-field="verdict"]')).to_have_text(want["view"]["verdict"], timeout=60_000)
    wait_ready(root)
    for key in SHOWN:
        expect(root.locator(f'[data-field="{key}"]')).to_have_text(want["view"][key])
    expect(root.locator('select[name="ttl"]')).to_be_disabled()  # the lifetime choice is Anthropic's
    # back to Anthropic with a 1-hour entry: a 15-minute gap now hits
    root.locator('select[name="model"]').select_option("claude-sonnet-4-5")
    root.locator('select[name="ttl"]').select_option("1h")
    want = kvlab.api_cache_figure(prefix_tokens=20000, requests_per_hour=4, model="claude-sonnet-4-5", ttl="1h")
    expect(root.locator('[data-field="verdict"]')).to_have_text(want["view"]["verdict"], timeout=60_000)
    expect(root.locator('[data-field="cached_per_day"]')).to_have_text(want["view"]["cached_per_day"])
    rows = root.locator('[data-field="compare"] tbody tr')
    expect(rows).to_have_count(len(want["compare"]))
    expect(rows.nth(0).locator("td").nth(1)).to_have_text(want["view"]["compare"][0]["cells"][1])
    # the curve is drawn: one cached and one uncached line per vendor, each point's hover line from Python
    expect(root.locator(".kv-plot .scatterlayer .trace")).to_have_count(2 * len(want["curve"]["series"]))
    hovers = root.locator(".kv-plot").evaluate("el => el.data.map(t => Array.from(t.hovertext))")
    assert (
        hovers == want["view"]["hover"]
        and hovers[0][0] == "0.25 per hour: " + want["view"]["curve_rows"][0]["cells"][0]
    )


def test_table_cells_read_at_one_size(browser, site_url):
    for width in (375, 1280):
        context = browser.new_context(viewport={"width": width, "height": 800})
        try:
            page = context.new_page()
            page.goto(site_url + PAGE)
            for name in ("api-cache",):
                assert_one_table_size(page.locator(f'[data-widget="{name}"]'), width)
        finally:
            context.close()
