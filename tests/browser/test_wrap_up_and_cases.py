"""The wrap-up page's trade-off map, the prefix-cache cases (three requests),
the prefill/decode sequence diagram and the llama-server command, live in Chromium:
what the page shows is what CPython's kvlab computes for the same inputs."""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import activate, open_widget, set_range, wait_ready


def test_wrap_up_is_in_the_nav_and_reads_without_javascript(built_site):
    html = (built_site / "wrap-up" / "index.html").read_text()
    m = kvlab.tradeoff_map()
    assert "Three takeaways" in html and "Further reading" in html
    assert m["cell"]["why"]["kv_cache"].replace("×", "&times;") in html or m["cell"]["why"]["kv_cache"] in html
    assert m["cell"]["server"]["command"].splitlines()[0] in html
    home = (built_site / "index.html").read_text()
    assert 'href="wrap-up/"' in home


def test_tradeoff_map_cell_click_and_memory_change(warm_page, site_url):
    root = open_widget(warm_page, site_url + "wrap-up/", "tradeoff-map")
    activate(root)
    wait_ready(root)
    root.locator("select[name=memory]").select_option("low")
    wait_ready(root)
    want = kvlab.tradeoff_map("medium", "medium", "low")
    cells = root.locator(".kv-tm-grid td")
    expect(cells).to_have_count(9)
    mains = [c["main"] for row in want["grid"] for c in row]
    assert cells.evaluate_all("tds => tds.map(td => td.dataset.main)") == mains
    # a click on the long / high cell picks it: the reasons and the command follow
    root.locator('.kv-tm-cell[data-length="long"][data-repetition="high"]').click()
    cell = kvlab.tradeoff_map("long", "high", "low")["cell"]
    expect(root.locator('[data-field="where"]')).to_have_text(cell["text"]["where"])
    expect(root.locator('[data-field="why"] li[data-helps="true"]')).to_have_count(len(cell["helps"]))
    expect(root.locator('[data-field="server-command"]')).to_have_text(cell["server"]["command"])
    expect(root.locator("select[name=length]")).to_have_value("long")


def test_prefix_cases_three_requests_per_case(warm_page, site_url):
    root = open_widget(warm_page, site_url + "prefix-cache/", "prefix-cases")
    activate(root)
    wait_ready(root)
    for case in ("multi_turn", "instructions_last", "code_template"):
        root.locator("select[name=case]").select_option(case)
        set_range(root, "shared_len", 48)
        want = kvlab.prefix_cases(case, 48, 12, 16)
        expect(root.locator('[data-field="summary"]')).to_have_text(want["text"]["summary"])
        expect(root.locator(".kv-pc-request")).to_have_count(3)
        labels = root.locator(".kv-pc-label").all_inner_texts()
        assert labels == [
            f"Request {i + 1} · {r['n_tokens']} tokens · reused: {r['radix_reused']} token-granular, "
            f"{r['blocks_reused']} in blocks"
            for i, r in enumerate(want["requests"])
        ]
        expect(root.locator('[data-field="what"]')).to_have_text(want["what"])


def test_sequence_diagram_follows_the_readers_prompt(warm_page, site_url):
    root = open_widget(warm_page, site_url + "kv-cache/", "prefill-decode")
    activate(root)
    wait_ready(root)
    root.locator("input[name=prompt]").fill("A dog ran to the")
    root.locator("input[name=replies]").fill("park today")
    want = kvlab.prefill_decode_sequence("A dog ran to the", "park today")
    expect(root.locator(".kv-seq-note")).to_have_text([s["note"] for s in want["steps"]])
    expect(root.locator(".kv-seq-step").first.locator(".kv-seq-text").first).to_have_text(
        want["steps"][0]["messages"][0]["text"]
    )


def test_context_shift_shows_the_command_for_its_settings(warm_page, site_url):
    root = open_widget(warm_page, site_url + "eviction/", "context-shift")
    activate(root)
    wait_ready(root)
    set_range(root, "n_ctx", 64)
    root.locator("select[name=mode]").select_option("stop")
    want = kvlab.context_shift_view(prompt_len=8, n_generate=40, n_ctx=64, n_keep=4, mode="stop")
    expect(root.locator('[data-field="server-command"]')).to_have_text(want["server"]["command"])
    assert "--context-shift" not in want["server"]["command"] and "--ctx-size 64" in want["server"]["command"]
