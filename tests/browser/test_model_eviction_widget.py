"""Eviction on the real model: the browser's streaming read with a bounded cache
equals the numpy reference (answers, what is still cached, per-token loss)."""
from __future__ import annotations

import json

import kvlab
from kvlab.core import tiny
from tests.browser.widgets import open_widget, wait_ready


def test_static_table_is_the_numpy_reference(built_site):
    html = (built_site / "eviction" / "index.html").read_text()
    data = kvlab.eviction_recall_demo()
    for p in data["policies"].values():
        assert f"<code>{p['answer']}</code>" in html
        assert f">{p['mean_nll_last_100']:.3f}</td>" in html


def test_reading_with_each_cache_matches_the_reference(page, site_url):
    root = open_widget(page, site_url + "eviction/", "model-eviction")
    root.locator("select[name=episode]").focus()
    wait_ready(root)
    root.locator("select[name=episode]").select_option("1")
    for name, value in (("window", 48), ("sinks", 2)):
        root.locator(f'input[name="{name}"]').evaluate(
            "(el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', {bubbles: true})); }", value)
    root.get_by_role("button", name="Read the chat and answer").click()
    page.wait_for_function("el => el.dataset.results", arg=root.element_handle(), timeout=120_000)
    got = json.loads(root.get_attribute("data-results"))
    want = kvlab.eviction_recall_demo(episode=1, window=48, sinks=2)
    for name, w in want["policies"].items():
        g = got[name]
        assert g["answer"] == w["answer"], name
        assert g["inCache"] == w["code_in_cache"], name
        assert g["kept"] == w["cache_len"], name
        assert g["right"] == w["digits_right"], name
        assert len(g["nll"]) == len(w["prompt_nll"])
        assert max(abs(a - b) for a, b in zip(g["nll"], w["prompt_nll"])) < 1e-3, name
    # the window of 48 cannot hold a code stated near the start of a 300-token chat
    assert got["window"]["inCache"] is False and got["full"]["inCache"] is True
    row = root.locator('tr[data-policy="sinks"]')
    assert row.locator('[data-col="kept"]').inner_text() == str(want["policies"]["sinks"]["cache_len"])


def test_the_measured_recall_line_comes_from_the_model_card(built_site):
    html = (built_site / "eviction" / "index.html").read_text()
    m = kvlab.eviction_recall_demo()["measured"]
    far = tiny.tiny_card()["recall"][">=200"]
    assert m["full_cache"] == far["full_cache"] and m["n_far"] == far["n"]
    assert f"Measured on {far['n']} held-out chats" in html
    assert f"names the whole code {round(far['full_cache'] * 100)}% of the time" in html
