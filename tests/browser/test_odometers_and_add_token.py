"""Motion that shows a process: the race's two odometers and the quadratic
wall's "Add token" counters. Python returns the frames and the counters; the page plays them."""

from __future__ import annotations

import re

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import open_live, set_range, wait_ready

PAGE = "quadratic-wall/"


def test_static_odometers_show_the_moment_the_cache_finishes(built_site):
    html = (built_site / "quadratic-wall" / "index.html").read_text()
    od = kvlab.race_figure(19)["odometers"]
    assert (
        f"When the cached model has written all {od['n']} tokens ({od['cache_done']['units']} units), "
        f"the other has written {od['cache_done']['no_cache_tokens']}"
    ) in html


def test_the_race_plays_both_odometers_to_the_end(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "race")
    set_range(root, "n", 30)
    expect(root.locator('[data-field="odo-n"]')).to_have_text("30")
    wait_ready(root)
    seen = []
    warm_page.expose_function("kvSeen", lambda units, tokens: seen.append((units, tokens)))
    warm_page.evaluate("""() => { const el = document.querySelector('[data-field="odo-no_cache-units"]');
        new MutationObserver(() => window.kvSeen(el.textContent, document.querySelector('[data-field="odo-cache-tokens"]').textContent))
          .observe(el, {childList: true, characterData: true, subtree: true}); }""")
    root.get_by_role("button", name="Race").click()
    expect(root).to_have_attribute("data-raced", "true", timeout=20_000)
    od = kvlab.race_figure(30)["odometers"]
    last = od["frames"][-1]
    expect(root.locator('[data-field="odo-no_cache-units"]')).to_have_text(f"{last['no_cache']['units']:,}")
    expect(root.locator('[data-field="odo-no_cache-tokens"]')).to_have_text("30")
    expect(root.locator('[data-field="odo-cache-units"]')).to_have_text(f"{od['cache_done']['units']:,}")
    assert len(seen) > 10  # it moved: many frames shown on the way
    shown_units = [int(u.replace(",", "")) for u, _ in seen]
    assert shown_units == sorted(shown_units)  # and never ran backwards
    assert {f["units"] for f in od["frames"]} >= set(shown_units)  # every frame shown is one of Python's


def test_reduced_motion_shows_stills_instead(browser, site_url):
    context = browser.new_context(reduced_motion="reduce", viewport={"width": 1200, "height": 900})
    page = context.new_page()
    try:
        root = open_live(page, site_url + PAGE, "race")
        root.get_by_role("button", name="Race").click()
        od = kvlab.race_figure(19)["odometers"]
        expect(root.locator('[data-field="odo-no_cache-tokens"]')).to_have_text(
            str(od["cache_done"]["no_cache_tokens"])
        )
        expect(root.locator(".kv-status")).to_contain_text("Reduced motion")
        root.get_by_role("button", name="Race").click()
        expect(root.locator('[data-field="odo-no_cache-tokens"]')).to_have_text(str(od["n"]))
    finally:
        context.close()


def test_add_token_counts_with_and_without_the_cache(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "reprocessing")
    root.get_by_role("button", name="Start over").click()
    expect(root.locator('[data-field="c-token"]')).to_have_text("1")
    add = root.get_by_role("button", name="Add token")
    for n in range(2, 6):
        add.click()
        c = kvlab.add_token_counters(n)
        expect(root.locator('[data-field="c-token"]')).to_have_text(str(n))
        expect(root.locator('[data-field="c-reprocessed"]')).to_have_text(str(c["reprocessed"]["no_cache"]))
        expect(root.locator('[data-field="c-total-nc"]')).to_have_text(f"{c['total']['no_cache']:,}")
        expect(root.locator('[data-field="c-total-c"]')).to_have_text(f"{c['total']['cache']:,}")
    expect(root.locator("input[name=n]")).to_have_value("5")
    wait_ready(root)


TICKS_JS = """el => ['xaxis', 'yaxis'].map(a => [...el.querySelectorAll(`.${a.charAt(0)}tick text`)].map(t => t.textContent))"""


def test_add_token_chart_has_whole_ticks_at_a_small_n(warm_page, site_url):
    """At n = 2 Plotly's own ticks were 0.5, 1.5, … ("token 1.5"): every tick is a whole token or count."""
    root = open_live(warm_page, site_url + PAGE, "reprocessing")
    root.get_by_role("button", name="Start over").click()
    expect(root.locator('[data-field="c-token"]')).to_have_text("1")
    wait_ready(root)
    # at n = 1 the sentence names token 1 once ("and token 1 1 time" was the same token again)
    expect(root.locator('[data-field="other"]')).to_be_hidden()
    for n in range(2, 5):
        root.get_by_role("button", name="Add token").click()
        expect(root.locator('[data-field="c-token"]')).to_have_text(str(n))
        wait_ready(root)
        plot = root.locator(".kv-plot")
        expect(plot.locator(".xtick text").first).to_be_visible()
        for axis, labels in zip(("x", "y"), plot.evaluate(TICKS_JS), strict=True):
            assert labels, f"no {axis} ticks at n = {n}"
            assert all(re.fullmatch(r"\d+", t) for t in labels), f"{axis} ticks at n = {n}: {labels}"
            assert len(set(labels)) == len(labels), f"repeated {axis} ticks at n = {n}: {labels}"
        # the sentence counts in words that agree: "token 2 1 time", not "1 times"
        want = kvlab.reprocessing_figure(n=n)["view"]
        expect(root.locator('[data-field="kth-unit"]')).to_have_text(want["kth_unit"])
        expect(root.locator('[data-field="other"]')).to_be_visible()
        assert want["kth_unit"] == ("time" if n <= 10 else "times")
