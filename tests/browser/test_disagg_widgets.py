"""Disaggregated prefill page: pd-transfer and kv-routing, static and live in Chromium, equal CPython's kvlab."""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import assert_one_table_size, open_live, set_range, wait_ready

PAGE = "disaggregated/"


def test_static_page_holds_the_numbers_kvlab_computes(built_site):
    html = (built_site / "disaggregated" / "index.html").read_text()
    pd = kvlab.pd_transfer_figure()
    assert pd["view"]["headline"] in html
    for row in pd["link_rows"]:
        assert f'data-bind="time">{row["time"]}<' in html
    rt = kvlab.kv_routing_figure()
    assert rt["view"]["headline"] in html
    for p in rt["view"]["policies"]:
        assert f'data-bind="hit_rate">{p["hit_rate"]}<' in html


def test_pd_transfer_recomputes_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "pd-transfer")
    root.locator('select[name="link"]').select_option("tcp-25")
    set_range(root, "prompt_tokens", 20000)
    set_range(root, "batch", 8)
    want = kvlab.pd_transfer_figure(link="tcp-25", prompt_tokens=20000, batch=8)
    assert want["fits"]
    expect(root.locator(".kv-pd-headline")).to_have_text(want["view"]["headline"], timeout=60_000)
    wait_ready(root)
    rows = root.locator("table.kv-pd-compare tbody tr[data-item]")
    expect(rows).to_have_count(len(want["view"]["rows"]))
    expect(rows.nth(0).locator("td").nth(1)).to_have_text(want["view"]["rows"][0]["disaggregated"])
    expect(root.locator('table.kv-pd-links tr[data-chosen="true"] th')).to_have_text(want["link_info"]["name"])
    expect(root.locator('output[name="batch-out"]')).to_have_text("8")
    # the lanes (their segments' titles) and the status line are the view's
    titles = root.locator(".kv-pd-seg").evaluate_all("segs => segs.map(s => s.title)")
    assert titles == [sg["title"] for lane in want["view"]["lanes"] for sg in lane["segments"]]
    expect(root.locator(".kv-status-text")).to_have_text(want["view"]["status"])
    # prefill plus one line per link
    expect(root.locator(".kv-plot .scatterlayer .trace")).to_have_count(1 + len(want["curve"]["links"]))


def test_kv_routing_simulates_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "kv-routing")
    set_range(root, "skew", 2)
    set_range(root, "replicas", 6)
    want = kvlab.kv_routing_figure(skew=2, replicas=6)
    expect(root.locator(".kv-rt-headline")).to_have_text(want["view"]["headline"], timeout=60_000)
    wait_ready(root)
    cells = root.locator("table.kv-rt-policies tbody tr[data-item] td:first-of-type")
    expect(cells).to_have_text([p["hit_rate"] for p in want["view"]["policies"]])
    expect(root.locator("table.kv-rt-replicas tbody tr[data-item]")).to_have_count(6)
    expect(root.locator('output[name="replicas-out"]')).to_have_text("6")
    expect(root.locator(".kv-plot .scatterlayer .trace")).to_have_count(len(want["policies"]))
    # the ceiling's label on the chart is the view's
    expect(root.locator(".kv-plot .annotation-text")).to_have_text(want["view"]["ceiling_label"])


def test_table_cells_read_at_one_size(browser, site_url):
    for width in (375, 1280):
        context = browser.new_context(viewport={"width": width, "height": 800})
        try:
            page = context.new_page()
            page.goto(site_url + PAGE)
            for name in ("pd-transfer", "kv-routing"):
                assert_one_table_size(page.locator(f'[data-widget="{name}"]'), width)
        finally:
            context.close()
