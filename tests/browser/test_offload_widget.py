"""KV offload tiers page: the kv-offload widget, static and live in Chromium, equal CPython's kvlab."""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import open_live, set_range, wait_ready

PAGE = "kv-offload/"


def test_static_page_holds_the_numbers_kvlab_computes(built_site):
    html = (built_site / "kv-offload" / "index.html").read_text()
    data = kvlab.kv_offload_figure()
    assert data["view"]["verdict"].replace("'", "&#39;") in html
    for t in data["tiers"]:
        assert f'<td data-bind="hit">{t["hit"]}</td>' in html
        assert f'<td data-bind="trace">{t["trace"]}</td>' in html
    for r in data["per_request"]:
        assert f'<td data-bind="seconds">{r["seconds"]}</td>' in html


def test_offload_widget_recomputes_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "kv-offload")
    # the chart: prefill again, one load line per offload tier, the crossovers
    want = kvlab.kv_offload_figure()
    marks = [s for s in want["curve"]["series"] if s["crossover"] and s["crossover"] >= want["curve"]["tokens"][0]]
    expect(root.locator(".kv-plot .scatterlayer .trace")).to_have_count(1 + len(want["curve"]["series"]) + bool(marks))
    h = want["view"]["hover"]  # one hover line per point, from Python
    hovers = root.locator(".kv-plot").evaluate("el => el.data.map(t => Array.from(t.hovertext))")
    assert hovers == [h["recompute"], *h["series"], *([h["crossover"]] if marks else [])]
    # (3.63 ms since session 26: the prefill's FLOPs leave out the vocab tables, serving.linear_flops; 4.17 ms before)
    assert h["recompute"][0] == "256 tokens: 3.63 ms" and h["series"][0][-1].startswith("1,048,576 tokens: ")
    # a bigger model over NVLink-C2C, a longer prefix, fewer prefixes
    root.locator('select[name="model"]').select_option("qwen3-32b")
    root.locator('select[name="link"]').select_option("nvlink-c2c")
    set_range(root, "prefix_tokens", 32768)
    set_range(root, "n_prefixes", 2000)
    want = kvlab.kv_offload_figure(model="qwen3-32b", link="nvlink-c2c", prefix_tokens=32768, n_prefixes=2000)
    verdict = root.locator('[data-bind="view.verdict"]')
    expect(verdict).to_have_text(want["view"]["verdict"], timeout=60_000)
    wait_ready(root)
    rows = root.locator("table.kv-of-tiers tbody tr[data-item]")
    expect(rows).to_have_count(len(want["tiers"]))
    for i, t in enumerate(want["tiers"]):
        for key in ("hit", "trace", "load", "crossover"):
            expect(rows.nth(i).locator(f'[data-bind="{key}"]')).to_have_text(t[key])
    expect(root.locator('[data-bind="view.trace"]')).to_have_text(want["view"]["trace"])
    # past the trace limit the page says the numbers are the closed form alone
    set_range(root, "n_prefixes", 50_000)
    want = kvlab.kv_offload_figure(model="qwen3-32b", link="nvlink-c2c", prefix_tokens=32768, n_prefixes=50_000)
    expect(root.locator('[data-bind="view.trace"]')).to_have_text(want["view"]["trace"], timeout=60_000)
    expect(rows.nth(0).locator('[data-bind="hit"]')).to_have_text(want["tiers"][0]["hit"])
