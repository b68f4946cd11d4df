"""Tokens and the forward pass: the tokenizer in Pyodide, the next token from the real model."""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import open_live, open_widget, wait_ready


def test_static_figures_hold_the_build_time_numbers(built_site):
    html = (built_site / "tokens" / "index.html").read_text()
    data = kvlab.tokens_figure()
    assert f'<strong><span data-bind="n_tokens">{data["n_tokens"]}</span> tokens</strong>' in html
    top = kvlab.next_token_figure()["top"][0]
    assert f'<td data-bind="p">{top["p"]:.3f}</td>' in html


def test_typing_retokenizes_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + "tokens/", "tokens")
    text = "Ünïcode ✓ and 안녕 with code 2024"
    root.locator("textarea[name=text]").fill(text)
    want = kvlab.tokens_figure(text)
    expect(root.locator('[data-field="summary"]')).to_contain_text(f"→ {want['n_tokens']} tokens")
    wait_ready(root)
    shown = root.locator(".kv-token").evaluate_all("els => els.map(e => e.firstChild.textContent)")
    assert shown == [t["text"] for t in want["tokens"]]


def test_next_token_probabilities_equal_the_numpy_reference(warm_page, site_url):
    root = open_live(warm_page, site_url + "tokens/", "next-token")
    prompt = "The dog ran to the"
    root.locator("textarea[name=prompt]").fill(prompt)
    want = kvlab.next_token_figure(prompt)["top"]
    expect(root.locator('[data-field="top"] tr').first.locator("code")).to_have_text(want[0]["text"], timeout=30_000)
    wait_ready(root)
    got = root.locator(".kv-next-plot").evaluate("el => el.data[0].x")
    assert len(got) == len(want)
    assert max(abs(x - t["p"]) for x, t in zip(got, want)) < 1e-4


def test_token_ids_read_at_11_px_or_more(browser, site_url):
    """The ids under each token were 8 px (0.65em of the tokens' 0.8em)."""
    for width in (375, 1280):
        context = browser.new_context(viewport={"width": width, "height": 800})
        try:
            page = context.new_page()
            root = open_widget(page, site_url + "tokens/", "tokens")
            sizes = root.locator(".kv-token sub").evaluate_all(
                "els => els.map(e => parseFloat(getComputedStyle(e).fontSize))"
            )
            assert sizes and min(sizes) >= 11, (width, min(sizes))
        finally:
            context.close()
