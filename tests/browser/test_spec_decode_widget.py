"""Speculative decoding page: the spec-decode widget, static and live in Chromium; what it shows is what
CPython's kvlab computes, and the numpy tiny model runs in Pyodide once the reader changes a setting
(its weights download then, not before)."""

from __future__ import annotations

import html as htmllib
import json

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import activate, open_widget, set_range, wait_ready

PAGE = "speculative/"
WEIGHTS = "models/tiny/weights.npz"


def test_static_page_holds_every_step_kvlab_computes(built_site):
    page = (built_site / "speculative" / "index.html").read_text()
    text = htmllib.unescape(page)
    data = kvlab.spec_decode_figure(prompt="chat", k=4, draft_layers=2, n_new=20)
    v = data["view"]
    for key in ("summary", "check", "draft", "hybrid"):
        assert f'data-field="{key}">{v[key]}<' in text, key
    for step in v["steps"]:
        assert f'data-bind="cache">{step["cache"]}<' in text
    assert (built_site / "assets" / "models" / "tiny" / "weights.npz").is_file()


def test_spec_decode_steps_then_recomputes_in_pyodide(page, site_url):
    requested: list[str] = []
    page.on("request", lambda r: requested.append(r.url))
    root = open_widget(page, site_url + PAGE, "spec-decode")
    want = kvlab.spec_decode_figure()
    steps = want["view"]["steps"]
    # stepping: no Python, no weights
    activate(root)
    wait_ready(root)
    expect(root.locator('[data-field="headline"]')).to_have_text(steps[0]["headline"])
    root.locator('[data-action="next"]').click()
    expect(root.locator('[data-field="headline"]')).to_have_text(steps[1]["headline"])
    expect(root.locator(".kv-sd-live .kv-sd-cell")).to_have_count(len(steps[1]["cells"]))
    expect(root.locator(".kv-sd-live .kv-sd-cell.kv-sd-is-dropped")).to_have_count(len(want["steps"][1]["dropped"]))
    root.locator('[data-field="step"]').press("ArrowRight")
    expect(root.locator('[data-field="counter"]')).to_have_text(steps[2]["counter"])
    root.locator('[data-field="step"]').press("ArrowLeft")
    expect(root.locator('[data-field="describe"]')).to_have_text(steps[1]["describe"])
    assert not [u for u in requested if u.endswith(WEIGHTS)], "the weights downloaded before a setting changed"
    # a setting: Python runs the numpy model on the downloaded weights
    set_range(root, "draft_layers", 3)
    want = kvlab.spec_decode_figure(draft_layers=3)
    expect(root.locator('[data-field="summary"]')).to_have_text(want["view"]["summary"], timeout=180_000)
    wait_ready(root)
    assert [u for u in requested if u.endswith(WEIGHTS)]
    expect(root.locator('[data-field="check"]')).to_have_text(want["view"]["check"])
    expect(root.locator('[data-field="steps"] tbody tr')).to_have_count(len(want["steps"]))
    expect(root.locator('[data-field="headline"]')).to_have_text(want["view"]["steps"][1]["headline"])
    root.locator('select[name="prompt"]').select_option("story")
    set_range(root, "k", 6)
    want = kvlab.spec_decode_figure(prompt="story", k=6, draft_layers=3)
    expect(root.locator('[data-field="summary"]')).to_have_text(want["view"]["summary"], timeout=60_000)
    rows = root.locator('[data-field="steps"] tbody tr')
    expect(rows).to_have_count(len(want["steps"]))
    expect(rows.nth(0).locator(".kv-sd-chip")).to_have_count(len(want["view"]["steps"][0]["chips"]))
    # one call with the default setting, in the reader's Pyodide (the page's budget: under 300 ms)
    timings = page.evaluate(
        """async () => {
            const out = [];
            for (let i = 0; i < 3; i++) {
                const t = performance.now();
                await kvlab.call("spec_decode_figure", {});
                out.push(performance.now() - t);
            }
            return out;
        }"""
    )
    print(f"spec_decode_figure() in Pyodide, ms: {[round(t) for t in timings]}")
    assert min(timings) < 10_000  # a measurement (shared 2-core machines): the budget is bench's, not a gate
    # the weights came once, for the first call that needed them
    assert len([u for u in requested if u.endswith(WEIGHTS)]) == 1


def test_an_embed_link_sets_the_widget_when_it_goes_live(page, site_url):
    """?k=99 is clamped to the slider's 8 (and said); the figure follows when the reader makes it live."""
    page.goto(site_url + "embed/spec-decode/?k=99&prompt=repeat")
    root = page.locator('[data-widget="spec-decode"]')
    expect(root).to_contain_text("clamped")
    activate(root)
    want = kvlab.spec_decode_figure(k=8, prompt="repeat")
    expect(root.locator('[data-field="summary"]')).to_have_text(want["view"]["summary"], timeout=180_000)
    expect(root.locator('input[name="k"]')).to_have_value("8")


def test_make_it_live_counts_the_weights_it_will_fetch(page, site_url, built_site):
    """The offer names what going live downloads in all: Python's runtime and the tiny model's
    weights, which the widget's function fetches on its first call (it said 18.4 MB, not 23.5)."""
    manifest = json.loads(
        (built_site / "assets" / "kvlab" / "manifest.js").read_text().split("=", 1)[1].strip().rstrip(";")
    )
    weights = manifest["files"][WEIGHTS]["size"]
    root = open_widget(page, site_url + PAGE, "spec-decode")
    assert root.get_attribute("data-files") == WEIGHTS
    python = page.evaluate("kvlab.runtimeBytes('python')")
    offer = root.locator(".kv-status-text")
    expect(offer).to_contain_text(f"({(python + weights) / 1e6:.1f} MB, once per visit)")
    # a widget whose function needs no file: the runtime alone
    other = open_widget(page, site_url + "attention/", "attention")
    expect(other.locator(".kv-status-text")).to_contain_text(f"({python / 1e6:.1f} MB, once per visit)")
    assert other.get_attribute("data-files") is None


CHIPS_JS = """root => {
  const wrap = root.querySelector('.kv-table-wrap');
  return {
    sizes: [...root.querySelectorAll('.kv-sd-chip')].filter(c => c.offsetParent).map(c => parseFloat(getComputedStyle(c).fontSize)),
    overflow: wrap.scrollWidth - wrap.clientWidth,
    spill: [...root.querySelectorAll('.kv-sd-table .kv-sd-chip')].filter(c => c.getBoundingClientRect().right > c.closest('td').getBoundingClientRect().right + 0.5).length,
  };
}"""


def test_chip_rows_read_at_375_px(browser, site_url):
    """At 375 px the chips were 10 px text in a narrow column: 11 px or more, wrapping inside their cells, no sideways scroll."""
    context = browser.new_context(viewport={"width": 375, "height": 812})
    try:
        page = context.new_page()
        root = open_widget(page, site_url + PAGE, "spec-decode")
        got = root.evaluate(CHIPS_JS)
        assert got["sizes"] and min(got["sizes"]) >= 11, min(got["sizes"])
        assert got["overflow"] <= 1, got
        assert got["spill"] == 0, got
    finally:
        context.close()
