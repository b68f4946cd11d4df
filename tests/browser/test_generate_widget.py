"""Try it: the tiny model generating in a real Chromium, with and without the cache."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

import kvlab
from kvlab.core import tiny
from tests.browser.widgets import open_widget, wait_ready


@pytest.fixture
def widget(warm_page, site_url):
    root = open_widget(warm_page, site_url + "generate/", "generate")
    root.locator("textarea[name=prompt]").focus()
    wait_ready(root)
    return root


def generate(root, *, prompt=None, n=None, use_cache=True, temperature=None, seed=None):
    form = root.locator("form")
    if prompt is not None:
        form.locator("textarea[name=prompt]").fill(prompt)
    for name, value in (("max_new_tokens", n), ("temperature", temperature), ("seed", seed)):
        if value is not None:
            form.locator(f'input[name="{name}"]').evaluate(
                "(el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', {bubbles: true})); }", value
            )
    form.locator("input[name=use_cache]").set_checked(use_cache)
    root.evaluate("el => delete el.dataset.tokens")
    form.get_by_role("button", name="Generate").click()
    root.page.wait_for_function("el => el.dataset.tokens !== undefined", arg=root.element_handle(), timeout=120_000)
    return json.loads(root.get_attribute("data-tokens"))


def test_static_figure_is_the_reference_models_greedy_continuation(built_site):
    html = (built_site / "generate" / "index.html").read_text()
    data = kvlab.generate_figure()
    first, last = data["steps"][0], data["steps"][-1]
    # the readout describes the step the text and the grid show: the last one of the run
    assert (
        f"Decode · step {last['step']} · {last['cache_len_before']} entries read from the cache, "
        f"{last['cache_len_after']} after the step"
    ) in html
    assert "cache empty before" not in html
    assert (
        f'<td data-bind="before">{first["cache_len_before"]}</td><td data-bind="after">{first["cache_len_after"]}</td>'
        in html
    )
    # the controls start where the run shown was made: its number of new tokens and its top-k
    n_new, top_k = len(data["steps"]), len(first["top"])
    assert f"then {n_new} new ones" in html
    (lo, hi), (klo, khi) = data["limits"]["max_new_tokens"], data["limits"]["top_k"]
    assert f'name="max_new_tokens" min="{lo}" max="{hi}" step="1" value="{n_new}">' in html
    assert f'<output name="max_new_tokens-out">{n_new}</output>' in html
    assert f'name="top_k" min="{klo}" max="{khi}" step="1" value="{top_k}">' in html


def test_the_run_shown_can_be_stepped_back_and_forth(widget):
    data = kvlab.generate_figure()
    phase = widget.locator('[data-field="phase"]')
    last = data["steps"][-1]
    expect(phase).to_have_text(
        f"Decode · step {last['step']} · {last['cache_len_before']} entries read from the cache, "
        f"{last['cache_len_after']} after the step"
    )
    back = widget.get_by_role("button", name="Step back")
    for _ in range(len(data["steps"]) - 1):
        back.click()
    expect(phase).to_have_text(f"Prefill · step 0 · cache empty before, {data['prompt_len']} entries after the step")
    expect(back).to_be_disabled()
    expect(widget.locator(".kv-gen-new .kv-tok-later")).to_have_count(len(data["steps"]) - 1)
    expect(widget.locator(".kv-gen-cells").first.locator(".kv-cell-read")).to_have_count(0)
    # after a run of the reader's own, the same controls walk through it
    generate(widget, prompt="The cat sat on the mat.", n=6)
    expect(widget.locator(".kv-gen-new .kv-tok-later")).to_have_count(0)
    widget.get_by_role("button", name="Step back").click()
    expect(phase).to_contain_text("Decode · step 4 ·")
    expect(widget.locator(".kv-gen-new .kv-tok-later")).to_have_count(1)
    expect(widget.locator('[data-field="steps"] tr[aria-current="step"] td').first).to_have_text("4")
    widget.get_by_role("button", name="Step forward").click()
    expect(phase).to_contain_text("Decode · step 5 ·")


def shown_step(root) -> int:
    """The step the readout names (the phase line: "Decode · step 7 · …")."""
    return int(re.search(r"· step (\d+) ·", root.locator('[data-field="phase"]').text_content()).group(1))


def go_to_step(root, k: int) -> None:
    """Step back or forward to step k (the first press pauses a play-back)."""
    for _ in range(40):
        at = shown_step(root)
        if at == k:
            return
        root.get_by_role("button", name="Step back" if at > k else "Step forward").click()
    raise AssertionError(f"could not reach step {k}")


def test_a_run_plays_back_at_a_readable_pace(widget):
    """Generate runs at full speed (its measured ms stay); the run then plays back from its first
    token at the chosen pace, 300 ms a token by default: pause holds it, Step forward moves one."""
    page = widget.page
    play = widget.get_by_role("button", name="Play")
    expect(widget.locator('[data-field="phase"]')).to_have_attribute("aria-live", "polite")
    expect(widget.locator('select[name="speed"]')).to_have_value("300")
    generate(widget, prompt="Tom saw a small dog. He", n=24)
    # it plays by itself, from the first new tokens, not yet at the end
    expect(play).to_have_attribute("aria-pressed", "true")
    start = shown_step(widget)
    assert start < 16, start
    page.wait_for_timeout(1200)
    now = shown_step(widget)
    assert now >= start + 1 and now < 23, (start, now)
    # the measured step times are all there while it plays
    ms = widget.locator('[data-field="steps"] tr td[data-bind="ms"]').all_text_contents()
    assert len(ms) == 24 and all(float(t) >= 0 for t in ms), ms
    # pause holds the step shown; Step forward moves exactly one
    play.click()
    expect(play).to_have_attribute("aria-pressed", "false")
    held = shown_step(widget)
    page.wait_for_timeout(800)
    assert shown_step(widget) == held
    widget.get_by_role("button", name="Step forward").click()
    assert shown_step(widget) == held + 1
    # Space on the focused button plays and pauses; at 4x it runs to the end and stops there
    widget.locator('select[name="speed"]').select_option("75")
    play.focus()
    page.keyboard.press("Space")
    expect(play).to_have_attribute("aria-pressed", "true")
    expect(widget.locator('[data-field="phase"]')).to_contain_text("· step 23 ·", timeout=10_000)
    expect(play).to_have_attribute("aria-pressed", "false")
    # at the end, Play starts again from the first step
    play.click()
    expect(play).to_have_attribute("aria-pressed", "true")
    page.keyboard.press("Space")
    expect(play).to_have_attribute("aria-pressed", "false")
    assert shown_step(widget) < 23


def test_the_grid_shows_what_each_step_computes_and_what_it_reads(widget):
    """Cache on: a decode step computes one new column (gold) and reads every earlier one (grey).
    Cache off: every earlier cell of the step is computed again, none is read."""
    prompt = "The cat sat on the mat."
    p = len(kvlab.load_tokenizer(str(tiny.TINY_DIR / "tokenizer.json")).encode(prompt))
    n_layer = kvlab.generate_figure()["n_layer"]
    rows = widget.locator(".kv-gen-cells")
    phase = widget.locator('[data-field="phase"]')
    for use_cache in (True, False):
        generate(widget, prompt=prompt, n=6, use_cache=use_cache)
        go_to_step(widget, 3)  # stepping pauses the play-back
        expect(widget.get_by_role("button", name="Play")).to_have_attribute("aria-pressed", "false")
        expect(phase).to_contain_text("· step 3 ·")
        expect(phase).to_contain_text("Decode" if use_cache else "No cache")
        expect(rows).to_have_count(n_layer)
        expect(rows.locator(".kv-cell")).to_have_count(n_layer * (p + 3))
        if use_cache:
            expect(rows.locator(".kv-cell-new")).to_have_count(n_layer)
            expect(rows.locator(".kv-cell-read")).to_have_count(n_layer * (p + 2))
            for r in range(n_layer):  # the new column is the last one
                assert "kv-cell-new" in rows.nth(r).locator(".kv-cell").last.get_attribute("class")
        else:
            expect(rows.locator(".kv-cell-new")).to_have_count(n_layer * (p + 3))
            expect(rows.locator(".kv-cell-read")).to_have_count(0)
    legend = widget.locator(".kv-legend")
    expect(legend).to_contain_text("computed this step")
    expect(legend).to_contain_text("read from the cache")


def test_with_reduced_motion_a_run_shows_its_last_step_and_play_steps_once(widget):
    page = widget.page
    page.emulate_media(reduced_motion="reduce")
    try:
        generate(widget, prompt="The cat sat on the mat.", n=5)
        play = widget.get_by_role("button", name="Play")
        expect(widget.locator('[data-field="phase"]')).to_contain_text("· step 4 ·")
        expect(play).to_have_attribute("aria-pressed", "false")
        widget.get_by_role("button", name="Step back").click()
        widget.get_by_role("button", name="Step back").click()
        assert shown_step(widget) == 2
        play.click()
        assert shown_step(widget) == 3
        page.wait_for_timeout(800)
        assert shown_step(widget) == 3
        expect(play).to_have_attribute("aria-pressed", "false")
    finally:
        page.emulate_media(reduced_motion="no-preference")


def test_cached_and_uncached_generation_give_identical_tokens(widget):
    prompt = "Tom saw a small dog. He"
    cached = generate(widget, prompt=prompt, n=24, use_cache=True)
    uncached = generate(widget, prompt=prompt, n=24, use_cache=False)
    assert cached == uncached and len(cached) == 24
    model, tok = tiny._model_and_tokenizer()
    assert cached == model.generate(tok.encode(prompt), 24)  # and the numpy reference agrees


def test_sampling_with_a_seed_is_identical_with_and_without_cache(widget):
    a = generate(widget, prompt="Once upon a time", n=20, temperature=0.9, seed=7, use_cache=True)
    b = generate(widget, prompt="Once upon a time", n=20, temperature=0.9, seed=7, use_cache=False)
    assert a == b


def test_phase_readout_and_steps_table_follow_the_definitions(widget):
    prompt = "The cat sat on the mat."
    p = len(kvlab.load_tokenizer(str(tiny.TINY_DIR / "tokenizer.json")).encode(prompt))
    generate(widget, prompt=prompt, n=5)
    rows = widget.locator('[data-field="steps"] tr').evaluate_all(
        "rows => rows.map(r => Array.from(r.cells).slice(0, 5).map(c => c.textContent))"
    )
    assert rows[0] == ["0", "prefill", str(p), "0", str(p)]
    for k, row in enumerate(rows[1:], start=1):
        assert row == [str(k), "decode", "1", str(p + k - 1), str(p + k)]
    expect(widget.locator('[data-field="phase"]')).to_have_text(
        f"Decode · step 4 · {p + 3} entries read from the cache, {p + 4} after the step"
    )
    # the grid: one row per layer, p + 4 cells, only the last one computed
    cells = widget.locator(".kv-gen-cells").first.locator(".kv-cell")
    expect(cells).to_have_count(p + 4)
    expect(widget.locator(".kv-gen-cells").first.locator(".kv-cell-new")).to_have_count(1)


def test_without_cache_every_cell_is_computed_again(widget):
    generate(widget, prompt="The cat sat.", n=3, use_cache=False)
    row = widget.locator(".kv-gen-cells").first
    expect(row.locator(".kv-cell-read")).to_have_count(0)
    expect(widget.locator('[data-field="phase"]')).to_contain_text("No cache · step 2")


def test_empty_prompt_asks_for_one(widget):
    widget.locator("textarea[name=prompt]").fill("   ")
    widget.get_by_role("button", name="Generate").click()
    expect(widget.locator(".kv-notice")).to_have_text("Type a prompt first: the model continues your text.")


def test_html_in_the_prompt_is_shown_as_text(widget):
    generate(widget, prompt='<img src=x onerror="window.pwned=1"><b>bold</b>', n=2)
    assert widget.page.evaluate("window.pwned") is None
    expect(widget.locator(".kv-gen-prompt-text")).to_contain_text("<b>bold</b>")
    expect(widget.locator(".kv-gen-output b")).to_have_count(0)


def test_a_prompt_longer_than_the_context_is_truncated_with_a_message(widget):
    tokens = generate(widget, prompt="word " * 600, n=4)
    assert len(tokens) == 4
    expect(widget.locator(".kv-notice")).to_contain_text("were dropped and the last")


def test_rapid_clicks_start_only_one_run(widget):
    widget.locator("textarea[name=prompt]").fill("The dog")
    button = widget.get_by_role("button", name="Generate")
    button.evaluate("b => { b.click(); b.click(); b.click(); }")
    widget.page.wait_for_function("el => el.dataset.tokens !== undefined", arg=widget.element_handle(), timeout=120_000)
    rows = widget.locator('[data-field="steps"] tr')
    # the default (the slider starts at the run shown): one run, not three interleaved
    expect(rows).to_have_count(len(kvlab.generate_figure()["steps"]))


def test_stop_ends_a_run_early(widget):
    widget.locator("textarea[name=prompt]").fill("The dog")
    widget.locator('input[name="max_new_tokens"]').evaluate(
        "el => { el.value = '200'; el.dispatchEvent(new Event('input', {bubbles: true})); }"
    )
    widget.locator("input[name=use_cache]").set_checked(
        False
    )  # the slow way, so the run is still going when Stop is pressed
    widget.get_by_role("button", name="Generate").click()
    expect(widget.locator('[data-field="steps"] tr').nth(2)).to_be_attached(timeout=60_000)
    widget.get_by_role("button", name="Stop").click()
    widget.page.wait_for_function("el => el.dataset.tokens !== undefined", arg=widget.element_handle(), timeout=60_000)
    assert len(json.loads(widget.get_attribute("data-tokens"))) < 200
    expect(widget.locator(".kv-status")).to_contain_text("Stopped after")


def test_about_this_model_states_the_measured_recall(built_site):
    html = (built_site / "generate" / "index.html").read_text()
    far = tiny.tiny_card()["recall"][">=200"]

    def pct(x):
        return int(x * 100 + 0.5)  # jinja's round(0): half up

    assert f"names the code {pct(far['full_cache'])}% of the time with its whole cache" in html
    assert f"and {pct(far['fact_evicted'])}% once the code" in html
