"""qkv on attention/, in a real Chromium: q, k and v of a real sentence drawn per token; picking a
token shows what it reads without downloading anything; a new sentence is computed in Pyodide and
agrees with CPython's kvlab.qkv_figure."""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import LOAD_TIMEOUT_MS, open_widget, wait_ready


def shown_k(root, row: int) -> list[float]:
    return root.locator(f"tr[data-index='{row}'] .kv-vec-k .kv-vc").evaluate_all(
        "cells => cells.map(c => Number(c.style.getPropertyValue('--m')))"
    )


def test_picking_a_token_shows_its_reading_without_a_download(page, site_url):
    root = open_widget(page, site_url + "attention/", "qkv")
    want = kvlab.qkv_figure()
    expect(root).to_have_attribute("data-mounted", "true")
    assert root.locator("tbody tr[data-index]").count() == len(want["tokens"])
    assert shown_k(root, 2) == [c["m"] for c in want["rows"][2]["k"]]
    root.locator(".kv-qkv-pick").nth(7).click()
    read = root.locator('[data-field="read"]')
    expect(read.locator(".kv-headline")).to_have_text(want["queries"][7]["text"])
    assert read.locator(".kv-qkv-weights li[data-item]").count() == 8  # the causal mask: itself and the 7 before
    expect(root.locator("tr[data-index='7']")).to_have_attribute("data-current", "")
    assert root.locator("tr[data-future]").count() == len(want["tokens"]) - 8
    # a pick is no intent: nothing downloaded, nothing started
    assert page.evaluate("kvlab.runtimeState('python')") == "idle"
    assert root.get_attribute("data-activated") is None


def test_a_new_sentence_is_computed_in_pyodide(warm_page, site_url):
    root = open_widget(warm_page, site_url + "attention/", "qkv")
    box = root.locator('input[name="sentence"]')
    box.fill("She gave the ball to the dog.")
    root.locator('select[name="head"]').select_option(index=2)
    want = kvlab.qkv_figure("She gave the ball to the dog.", head=2)
    # the first call downloads Python and the model's weights (23.5 MB): give it the load's time
    expect(root.locator(".kv-status-text")).to_have_text(want["view"]["status"], timeout=LOAD_TIMEOUT_MS)
    wait_ready(root)
    expect(root.locator('[data-field="kept"]')).to_have_text(want["view"]["kept"])
    assert root.locator("tbody tr[data-index]").count() == len(want["tokens"])
    assert shown_k(root, 3) == [c["m"] for c in want["rows"][3]["k"]]
    expect(root.locator('[data-field="read"] .kv-headline')).to_have_text(want["queries"][-1]["text"])
    assert box.input_value() == "She gave the ball to the dog."
