"""On a phone the result stays in view while a control moves, and a table that scrolls
sideways says so.

At 375 px the controls of gpu-fit, kv-memory, serving and kv-offload are one column
640-960 px tall, and the result sat 400-900 px under the first slider: "drag the context
and watch" could not be done. The result (the element kit.bind fills, .kv-pin) now sticks
to the foot of the screen while the controls are worked (kvlab.css). And every
.kv-table-wrap whose table is wider than its box carries the "Scroll sideways" line (a
scroll timeline on the wrap sets --kv-scrolls to 1 only then), at 375 px, on every page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.gates import site_pages
from tests.browser.widgets import open_widget, wait_ready

PHONE = {"width": 375, "height": 812}

# page, widget, its main slider, its main result (an element kit.bind fills)
STRIPS = [
    ("memory/", "gpu-fit", "context_step", '[data-field="headline"]'),
    ("memory/", "kv-memory", "context_step", '[data-field="total"]'),
    ("serving/", "serving", "context_step", '[data-field="users-text"]'),
    ("kv-offload/", "kv-offload", "hbm_percent", "p.kv-of-short"),
]

# where the slider's top is put on the screen: under the header, mid-screen, lower down
SLIDER_TOPS = (110, 380, 560)

BOX_JS = "e => { const r = e.getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; }"


@pytest.mark.parametrize(("path", "widget", "slider", "result"), STRIPS, ids=[s[1] for s in STRIPS])
def test_the_result_stays_in_view_while_the_slider_moves_at_375_px(
    page_factory, site_url, path, widget, slider, result
):
    page, _ = page_factory(allowed=[site_url], viewport=PHONE)
    root = open_widget(page, site_url + path, widget)
    expect(root).to_have_attribute("data-mounted", "true")
    root.evaluate("r => r.kvActivate(true)")
    wait_ready(root)
    control = root.locator(f'input[name="{slider}"]')
    shown = root.locator(result)
    for top in SLIDER_TOPS:
        control.evaluate(
            "(e, top) => window.scrollBy(0, e.getBoundingClientRect().top - top)",
            top,
        )
        before = shown.inner_text()
        control.focus()
        page.keyboard.press("ArrowRight")
        expect(shown).not_to_have_text(before)  # it is the live result, and it changed
        wait_ready(root)
        s = control.evaluate(BOX_JS)
        r = shown.evaluate(BOX_JS)
        strip = shown.evaluate(
            "e => { const r = (e.closest('.kv-pin') || e).getBoundingClientRect(); return {top: r.top, bottom: r.bottom}; }"
        )
        where = f"{widget}, slider put at {top} px: slider {s}, result {r}"
        assert 48 <= s["top"] and s["bottom"] <= PHONE["height"], f"the slider left the screen: {where}"
        assert 0 <= r["top"] and r["bottom"] <= PHONE["height"], f"the result is off screen: {where}"
        assert strip["top"] >= s["bottom"] or strip["bottom"] <= s["top"], f"the result covers the slider: {where}"


def test_the_strip_is_off_on_a_wide_screen(page_factory, site_url):
    """At 1280 px controls and results sit close: nothing sticks."""
    page, _ = page_factory(allowed=[site_url], viewport={"width": 1280, "height": 800})
    root = open_widget(page, site_url + "memory/", "gpu-fit")
    expect(root).to_have_attribute("data-mounted", "true")
    assert root.locator(".kv-pin").evaluate("e => getComputedStyle(e).position") == "static"


def test_tables_wider_than_their_box_say_they_scroll_at_375_px(page_factory, site_url, built_site):
    page, _ = page_factory(allowed=[site_url], viewport=PHONE)
    missing, roomy, scrolling = [], [], 0
    for path in site_pages(built_site):
        if path.startswith("embed/") or path == "404.html":
            continue
        page.goto(site_url + path)
        page.wait_for_load_state("load")
        page.evaluate("() => document.querySelectorAll('.kv-widget details').forEach(d => d.open = true)")
        page.wait_for_timeout(100)  # a frame, for the scroll timelines to see the opened tables
        wraps = page.evaluate("""() => [...document.querySelectorAll('.kv-table-wrap')]
            .filter(w => w.offsetParent !== null).map(w => {
                const cue = getComputedStyle(w, '::before');
                return {where: (w.closest('[data-widget]')?.dataset.widget || '') + ' ' + (w.querySelector('table')?.className || ''),
                        scrolls: w.scrollWidth > w.clientWidth + 1,
                        cue: cue.content.includes('Scroll sideways') && parseFloat(cue.height) > 8
                             && getComputedStyle(w).getPropertyValue('--kv-scrolls').trim() === '1',
                        cueHeight: parseFloat(cue.height) || 0}; })""")
        for w in wraps:
            if w["scrolls"]:
                scrolling += 1
                if not w["cue"]:
                    missing.append(f"{path}: {w['where']}")
            elif w["cueHeight"] > 0.5:
                roomy.append(f"{path}: {w['where']} ({w['cueHeight']} px)")
    assert scrolling, "no table scrolls at 375 px: the test checks nothing"
    assert not missing, f"tables that scroll sideways with no cue: {missing}"
    assert not roomy, f"a cue under a table that fits: {roomy}"
