"""kv-memory and gpu-fit, live in a real Chromium: what the page shows equals CPython's kvlab."""

from __future__ import annotations

import json
from pathlib import Path

from playwright.sync_api import expect

import kvlab
from kvlab.memory.catalogue import get_model
from tests.browser.widgets import activate, open_live, open_widget, select, set_range, wait_ready


def text(root, name: str) -> str:
    return root.locator(f'[data-field="{name}"]').first.inner_text()


def table(root, name: str) -> list[list[str]]:
    return root.locator(f'[data-field="{name}"] tbody tr').evaluate_all(
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))"
    )


def kind_rows(data) -> list[list[str]]:
    return [
        [k["label"], str(k["layers"]), k["holds"], k["per_token"]["human"], k["total"]["human"]]
        for k in data["result"]["kinds"]
    ]


def assert_kv_memory_shows(root, data, pasted: bool = False) -> None:
    r = data["result"]
    if not pasted:
        assert text(root, "model") == r["model"]
    g = r["growth"]  # windowed and hybrid models: the growth per token, with the fixed part beside it
    head = g["growth_per_token"] if g["bounded"] else r["per_token"]
    assert text(root, "per-token") == head["human"]
    assert root.locator('[data-field="per-token"]').get_attribute("title") == head["exact"]
    assert text(root, "per-token-text") == data["view"]["head"]["text"]
    assert text(root, "formula") == (g["growth_formula"] if g["bounded"] else r["formula"])
    flag = root.locator('[data-field="context-flag"]')
    if data["context_flag"]:
        expect(flag).to_have_text(data["context_flag"]["message"])
    else:
        expect(flag).to_be_hidden()
    assert text(root, "total") == r["total"]["human"]
    assert text(root, "total-exact") == r["total"]["exact"]
    assert table(root, "kinds") == kind_rows(data)
    assert root.locator('[data-field="log"]').text_content() == "\n".join(r["log_lines"])
    # the llama-server command for these settings, from Python (a pasted config names its own GGUF file)
    server = data["server"]
    command = root.locator('[data-field="server-command"]')
    if server["command"]:
        expect(command).to_be_visible()
        shown = command.text_content()
        if pasted:
            shown = shown.replace("model-Q4_K_M.gguf", server["command"].split("-m ")[1].split(" ")[0])
        assert shown == server["command"]
    else:
        expect(command).to_be_hidden()
    assert text(root, "server-text") == data["view"]["server_text"]
    assert root.locator('[data-field="server-flags"] li').all_text_contents() == [
        f"{f['flag']}: {f['means']}" for f in server["flags"]
    ]
    plotted = root.locator(".kv-plot").evaluate("el => el.data.map(t => ({name: t.name, x: t.x, y: t.y}))")
    want = [{"name": s["name"], "x": data["curve"]["contexts"], "y": s["gib"]} for s in data["curve"]["series"]]
    if pasted:  # the pasted config is named after itself, not after the catalogue entry
        assert plotted[0]["name"].startswith("your config.json (")
        plotted[0]["name"] = want[0]["name"]
    assert plotted == want


def test_static_figures_hold_the_computed_numbers(built_site):
    html = (built_site / "memory" / "index.html").read_text()
    data = kvlab.kv_memory_figure(model="llama-2-7b", context=4096, kv="f16", mode="llamacpp")
    assert data["result"]["per_token"]["human"] == "512 KiB"  # Llama-2-7B, computed, not typed
    assert 'data-field="per-token" title="524,288 B">512 KiB</span>' in html
    assert data["result"]["total"]["human"] in html and data["result"]["log_lines"][0] in html
    fit = kvlab.gpu_fit_figure(model="qwen3.6-27b", gpu="rtx-4090", weights="Q4_K_M", kv="q8_0", context=131072)
    assert f'data-fits="{str(fit["fits"]).lower()}">{fit["verdict"]}</span>' in html
    assert fit["max_context_text"] in html and fit["headline"] in html and fit["total"]["human"] in html
    # the catalogue's own note for the unconfirmed Qwen3.6-27B entry is on the page
    assert "Not confirmed: " + fit["model_info"]["note"].split(";")[0] in html


def test_kv_memory_controls_recompute_in_pyodide(warm_page, site_url):
    root = open_live(warm_page, site_url + "memory/", "kv-memory")
    assert_kv_memory_shows(root, kvlab.kv_memory_figure())

    root.locator('select[name="model"]').select_option("gemma-2-9b")
    root.locator('select[name="kv"]').select_option("q8_0")
    set_range(root, "context", 40960)
    set_range(root, "n_seq", 2)
    want = kvlab.kv_memory_figure(model="gemma-2-9b", context=40960, kv="q8_0", mode="llamacpp", n_seq=2)
    expect(root.locator('[data-field="total"]')).to_have_text(want["result"]["total"]["human"])
    wait_ready(root)
    assert_kv_memory_shows(root, want)
    assert len(want["result"]["log_lines"]) == 2  # non-SWA and SWA caches, as llama.cpp logs them

    # vLLM does not take q8_0: the option is disabled and the widget falls back to f16
    root.locator('select[name="mode"]').select_option("vllm")
    assert root.locator('select[name="kv"] option[value="q8_0"]').evaluate("o => o.disabled")
    assert root.locator('select[name="kv"]').input_value() == "f16"
    want = kvlab.kv_memory_figure(model="gemma-2-9b", context=40960, kv="f16", mode="vllm", n_seq=2)
    expect(root.locator('[data-field="total"]')).to_have_text(want["result"]["total"]["human"])
    wait_ready(root)
    assert_kv_memory_shows(root, want)

    # the log-scale slider sets the context to one of Python's steps
    set_range(root, "context_step", 0)
    want = kvlab.kv_memory_figure(model="gemma-2-9b", context=1024, kv="f16", mode="vllm", n_seq=2)
    expect(root.locator('[data-field="context"]')).to_have_text("1,024 tokens")
    wait_ready(root)
    assert root.locator('input[name="context"]').input_value() == "1024"
    assert_kv_memory_shows(root, want)


def test_kv_memory_llama_server_command_follows_the_controls_and_copies(warm_page, site_url):
    warm_page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    root = open_live(warm_page, site_url + "memory/", "kv-memory")
    command = root.locator('[data-field="server-command"]')
    expect(command).to_have_text(kvlab.kv_memory_figure()["server"]["command"])
    root.locator('select[name="model"]').select_option("llama-3.1-8b")
    root.locator('select[name="kv"]').select_option("q4_0")
    set_range(root, "context", 16384)
    set_range(root, "n_seq", 4)
    want = kvlab.kv_memory_figure(model="llama-3.1-8b", context=16384, kv="q4_0", mode="llamacpp", n_seq=4)
    expect(command).to_have_text(want["server"]["command"])
    assert "--ctx-size 65536" in want["server"]["command"] and "--parallel 4" in want["server"]["command"]
    wait_ready(root)
    assert_kv_memory_shows(root, want)
    # mkdocs-material's copy button on the code block copies what is shown now, not the build-time text
    # (each <pre> in the widget has its own id: material names its copy target after the closest id)
    # (material adds it when the block comes into view: mkdocs.yml, content.lazy)
    command.scroll_into_view_if_needed()
    copy = root.locator('[data-field="server"] .md-code__button')
    expect(copy).to_have_count(1)
    command.hover()
    copy.click()
    assert warm_page.evaluate("navigator.clipboard.readText()") == want["server"]["command"]
    # vLLM's fp8 has no llama-server command: the block says so instead
    root.locator('select[name="mode"]').select_option("vllm")
    root.locator('select[name="kv"]').select_option("fp8")
    expect(command).to_be_hidden()
    expect(root.locator('[data-field="server-text"]')).to_contain_text("no fp8 cache type")


def test_pasted_config_json_is_read_by_python(warm_page, site_url):
    root = open_live(warm_page, site_url + "memory/", "kv-memory")
    root.locator(".kv-config summary").click()
    area = root.locator('textarea[name="config"]')
    use = root.locator(".kv-config-use")
    error = root.locator(".kv-error")

    # a real config (the catalogue's Qwen3.6-27B, as its config.json would read) gives the catalogue numbers
    area.fill(json.dumps(get_model("qwen3.6-27b")["config"], indent=2))
    use.click()
    want = kvlab.kv_memory_figure(model="qwen3.6-27b")
    expect(root.locator('[data-field="total"]')).to_have_text(want["result"]["total"]["human"])
    wait_ready(root)
    assert_kv_memory_shows(root, want, pasted=True)
    expect(root.locator('[data-field="model"]')).to_have_text("your config.json (qwen3_5_text)")
    expect(error).to_be_hidden()
    before = table(root, "kinds"), root.locator(".kv-plot").evaluate("el => el.data.map(t => t.y)")
    # a link carries the controls, not the pasted config: the Link panel says so
    root.get_by_role("button", name="Link", exact=True).click()
    note = root.locator(".kv-link-panel .kv-share-note")
    expect(note).to_have_text(
        "Not in this link: the pasted config.json (it opens on the model chosen in the Model menu)."
    )
    root.get_by_role("button", name="Link", exact=True).click()  # closed again

    # broken JSON: a readable message from Python, and the catalogue model's figure again
    catalogue = kvlab.kv_memory_figure()
    area.fill('{"model_type": "llama", "num_hidden_layers": 32,,}')
    use.click()
    expect(error).to_be_visible()
    expect(error).to_contain_text("not valid JSON")
    wait_ready(root)
    assert_kv_memory_shows(root, catalogue)
    assert before[0] != table(root, "kinds")

    # a config without num_hidden_layers, or with absurd numbers: the message names the field
    cfg = dict(get_model("llama-3.1-8b")["config"])
    del cfg["num_hidden_layers"]
    area.fill(json.dumps(cfg))
    use.click()
    expect(error).to_contain_text("'num_hidden_layers' is missing")
    area.fill(json.dumps(dict(cfg, num_hidden_layers=1e30)))
    use.click()
    expect(error).to_contain_text("'num_hidden_layers' = 1e+30 is beyond any real model")
    wait_ready(root)
    assert text(root, "total") == catalogue["result"]["total"]["human"]

    # back to the catalogue model: a link holds everything shown again
    root.locator(".kv-config-clear").click()
    expect(error).to_be_hidden()
    wait_ready(root)
    assert_kv_memory_shows(root, kvlab.kv_memory_figure())
    root.get_by_role("button", name="Link", exact=True).click()
    expect(note).to_be_hidden()


def test_gpu_fit_shows_the_sum_and_the_verdict(warm_page, site_url):
    root = open_widget(warm_page, site_url + "memory/", "gpu-fit")
    root.scroll_into_view_if_needed()
    activate(root)
    wait_ready(root)

    root.locator('select[name="gpu"]').select_option("rtx-3090")
    root.locator('select[name="weights"]').select_option("BF16")
    root.locator('select[name="kv"]').select_option("f16")
    set_range(root, "context", 32768)
    want = kvlab.gpu_fit_figure(model="qwen3.6-27b", gpu="rtx-3090", weights="BF16", kv="f16", context=32768)
    assert want["verdict"] == "does not fit" and want["binding"] == "weights"
    expect(root.locator('[data-field="headline"]')).to_have_text(want["headline"])
    wait_ready(root)
    assert text(root, "verdict") == want["verdict"]
    assert root.locator('[data-field="verdict"]').get_attribute("data-fits") == "false"
    assert text(root, "max-context") == want["max_context_text"]
    assert text(root, "max-sequences") == want["max_sequences_text"]
    assert table(root, "segments")[:-1] == [[s["label"], s["human"], s["exact"], s["how"]] for s in want["segments"]]
    widths = root.locator('[data-field="bar"] .kv-seg').evaluate_all("els => els.map(e => e.style.width)")
    assert widths == [f"{s['percent']:g}%" for s in want["segments"]]
    assert table(root, "gpus") == [
        [g["name"], g["memory"]["human"], g["verdict"], g["headroom"]["human"], g["max_context"], g["max_sequences"]]
        for g in want["gpus"]
    ]
    assert root.locator('[data-field="log"]').text_content() == "\n".join(want["log_lines"])
    expect(root.locator('[data-field="model-note"]')).to_contain_text("Not confirmed")

    # vLLM: q-types are llama.cpp's; the widget moves to fp8 and reports vLLM's budget
    root.locator('select[name="mode"]').select_option("vllm")
    want = kvlab.gpu_fit_figure(
        model="qwen3.6-27b", gpu="rtx-3090", weights="BF16", kv="f16", context=32768, mode="vllm"
    )
    expect(root.locator('[data-field="headline"]')).to_have_text(want["headline"])
    wait_ready(root)
    assert [s[0] for s in table(root, "segments")] == [s["label"] for s in want["segments"]] + ["total"]
    expect(root.locator('[data-field="log-box"]')).to_be_hidden()


def test_gpu_fit_vllm_utilization_and_block_size(warm_page, site_url):
    root = open_widget(warm_page, site_url + "memory/", "gpu-fit")
    root.scroll_into_view_if_needed()
    activate(root)
    wait_ready(root)
    util = root.locator('input[name="gpu_memory_utilization"]')
    block = root.locator('select[name="block_size"]')
    # the limits and choices are Python's; llama.cpp has neither flag, so both are off
    limits = kvlab.gpu_fit_figure()["options"]["limits"]["gpu_memory_utilization"]
    assert util.get_attribute("min") == str(limits["min"]) and util.get_attribute("max") == str(limits["max"])
    assert block.locator("option").all_text_contents() == ["1", "8", "16", "32", "64", "128"]
    expect(util).to_be_disabled()
    expect(block).to_be_disabled()

    select(root, model="llama-3.1-8b", gpu="h100-sxm", weights="BF16", mode="vllm")
    expect(util).to_be_enabled()
    select(root, kv="f16")
    set_range(root, "gpu_memory_utilization", 0.5)
    block.select_option("128")
    set_range(root, "context", 30000)
    set_range(root, "n_seq", 4)
    args = {
        "model": "llama-3.1-8b",
        "gpu": "h100-sxm",
        "weights": "BF16",
        "kv": "f16",
        "context": 30000,
        "mode": "vllm",
        "n_seq": 4,
    }
    want = kvlab.gpu_fit_figure(**args, gpu_memory_utilization=0.5, block_size=128)
    expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
    wait_ready(root)
    assert "--gpu-memory-utilization 0.5 --block-size 128" in want["flags"]
    expect(root.locator('[data-field="headline"]')).to_have_text(want["headline"])
    assert text(root, "max-context") == want["max_context_text"]
    assert table(root, "segments")[:-1] == [[s["label"], s["human"], s["exact"], s["how"]] for s in want["segments"]]

    # out of range: Python clamps it, the field shows what was used and the widget says so
    set_range(root, "gpu_memory_utilization", 3)
    want = kvlab.gpu_fit_figure(**args, gpu_memory_utilization=3, block_size=128)
    expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
    expect(util).to_have_value("1")
    expect(root).to_contain_text("vLLM's share of GPU memory: asked 3, used 1")


def test_gpu_fit_vllm_version_moves_the_default_share_but_never_the_readers(warm_page, site_url):
    root = open_live(warm_page, site_url + "memory/", "gpu-fit")
    version = root.locator('select[name="engine_version"]')
    util = root.locator('input[name="gpu_memory_utilization"]')
    # llama.cpp first (the page's default): the picker is off, on vLLM 0.20 and later's default share
    expect(version).to_be_disabled()
    expect(version).to_have_value("0.20+")
    expect(util).to_have_value("0.92")
    assert version.locator("option").all_text_contents() == [
        v["label"] for v in kvlab.gpu_fit_figure()["options"]["vllm_versions"]
    ]

    args = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "weights": "BF16", "kv": "f16", "context": 32768}
    select(root, model="llama-3.1-8b", gpu="h100-sxm", weights="BF16")
    set_range(root, "context", 32768)
    select(root, mode="vllm", kv="f16")
    expect(version).to_be_enabled()

    def shows(want):
        expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
        wait_ready(root)
        expect(root.locator('[data-field="engine-text"]')).to_have_text(want["view"]["engine_text"])
        assert table(root, "segments")[:-1] == [
            [s["label"], s["human"], s["exact"], s["how"]] for s in want["segments"]
        ]
        assert root.locator('[data-field="bar"]').get_attribute("aria-label") == want["view"]["bar_label"]

    new = kvlab.gpu_fit_figure(**args, mode="vllm")
    assert "CUDA graphs (estimate)" in [s["label"] for s in new["segments"]]
    shows(new)
    # the older range: its own default share (the field follows, the reader never typed in it), no CUDA-graph term
    version.select_option("v1")
    old = kvlab.gpu_fit_figure(**args, mode="vllm", engine_version="v1")
    assert old["params"]["gpu_memory_utilization"] == 0.9 and old["budget"] != new["budget"]
    shows(old)
    expect(util).to_have_value("0.9")
    version.select_option("0.20+")
    shows(new)
    expect(util).to_have_value("0.92")
    # a share the reader typed is theirs: a version picked later keeps it
    util.fill("0.85")
    util.press("Enter")
    expect(root.locator('[data-field="flags"]')).to_contain_text("--gpu-memory-utilization 0.85")
    version.select_option("v1")
    shows(kvlab.gpu_fit_figure(**args, mode="vllm", engine_version="v1", gpu_memory_utilization=0.85))
    expect(util).to_have_value("0.85")


def test_gpu_fit_link_with_a_version_takes_its_default_share_unless_it_names_one(page, site_url):
    embed = site_url + "embed/gpu-fit/?mode=vllm&kv=f16&weights=BF16&model=llama-3.1-8b&gpu=h100-sxm&engine_version=v1"
    root = open_widget(page, embed, "gpu-fit")
    expect(root.locator('select[name="engine_version"]')).to_have_value("v1")
    expect(root.locator('input[name="gpu_memory_utilization"]')).to_have_value("0.9")
    root = open_widget(page, embed + "&gpu_memory_utilization=0.92", "gpu-fit")
    expect(root.locator('input[name="gpu_memory_utilization"]')).to_have_value("0.92")
    activate(root)
    want = kvlab.gpu_fit_figure(
        model="llama-3.1-8b",
        gpu="h100-sxm",
        weights="BF16",
        kv="f16",
        mode="vllm",
        engine_version="v1",
        gpu_memory_utilization=0.92,
    )
    wait_ready(root)
    expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
    expect(root.locator('[data-field="engine-text"]')).to_have_text(want["view"]["engine_text"])
    expect(root.locator('input[name="gpu_memory_utilization"]')).to_have_value("0.92")


def test_gpu_fit_never_contradicts_itself_on_llama_2_7b_at_128k(warm_page, site_url):
    root = open_widget(warm_page, site_url + "memory/", "gpu-fit")
    root.scroll_into_view_if_needed()
    activate(root)
    wait_ready(root)
    root.locator('select[name="model"]').select_option("llama-2-7b")
    root.locator('select[name="gpu"]').select_option("h100-sxm")
    root.locator('select[name="weights"]').select_option("BF16")
    root.locator('select[name="kv"]').select_option("f16")
    want = kvlab.gpu_fit_figure(model="llama-2-7b", gpu="h100-sxm", weights="BF16", kv="f16", context=131072)
    expect(root.locator('[data-field="headline"]')).to_have_text(want["headline"])
    wait_ready(root)
    assert text(root, "verdict") == "beyond the trained context"
    assert text(root, "max-context").startswith("4,096 tokens")
    expect(root.locator('[data-field="context-flag"]')).to_contain_text("llama.cpp warns")


def test_pasted_falcon_h1_and_mamba_configs_draw_their_state(warm_page, site_url):
    """A Falcon-H1 layer holds KV and a Mamba-2 state (one colour of its own in the layer map); a Mamba holds
    only a state: 0 B per token, said in words."""
    ssm = json.loads((Path(__file__).resolve().parents[1] / "python/data/state_space_configs.json").read_text())
    root = open_live(warm_page, site_url + "memory/", "kv-memory")
    root.locator(".kv-config summary").click()
    area = root.locator('textarea[name="config"]')
    for entry, kind in (("falcon-h1-1.5b", "hybrid"), ("mamba-130m", "linear")):
        cfg = json.dumps(ssm["configs"][entry]["config"])
        area.fill(cfg)
        root.locator(".kv-config-use").click()
        want = kvlab.kv_memory_figure(config=cfg)
        expect(root.locator('[data-field="total"]')).to_have_text(want["result"]["total"]["human"])
        wait_ready(root)
        expect(root.locator(".kv-error")).to_be_hidden()
        expect(root.locator('[data-field="per-token-text"]')).to_have_text(want["view"]["head"]["text"])
        legend = root.locator(f'[data-field="layer-legend"] .kv-layer-{kind}')
        expect(legend).to_have_count(1)
        assert legend.evaluate("el => getComputedStyle(el).backgroundColor") not in ("", "rgba(0, 0, 0, 0)")
        colors = root.locator(".kv-layer-plot").evaluate("el => el.data[0].marker.color")
        assert colors and all(colors), colors  # every bar has a colour: no kind is missing from LAYER_COLORS
    expect(root.locator('[data-field="per-token"]')).to_have_text("0 B")
    expect(root.locator('[data-field="per-token-text"]')).to_contain_text("nothing grows with the context")


def test_gpu_fit_pipeline_stages_list_each_stage(warm_page, site_url):
    root = open_widget(warm_page, site_url + "memory/", "gpu-fit")
    root.scroll_into_view_if_needed()
    activate(root)
    wait_ready(root)
    stages = root.locator('select[name="pipeline_parallel"]')
    expect(stages).to_be_disabled()  # llama.cpp has no pipeline stages: it splits layers over n_gpus
    expect(root.locator('[data-field="stages"]')).to_be_hidden()
    root.locator('select[name="model"]').select_option("llama-3.1-70b")
    root.locator('select[name="gpu"]').select_option("h100-sxm")
    root.locator('select[name="weights"]').select_option("FP8")
    root.locator('select[name="mode"]').select_option("vllm")
    root.locator('select[name="kv"]').select_option("fp8")
    set_range(root, "context", 131072)
    expect(stages).to_be_enabled()
    stages.select_option("2")
    want = kvlab.gpu_fit_figure(
        model="llama-3.1-70b", gpu="h100-sxm", weights="FP8", kv="fp8", context=131072, mode="vllm", pipeline_parallel=2
    )
    expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
    wait_ready(root)
    assert "--pipeline-parallel-size 2" in want["flags"] and len(want["stages"]) == 2
    expect(root.locator('[data-field="stages"] li')).to_have_text(want["stages"])
    expect(root.locator('[data-field="headline"]')).to_have_text(want["headline"])
    expect(root.locator('[data-field="gpu"]')).to_have_text(want["view"]["where"])


def test_ram_calculator_follows_ctx_size_and_agrees_with_cpython(warm_page, site_url):
    """The RAM calculator at the top of memory/ (the brief's "RAM Calculator — Qwen3.6-27B"): the
    --ctx-size slider and a typed context recompute the need and the verdicts, as CPython's."""
    root = open_live(warm_page, site_url + "memory/", "ram-calc")
    steps = kvlab.ram_calc_figure()["options"]["ctx_steps"]
    set_range(root, "ctx_step", 8)
    want = kvlab.ram_calc_figure(ctx_size=steps[8])
    view = want["view"]
    expect(root.locator('[data-field="headline"]')).to_have_text(view["headline"])
    wait_ready(root)
    assert root.locator('input[name="ctx_size"]').input_value() == str(steps[8])
    assert table(root, "ram") == [[r["memory"], r["verdict"], r["margin"]] for r in view["ram"]]
    assert table(root, "gpus") == [[g["where"], g["verdict"], g["margin"], g["max_context"]] for g in view["gpus"]]
    assert root.locator('[data-field="command"]').text_content() == want["command"]
    # a smaller model, a q8_0 cache and a typed context: the smallest machine that fits moves down
    root.locator('select[name="model"]').select_option("qwen3-8b")
    root.locator('select[name="kv"]').select_option("q8_0")
    box = root.locator('input[name="ctx_size"]')
    box.fill("20000")
    want = kvlab.ram_calc_figure(model="qwen3-8b", kv="q8_0", ctx_size=20000)
    expect(root.locator('[data-field="smallest"]')).to_have_text(want["view"]["smallest"])
    wait_ready(root)
    assert table(root, "ram")[0][1] == want["view"]["ram"][0]["verdict"]
    assert box.input_value() == "20000"
