"""The KV cache page: the step-through widget, live in Chromium, by keyboard.

Phase readouts and cache lengths follow kvlab.cache_lengths (docs/claims.md:
prefill: empty before, prompt_len after; decode step k: prompt_len + k − 1
before, prompt_len + k after); the grid and the equivalence line follow
kvlab.step_through_figure.
"""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import open_widget, set_range, wait_ready

PAGE = "kv-cache/"


def phase_text(prompt_len: int, step: int) -> str:
    c = kvlab.cache_lengths(prompt_len, step)
    if c["phase"] == "prefill":
        return f"Prefill · step 0 · cache empty before, {c['cache_len_after']} entries after"
    return f"Decode · step {step} · {c['cache_len_before']} entries read, {c['cache_len_after']} after the step"


def grid_counts(root) -> dict:
    return root.locator('[data-field="grid"] table').evaluate(
        """t => ({rows: t.tBodies[0].rows.length,
                  computed: t.querySelectorAll('td.kv-st-computed').length,
                  read: t.querySelectorAll('td.kv-st-read').length,
                  empty: t.querySelectorAll('td.kv-st-empty').length})"""
    )


def test_static_page_lists_every_step_with_its_cache_lengths(built_site):
    html = (built_site / "kv-cache" / "index.html").read_text()
    data = kvlab.step_through_figure(prompt_len=6, steps=4, layers=2)
    for k in range(5):
        assert phase_text(6, k) in html
    assert "Prefill · step 0 · cache empty before, 6 entries after" in html  # the wording in the brief
    eq = data["equivalence"]
    assert eq["same_tokens"] and eq == {**eq, "tokens_no_cache": kvlab.cache_equivalence(6, 5, 0)["tokens_no_cache"]}
    assert f'data-field="tokens-cache">{" ".join(map(str, eq["tokens_cache"]))}</code>' in html
    assert f'data-field="work-no-cache">{eq["tokens_processed"]["no_cache"]}</span>' in html


def test_keyboard_stepping_and_settings_follow_kvlab(warm_page, site_url):
    root = open_widget(warm_page, site_url + PAGE, "step-through")
    phase = root.locator('[data-field="phase"]')
    expect(phase).to_have_attribute("aria-live", "polite")
    expect(phase).to_have_text(phase_text(6, 0))
    assert grid_counts(root) == {"rows": 2, "computed": 2 * 6, "read": 0, "empty": 2 * 4}

    nxt = root.locator('[data-action="next"]')
    nxt.focus()  # keyboard only from here
    wait_ready(root)  # stepping needs no Python: ready at once
    for _ in range(3):
        warm_page.keyboard.press("Enter")
    expect(phase).to_have_text(phase_text(6, 3))
    expect(phase).to_have_text("Decode · step 3 · 8 entries read, 9 after the step")
    assert grid_counts(root) == {"rows": 2, "computed": 2, "read": 2 * 8, "empty": 2 * 1}

    warm_page.keyboard.press("Shift+Tab")  # to Prev
    expect(root.locator('[data-action="prev"]')).to_be_focused()
    warm_page.keyboard.press("Space")
    expect(phase).to_have_text(phase_text(6, 2))
    root.locator('[data-field="grid"]').focus()
    warm_page.keyboard.press("ArrowRight")
    warm_page.keyboard.press("ArrowRight")
    warm_page.keyboard.press("ArrowRight")  # past the last step: stays there
    expect(phase).to_have_text(phase_text(6, 4))
    expect(nxt).to_be_disabled()

    # new settings: Python runs, the step the reader was on is kept
    set_range(root, "layers", 3)
    set_range(root, "prompt_len", 4)
    wait_ready(root)
    want = kvlab.step_through_figure(prompt_len=4, steps=4, layers=3)
    expect(phase).to_have_text(phase_text(4, 4))
    assert grid_counts(root) == {"rows": 3, "computed": 3, "read": 3 * 7, "empty": 0}
    assert want["steps"][4]["cache_len_before"] == 7
    expect(root.locator('[data-field="tokens-cache"]')).to_have_text(
        " ".join(map(str, want["equivalence"]["tokens_cache"]))
    )
    expect(root.locator('[data-field="tokens-no-cache"]')).to_have_text(
        " ".join(map(str, want["equivalence"]["tokens_no_cache"]))
    )
    expect(root.locator('[data-field="work-cache"]')).to_have_text(
        str(want["equivalence"]["tokens_processed"]["cache"])
    )
    expect(root.locator('[data-field="same"]')).to_have_text("identical")


def test_with_the_cache_off_every_earlier_cell_is_computed_again(warm_page, site_url):
    """The switch beside Play shows the same step without a cache: kvlab's without_cache_recomputed
    positions computed in every layer, nothing read; switched back, the cached step again."""
    root = open_widget(warm_page, site_url + PAGE, "step-through")
    phase = root.locator('[data-field="phase"]')
    want = kvlab.step_through_figure(prompt_len=6, steps=4, layers=2)
    root.locator('[data-action="next"]').click()
    root.locator('[data-action="next"]').click()
    expect(phase).to_have_text(phase_text(6, 2))
    cached = grid_counts(root)
    assert cached == {"rows": 2, "computed": 2, "read": 2 * 7, "empty": 2 * 2}

    switch = root.locator('[data-action="cache"]')
    switch.focus()
    warm_page.keyboard.press("Space")  # a checkbox: by keyboard
    expect(switch).not_to_be_checked()
    redone = len(want["steps"][2]["without_cache_recomputed"])
    assert redone == 8
    expect(phase).to_have_text(want["view"]["steps"][2]["no_cache"]["phase"])
    assert grid_counts(root) == {"rows": 2, "computed": 2 * redone, "read": 0, "empty": 2 * (10 - redone)}
    expect(root.locator('[data-field="describe"]')).to_contain_text(
        f"{2 * redone} cells computed where the cache computes 2"
    )
    # stepping keeps the cache off; the next step recomputes one token more
    root.locator('[data-action="next"]').click()
    assert grid_counts(root)["computed"] == 2 * (redone + 1)

    switch.click()
    expect(phase).to_have_text(phase_text(6, 3))
    assert grid_counts(root) == {"rows": 2, "computed": 2, "read": 2 * 8, "empty": 2 * 1}
