"""The colour-scheme switch, with material's two per-load restyles taken out (palette.js,
sitebuild/kvlab_hooks.py: without_switching_rule).

Material restyled the whole page twice on every load for its palette: an attribute on
<body> that only served to stop transitions during a switch, and a write to its
<meta name="color-scheme">. These tests hold what those steps were for: a switch is
instant (no colour transition half-way), and the page's colour scheme follows it.
"""

from __future__ import annotations

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
    page.wait_for_function("!document.documentElement.classList.contains('kv-color-switching')")
    # with the class gone the link's own transition is back
    back = page.evaluate("getComputedStyle(document.querySelector('.md-typeset a.headerlink')).transitionDuration")
    assert back.split(",")[0].strip() != "0s"

    dark = page.evaluate(STATE_JS)
    assert dark["scheme"] == "slate" and dark["bodyScheme"] == "dark"
    assert effective_scheme(dark) == "dark"

    page.reload()
    again = page.evaluate(STATE_JS)
    assert again["scheme"] == "slate" and effective_scheme(again) == "dark", again
