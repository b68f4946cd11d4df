"""Eviction page: the eviction and context-shift widgets, live in Chromium, equal CPython's kvlab."""

from __future__ import annotations

import json

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import activate, open_widget, set_range, wait_ready

PAGE = "eviction/"


def same(a, b) -> bool:
    """Equal after the JSON round trip the page's data takes."""
    return json.loads(json.dumps(a)) == json.loads(json.dumps(b))


def test_static_page_holds_the_numbers_kvlab_computes(built_site):
    html = (built_site / "eviction" / "index.html").read_text()
    ev = kvlab.eviction_view(policy="sinks", n=32, window=8, n_sink=4, budget=12, recent=4)
    for s in ev["steps"]:
        assert (
            f'<th scope="row">{s["step"]}</th><td>{s["cached_text"]}</td><td>{s["evicted_text"]}</td><td>{s["attention_kept_text"]}</td>'
            in html
        )
    for key, p in ev["compare"].items():
        assert f'data-field="mean-{key}">{p["mean_text"]}<' in html
    cs = kvlab.context_shift_view(prompt_len=8, n_generate=40, n_ctx=32, n_keep=4, mode="shift")
    assert cs["shifts"], "the default settings must show a shift"
    for s in cs["shifts"]:
        assert f"<li>{s['text']}</li>" in html
    assert f'data-field="outcome">{cs["text"]["outcome"]}<' in html
    assert 'data-widget="model-eviction"' in html  # the real-model demo took the marked spot
    # the static rasters (for readers without JavaScript) draw one rect per written cell of each grid
    for cls, grid in (("kv-ev", ev["grid"]), ("kv-cs", cs["grid"])):
        assert html.count(f'class="{cls}') == sum(1 for row in grid for v in row if v)


def test_eviction_widget_recomputes_in_pyodide(page, site_url):
    root = open_widget(page, site_url + PAGE, "eviction")
    activate(root)
    wait_ready(root)
    root.locator('select[name="policy"]').select_option("window")
    set_range(root, "window", 6)
    set_range(root, "n", 40)
    want = kvlab.eviction_view(policy="window", n=40, window=6, n_sink=4, budget=12, recent=4)
    expect(root.locator('[data-field="n"]')).to_have_text("40")
    wait_ready(root)
    # controls of other policies are hidden, the window control is shown
    expect(root.locator('input[name="budget"]')).to_be_hidden()
    expect(root.locator('input[name="window"]')).to_be_visible()
    assert same(root.locator(".kv-raster").evaluate("el => el.data[0].z"), want["grid"])
    kept = root.locator(".kv-kept").evaluate("el => el.data.map(t => Array.from(t.y))")
    assert same(kept, [p["attention_kept"] for p in want["compare"].values()])
    last = want["steps"][-1]
    for key in ("cached_text", "evicted_text", "attention_kept_text", "n_evicted_total"):
        expect(root.locator(f'[data-field="{key}"]')).to_have_text(str(last[key]))
    for key, p in want["compare"].items():
        expect(root.locator(f'[data-field="mean-{key}"]')).to_have_text(p["mean_text"])
    # the step slider reads any step back from the same data
    root.locator('input[name="step"]').evaluate(
        "el => { el.value = '10'; el.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    s = want["steps"][10]
    expect(root.locator('[data-field="step"]')).to_have_text("10")
    expect(root.locator('[data-field="cached_text"]')).to_have_text(s["cached_text"])
    expect(root.locator('[data-field="attention_kept_text"]')).to_have_text(s["attention_kept_text"])

    # bad input: n beyond the view's limit is clamped, and H2O's recent is clamped to the budget
    # (one input event for all four, as an embed page's query string does: each clamp is then in one notice)
    root.locator("form.kv-controls").evaluate(
        """form => { form.policy.value = 'h2o'; form.budget.value = '5'; form.recent.value = '9'; form.n.value = '1000';
                    form.dispatchEvent(new Event('input', {bubbles: true})); }"""
    )
    expect(root.locator(".kv-clamped")).to_contain_text("tokens n: asked 1000, used 256")
    expect(root.locator(".kv-clamped")).to_contain_text("recent: asked 9, used 5")
    wait_ready(root)
    expect(root.locator('input[name="n"]')).to_have_value("256")
    clamped = kvlab.eviction_view(policy="h2o", n=256, window=6, n_sink=4, budget=5, recent=5)
    expect(root.locator('[data-field="mean-h2o"]')).to_have_text(clamped["compare"]["h2o"]["mean_text"])


def test_context_shift_widget_recomputes_in_pyodide(page, site_url):
    root = open_widget(page, site_url + PAGE, "context-shift")
    activate(root)
    wait_ready(root)
    set_range(root, "n_ctx", 20)
    set_range(root, "n_keep", 2)
    want = kvlab.context_shift_view(prompt_len=8, n_generate=40, n_ctx=20, n_keep=2, mode="shift")
    expect(root.locator('[data-field="outcome"]')).to_have_text(want["text"]["outcome"])
    wait_ready(root)
    assert root.locator('[data-field="shifts"] li').all_text_contents() == [s["text"] for s in want["shifts"]]
    assert same(root.locator(".kv-raster").evaluate("el => el.data[0].z"), want["grid"])
    expect(root.locator('[data-field="final_visible"]')).to_have_text(want["text"]["final_visible"])

    root.locator('select[name="mode"]').select_option("stop")
    stop = kvlab.context_shift_view(prompt_len=8, n_generate=40, n_ctx=20, n_keep=2, mode="stop")
    assert stop["stopped_at"] is not None
    expect(root.locator('[data-field="outcome"]')).to_have_text(stop["text"]["outcome"])
    wait_ready(root)
    expect(root.locator('[data-field="shifts"] li')).to_have_count(0)

    # bad input: a prompt longer than the context is clamped to n_ctx - 1, and the page says so
    set_range(root, "prompt_len", 40)
    expect(root.locator(".kv-clamped")).to_contain_text("prompt tokens: asked 40, used 19")
    wait_ready(root)
    expect(root.locator('input[name="prompt_len"]')).to_have_value("19")
    clamped = kvlab.context_shift_view(prompt_len=19, n_generate=40, n_ctx=20, n_keep=2, mode="stop")
    expect(root.locator('[data-field="outcome"]')).to_have_text(clamped["text"]["outcome"])


def test_embed_page_applies_settings_and_keeps_both_notes(page, site_url):
    root = open_widget(page, site_url + "embed/eviction/?policy=h2o&budget=5&recent=9&bogus=1", "eviction")
    activate(root)  # the runtime goes live on the reader's intent, on an embed page too
    wait_ready(root)
    expect(root.locator(".kv-embed")).to_contain_text("bogus")
    expect(root.locator(".kv-clamped")).to_contain_text("recent: asked 9, used 5")
    want = kvlab.eviction_view(policy="h2o", n=32, window=8, n_sink=4, budget=5, recent=5)
    expect(root.locator('[data-field="policy_name"]')).to_have_text(want["policy_name"])
    expect(root.locator('[data-field="cached_text"]')).to_have_text(want["steps"][-1]["cached_text"])
