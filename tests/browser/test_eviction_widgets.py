"""Eviction page: the eviction and context-shift widgets, live in Chromium, equal CPython's kvlab."""

from __future__ import annotations

import json
import re

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import activate, open_live, open_widget, set_range, wait_ready

PAGE = "eviction/"


def same(a, b) -> bool:
    """Equal after the JSON round trip the page's data takes."""
    return json.loads(json.dumps(a)) == json.loads(json.dumps(b))


def runs(row) -> list[tuple[int, int, int]]:
    """A row's runs of one non-zero value, (first column, length, value), found cell by cell: the
    oracle for kvlab.widgets.views.raster_runs (numpy), which the build's SVG and kvlab.kit.raster draw."""
    out: list[tuple[int, int, int]] = []
    for x, v in enumerate(row):
        if not v:
            continue
        if out and out[-1][2] == v and out[-1][0] + out[-1][1] == x:
            out[-1] = (out[-1][0], out[-1][1] + 1, v)
        else:
            out.append((x, 1, v))
    return out


def test_runs_cover_a_row_exactly():
    assert runs([0, 1, 1, 2, 0, 0, 2, 2, 3]) == [(1, 2, 1), (3, 1, 2), (6, 2, 2), (8, 1, 3)]
    assert runs([0, 0]) == [] and runs([]) == []


def svg_grid(root, prefix: str) -> list[list[int]]:
    """The grid the raster SVG draws (no chart library): its size from the viewBox, each
    run of cells from a rect (x, width + 0.1 cells, value from the class: prefix + value),
    0 where no rect is drawn."""
    return root.locator("svg.kv-static-raster").evaluate(
        """(svg, prefix) => {
            const [, , cols, rows] = svg.getAttribute('viewBox').split(' ').map(Number);
            const grid = Array.from({length: rows}, () => new Array(cols).fill(0));
            for (const r of svg.querySelectorAll(':scope > rect')) {
                const cls = r.getAttribute('class');
                if (!cls.startsWith(prefix)) continue;
                const x = +r.getAttribute('x'), n = Math.round(+r.getAttribute('width') + 0.1);
                for (let i = x; i < x + n; i++) grid[+r.getAttribute('y')][i] = Number(cls.slice(prefix.length));
            }
            return grid; }""",
        prefix,
    )


def assert_raster_is(root, prefix: str, grid, titles: list[str] | None = None) -> None:
    """The live raster is the grid CPython's kvlab computes: a rect per run of equal cells
    in a row (as many as `runs` finds), each over its cells; drawn in
    the SVG, no Plotly chart left."""
    expect(root.locator("svg.kv-static-raster")).to_be_visible()
    assert root.locator(".kv-raster, .kv-static-raster .plotly, svg.kv-static-raster .main-svg").count() == 0
    for v in (1, 2, 3):
        want = sum(1 for row in grid for run in runs(row) if run[2] == v)
        assert root.locator(f"svg.kv-static-raster > rect.{prefix}{v}").count() == want, (prefix, v)
    assert same(svg_grid(root, prefix), grid)
    if titles is not None:  # each run's tooltip, as the view wrote it (the hover's text)
        assert (
            root.locator(
                f"svg.kv-static-raster > rect.{prefix}1, svg.kv-static-raster > rect.{prefix}2, "
                f"svg.kv-static-raster > rect.{prefix}3"
            ).evaluate_all("rs => rs.map(r => r.querySelector('title')?.textContent ?? null)")
            == titles
        )


def test_static_page_holds_the_numbers_kvlab_computes(built_site):
    html = (built_site / "eviction" / "index.html").read_text()
    ev = kvlab.eviction_figure(policy="sinks", n=32, window=8, n_sink=4, budget=12, recent=4)
    unbound = re.sub(r' data-(?:item|bind(?:-[a-z]+)?="[^"]*")', "", html)  # the binder's attributes set aside
    for s in ev["view"]["steps"]:
        assert (
            f'<th scope="row">{s["step"]}</th><td>{s["cached"]}</td><td>{s["evicted"]}</td><td>{s["attention_kept"]}</td>'
            in unbound
        )
    for key, mean in ev["view"]["means"].items():
        assert f'data-field="mean-{key}">{mean}<' in html
    cs = kvlab.context_shift_figure(prompt_len=8, n_generate=40, n_ctx=32, n_keep=4, mode="shift")
    assert cs["shifts"], "the default settings must show a shift"
    for s in cs["view"]["shifts"]:
        assert f'<li data-item data-bind=".">{s}</li>' in html
    assert f'data-field="outcome">{cs["view"]["outcome"]}<' in html
    assert 'data-widget="model-eviction"' in html  # the real-model demo took the marked spot
    # the static rasters (for readers without JavaScript) draw one rect per run of written cells
    for cls, grid in (("kv-ev", ev["grid"]), ("kv-cs", cs["grid"])):
        assert html.count(f'class="{cls}') == sum(len(runs(row)) for row in grid)
        assert sum(len(runs(row)) for row in grid) < sum(1 for row in grid for v in row if v) / 4
    # ... each with its tooltip, the view's: the static and the live drawing are one
    for fig in (ev, cs):
        titles = fig["view"]["raster"]["titles"]
        assert titles and html.count("<title>") >= len(titles)
        assert all(f"<title>{t}</title>" in html for t in titles[:5] + titles[-5:])
    # marks: the last step outlined, a line per shift; the axes spelled out next to each raster
    assert html.count('class="kv-raster-step"') == 1
    assert html.count('class="kv-raster-shift"') == len(cs["shifts"])
    assert "columns → token position (its K and V)" in html and "Rows ↓ step (token written)" in html
    assert "columns → token of the text (prompt, then generated)" in html and "Rows ↓ step (0 = prompt)" in html


def test_eviction_widget_recomputes_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "eviction")
    root.locator('select[name="policy"]').select_option("window")
    set_range(root, "window", 6)
    set_range(root, "n", 40)
    want = kvlab.eviction_figure(policy="window", n=40, window=6, n_sink=4, budget=12, recent=4)
    expect(root.locator('[data-field="n"]')).to_have_text("40")
    wait_ready(root)
    # controls of other policies are hidden, the window control is shown
    expect(root.locator('input[name="budget"]')).to_be_hidden()
    expect(root.locator('input[name="window"]')).to_be_visible()
    assert_raster_is(root, "kv-ev", want["grid"], want["view"]["raster"]["titles"])
    assert "step 39, positions 0–33: evicted" in want["view"]["raster"]["titles"]
    expect(root.locator('[data-field="raster-rows"]')).to_have_text("39")
    expect(root.locator(".kv-raster-step")).to_have_attribute("y", "38.95")  # the last step, outlined
    kept = root.locator(".kv-kept").evaluate("el => el.data.map(t => Array.from(t.y))")
    assert same(kept, [p["attention_kept"] for p in want["compare"].values()])
    last = want["view"]["steps"][-1]
    for field, key in (
        ("cached_text", "cached"),
        ("evicted_text", "evicted"),
        ("attention_kept_text", "attention_kept"),
    ):
        expect(root.locator(f'[data-field="{field}"]')).to_have_text(last[key])
    expect(root.locator('[data-field="n_evicted_total"]')).to_have_text(str(last["n_evicted_total"]))
    for key, mean in want["view"]["means"].items():
        expect(root.locator(f'[data-field="mean-{key}"]')).to_have_text(mean)
    # the step slider reads any step back from the same data
    root.locator('input[name="step"]').evaluate(
        "el => { el.value = '10'; el.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    s = want["view"]["steps"][10]
    expect(root.locator('[data-field="step"]')).to_have_text("10")
    expect(root.locator('[data-field="cached_text"]')).to_have_text(s["cached"])
    expect(root.locator('[data-field="attention_kept_text"]')).to_have_text(s["attention_kept"])
    # ... and its row is outlined in the raster, which is otherwise untouched
    expect(root.locator(".kv-raster-step")).to_have_count(1)
    expect(root.locator(".kv-raster-step")).to_have_attribute("y", "9.95")
    assert_raster_is(root, "kv-ev", want["grid"], want["view"]["raster"]["titles"])

    # bad input: n beyond the view's limit is clamped, and H2O's recent is clamped to the budget
    # (one input event for all four, as an embed page's query string does: each clamp is then in one notice)
    root.locator("form.kv-controls").evaluate(
        """form => { form.policy.value = 'h2o'; form.budget.value = '5'; form.recent.value = '9'; form.n.value = '1000';
                    form.dispatchEvent(new Event('input', {bubbles: true})); }"""
    )
    expect(root.locator(".kv-clamped")).to_contain_text("Tokens n: asked 1000, used 256")
    expect(root.locator(".kv-clamped")).to_contain_text("Recent: asked 9, used 5")
    wait_ready(root)
    expect(root.locator('input[name="n"]')).to_have_value("256")
    clamped = kvlab.eviction_figure(policy="h2o", n=256, window=6, n_sink=4, budget=5, recent=5)
    expect(root.locator('[data-field="mean-h2o"]')).to_have_text(clamped["view"]["means"]["h2o"])


def test_context_shift_widget_recomputes_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "context-shift")
    set_range(root, "n_ctx", 20)
    set_range(root, "n_keep", 2)
    want = kvlab.context_shift_figure(prompt_len=8, n_generate=40, n_ctx=20, n_keep=2, mode="shift")
    expect(root.locator('[data-field="outcome"]')).to_have_text(want["view"]["outcome"])
    wait_ready(root)
    assert root.locator('[data-field="shifts"] li').all_text_contents() == want["view"]["shifts"]
    assert_raster_is(root, "kv-cs", want["grid"], want["view"]["raster"]["titles"])
    # a dashed line per shift, between the row before it and its own
    ys = root.locator(".kv-raster-shift").evaluate_all("ls => ls.map(l => l.getAttribute('y1'))")
    assert ys == [f"{s['step'] - 0.05:g}" for s in want["shifts"]]
    expect(root.locator('[data-field="raster-cols"]')).to_have_text(str(len(want["grid"][0]) - 1))
    expect(root.locator('[data-field="final_visible"]')).to_have_text(want["view"]["final_visible"])
    assert_ticks_are(root, want["view"]["ticks"])

    root.locator('select[name="mode"]').select_option("stop")
    stop = kvlab.context_shift_figure(prompt_len=8, n_generate=40, n_ctx=20, n_keep=2, mode="stop")
    assert stop["stopped_at"] is not None
    expect(root.locator('[data-field="outcome"]')).to_have_text(stop["view"]["outcome"])
    wait_ready(root)
    expect(root.locator('[data-field="shifts"] li')).to_have_count(0)
    expect(root.locator(".kv-raster-shift")).to_have_count(0)
    assert_raster_is(root, "kv-cs", stop["grid"])

    # bad input: a prompt longer than the context is clamped to n_ctx - 1, and the page says so
    set_range(root, "prompt_len", 40)
    expect(root.locator(".kv-clamped")).to_contain_text("Prompt tokens: asked 40, used 19")
    wait_ready(root)
    expect(root.locator('input[name="prompt_len"]')).to_have_value("19")
    clamped = kvlab.context_shift_figure(prompt_len=19, n_generate=40, n_ctx=20, n_keep=2, mode="stop")
    expect(root.locator('[data-field="outcome"]')).to_have_text(clamped["view"]["outcome"])


def test_embed_page_applies_settings_and_keeps_both_notes(page, site_url):
    root = open_widget(page, site_url + "embed/eviction/?policy=h2o&budget=5&recent=9&bogus=1", "eviction")
    activate(root)  # the runtime goes live on the reader's intent, on an embed page too
    wait_ready(root)
    expect(root.locator(".kv-embed")).to_contain_text("bogus")
    expect(root.locator(".kv-clamped")).to_contain_text("Recent: asked 9, used 5")
    want = kvlab.eviction_figure(policy="h2o", n=32, window=8, n_sink=4, budget=5, recent=5)
    expect(root.locator('[data-field="policy_name"]')).to_have_text(want["policy_name"])
    expect(root.locator('[data-field="cached_text"]')).to_have_text(want["view"]["step"]["cached"])


TICKS_JS = """root => {
  const svg = root.querySelector('.kv-static-raster').getBoundingClientRect();
  const read = (sel, axis) => [...root.querySelectorAll(sel)].map(t => {
    const r = t.getBoundingClientRect();
    const at = axis === 'x' ? (r.left + r.width / 2 - svg.left) / svg.width : (r.top + r.height / 2 - svg.top) / svg.height;
    return {label: t.textContent, at: 100 * at, visible: r.width > 0 && r.height > 0};
  });
  return {x: read('[data-field="xticks"] > span', 'x'), y: read('[data-field="yticks"] > span', 'y'),
          titles: [...root.querySelectorAll('.kv-ctx-xtitle, .kv-ctx-ytitle')].map(t => t.textContent)};
}"""


def assert_ticks_are(root, ticks):
    """The raster's axis ticks: Python's labels, each drawn beside its cell (within 1 % of the drawing)."""
    got = root.evaluate(TICKS_JS)
    assert len(got["titles"]) == 2 and all(got["titles"])
    for axis in ("x", "y"):
        assert [t["label"] for t in got[axis]] == [t["label"] for t in ticks[axis]], axis
        assert len(got[axis]) >= 2 and all(t["visible"] for t in got[axis]), (axis, got[axis])
        for shown, want in zip(got[axis], ticks[axis], strict=True):
            assert abs(shown["at"] - want["at"]) < 1, (axis, shown, want)


def test_context_shift_raster_has_axis_ticks(browser, site_url):
    """The raster had no ticks: readable labels along both axes, at 375 and 1280 px, with JavaScript on."""
    want = kvlab.context_shift_figure(prompt_len=8, n_generate=40, n_ctx=32, n_keep=4, mode="shift")["view"]["ticks"]
    for width in (375, 1280):
        context = browser.new_context(viewport={"width": width, "height": 800})
        try:
            page = context.new_page()
            root = open_widget(page, site_url + PAGE, "context-shift")
            assert_ticks_are(root, want)
            sizes = root.locator(".kv-ctx-xticks > span, .kv-ctx-yticks > span").evaluate_all(
                "els => els.map(e => parseFloat(getComputedStyle(e).fontSize))"
            )
            assert min(sizes) >= 11, sizes
        finally:
            context.close()
