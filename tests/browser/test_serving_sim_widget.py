"""The scheduler, played (serving/): the static raster and sentences are kvlab.serving_sim_figure's at the
page's settings; live, dragging the prompt length past what the KV pool holds brings queueing and
preemptions, drawn and said exactly as CPython's kvlab computes them."""

from __future__ import annotations

import html as html_lib

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import open_live, set_range

PAGE = "serving/"
DEFAULTS = {
    "model": "llama-3.1-8b",
    "gpu": "h100-sxm",
    "users": 32,
    "input_len": 8192,
    "output_len": 256,
    "num_prompts": 96,
}

RECTS_JS = """svg => { const n = {}; for (const r of svg.querySelectorAll('rect')) n[r.getAttribute('class')] =
  (n[r.getAttribute('class')] || 0) + 1; return n; }"""


def classes_in(grid: list[list[int]]) -> set[str]:
    return {f"kv-sim{v}" for row in grid for v in row if v}


def test_static_figure_is_kvlab_at_the_page_settings(built_site):
    page = (built_site / "serving" / "index.html").read_text()
    data = kvlab.serving_sim_figure(**DEFAULTS)
    for key in ("headline", "pool", "compare", "price_text"):
        assert html_lib.escape(data["view"][key], quote=False) in page, key
    assert data["grid"] and len(data["grid"]) == len(data["rows"]) <= 48
    # at the page's settings every chat fits: nothing preempted, nobody waits for the pool
    assert "kv-sim4" not in classes_in(data["grid"]) and "All 32 chats fit" in data["view"]["pool"]


def test_a_longer_prompt_queues_and_preempts_as_kvlab_says(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "serving-sim")
    set_range(root, "input_len", 20480)
    data = kvlab.serving_sim_figure(**{**DEFAULTS, "input_len": 20480})
    want = data["view"]
    expect(root.locator('[data-field="headline"]')).to_have_text(want["headline"], timeout=60_000)
    expect(root.locator('[data-field="pool"]')).to_have_text(want["pool"])
    assert "preemption" in want["pool"], "20,480-token prompts: 32 chats no longer fit the pool"
    stats = root.locator('[data-field="stats"] tbody tr')
    expect(stats).to_have_count(len(want["stats"]))
    for i, row in enumerate(want["stats"]):
        expect(stats.nth(i).locator("td")).to_have_text(row["value"])
    drawn = root.locator(".kv-sim-raster").evaluate(RECTS_JS)
    assert set(drawn) == classes_in(data["grid"]) and "kv-sim4" in drawn
    assert root.locator(".kv-sim-kv-line").get_attribute("points") == data["kv_points"]
    # no tooltips on 48 rows x 120 bins (past views.RASTER_TITLES_MAX); with 8 chats, each run's, as the view wrote it
    assert not data["view"]["raster"]["titles"] and root.locator(".kv-sim-raster title").count() == 0
    set_range(root, "num_prompts", 8)
    few = kvlab.serving_sim_figure(**{**DEFAULTS, "input_len": 20480, "num_prompts": 8})["view"]
    expect(root.locator('[data-field="headline"]')).to_have_text(few["headline"], timeout=60_000)
    titles = few["raster"]["titles"]
    assert titles and titles[0].startswith("chat 1: ")
    expect(root.locator(".kv-sim-raster > rect > title")).to_have_text(titles)


def test_picking_sglang_plays_its_scheduler_as_kvlab_says(warm_page, site_url):
    """The Engine control: SGLang's admission (it reserves each chat's answer) and its prefill-alone steps, said and
    drawn as CPython's kvlab.serving_sim_figure(engine="sglang") computes them."""
    root = open_live(warm_page, site_url + PAGE, "serving-sim")
    set_range(root, "input_len", 16384)
    root.locator('select[name="engine"]').select_option("sglang")
    data = kvlab.serving_sim_figure(**{**DEFAULTS, "input_len": 16384, "engine": "sglang"})
    want = data["view"]
    expect(root.locator('[data-field="headline"]')).to_have_text(want["headline"], timeout=60_000)
    expect(root.locator('[data-field="pool"]')).to_have_text(want["pool"])
    expect(root.locator('[data-field="engine-note"]')).to_have_text(want["engine_note"])
    assert "SGLang" in want["engine_note"]
    expect(root.locator('[data-field="command"]')).to_have_text(data["command"])
    assert data["command"].startswith("python -m sglang.launch_server")
    vllm = kvlab.serving_sim_figure(**{**DEFAULTS, "input_len": 16384})
    assert want["headline"] != vllm["view"]["headline"], "the two schedulers give the same run"


def test_a_model_too_big_for_one_gpu_plays_on_eight_as_kvlab_says(warm_page, site_url):
    """The GPUs control (--tensor-parallel-size): Qwen3-235B-A22B in FP8 does not start on one H100, and the reader is
    told why; on 8 it plays, with the launch command and figures CPython's kvlab gives."""
    root = open_live(warm_page, site_url + PAGE, "serving-sim")
    big = {**DEFAULTS, "model": "qwen3-235b-a22b-2507", "weights": "FP8"}
    root.locator('select[name="weights"]').select_option("FP8")
    root.locator('select[name="model"]').select_option("qwen3-235b-a22b-2507")
    one = kvlab.serving_sim_figure(**big)
    assert one["refused"] and "on one NVIDIA H100" in one["view"]["headline"] and "more GPUs" in one["view"]["pool"]
    expect(root.locator('[data-field="headline"]')).to_have_text(one["view"]["headline"], timeout=60_000)
    root.locator('select[name="n_gpus"]').select_option("8")
    eight = kvlab.serving_sim_figure(**big, n_gpus=8)
    assert eight["refused"] is None and "--tensor-parallel-size 8" in eight["command"]
    expect(root.locator('[data-field="headline"]')).to_have_text(eight["view"]["headline"], timeout=60_000)
    expect(root.locator('[data-field="command"]')).to_have_text(eight["command"])
    expect(root.locator('[data-field="price"]')).to_have_text(eight["view"]["price_text"])
    # which way kvlab leaned on published runs of this kind (an MoE on several H100s), as CPython reads it
    assert "an MoE on several NVIDIA H100" in eight["view"]["kind_accuracy"]
    expect(root.locator('[data-field="kind-accuracy"]')).to_have_text(eight["view"]["kind_accuracy"])
