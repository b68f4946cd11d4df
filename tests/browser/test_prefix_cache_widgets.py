"""Prefix caching page: the prefix-cache and prefix-blocks widgets, live in Chromium, equal CPython's kvlab."""

from __future__ import annotations

import re
import typing

from playwright.sync_api import expect

import kvlab
from kvlab.widgets import prefix_types
from tests.browser.widgets import open_live, set_range, wait_ready

PAGE = "prefix-cache/"


def shown_fields(root, names) -> dict:
    return {n: root.locator(f'[data-field="{n}"]').first.text_content() for n in names}


def plotted(root, selector=".kv-plot"):
    return root.locator(selector).evaluate("el => el.data.map(t => ({name: t.name, y: Array.from(t.y)}))")


def test_static_page_holds_the_numbers_kvlab_computes(built_site):
    html = (built_site / "prefix-cache" / "index.html").read_text()
    data = kvlab.prefix_cache_figure(n_requests=1000, prefix_len=100, suffix_len=20, block_size=16)
    # the seed claim: the first request pays, the other 999 reuse the 100-token prompt
    assert data["token_granular"]["tokens_reused"] == 999 * 100
    assert data["view"]["radix_reused"] == "99,900"
    for key in (
        "radix_reused",
        "blocks_reused",
        "no_cache_computed",
        "radix_computed",
        "blocks_computed",
        "radix_mib",
        "blocks_mib",
    ):
        assert f'data-field="{key}">{data["view"][key]}<' in html, key
    # block granularity: 16-token blocks reuse fewer tokens than the radix tree, and the page says how many
    assert data["blocks"]["tokens_reused"] < data["token_granular"]["tokens_reused"]
    unbound = re.sub(r' data-bind(?:-[a-z]+)?="[^"]*"', "", html)  # the binder's attributes set aside
    for row in data["granularity"]:
        assert f'<th scope="row">{row["block_size"]}</th><td>{row["tokens_reused_per_request"]:,}</td>' in unbound
    for params in (
        {"prefix_len": 40, "suffix_len": 10, "block_size": 16},
        {"prefix_len": 980, "suffix_len": 20, "block_size": 16},
    ):
        blocks = kvlab.prefix_blocks_figure(**params)
        assert f'data-field="tokens_reused">{blocks["view"]["tokens_reused"]}<' in html
        assert f'data-field="radix_reused">{blocks["view"]["radix_reused"]}<' in html


def test_prefix_cache_widget_recomputes_in_pyodide_and_clamps(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "prefix-cache")
    set_range(root, "prefix_len", 64)
    set_range(root, "suffix_len", 7)
    root.locator('select[name="block_size"]').select_option("32")
    want = kvlab.prefix_cache_figure(n_requests=1000, prefix_len=64, suffix_len=7, block_size=32)
    expect(root.locator('[data-field="block_size"]')).to_have_text("32")
    wait_ready(root)
    expect(root.locator('[data-field="radix_reused"]')).to_have_text(want["view"]["radix_reused"])
    readouts = typing.get_type_hints(prefix_types.PrefixCacheText)  # the view's readouts, beside its rows and hovers
    names = [k for k in readouts if root.locator(f'[data-field="{k}"]').count()]
    assert len(names) >= 15
    assert shown_fields(root, names) == {k: want["view"][k] for k in names}
    traces = plotted(root)
    assert [t["y"] for t in traces] == [
        want["no_cache"]["cumulative_computed"],
        want["token_granular"]["cumulative_computed"],
        want["blocks"]["cumulative_computed"],
    ]
    shown_granularity = root.locator('[data-field="granularity"] tr').evaluate_all(
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))"
    )
    assert shown_granularity == [
        [
            str(g["block_size"]),
            f"{g['tokens_reused_per_request']:,}",
            f"{g['tokens_recomputed_of_prefix']:,}",
            f"{g['tokens_reused']:,}",
        ]
        for g in want["granularity"]
    ]

    # out of range: Python clamps, the page says what it used
    set_range(root, "n_requests", 5000)
    expect(root.locator(".kv-clamped")).to_contain_text("Requests: asked 5000, used 1000")
    wait_ready(root)
    # a field the reader is typing in keeps their text until they leave it (kit.writeForm)
    root.locator('input[name="n_requests"]').evaluate("el => el.blur()")
    expect(root.locator('input[name="n_requests"]')).to_have_value("1000")
    expect(root.locator('[data-field="n_requests"]')).to_have_text("1,000")
    set_range(root, "n_requests", 3)
    small = kvlab.prefix_cache_figure(n_requests=3, prefix_len=64, suffix_len=7, block_size=32)
    expect(root.locator('[data-field="n_requests"]')).to_have_text("3")
    wait_ready(root)
    expect(root.locator(".kv-clamped")).to_be_hidden()
    assert plotted(root)[1]["y"] == small["token_granular"]["cumulative_computed"]


def test_prefix_blocks_widget_shows_which_blocks_hit(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "prefix-blocks")
    set_range(root, "prefix_len", 48)
    want = kvlab.prefix_blocks_figure(prefix_len=48, suffix_len=10, block_size=16)
    expect(root.locator('[data-field="tokens_reused"]')).to_have_text(want["view"]["tokens_reused"])
    wait_ready(root)
    statuses = root.locator(".kv-blocks").evaluate_all(
        "lists => lists.map(l => Array.from(l.querySelectorAll(':scope > li')).map(li => li.dataset.status))"
    )
    assert statuses == [[b["status"] for b in r["blocks"]] for r in want["requests"]]
    readouts = typing.get_type_hints(prefix_types.PrefixBlocksText)
    sentence = {k: root.locator(f'.kv-sentence [data-field="{k}"]').text_content() for k in readouts}
    assert sentence == {k: want["view"][k] for k in readouts}
    # one shared token more: it lands in a block with request 2's own tokens and is computed again
    set_range(root, "prefix_len", 49)
    more = kvlab.prefix_blocks_figure(prefix_len=49, suffix_len=10, block_size=16)
    expect(root.locator('[data-field="shared_not_reused"]')).to_have_text(more["view"]["shared_not_reused"])
    assert more["view"]["shared_not_reused"] == "1"
    # bad input: suffix 0 is below the minimum; Python clamps it to 1 and the page says so
    set_range(root, "suffix_len", 0)
    expect(root.locator(".kv-clamped")).to_contain_text("Own tokens: asked 0, used 1")
    wait_ready(root)
    expect(root.locator('input[name="suffix_len"]')).to_have_value("1")
    clamped = kvlab.prefix_blocks_figure(prefix_len=49, suffix_len=1, block_size=16)
    expect(root.locator('[data-field="n_tokens"]')).to_have_text(clamped["view"]["n_tokens"])
