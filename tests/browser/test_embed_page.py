"""An embed page runs kvlab's scripts and none of material's (site_src/overrides/embed.html):
no search index, no sitemap, no start-up of a site navigation an embed does not have."""

from __future__ import annotations


def test_an_embed_runs_no_material_script_and_fetches_no_search_index(page_factory, site_url):
    page, _ = page_factory(allowed=[site_url])
    asked = []
    page.on("request", lambda r: asked.append(r.url))
    page.goto(site_url + "embed/kv-memory/", wait_until="load")
    page.wait_for_timeout(500)
    assert not [u for u in asked if "/assets/javascripts/" in u or "search_index" in u or "sitemap" in u]
    assert page.evaluate("typeof window.document$") == "undefined"
    # the widget still mounts and offers to go live
    live = page.locator('[data-widget="kv-memory"] .kv-live-button')
    live.wait_for()
    # a page of the site itself still runs material (the same check fails there)
    asked.clear()
    page.goto(site_url + "memory/", wait_until="load")
    page.wait_for_timeout(500)
    assert [u for u in asked if "/assets/javascripts/bundle." in u]


def test_an_embeds_code_blocks_copy_without_material(browser, site_url):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        page.goto(site_url + "embed/kv-memory/", wait_until="load")
        command = page.locator('[data-widget="kv-memory"] pre.kv-server-command')
        button = command.locator(".kv-code-copy")
        button.wait_for()
        expected = command.locator("code").inner_text()
        assert "llama-server" in expected
        button.focus()
        page.keyboard.press("Enter")
        assert page.evaluate("navigator.clipboard.readText()") == expected
        assert button.inner_text() == "Copied"
        # copying a command is not asking for the runtime
        assert page.locator('[data-widget="kv-memory"]').get_attribute("data-activated") is None
        # one button per code block, none added twice by a second mount
        widget = page.locator('[data-widget="kv-memory"]')
        assert widget.locator("pre > code").count() == widget.locator(".kv-code-copy").count()
        # and the page's own snippets below it ("Embed this widget"): one each, too
        fold = page.locator("details.kv-embed-this")
        assert fold.locator("pre > code").count() == fold.locator(".kv-code-copy").count() == 2
    finally:
        context.close()
