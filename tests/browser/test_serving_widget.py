"""The serving widget, live in a real Chromium: speed, memory and cost equal CPython's kvlab."""

from __future__ import annotations

from playwright.sync_api import expect

import kvlab
from widget_blocks import URL_RE, link_name  # sitebuild/ is on pytest's pythonpath
from tests.browser.widgets import open_live, open_widget, set_range, wait_ready

FIELDS = {  # data-field -> key of kvlab.serving_figure's view (or, when not in it, of its result)
    "ms": "ms_per_token_text",
    "ms1": "ms_per_token_batch1_text",
    "tps-chat": "tokens_per_second_per_chat_text",
    "tps-total": "total_tokens_per_second_text",
    "kv-share": "kv_share_text",
    "kv-share1": "kv_share_batch1_text",
    "chats": "chats_that_fit_text",
    "cost": "cost_text",
    "cost1": "cost_batch1_text",
    "working": "working",
    "headline": "headline",
    "verdict": "verdict",
    "bound": "bound_text",
    "prefill": "prefill_text",
}


def shown(root) -> dict:
    # textContent: the working is in a fold ("How this is computed"), closed until the reader opens it
    return {name: root.locator(f'[data-field="{name}"]').text_content() for name in FIELDS}


def expected(data) -> dict:
    return {name: data["view"].get(key, data.get(key)) for name, key in FIELDS.items()}


def test_static_figure_holds_the_computed_numbers(built_site):
    html = (built_site / "serving" / "index.html").read_text()
    data = kvlab.serving_figure(
        model="llama-3.1-8b", gpu="h100-sxm", context=32768, batch=8, weights="BF16", kv="f16", engine="vllm"
    )
    assert data["fits"]
    for value in expected(data).values():
        assert f">{value}<" in html
    assert data["gpu_info"]["price_source"] in html and data["gpu_info"]["price_date"] in html


def test_controls_recompute_speed_and_cost_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + "serving/", "serving")
    assert shown(root) == expected(kvlab.serving_figure())

    root.locator('select[name="gpu"]').select_option("a100-80gb")
    root.locator('select[name="model"]').select_option("qwen3-8b")
    set_range(root, "context", 32768)
    set_range(root, "batch", 4)
    want = kvlab.serving_figure(model="qwen3-8b", gpu="a100-80gb", context=32768, batch=4)
    assert want["fits"]
    expect(root.locator('[data-field="ms"]')).to_have_text(want["view"]["ms_per_token_text"])
    wait_ready(root)
    assert shown(root) == expected(want)
    # a source's web address is a link named by its site (widget_blocks.linked at build time, kit.linked here)
    named = [URL_RE.sub(lambda m: link_name(m.group(0)), a) for a in want["assumptions"]]
    assert root.locator('[data-field="assumptions"] li').all_text_contents() == named
    hrefs = root.locator('[data-field="assumptions"] a').evaluate_all("as => as.map(a => a.getAttribute('href'))")
    assert hrefs == [u for a in want["assumptions"] for u in URL_RE.findall(a)] and hrefs
    expect(root.locator('[data-field="price"]')).to_contain_text(want["gpu_info"]["price_date"])
    plotted = root.locator(".kv-plot").evaluate("el => el.data.map(t => ({x: t.x, y: t.y}))")
    c = want["curve"]
    assert plotted[0] == {"x": c["contexts"], "y": c["ms_batch1"]}
    assert plotted[1] == {"x": c["contexts"], "y": c["ms_batch"]}
    assert len(plotted) == 2

    # a batch that does not fit is neither timed nor priced
    set_range(root, "batch", 24)
    want = kvlab.serving_figure(model="qwen3-8b", gpu="a100-80gb", context=32768, batch=24)
    assert not want["fits"]
    expect(root.locator('[data-field="cost"]')).to_have_text(want["view"]["cost_text"])
    wait_ready(root)
    assert shown(root) == expected(want)

    # a GPU without a price in the catalogue says so instead of inventing one
    set_range(root, "batch", 4)
    root.locator('select[name="gpu"]').select_option("mi300x")
    want = kvlab.serving_figure(model="qwen3-8b", gpu="mi300x", context=32768, batch=4)
    expect(root.locator('[data-field="cost"]')).to_have_text(want["view"]["cost_text"])
    wait_ready(root)
    assert shown(root) == expected(want)


def test_vllm_share_and_block_size_by_keyboard_move_the_chats_that_fit(warm_page, site_url):
    root = open_live(warm_page, site_url + "serving/", "serving")
    util = root.locator('input[name="gpu_memory_utilization"]')
    block = root.locator('select[name="block_size"]')
    # the limits and choices are Python's (the gpu-fit widget's); the default engine is vLLM, so both are on
    options = kvlab.serving_figure()["options"]
    limits = options["limits"]["gpu_memory_utilization"]
    assert util.get_attribute("min") == str(limits["min"]) and util.get_attribute("max") == str(limits["max"])
    assert util.get_attribute("step") == str(options["limits"]["gpu_memory_utilization"]["step"])
    assert block.locator("option").all_text_contents() == [str(b) for b in options["limits"]["block_size"]["choices"]]
    expect(util).to_be_enabled()
    expect(util).to_have_value(str(options["vllm_defaults"]["gpu_memory_utilization"]))  # 0.92: vLLM 0.20+
    before = kvlab.serving_figure()
    assert root.locator('[data-field="chats"]').inner_text() == before["chats_that_fit_text"]

    # keyboard only: Tab from the engine to vLLM's share, type 0.5
    root.locator('select[name="engine"]').focus()
    warm_page.keyboard.press("Tab")
    expect(util).to_be_focused()
    warm_page.keyboard.press("Control+A")
    warm_page.keyboard.type("0.5")
    want = kvlab.serving_figure(gpu_memory_utilization=0.5)
    assert want["chats_that_fit_text"] != before["chats_that_fit_text"] and not want["fits"]
    expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
    wait_ready(root)
    assert "--gpu-memory-utilization 0.5" in want["flags"]
    assert shown(root) == expected(want)
    expect(root.locator('[data-field="budget"]')).to_have_text(want["budget"]["human"])

    # one step up with the arrow key, then Tab to the block size and pick the next one with the arrow key
    warm_page.keyboard.press("ArrowUp")
    warm_page.keyboard.press("Tab")
    expect(block).to_be_focused()
    warm_page.keyboard.press("ArrowDown")
    expect(block).to_have_value("32")
    want = kvlab.serving_figure(gpu_memory_utilization=0.51, block_size=32)
    assert want["flags"].endswith("--gpu-memory-utilization 0.51 --block-size 32")
    expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
    wait_ready(root)
    assert shown(root) == expected(want)

    # out of range: Python clamps it and the widget says so, beside the field too; the field keeps
    # what the reader typed while they type, and shows what was used once they press Enter
    util.focus()
    warm_page.keyboard.press("Control+A")
    warm_page.keyboard.type("3")
    want = kvlab.serving_figure(gpu_memory_utilization=3, block_size=32)
    expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
    expect(root).to_contain_text("vLLM's share of GPU memory: asked 3, used 1")
    expect(root.locator('.kv-field-note[data-for="gpu_memory_utilization"]')).to_have_text("clamped to 1")
    expect(util).to_have_value("3")
    warm_page.keyboard.press("Enter")
    expect(util).to_have_value("1")

    # llama.cpp has neither flag: both are off
    root.locator('select[name="engine"]').select_option("llamacpp")
    expect(util).to_be_disabled()
    expect(block).to_be_disabled()


def test_embed_link_sets_the_vllm_settings(page, site_url):
    # the embed's query string reaches the new controls like any other (not live: nothing is computed yet)
    root = open_widget(page, site_url + "embed/serving/?gpu_memory_utilization=0.5&block_size=128", "serving")
    expect(root).to_have_attribute("data-embed-applied", "true")
    expect(root.locator('input[name="gpu_memory_utilization"]')).to_have_value("0.5")
    expect(root.locator('select[name="block_size"]')).to_have_value("128")


def test_users_vanish_from_the_grid_as_the_context_grows_while_the_price_climbs(warm_page, site_url):
    """The seed's interaction (EP04): drag the context slider and the users grid empties while the
    price per chat climbs; each square and price is CPython's kvlab.serving_figure for that context."""
    root = open_live(warm_page, site_url + "serving/", "serving")
    steps = kvlab.serving_figure()["options"]["context_steps"]
    seen = []
    for step in (2, 8, 14):
        set_range(root, "context_step", step)
        data = kvlab.serving_figure(context=steps[step])
        want, said = data["users"], data["view"]["users"]
        expect(root.locator('[data-field="users-text"]')).to_have_text(said["text"])
        wait_ready(root)
        on = root.locator(".kv-users-grid .kv-user-on").count()
        assert on == sum(c["state"] == "on" for c in want["cells"])
        assert root.locator(".kv-users-grid .kv-user").count() == len(want["cells"])
        assert root.locator('[data-field="users-price"]').inner_text() == said["price_text"]
        seen.append((on, want["price_per_chat_hour"]))
    assert seen[0][0] > seen[1][0] > seen[2][0] > 0, seen  # users vanish
    assert seen[0][1] < seen[1][1] < seen[2][1], seen  # the price per chat climbs
