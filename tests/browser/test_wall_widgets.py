"""The quadratic-wall page: race, reprocessing and quadratic-wall widgets, live in Chromium.

Every number the page shows is checked against CPython's kvlab for the same inputs.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import activate, set_range, wait_ready

PAGE = "quadratic-wall/"


def num(x) -> str:
    return f"{x:,}"


def times(x: float) -> str:
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def big(x: float) -> str:
    for v, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if x >= v:
            return f"{x / v:.1f} {word}"
    return str(int(x))


def race_readout(d) -> str:
    t = d["totals"]
    return f"At {num(d['params']['n'])} tokens: {num(t['no_cache'])} vs {num(t['cache'])} token-computations, {times(t['ratio'])}× more without a cache."


def race_headline(d) -> str:
    h = d["view"]["headline"]
    return (
        f"At {h['tokens']} the cache is {h['exactly']}{h['cheaper']}: {h['no_cache']} without it, {h['cache']} with it."
    )


def test_static_page_states_the_claims_from_kvlab(built_site):
    html = (built_site / "quadratic-wall" / "index.html").read_text()
    race = kvlab.race_figure(n=19)
    target, reply = race["landmarks"]["target"], race["landmarks"]["reply"]
    # docs/claims.md: exactly 10x at 19 tokens; a 1,000-token reply costs 500,500 vs 1,000
    assert (target["n"], target["ratio"], target["exact"]) == (19, 10, True)
    assert (reply["no_cache"], reply["cache"]) == (500500, 1000)
    # the first bullet follows the slider; at the page's n = 19 it is the landmark
    headline = re.search(r'<li data-field="landmark-target">(.*?)</li>', html, re.S).group(1)
    assert re.sub(r"<[^>]+>", "", headline).startswith(
        f"At {target['n']} tokens the cache is exactly {target['ratio']}× cheaper: {target['no_cache']} token-computations"
    )
    assert (
        f"<strong>{num(reply['no_cache'])}</strong> token-computations without a cache and {num(reply['cache'])} with one: {times(reply['ratio'])}× more"
        in html
    )
    # token 1 processed 50 times, token 10 forty-one times by token 50
    rep = kvlab.reprocessing_figure(n=50)
    assert (rep["no_cache"][0], rep["no_cache"][9]) == (50, 41)
    assert f'data-field="first">{rep["no_cache"][0]}</strong>' in html
    assert f'data-field="kth">{rep["no_cache"][9]}</strong>' in html
    wall = kvlab.quadratic_wall_figure(n=1024)
    assert f'data-field="ac">{big(wall["last"]["cache"]["attention_macs"])}</td>' in html
    assert f'data-field="growth-attention">{times(wall["growth"]["cache"]["attention"])}</strong>' in html


def test_three_widgets_recompute_in_pyodide(warm_page, site_url):
    warm_page.goto(site_url + PAGE)

    # race: drag n, readout and Plotly traces equal kvlab.race_figure
    race = warm_page.locator('[data-widget="race"]')
    activate(race)
    wait_ready(race)
    expect(race.locator('[data-field="readout"]')).to_have_text(race_readout(kvlab.race_figure(n=19)))
    set_range(race, "n", 37)
    wait_ready(race)
    want = kvlab.race_figure(n=37)
    expect(race.locator('[data-field="readout"]')).to_have_text(race_readout(want))
    # the headline bullet follows the slider's n, from Python's result (it stayed at 19)
    expect(race.locator('[data-field="landmark-target"]')).to_have_text(race_headline(want))
    plotted = race.locator(".kv-plot").evaluate("el => el.data.map(t => t.y)")
    assert plotted == [want["no_cache"]["cumulative"], want["cache"]["cumulative"], want["ratio"]]
    assert race.locator(".kv-race-table tbody tr").count() == 37

    # reprocessing: bars and sentence for n = 7 (fewer than 10 tokens: the sentence names token 7)
    rep = warm_page.locator('[data-widget="reprocessing"]')
    rep.scroll_into_view_if_needed()
    activate(rep)
    wait_ready(rep)
    set_range(rep, "n", 7)
    wait_ready(rep)
    want = kvlab.reprocessing_figure(n=7)
    expect(rep.locator('[data-field="first"]')).to_have_text(str(want["no_cache"][0]))
    expect(rep.locator('[data-field="k"]')).to_have_text("7")
    expect(rep.locator('[data-field="kth"]')).to_have_text(str(want["no_cache"][6]))
    assert rep.locator(".kv-plot").evaluate("el => [el.data[0].y, el.data[1].y]") == [want["no_cache"], want["cache"]]
    expect(rep.locator(".kv-reprocessing-svg")).to_be_hidden()  # the static SVG gives way to the live chart

    # quadratic wall: a bigger model and a longer context
    wall = warm_page.locator('[data-widget="quadratic-wall"]')
    wall.scroll_into_view_if_needed()
    activate(wall)
    wait_ready(wall)
    wall.locator('select[name="model"]').select_option("gpt-7b")
    set_range(wall, "n", 2048)
    wait_ready(wall)
    want = kvlab.quadratic_wall_figure(n=2048, n_layers=32, d_model=4096, n_heads=32, n_kv_heads=32, d_ff=16384)
    expect(wall.locator('[data-field="n"]')).to_have_text("2,048")
    expect(wall.locator('[data-field="growth-attention"]')).to_have_text(times(want["growth"]["cache"]["attention"]))
    expect(wall.locator('[data-field="share"]')).to_have_text(f"{100 * want['last_attention_share']['cache']:.1f}")
    expect(wall.locator('[data-field="ac"]')).to_have_text(big(want["last"]["cache"]["attention_macs"]))
    expect(wall.locator('[data-field="wnc"]')).to_have_text(big(want["last"]["no_cache"]["weight_macs"]))
    traces = wall.locator(".kv-plot").evaluate("el => el.data.map(t => [t.x, t.y])")
    assert traces == [
        [want["tokens"], want["no_cache"]["weight_macs"]],
        [want["tokens"], want["no_cache"]["attention_macs"]],
        [want["tokens"], want["cache"]["weight_macs"]],
        [want["tokens"], want["cache"]["attention_macs"]],
    ]
    # with a cache the weight line is flat while attention climbs (docs/claims.md)
    assert len(set(want["cache"]["weight_macs"])) == 1
    assert want["cache"]["attention_macs"][-1] > want["cache"]["attention_macs"][0]


def test_page_reads_without_javascript(browser, site_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + PAGE)
    race = page.locator('[data-widget="race"]')
    expect(race.locator(".kv-race-table")).to_be_visible()
    expect(race.locator(".kv-controls")).to_be_hidden()
    expect(race.locator('[data-field="landmark-reply"]')).to_contain_text("500,500")
    expect(page.locator('[data-widget="reprocessing"] .kv-reprocessing-svg')).to_be_visible()
    expect(page.locator('[data-widget="quadratic-wall"] .kv-wall-table')).to_be_visible()
    expect(page.locator('[data-widget="quadratic-wall"] .kv-plot')).to_be_hidden()
    context.close()
