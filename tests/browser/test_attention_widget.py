"""The attention widget, live in a real Chromium: numbers equal CPython's."""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import activate, heatmap_weights, open_live, open_widget, set_range, wait_ready


def shown_weights(root) -> list[list[str]]:
    return root.locator(".kv-heatmap tbody tr").evaluate_all(
        "rows => rows.map(r => Array.from(r.querySelectorAll('td')).map(td => td.textContent))"
    )


def expected_cells(data) -> list[list[str]]:
    return [[f"{w:.3f}" for w in row] for row in data["weights"]]


def expect_weights(root, data) -> None:
    """Wait until the table shows `data`'s weights: "ready" may still be the previous
    call's state when a control has just moved (the next call starts after a debounce)."""
    cells = [cell for row in expected_cells(data) for cell in row]
    expect(root.locator(".kv-heatmap tbody td")).to_have_text(cells, timeout=60_000)


def test_static_figure_is_in_the_page_before_any_script_runs(built_site):
    html = (built_site / "attention" / "index.html").read_text()
    data = kvlab.attention_figure(d=8, temperature=1.0, seed=0)
    assert 'data-widget="attention"' in html
    # the build-time table holds the same numbers CPython computes now
    for row in expected_cells(data)[:3]:
        for cell in row:
            assert f">{cell}</td>" in html


def test_python_is_not_loaded_during_page_load(page, site_url):
    page.goto(site_url + "attention/", wait_until="load")
    early = page.evaluate(
        """() => {
            const loadEnd = performance.getEntriesByType('navigation')[0].loadEventEnd;
            return performance.getEntriesByType('resource')
                .filter(e => /pyodide|plotly|ort/.test(e.name) && e.startTime <= loadEnd)
                .map(e => e.name);
        }"""
    )
    assert early == [], "runtimes must load after the page, not during its load"


def test_widget_in_view_stays_static_until_the_reader_uses_it(page_factory, site_url):
    page, _ = page_factory(allowed=[site_url], viewport={"width": 800, "height": 300})
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    root = open_widget(page, site_url + "attention/", "attention")
    root.scroll_into_view_if_needed()
    page.wait_for_timeout(2500)
    assert not [u for u in requests if "pyodide" in u]  # in view is not intent
    assert root.get_attribute("data-state") == "static"
    root.locator('input[name="d"]').focus()  # a control: intent
    wait_ready(root)
    assert [u for u in requests if "pyodide.asm.wasm" in u]


def test_moving_a_control_recomputes_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + "attention/", "attention")
    # defaults recomputed live equal CPython
    assert shown_weights(root) == expected_cells(kvlab.attention_figure(d=8, temperature=1.0, seed=0))

    set_range(root, "d", 16)
    set_range(root, "temperature", 0.5)
    want = kvlab.attention_figure(d=16, temperature=0.5, seed=0)
    expect(root.locator('[data-field="d"]')).to_have_text("16")
    wait_ready(root)
    expect(root.locator('[data-field="temperature"]')).to_have_text("0.5")
    expect_weights(root, want)
    drawn = heatmap_weights(root)  # to 3 decimals, the future under the causal mask not drawn
    assert [[w is None for w in row] for row in drawn] == [
        [j > i for j in range(len(row))] for i, row in enumerate(drawn)
    ]
    assert len(drawn) == len(want["weights"])
    for got, row in zip(drawn, want["weights"], strict=True):
        assert all(abs(g - w) <= 5.01e-4 for g, w in zip(got, row, strict=True) if g is not None)
    # the readout shows the output vector of the last token ("tired")
    shown_out = root.locator('[data-field="output"] li').all_text_contents()
    assert shown_out == [f"{x:.3f}" for x in want["outputs"][-1]]
    # a click on a heatmap cell reads that query row (here the first token's)
    root.locator(".kv-hm-cell:not(.kv-hm-none)").first.click()
    expect(root.locator('[data-field="query-token"]')).to_have_text(want["tokens"][0])
    expect(root.locator('select[name="query"]')).to_have_value("0")


def test_out_of_range_seed_is_clamped_and_shown(warm_page, site_url):
    root = open_live(warm_page, site_url + "attention/", "attention")
    set_range(root, "seed", -5)
    expect(root.locator('[data-field="seed"]')).to_have_text("0")
    expect_weights(root, kvlab.attention_figure(d=8, temperature=1.0, seed=0))
    wait_ready(root)


def test_failure_to_load_python_keeps_the_static_figure(page_factory, site_url):
    page, problems = page_factory(allowed=[site_url])
    problems.expect_console_error("ERR_FAILED")
    page.context.route("**/pyodide.asm.wasm", lambda route: route.abort())  # the worker's request too
    root = open_widget(page, site_url + "attention/", "attention")
    before = shown_weights(root)
    activate(root)
    expect(root).to_have_attribute("data-state", "error", timeout=60_000)
    expect(root.locator(".kv-status")).to_contain_text("Could not run this widget")
    expect(root.locator(".kv-status")).to_contain_text("pyodide.asm.wasm")  # says which file
    assert shown_weights(root) == before
    # the network is back: the next change starts Python afresh, no reload needed
    page.context.unroute("**/pyodide.asm.wasm")
    set_range(root, "seed", 1)
    expect(root).to_have_attribute("data-state", "ready", timeout=120_000)
    expect_weights(root, kvlab.attention_figure(d=8, temperature=1.0, seed=1))


def test_page_reads_without_javascript(browser, site_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + "attention/")
    root = page.locator('[data-widget="attention"]')
    expect(root.locator(".kv-heatmap")).to_be_visible()
    expect(root.locator(".kv-widget-badge")).to_be_visible()
    expect(root.locator(".kv-controls")).to_be_hidden()
    context.close()
