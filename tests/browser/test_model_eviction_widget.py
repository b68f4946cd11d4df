"""Eviction on the real model: the browser's streaming read with a bounded cache
equals the numpy reference (answers, what is still cached, per-token loss), and the
reader can write the chat: change the code, keep chatting, shrink the window, ask."""

from __future__ import annotations

import json

from playwright.sync_api import expect

import kvlab
from kvlab.core import tiny
from tests.browser.widgets import open_widget, set_range, wait_ready


def test_static_table_is_the_numpy_reference(built_site):
    html = (built_site / "eviction" / "index.html").read_text()
    data = kvlab.model_eviction_figure()
    for p in data["policies"].values():
        assert f'<code data-bind="answer">{p["answer"]}</code>' in html
        assert f">{p['mean_nll_last']:.3f}</td>" in html
    # one tail length, named the same in the table's header and its caption
    tail = data["score"]["loss_tail"]
    assert f'loss, last <span data-field="tail2">{tail}</span> tokens' in html
    assert f'averaged over the chat\'s last <span data-field="tail">{tail}</span> tokens' in html.replace("&#39;", "'")


def ask(root, page):
    root.evaluate("el => delete el.dataset.results")
    root.get_by_role("button", name="Ask for the door code").click()
    page.wait_for_function("el => el.dataset.results", arg=root.element_handle(), timeout=180_000)
    return json.loads(root.get_attribute("data-results"))


def test_reading_with_each_cache_matches_the_reference(warm_page, site_url):
    root = open_widget(warm_page, site_url + "eviction/", "model-eviction")
    root.locator("select[name=episode]").focus()
    wait_ready(root)
    root.locator("select[name=episode]").select_option("1")
    set_range(root, "window", 48)
    set_range(root, "sinks", 2)
    got = ask(root, warm_page)
    want = kvlab.model_eviction_figure(episode=1, window=48, sinks=2)
    for name, w in want["policies"].items():
        g = got["score"]["policies"][name]
        assert g["answer"] == w["answer"], name
        assert g["code_in_cache"] == w["code_in_cache"], name
        assert g["cache_len"] == w["cache_len"], name
        assert g["digits_right"] == w["digits_right"], name
        nll = got["runs"][name]["prompt_nll"]
        assert len(nll) == len(w["prompt_nll"])
        assert max(abs(a - b) for a, b in zip(nll, w["prompt_nll"])) < 1e-3, name
        assert abs(g["mean_nll_last"] - w["mean_nll_last"]) < 1e-3, name
    # the window of 48 cannot hold a code stated near the start of a 300-token chat
    assert got["score"]["policies"]["window"]["code_in_cache"] is False
    row = root.locator('tr[data-policy="sinks"]')
    assert row.locator('[data-col="kept"]').inner_text() == str(want["policies"]["sinks"]["cache_len"])
    expect(root.locator(".kv-me-plot .main-svg").first).to_be_attached()


def test_the_reader_writes_the_chat_keeps_chatting_then_asks(warm_page, site_url):
    root = open_widget(warm_page, site_url + "eviction/", "model-eviction")
    root.locator("textarea[name=chat]").focus()
    wait_ready(root)
    chat = root.locator("textarea[name=chat]")
    chat.fill(
        "user: hello!\nbot: hi there.\nuser: please remember this. the door has code 7391.\n"
        "bot: sure, i will keep it in mind.\n"
    )
    # keep chatting: the model answers, the chat grows by the reader's line and a reply
    root.locator("input[name=say]").fill("i went to the park today.")
    root.get_by_role("button", name="Send").click()
    expect(chat).to_have_value(
        __import__("re").compile(r"user: i went to the park today\.\nbot:.+\n$", __import__("re").S), timeout=120_000
    )
    set_range(root, "window", 8)
    set_range(root, "sinks", 0)
    got = ask(root, warm_page)
    facts = kvlab.door_code_chat(chat.input_value())
    assert got["score"]["code"] == "7391" == facts["code"]
    assert got["score"]["code_positions"] == facts["code_positions"]
    full, window = got["score"]["policies"]["full"], got["score"]["policies"]["window"]
    assert full["code_in_cache"] and not window["code_in_cache"]
    assert full["correct"], full["answer"]  # the copy head finds the reader's code
    # what the page shows is door_code_score of the runs, computed again in CPython
    again = kvlab.door_code_score(facts["code"], facts["code_positions"], got["runs"], 8, 0)
    assert again["policies"] == got["score"]["policies"]
    expect(root.locator('tr[data-policy="window"] [data-col="in-cache"]')).to_have_text("no")
    expect(root.locator('[data-field="code"]')).to_have_text("7391")
    # where the code sits, the lines and the chart's hovers: the views of door_code_chat and door_code_score
    expect(root.locator('[data-field="code-pos"]')).to_have_text(facts["view"]["code_span"])
    expect(root.locator('[data-field="n-tokens"]')).to_have_text(facts["view"]["n_tokens"])
    assert root.locator(".kv-me-lines li").all_text_contents() == again["view"]["lines"]
    hovers = root.locator(".kv-me-plot").evaluate("el => el.data.map(t => Array.from(t.hovertext))")
    assert hovers == [again["view"]["hover"][name] for name in again["chart"]]


def test_a_chat_without_a_code_says_so(warm_page, site_url):
    root = open_widget(warm_page, site_url + "eviction/", "model-eviction")
    root.locator("textarea[name=chat]").focus()
    wait_ready(root)
    root.locator("textarea[name=chat]").fill("user: hello!\nbot: hi there.\n")
    root.get_by_role("button", name="Ask for the door code").click()
    expect(root.locator(".kv-notice")).to_contain_text("never states a door code", timeout=120_000)


def test_the_measured_recall_line_comes_from_the_model_card(built_site):
    html = (built_site / "eviction" / "index.html").read_text()
    m = kvlab.model_eviction_figure()["measured"]
    far = tiny.tiny_card()["recall"][">=200"]
    assert m["full_cache"] == far["full_cache"] and m["n_far"] == far["n"]
    assert f"Measured on {far['n']} held-out chats" in html
    assert f"names the whole code {round(far['full_cache'] * 100)}% of the time" in html
