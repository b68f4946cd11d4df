"""The three ways readers get the site: offline zip (file://), embeds, a sub-path."""

from __future__ import annotations

import functools
import re
import json
import hashlib
import http.server
import threading
import zipfile
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import expect

import kvlab
from tests.browser.conftest import QuietHandler, make_zip, serve_directory
from tests.browser.widgets import activate, open_live, open_widget, set_range, wait_ready

ROOT = Path(__file__).resolve().parents[2]


def shown_weights(root):
    return root.locator(".kv-heatmap tbody tr").evaluate_all(
        "rows => rows.map(r => Array.from(r.querySelectorAll('td')).map(td => td.textContent))"
    )


def cells(data):
    return [[f"{w:.3f}" for w in row] for row in data["weights"]]


# ---------------------------------------------------------------- offline zip


def test_zip_has_a_readme_for_teachers_at_the_top(offline_zip):
    with zipfile.ZipFile(offline_zip) as zf:
        names = zf.namelist()
    top = names[0].split("/")[0]
    assert f"{top}/README.txt" in names and f"{top}/index.html" in names
    assert all(n.startswith(top + "/") for n in names)


def test_zip_carries_no_memory_snapshot(offline_zip):
    """From file:// the worker cannot fetch, and the snapshot is only an http start (sitebuild/snapshot.py)."""
    with zipfile.ZipFile(offline_zip) as zf:
        names = zf.namelist()
        manifest = zf.read(next(n for n in names if n.endswith("assets/kvlab/manifest.js"))).decode()
    assert not [n for n in names if n.endswith((".snap.gz", "kvlab/snapshot.js"))]
    assert '"snapshot"' not in manifest and '"offline": true' in manifest


def test_zip_is_deterministic(offline_zip, tmp_path):
    again = make_zip(tmp_path)
    assert hashlib.sha256(again.read_bytes()).hexdigest() == hashlib.sha256(offline_zip.read_bytes()).hexdigest()


def test_offline_site_runs_python_from_file_url(page_factory, unzipped):
    page, _ = page_factory(allowed=["file:///"])
    page.set_default_timeout(120_000)
    page.goto((unzipped / "index.html").as_uri())
    page.locator("article a", has_text="Attention").first.click()
    root = page.locator('[data-widget="attention"]')
    activate(root)
    wait_ready(root)
    set_range(root, "d", 4)
    expect(root.locator('[data-field="d"]')).to_have_text("4")
    wait_ready(root)
    assert shown_weights(root) == cells(kvlab.attention_figure(d=4, temperature=1.0, seed=0))


def test_offline_search_finds_a_page(page_factory, unzipped):
    page, _ = page_factory(allowed=["file:///"])
    page.goto((unzipped / "index.html").as_uri())
    page.locator(".md-search__input").click()
    page.keyboard.type("softmax", delay=30)
    expect(page.locator(".md-search-result__item").first).to_be_visible(timeout=30_000)


# ---------------------------------------------------------------- embeds


def test_embed_in_an_iframe_on_another_origin_resizes_and_works(page_factory, site_url, tmp_path):
    (tmp_path / "host.html").write_text(
        '<!doctype html><title>host</title><link rel="icon" href="data:,"><p>A blog post.</p>'
        f'<iframe src="{site_url}embed/attention/?d=16" title="attention" width="100%" height="150" '
        'style="border:0" data-kvlab-embed></iframe>'
        f'<script src="{site_url}assets/kvlab/embed-host.js"></script>'
    )
    server, host_url = serve_directory(tmp_path)
    try:
        page, _ = page_factory(allowed=[site_url, host_url])
        page.set_default_timeout(120_000)
        page.goto(host_url + "host.html")
        frame_el = page.locator("iframe[data-kvlab-embed]")
        expect(frame_el).to_have_attribute("data-kvlab-resized", "true", timeout=30_000)
        height = frame_el.evaluate("el => el.getBoundingClientRect().height")
        assert height > 500, height  # grew from 150 to fit the widget
        root = page.frame_locator("iframe[data-kvlab-embed]").locator('[data-widget="attention"]')
        page.wait_for_timeout(500)
        assert root.get_attribute("data-state") == "static"  # nothing starts in an embed nobody touched
        activate(root)
        wait_ready(root)  # live, with the settings from the query string
        expect(root.locator('[data-field="d"]')).to_have_text("16")
        assert shown_weights(root) == cells(kvlab.attention_figure(d=16))
    finally:
        server.shutdown()


def test_host_script_ignores_messages_of_the_wrong_shape_or_source(page_factory, site_url, tmp_path):
    (tmp_path / "host.html").write_text(
        f'<!doctype html><title>host</title><link rel="icon" href="data:,"><iframe src="{site_url}embed/attention/" title="a" height="150" data-kvlab-embed></iframe>'
        f'<script src="{site_url}assets/kvlab/embed-host.js"></script>'
    )
    server, host_url = serve_directory(tmp_path)
    try:
        page, _ = page_factory(allowed=[site_url, host_url])
        page.goto(host_url + "host.html")
        # the host page itself (wrong source) and malformed messages change nothing
        page.evaluate("""() => {
            window.postMessage({type: 'kvlab:resize', height: 999}, '*');
            window.postMessage({type: 'kvlab:resize', height: 'tall'}, '*');
            window.postMessage('kvlab:resize', '*');
        }""")
        page.wait_for_timeout(300)
        style = page.locator("iframe").evaluate("el => el.style.height")
        assert style in ("",) or not style.startswith("999"), style
    finally:
        server.shutdown()


def test_embed_query_params_are_validated_and_clamped(page, site_url):
    root = open_widget(
        page,
        site_url + "embed/attention/?d=999&temperature=abc&causal=false&colour=red&seed=0x10&colour=blue",
        "attention",
    )
    # an unknown name and an invalid value are told apart, and a repeated name is named once
    expect(root.locator(".kv-embed")).to_have_text(
        "Ignored “colour”: not a setting of this widget; “temperature”, “seed”: not a value these controls take."
    )  # decimal only: 0x10 is not 16
    expect(root.locator(".kv-embed-clamped")).to_contain_text("Head dimension d: asked 999, used 64")
    activate(root)
    wait_ready(root)
    expect(root.locator('[data-field="d"]')).to_have_text("64")
    assert shown_weights(root) == cells(kvlab.attention_figure(d=64, temperature=1.0, causal=False))


def test_embed_page_links_back_and_has_no_site_chrome(page, site_url):
    page.goto(site_url + "embed/attention/")
    expect(page.locator(".md-header")).to_be_hidden()
    expect(page.locator(".md-sidebar--primary")).to_be_hidden()
    link = page.locator(".kv-backlink")
    assert link.evaluate("a => a.href") == site_url + "attention/"  # (instant navigation makes hrefs absolute)


def test_embed_button_gives_a_snippet_with_current_settings(page_factory, site_url):
    page, _ = page_factory(allowed=[site_url])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    root = open_live(page, site_url + "attention/", "attention")
    set_range(root, "d", 32)
    wait_ready(root)
    root.get_by_role("button", name="Embed").click()
    snippet = root.locator("textarea.kv-embed-snippet").input_value()
    assert f'src="{site_url}embed/attention/?d=32&amp;temperature=1' in snippet
    assert 'loading="lazy"' in snippet and "title=" in snippet and "embed-host.js" in snippet
    root.get_by_role("button", name="Copy snippet").click()
    expect(root.locator(".kv-embed-copied")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == snippet


def test_gallery_lists_every_widget_with_preview_and_snippet(page, site_url):
    from sitebuild.widget_blocks import discover_widgets

    page.goto(site_url + "embed/")
    for name in discover_widgets():
        item = page.locator(f'.kv-gallery-item[data-embed-name="{name}"]')
        # the preview: a link to the embed page (JS opens it in place, see test_runtime.py)
        expect(item.locator("a[data-embed-preview]")).to_have_attribute("href", re.compile(rf"embed/{name}/$"))
        expect(item.locator(".kv-snippet code")).to_contain_text(f"{site_url}embed/{name}/")


# ---------------------------------------------------------------- GitHub Pages sub-path


class PrefixHandler(QuietHandler):
    prefix = "/kvlab/"

    def translate_path(self, path):
        if not path.startswith(self.prefix):
            return "/nonexistent-outside-prefix"
        return super().translate_path("/" + path[len(self.prefix) :])


def test_site_works_under_a_sub_path(page_factory, built_site):
    handler = functools.partial(PrefixHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/kvlab/"
    page = None
    try:
        page, _ = page_factory(allowed=[base])
        page.set_default_timeout(120_000)
        failed = []
        page.on("response", lambda r: r.status >= 400 and failed.append(r.url))
        page.goto(base)
        page.locator("article a", has_text="Attention").first.click()
        root = page.locator('[data-widget="attention"]')
        activate(root)
        wait_ready(root)
        assert failed == []
    finally:
        # the page first: a request still open when the server stops is reset, and the browser logs
        # that as a console error (seen once under load, at teardown)
        if page is not None:
            page.close()
        server.shutdown()


def test_offline_site_generates_with_the_tiny_model(page_factory, unzipped):
    from kvlab.core import tiny

    page, _ = page_factory(allowed=["file:///"])
    page.set_default_timeout(120_000)
    page.goto((unzipped / "generate.html").as_uri())
    root = page.locator('[data-widget="generate"]')
    root.locator("textarea[name=prompt]").focus()
    wait_ready(root)
    root.locator("textarea[name=prompt]").fill("The cat sat on the mat.")
    root.locator('input[name="max_new_tokens"]').evaluate(
        "el => { el.value = '8'; el.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    root.get_by_role("button", name="Generate").click()
    page.wait_for_function("el => el.dataset.tokens !== undefined", arg=root.element_handle())
    model, tok = tiny._model_and_tokenizer()
    assert json.loads(root.get_attribute("data-tokens")) == model.generate(tok.encode("The cat sat on the mat."), 8)


def test_a_link_that_cuts_a_pasted_log_says_so(page, site_url):
    """A link carries a text setting (engine-log's pasted log) up to 2,000 characters: the rest is cut,
    and the note says how much the link held and how much is used (it was cut without a word)."""
    log = ("INFO 08-01 12:00:00 [gpu_worker.py:276] Available KV cache memory: 20.50 GiB\n" * 40)[:3000]
    root = open_widget(page, site_url + "embed/engine-log/?" + urlencode({"log": log}), "engine-log")
    expect(root.locator('textarea[name="log"]')).to_have_value(log[:2000])
    expect(root.locator(".kv-embed-clamped")).to_contain_text(
        "the link holds 3,000 characters, the first 2,000 are used"
    )
