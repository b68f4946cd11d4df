"""Embeds on a page that strips scripts, and embed pages' own snippets.

A blog platform often strips the snippet's <script> (embed-host.js, which resizes the frame):
the iframe then stays at the `height` its snippet declares. That height must show the whole
embed page without scrolling inside the frame, at a blog column's 700 px: every embed page,
whole and compact (`?compact=1`: the controls and the main result, embed.css), is loaded in a
700-px-wide viewport as tall as its snippet declares, and its document must not be taller.
The heights: widget.json's "height" (whole) and sitebuild/embed_heights.json (compact).
"""

from __future__ import annotations

import html
import re
import pytest
from playwright.sync_api import expect

from sitebuild.widget_blocks import discover_widgets

WIDGETS = discover_widgets()
# Compact embeds that do not fit a 700 x 500 iframe yet: their controls and main result alone
# are taller (site_src/widgets/README.md, "Compact embeds"); every other one must stay within 500.
COMPACT_OVER_500 = {
    "engine-log",
    "kv-offload",
}


def declared(page, mode: str) -> int:
    """The height the embed page's own build-time snippet declares (its fold "Embed this widget")."""
    text = page.locator(f'.kv-embed-this pre[data-embed-mode="{mode}"] code').text_content()
    return int(re.search(r'height="(\d+)"', text)[1])


@pytest.mark.parametrize("name", sorted(WIDGETS))
def test_every_embed_page_fits_the_height_its_snippet_declares(browser, site_url, name):
    context = browser.new_context(viewport={"width": 700, "height": 400})
    try:
        page = context.new_page()
        for mode, query in (("full", ""), ("compact", "?compact=1")):
            page.set_viewport_size({"width": 700, "height": 400})
            page.goto(f"{site_url}embed/{name}/{query}")
            expect(page.locator(f'[data-widget="{name}"]')).to_have_attribute("data-mounted", "true")
            height = declared(page, mode)
            assert height == (WIDGETS[name].compact_height if mode == "compact" else WIDGETS[name].height)
            page.set_viewport_size({"width": 700, "height": height})
            page.wait_for_timeout(100)
            shown = page.evaluate("document.documentElement.scrollHeight")
            assert shown <= height, (
                f"embed/{name}/{query} is {shown} px tall at 700 px wide; its snippet declares {height}"
            )
            if mode == "compact" and name not in COMPACT_OVER_500:
                assert height <= 500, f"embed/{name}/?compact=1 declares {height} px: no longer fits 700 x 500"
    finally:
        context.close()


def test_compact_embed_shows_controls_and_main_result_only(page, site_url):
    page.goto(site_url + "embed/gpu-fit/?compact=1&context=32768")
    root = page.locator('[data-widget="gpu-fit"]')
    expect(root).to_have_attribute("data-mounted", "true")
    assert "kv-compact" in page.evaluate("document.documentElement.className")
    expect(root.locator("form.kv-controls")).to_be_visible()
    expect(root.locator(".kv-verdict")).to_be_visible()
    expect(root.locator(".kv-bar")).to_be_visible()
    for secondary in ("details", ".kv-notes", ".kv-log"):
        expect(root.locator(f":scope > {secondary}").first).to_be_hidden()
    # compact is the page's own name, not a setting the widget ignores; the settings still apply
    expect(root.locator(".kv-embed")).to_have_count(0)
    expect(root.locator('input[name="context"]')).to_have_value("32768")
    # the same page without it: the whole widget
    page.goto(site_url + "embed/gpu-fit/")
    expect(page.locator('[data-widget="gpu-fit"]').locator(":scope > details").first).to_be_visible()
    assert "kv-compact" not in page.evaluate("document.documentElement.className")


def test_an_embed_page_offers_its_own_snippet_with_its_settings(page_factory, site_url):
    page, _ = page_factory(allowed=[site_url])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(site_url + "embed/attention/?d=16")
    fold = page.locator("details.kv-embed-this")
    fold.locator("summary").click()
    full = fold.locator('pre[data-embed-mode="full"] code')
    compact = fold.locator('pre[data-embed-mode="compact"] code')
    expect(full).to_contain_text(f'src="{site_url}embed/attention/?d=16&amp;')
    expect(compact).to_contain_text("&amp;compact=1")
    expect(compact).to_contain_text(f'height="{WIDGETS["attention"].compact_height}"')
    assert f"{site_url}assets/kvlab/embed-host.js" in full.text_content()
    # one source of the snippet: the text kvlab.embedSnippet writes for these settings
    same = page.evaluate(
        """() => { const root = document.querySelector('[data-widget="attention"]');
          return kvlab.embedSnippet("attention", root.querySelector(".kv-widget-title").textContent,
            root.dataset.embedHeight, "?" + kvlab.widgetSettings(root)); }"""
    )
    assert full.text_content() == same
    # copyable
    fold.locator('pre[data-embed-mode="full"] .kv-code-copy').click()
    assert page.evaluate("navigator.clipboard.readText()") == same
    # a control changed: the snippet follows (before the widget is even live: the form holds it)
    page.locator('[data-widget="attention"] input[name="d"]').evaluate(
        "el => { el.value = '32'; el.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    expect(full).to_contain_text("?d=32&amp;")


def test_an_embed_pages_snippet_reads_with_javascript_off(browser, site_url):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(site_url + "embed/gpu-fit/")
        fold = page.locator("details.kv-embed-this")
        fold.locator("summary").click()
        w = WIDGETS["gpu-fit"]
        expect(fold.locator('pre[data-embed-mode="full"] code')).to_have_text(
            f'<iframe src="{site_url}embed/gpu-fit/" title="{html.escape(w.title, quote=False)}" loading="lazy" '
            f'width="100%" height="{w.height}" style="border:0;max-width:100%" data-kvlab-embed></iframe>\n'
            f'<script src="{site_url}assets/kvlab/embed-host.js" defer></script>'
        )
        expect(fold.locator('pre[data-embed-mode="compact"] code')).to_contain_text(
            f'embed/gpu-fit/?compact=1" title="{w.title}"'
        )
    finally:
        context.close()


def test_the_embed_panel_offers_the_compact_snippet(page, site_url):
    page.goto(site_url + "attention/")
    root = page.locator('[data-widget="attention"]')
    expect(root).to_have_attribute("data-mounted", "true")
    root.get_by_role("button", name="Embed").click()
    area = root.locator("textarea.kv-embed-snippet")
    assert "compact=1" not in area.input_value()
    assert f'height="{WIDGETS["attention"].height}"' in area.input_value()
    root.get_by_label("Compact: the controls and the main result only").check()
    expect(area).to_have_value(re.compile(r"&amp;compact=1\""))
    assert f'height="{WIDGETS["attention"].compact_height}"' in area.input_value()
    # not reader intent: nothing started
    assert root.get_attribute("data-activated") is None


def test_a_compact_embed_without_the_host_script_shows_without_scrolling(page_factory, site_url, tmp_path):
    """The snippet as a blog that strips scripts keeps it: the iframe alone, at its declared height."""
    from tests.browser.conftest import serve_directory

    w = WIDGETS["attention"]
    (tmp_path / "host.html").write_text(
        '<!doctype html><title>host</title><link rel="icon" href="data:,"><style>body{margin:0;width:700px}</style>'
        f'<iframe src="{site_url}embed/attention/?compact=1" title="a" width="100%" height="{w.compact_height}" '
        'style="border:0;max-width:100%" data-kvlab-embed></iframe>'
    )
    server, host_url = serve_directory(tmp_path)
    try:
        page, _ = page_factory(allowed=[site_url, host_url], viewport={"width": 700, "height": 900})
        page.goto(host_url + "host.html")
        frame = page.frame_locator("iframe").locator('[data-widget="attention"]')
        expect(frame).to_have_attribute("data-mounted", "true")
        inner = page.frames[1]
        assert inner.evaluate("document.documentElement.scrollHeight <= innerHeight"), inner.evaluate(
            "[document.documentElement.scrollHeight, innerHeight]"
        )
    finally:
        server.shutdown()
