"""The wrap-up page's trade-off map, the prefix-cache cases (three requests),
the prefill/decode sequence diagram and the llama-server command, live in Chromium:
what the page shows is what CPython's kvlab computes for the same inputs."""

from __future__ import annotations

import re

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import open_live, open_widget, set_range, wait_ready


def test_wrap_up_is_in_the_nav_and_reads_without_javascript(built_site):
    html = (built_site / "wrap-up" / "index.html").read_text()
    m = kvlab.tradeoff_map_figure()
    assert "Three takeaways" in html and "Further reading" in html
    assert m["cell"]["why"]["kv_cache"].replace("×", "&times;") in html or m["cell"]["why"]["kv_cache"] in html
    assert m["cell"]["server"]["command"].splitlines()[0] in html
    home = (built_site / "index.html").read_text()
    assert 'href="wrap-up/"' in home


def test_tradeoff_map_cell_click_and_memory_change(warm_page, site_url):
    root = open_live(warm_page, site_url + "wrap-up/", "tradeoff-map")
    root.locator("select[name=memory]").select_option("low")
    wait_ready(root)
    want = kvlab.tradeoff_map_figure("medium", "medium", "low")
    cells = root.locator(".kv-tm-grid td")
    expect(cells).to_have_count(9)
    mains = [c["main"] for row in want["grid"] for c in row]
    assert cells.evaluate_all("tds => tds.map(td => td.dataset.main)") == mains
    # a click on the long / high cell picks it: the reasons and the command follow
    root.locator('.kv-tm-cell[data-length="long"][data-repetition="high"]').click()
    picked = kvlab.tradeoff_map_figure("long", "high", "low")
    cell = picked["cell"]
    expect(root.locator('[data-field="where"]')).to_have_text(picked["view"]["where"])
    expect(root.locator('[data-field="why"] li[data-helps="true"]')).to_have_count(len(cell["helps"]))
    expect(root.locator('[data-field="server-command"]')).to_have_text(cell["server"]["command"])
    expect(root.locator("select[name=length]")).to_have_value("long")


def test_prefix_cases_three_requests_per_case(warm_page, site_url):
    root = open_live(warm_page, site_url + "prefix-cache/", "prefix-cases")
    for case in ("multi_turn", "instructions_last", "code_template"):
        root.locator("select[name=case]").select_option(case)
        set_range(root, "shared_len", 48)
        want = kvlab.prefix_cases_figure(case, 48, 12, 16)
        expect(root.locator('[data-field="summary"]')).to_have_text(want["view"]["summary"])
        expect(root.locator(".kv-pc-request")).to_have_count(3)
        labels = root.locator(".kv-pc-label").all_inner_texts()
        assert labels == [
            f"Request {i + 1} · {r['n_tokens']} tokens · reused: {r['radix_reused']} token-granular, "
            f"{r['blocks_reused']} in blocks"
            for i, r in enumerate(want["requests"])
        ]
        expect(root.locator('[data-field="what"]')).to_have_text(want["what"])


def test_sequence_diagram_follows_the_readers_prompt(warm_page, site_url):
    root = open_live(warm_page, site_url + "kv-cache/", "prefill-decode")
    root.locator("input[name=prompt]").fill("A dog ran to the")
    root.locator("input[name=replies]").fill("park today")
    want = kvlab.prefill_decode_figure("A dog ran to the", "park today")
    expect(root.locator(".kv-seq-note")).to_have_text([s["note"] for s in want["steps"]])
    expect(root.locator(".kv-seq-step").first.locator(".kv-seq-text").first).to_have_text(
        want["steps"][0]["messages"][0]["text"]
    )


def test_context_shift_shows_the_command_for_its_settings(warm_page, site_url):
    root = open_live(warm_page, site_url + "eviction/", "context-shift")
    set_range(root, "n_ctx", 64)
    root.locator("select[name=mode]").select_option("stop")
    want = kvlab.context_shift_figure(prompt_len=8, n_generate=40, n_ctx=64, n_keep=4, mode="stop")
    expect(root.locator('[data-field="server-command"]')).to_have_text(want["server"]["command"])
    assert "--context-shift" not in want["server"]["command"] and "--ctx-size 64" in want["server"]["command"]


def _lab(rgb: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of a computed colour, "rgb(r, g, b)"."""
    r, g, b = (int(v) / 255 for v in re.findall(r"\d+", rgb)[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    x = (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047
    y = 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    z = (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883
    f = [t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116 for t in (x, y, z)]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def test_prefix_cases_reuse_and_block_hit_colours_are_apart(browser, site_url):
    """Token-granular reuse (#3949ab) and the vLLM block hit (#5c6bc0) were two near-identical
    indigos (ΔE 17): now at least ΔE 30 apart, in the light and the dark scheme; the token
    counts in the bars read at 11 px or more at 375 px."""
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport={"width": 375, "height": 800}, color_scheme=scheme)
        try:
            page = context.new_page()
            root = open_widget(page, site_url + "prefix-cache/", "prefix-cases")
            bg = "el => getComputedStyle(el).backgroundColor"
            reuse = root.locator('.kv-pc-seg[data-reuse="all"]').first.evaluate(bg)
            hit = root.locator('.kv-block[data-status="hit"]').first.evaluate(bg)
            legend = [root.locator(f".kv-legend li:nth-child({i}) .kv-swatch").evaluate(bg) for i in (1, 3)]
            assert legend == [reuse, hit], (legend, reuse, hit)
            delta = sum((p - q) ** 2 for p, q in zip(_lab(reuse), _lab(hit), strict=True)) ** 0.5
            assert delta >= 30, f"{scheme}: reuse {reuse} and block hit {hit} are only ΔE {delta:.1f} apart"
            sizes = root.locator(".kv-pc-seg, .kv-pc-seg small").evaluate_all(
                "els => els.map(e => parseFloat(getComputedStyle(e).fontSize))"
            )
            assert min(sizes) >= 11, (scheme, min(sizes))
        finally:
            context.close()
