"""The colour-scheme switch, with material's two per-load restyles taken out (palette.js,
sitebuild/kvlab_hooks.py: MATERIAL_RULES_DROPPED).

Material restyled the whole page twice on every load for its palette: an attribute on
<body> that only served to stop transitions during a switch, and a write to its
<meta name="color-scheme">. These tests hold what those steps were for: a switch is
instant (no colour transition half-way), and the page's colour scheme follows it.
"""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.gates import SCHEME_AT_CONTENT_JS

STATE_JS = """() => ({
  metas: [...document.querySelectorAll('meta[name="color-scheme"]')].map(m => m.content),
  scheme: document.body.dataset.mdColorScheme,
  bodyScheme: getComputedStyle(document.body).colorScheme,
})"""

# the toggle's label, clicked in the same task as the reads around it: a transition
# would still show the old colour right after the click
SWITCH_JS = """() => {
  const link = document.querySelector('.md-typeset a.headerlink');
  const before = getComputedStyle(link).color;
  document.querySelector('label[for^="__palette"]:not([hidden])').click();
  const after = getComputedStyle(link).color;
  const duration = getComputedStyle(link).transitionDuration;
  return {before, after, duration, switching: document.documentElement.classList.contains('kv-color-switching')};
}"""


def effective_scheme(state) -> str:
    """The first color-scheme meta is the one the browser uses."""
    return state["metas"][0]


def test_switching_the_scheme_is_instant_and_the_meta_follows(page, site_url):
    page.goto(site_url + "memory/")
    start = page.evaluate(STATE_JS)
    assert start["scheme"] == "default" and start["bodyScheme"] == "light"
    assert effective_scheme(start) == "light"
    # material's own meta is never written: every write restyles the page, even of the same value
    assert [m for m in start["metas"][1:] if m] == []

    switch = page.evaluate(SWITCH_JS)
    assert switch["switching"], "transitions are not turned off during the switch"
    assert switch["duration"].split(",")[0].strip() == "0s"
    assert switch["after"] != switch["before"], "the link still shows the light scheme's colour: a transition ran"
    expect(page.locator("html")).not_to_have_class(re.compile(r"\bkv-color-switching\b"))
    # with the class gone the link's own transition is back
    back = page.evaluate("getComputedStyle(document.querySelector('.md-typeset a.headerlink')).transitionDuration")
    assert back.split(",")[0].strip() != "0s"

    dark = page.evaluate(STATE_JS)
    assert dark["scheme"] == "slate" and dark["bodyScheme"] == "dark"
    assert effective_scheme(dark) == "dark"

    page.reload()
    again = page.evaluate(STATE_JS)
    assert again["scheme"] == "slate" and effective_scheme(again) == "dark", again


def test_a_first_visit_in_dark_mode_is_dark_before_the_content_arrives(browser, site_url):
    """Material's bundle picked the media query's palette only after the page had painted
    light; palette.js does it in the header, on every page and on embeds (no bundle)."""
    for path in ("memory/", "embed/kv-memory/"):
        context = browser.new_context(color_scheme="dark")
        try:
            page = context.new_page()
            page.add_init_script(SCHEME_AT_CONTENT_JS)
            page.goto(site_url + path)
            assert page.evaluate("window.__schemeAtContent") == "slate", path
            assert page.evaluate("document.body.dataset.mdColorScheme") == "slate", path
            assert effective_scheme(page.evaluate(STATE_JS)) == "dark", path
        finally:
            context.close()


def test_an_embed_follows_the_systems_scheme_when_it_changes(browser, site_url):
    """Embeds run no material script (its bundle followed the media query on the site's
    pages); palette.js does, as long as the reader has not picked a scheme."""
    context = browser.new_context(color_scheme="light")
    try:
        page = context.new_page()
        page.goto(site_url + "embed/kv-memory/")
        assert page.evaluate("document.body.dataset.mdColorScheme") == "default"
        page.emulate_media(color_scheme="dark")
        expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "slate")
        page.emulate_media(color_scheme="light")
        expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "default")
    finally:
        context.close()


def test_a_live_charts_text_follows_a_scheme_switch(page, site_url):
    """Plotly draws its text in the colour the page had when the chart was drawn; on a
    switch kit.plot draws every chart again (it stayed dark on a dark page until the
    reader's next change)."""
    from tests.browser.widgets import activate, wait_ready

    page.goto(site_url + "quadratic-wall/")
    race = page.locator('[data-widget="race"]')
    activate(race)
    wait_ready(race)
    chart = race.locator(".kv-plot")
    text = """el => [el.layout.font.color, getComputedStyle(el.closest('figure')).color,
      el.data.map(t => [t.x, t.y]), el.data.map(t => t.line.color)]"""
    before, page_colour, data, lines = chart.evaluate(text)
    assert before == page_colour
    assert lines[2] == page_colour  # the ratio line is drawn in the text colour (kit.TEXT)
    page.locator('label[for^="__palette"]:not([hidden])').click()
    page.wait_for_function(
        "el => el.layout.font.color === getComputedStyle(el.closest('figure')).color", arg=chart.element_handle()
    )
    after, page_colour, data_after, lines_after = chart.evaluate(text)
    assert after != before and after == page_colour
    assert data_after == data  # the same chart, only its colours
    assert lines_after[:2] == lines[:2] and lines_after[2] == page_colour
