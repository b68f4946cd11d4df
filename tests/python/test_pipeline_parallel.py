"""Pipeline parallel in vLLM: how the layers split over stages, what each stage holds, and two
real refusals read and predicted (tests/python/data/engine_logs/calibration.json has their URLs)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kvlab import gpu_fit_figure
from kvlab.cli import main
from kvlab.memory.architecture import no_cache_layer
from kvlab.memory.catalogue import model_architecture
from kvlab.memory.engine_logs import explain_engine_log
from kvlab.memory.kv_bytes import vllm_kv_cache, vllm_kv_layout, vllm_pipeline_stages
from kvlab.memory.serving import serving_estimate
from kvlab.memory.deployment import deployment
from kvlab.memory.verdict import verdict

LOGS = Path(__file__).resolve().parent / "data" / "engine_logs"
CALIBRATION = {e["file"]: e for e in json.loads((LOGS / "calibration.json").read_text(encoding="utf-8"))["logs"]}
GLM = "calibration/vllm_pp_glm47_fp8_a100_error.txt"
QWEN_CODER = "calibration/vllm_qwen3_coder_30b_a3b_fp8_rtx5070ti_rtx5090_pp2_error.txt"
# GLM-4.7's config.json (https://huggingface.co/zai-org/GLM-4.7/blob/main/config.json): the shape the log's
# 71.16 GiB implies (92 layers x 8 KV heads x 128), its width, heads and vocabulary
GLM_CONFIG = {
    "model_type": "glm4_moe",
    "architectures": ["Glm4MoeForCausalLM"],
    "num_hidden_layers": 92,
    "num_attention_heads": 96,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "hidden_size": 5120,
    "intermediate_size": 12288,
    "vocab_size": 151552,
    "max_position_embeddings": 202752,
}


def sizes(stages):
    return [b - a for a, b in stages]


@pytest.mark.parametrize(
    ("n", "pp", "expected"),
    [
        (20, 4, [5, 5, 5, 5]),
        (22, 4, [5, 6, 6, 5]),
        (5, 3, [2, 2, 1]),
        (4, 3, [1, 2, 1]),
        (3, 2, [2, 1]),
        (61, 2, [31, 30]),
    ],
)
def test_stages_split_the_layers_as_vllm_get_pp_indices(n, pp, expected):
    stages = vllm_pipeline_stages(n, pp)
    assert sizes(stages) == expected
    assert stages[0][0] == 0 and stages[-1][1] == n and all(a[1] == b[0] for a, b in zip(stages, stages[1:]))


def test_the_calibration_logs_layer_split_is_reproduced():
    for entry in CALIBRATION.values():
        split = (entry.get("pp_arithmetic") or {}).get("layers_per_rank")
        layers = (entry.get("config") or {}).get("num_hidden_layers")
        if split and layers and not entry["args"].get("VLLM_PP_LAYER_PARTITION"):
            assert sizes(vllm_pipeline_stages(layers, entry["args"]["pp"])) == split, entry["file"]


def test_a_partition_must_cover_every_layer_once():
    assert sizes(vllm_pipeline_stages(48, 2, (16, 32))) == [16, 32]
    for bad in ((16, 16), (48,), (0, 48)):
        with pytest.raises(ValueError, match="VLLM_PP_LAYER_PARTITION"):
            vllm_pipeline_stages(48, 2, bad)
    with pytest.raises(ValueError, match="pipeline_parallel"):
        vllm_pipeline_stages(4, 5)


def test_each_stage_holds_its_layers_kv_and_weights():
    one = verdict(deployment("llama-3.1-8b", weights="BF16", kv="bf16", gpu="rtx-4090", engine="vllm"), 65536)
    two = verdict(deployment("llama-3.1-8b", weights="BF16", kv="bf16", gpu="rtx-4090", engine="vllm", pp=2), 65536)
    per_request = vllm_kv_cache(model_architecture("llama-3.1-8b"), 65536)["bytes_per_sequence"]
    assert [s["layers"] for s in two["stages"]] == [[0, 16], [16, 32]]
    assert [s["kv_cache_bytes"] for s in two["stages"]] == [per_request // 2] * 2
    weights = {c["name"]: c["bytes"] for c in one["components"]}["weights"]
    table = 128256 * 4096 * 2  # the embedding on the first stage, the LM head on the last
    assert sum(s["weights_bytes"] for s in two["stages"]) == pytest.approx(weights, abs=2)
    assert two["stages"][0]["weights_bytes"] == pytest.approx(weights / 2, abs=table)
    # only the last stage runs the sampler's dummy pass
    assert two["stages"][0]["reserve_bytes"] < two["stages"][1]["reserve_bytes"]
    # 16 GB of BF16 weights and a 64k cache do not fit one 24 GB card; two stages do
    assert not one["fits"] and two["fits"]
    assert two["total_bytes"] == max(s["total_bytes"] for s in two["stages"])
    assert "--pipeline-parallel-size 2" in two["flags"] and "2 pipeline stages" in two["where"]
    assert two["max_sequences"] > 1 and two["kv_share_per_gpu"] == 0.5


def test_a_hybrid_is_grouped_over_the_whole_model_and_each_stage_pays_for_every_group():
    """vLLM groups a hybrid's layers over the whole model, a type's layers dealt out to its groups in turn, and
    projects the groups onto each stage (kv_cache_utils.py: _get_kv_cache_groups_uniform_page_size,
    _project_kv_cache_groups_to_worker). Gemma-3-27B: 62 layers, every 6th full attention (10), 52 sliding."""
    arch = model_architecture("gemma-3-27b-it")
    full = [i for i, layer in enumerate(arch.layers) if layer.kind == "full"]
    sliding = [i for i, layer in enumerate(arch.layers) if layer.kind == "sliding"]
    assert (len(full), len(sliding)) == (10, 52)
    whole = vllm_kv_cache(arch, 32768)["layout"]
    assert (whole["n_groups"], whole["group_size"]) == (7, 10)  # 1 full group, cdiv(52, 10) = 6 sliding ones
    sliding_groups = [sliding[j::6] for j in range(6)]
    staged = vllm_kv_cache(arch, 32768, pp=8)
    assert sizes(st["layers"] for st in staged["stages"]) == sizes(vllm_pipeline_stages(62, 8))
    for st in staged["stages"]:
        a, b = st["layers"]
        layout = st["layout"]
        on_stage = [sum(a <= i < b for i in group) for group in [full, *sliding_groups]]
        width = max(on_stage)
        # every request takes blocks in all 7 groups, from one pool shared by every stage
        assert layout["n_layers"] == b - a
        assert layout["n_groups"] == 7 and layout["blocks_per_request"] == whole["blocks_per_request"]
        # a block holds as many pages as the stage's fullest group has layers; the rest is padding
        assert layout["group_size"] == width and layout["padding_layers"] == 7 * width - (b - a)
        assert layout["bytes_per_request"] == whole["blocks_per_request"] * whole["page_bytes"] * width
    # the second stage (layers 7-14): 1 full layer and 7 sliding ones, two in one sliding group. Grouping the
    # stage's own layers would give 8 groups of 1 layer and about half the bytes: too optimistic
    second = staged["stages"][1]["layout"]
    assert staged["stages"][1]["layers"] == (7, 15) and second["group_size"] == 2
    own = vllm_kv_layout(replace(arch, layers=arch.layers[7:15]), 32768, "bf16")
    assert second["bytes_per_request"] > 1.8 * own["bytes_per_request"]


def test_one_kind_of_layer_splits_its_cache_by_the_stages_layers():
    arch = model_architecture("qwen3-32b")
    whole = vllm_kv_cache(arch, 32768)
    for st in vllm_kv_cache(arch, 32768, pp=3)["stages"]:
        a, b = st["layers"]
        assert st["layout"]["n_groups"] == 1 and st["layout"]["padding_layers"] == 0
        assert st["layout"]["bytes_per_request"] * arch.n_layers == whole["bytes_per_sequence"] * (b - a)


def test_a_stage_without_a_cache_of_its_own_is_refused_by_name():
    # gemma-3n's last layers reuse earlier layers' K/V (num_kv_shared_layers): a stage of only those has no cache
    arch = model_architecture("llama-3.1-8b")
    arch = replace(arch, layers=arch.layers[:24] + tuple(no_cache_layer() for _ in range(8)))
    assert vllm_kv_cache(arch, 4096, pp=2)["stages"][1]["layout"]["group_size"] == 8
    with pytest.raises(ValueError, match="pipeline stage of layers 24-31 keeps no KV cache of its own"):
        verdict(deployment(arch, gpu="rtx-4090", engine="vllm", pp=4), 4096)


def test_bad_pipeline_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="pipeline_parallel: llama.cpp already splits"):
        verdict(deployment("llama-3.1-8b", gpu="rtx-4090", pp=2), 4096)
    with pytest.raises(ValueError, match="pipeline_parallel"):
        verdict(deployment("qwen3-0.6b", gpu="rtx-4090", engine="vllm", kv="bf16", pp=0), 4096)
    with pytest.raises(ValueError, match="pipeline_parallel"):
        verdict(deployment("qwen3-0.6b", gpu="rtx-4090", engine="vllm", kv="bf16", pp=2.5), 4096)


def test_glm47_on_eight_a100s_refusal_is_read_and_predicted():
    entry = CALIBRATION[GLM]
    logged = entry["logged"]
    r = explain_engine_log((LOGS / GLM).read_text(encoding="utf-8"), GLM_CONFIG)
    needed = next(c for c in r["checks"] if c["figure"] == "KV memory one max-length request needs")
    assert needed["status"] == "exact" and needed["rebuilt"] == f"{logged['kv_needed_gib']:.2f} GiB"
    longest = next(n for n in r["notes"] if "longest context" in n)
    tokens = int(longest.split("about ")[1].split(" tokens")[0].replace(",", ""))
    assert abs(tokens - logged["estimated_max_model_len"]) <= 0.02 * logged["estimated_max_model_len"]
    assert any("pipeline parallel 8" in n for n in r["notes"])
    # from the model and card alone: later vLLM starts it, 0.15 refused it, and kvlab says both
    v = verdict(
        deployment(
            GLM_CONFIG,
            weights="FP8",
            kv="bf16",
            gpu="a100-80gb",
            engine="vllm",
            gpu_memory_utilization=entry["args"]["gpu_memory_utilization"],
            max_num_seqs=entry["args"]["max_num_seqs"],
            pp=entry["args"]["pp"],
            params=355e9,
        ),
        entry["args"]["max_model_len"],
    )
    assert v["fits"] and v["confidence"] == "low"
    warning = next(w for w in v["warnings"] if "vLLM up to 0.15 refuses" in w)
    free = min(v["budget_bytes"] - s["weights_bytes"] - s["reserve_bytes"] for s in v["stages"]) / 2**30
    # within the reserve estimate's band (1.1 GiB): +0.34 GiB, once the stages keep no custom all-reduce reserve and
    # the A100's memory is the 79.15 GiB a vLLM log on an A100-SXM4-80GB prints
    # (bench/results/2026-12-06-engines-session17.md; -1.95 GiB with the tensor-parallel group's 1.79 GiB)
    assert abs(free - logged["available_kv_gib"]) <= 1.1
    assert f"({logged['kv_needed_gib']:.2f} GiB)" in warning


def test_a_partition_in_the_log_is_used():
    r = explain_engine_log((LOGS / QWEN_CODER).read_text(encoding="utf-8"), "qwen3-30b-a3b")
    logged = CALIBRATION[QWEN_CODER]["logged"]
    assert any("layers 0-15, 16-47 (VLLM_PP_LAYER_PARTITION in the log)" in n for n in r["notes"])
    assert r["checks"][0]["status"] == "exact" and r["checks"][0]["rebuilt"] == "24.00 GiB"
    longest = next(n for n in r["notes"] if "longest context" in n)
    tokens = int(longest.split("about ")[1].split(" tokens")[0].replace(",", ""))
    assert abs(tokens - logged["estimated_max_model_len"]) <= 0.02 * logged["estimated_max_model_len"]


def test_cli_prints_every_stage(capsys):
    args = ["fit", "--model", "llama-3.1-8b", "--context", "32768", "--gpu", "rtx-4090", "--mode", "vllm"]
    assert main([*args, "--weights", "BF16", "--kv-type", "bf16", "--pp", "2"]) == 0
    out = capsys.readouterr().out
    assert "stage 1: layers 0-15" in out and "stage 2: layers 16-31" in out and "(fullest GPU)" in out
    assert main([*args, "--weights", "BF16", "--kv-type", "bf16", "--pp", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pipeline_parallel"] == 2


def test_serving_with_stages_is_no_faster_per_chat_and_costs_each_gpu():
    kw = {"weights_format": "FP8", "kv": "fp8", "max_num_seqs": 256}
    # 4,096 tokens: Llama-3.1-70B in FP8 (its embedding and lm_head in BF16, 67.7 GiB) leaves one H100 room for one
    # such chat beside vLLM's reserve at 256 sequences (at the card's 1,024 the sampler warm-up's sort takes 4.6 GiB)
    one = serving_estimate("llama-3.1-70b", "h100-sxm", 4096, batch=1, **kw)
    two = serving_estimate("llama-3.1-70b", "h100-sxm", 4096, batch=1, pipeline_parallel=2, **kw)
    assert two["tokens_per_second_per_chat"] == pytest.approx(one["tokens_per_second_per_chat"], rel=1e-9)
    assert two["usd_per_million_tokens"] == pytest.approx(2 * one["usd_per_million_tokens"], rel=1e-6)
    assert two["where"].endswith("x 2") and two["micro_batch"] == 1
    # eight chats on two stages: two micro-batches of four, each as fast as four chats on one GPU, twice the tokens
    eight = serving_estimate("llama-3.1-8b", "h100-sxm", 8192, batch=8, pipeline_parallel=2, **kw)
    four = serving_estimate("llama-3.1-8b", "h100-sxm", 8192, batch=4, **kw)
    assert eight["micro_batch"] == 4 and eight["efficiency"] == four["efficiency"]
    assert eight["tokens_per_second_per_chat"] == pytest.approx(four["tokens_per_second_per_chat"], rel=1e-9)
    assert eight["total_tokens_per_second"] == pytest.approx(2 * four["total_tokens_per_second"], rel=1e-9)
    assert any("pipeline parallel 2" in n for n in eight["notes"])


def test_the_gpu_fit_widget_offers_stages_under_vllm_only():
    kw = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "weights": "FP8", "kv": "fp8", "context": 131072}
    two = gpu_fit_figure(**kw, mode="vllm", pipeline_parallel=2)
    # the widget models vLLM 0.20 and later unless told otherwise (engine_version)
    dep = deployment("llama-3.1-70b", weights="FP8", kv="fp8", gpu="h100-sxm", engine="vllm", pp=2, version="0.20+")
    same = verdict(dep, 131072)
    assert two["stages"] == [s["text"] for s in same["stages"]] and two["headline"] == same["headline"]
    assert two["params"]["pipeline_parallel"] == 2 and "2 pipeline stages" in two["view"]["where"]
    llama = gpu_fit_figure(**{**kw, "kv": "q8_0", "weights": "Q4_K_M"}, mode="llamacpp", pipeline_parallel=2)
    assert llama["params"]["pipeline_parallel"] == 1 and llama["stages"] == []
    with pytest.raises(ValueError, match="pipeline_parallel must be one of 1, 2, 4, 8"):
        gpu_fit_figure(**kw, mode="vllm", pipeline_parallel=3)
    assert gpu_fit_figure(**kw, mode="vllm", pipeline_parallel=99)["clamped"]["pipeline_parallel"]


def test_a_stage_without_tensor_parallel_keeps_no_custom_all_reduce_reserve():
    """vLLM builds custom all-reduce for the tensor-parallel group alone (cuda_communicator.py): a pipeline stage at
    tensor parallel 1 keeps NCCL's memory only, counted as a PCIe group's; at tensor parallel 2 on NVLink the
    group's extra is back."""
    from kvlab.memory import engines

    arch = model_architecture("llama-3.1-70b")
    card = {"id": "a100-80gb"}
    fit = engines.vllm_data()["reserve_fit"]
    one = engines.vllm_reserve(arch, 2048, 256, n_gpus=1, card=card, sampler="triton")
    stages = engines.vllm_reserve(arch, 2048, 256, n_gpus=1, pp=4, card=card, sampler="triton")
    both = engines.vllm_reserve(arch, 2048, 256, n_gpus=2, pp=2, card=card, sampler="triton")
    assert "tensor_parallel" not in stages["parts_gib"]
    assert stages["parts_gib"]["pipeline_parallel"] == fit["tensor_parallel_extra_pcie_gib"]
    assert stages["gib"] - one["gib"] == pytest.approx(fit["tensor_parallel_extra_pcie_gib"])
    assert both["parts_gib"]["tensor_parallel"] == fit["tensor_parallel_extra_gib"] > 1
    assert "only by tp" in stages["how"]


def test_custom_all_reduce_off_keeps_ncclS_memory_alone():
    """vllm serve --disable-custom-all-reduce, or a tensor-parallel group across nodes (vLLM turns it off there):
    the reserve drops the NVLink group's custom all-reduce extra, and the flags say so."""
    arch = model_architecture("llama-3.1-70b")
    on = deployment(arch, weights="FP8", gpu="h100-sxm", engine="vllm", tp=4)
    off = deployment(arch, weights="FP8", gpu="h100-sxm", engine="vllm", tp=4, custom_all_reduce=False)
    reserve = {
        d.custom_all_reduce: next(
            c["bytes"] for c in verdict(d, 8192)["components"] if c["name"] == "activation_reserve"
        )
        for d in (on, off)
    }
    from kvlab.memory import engines

    fit = engines.vllm_data()["reserve_fit"]
    gap = (fit["tensor_parallel_extra_gib"] - fit["tensor_parallel_extra_pcie_gib"]) * 2**30
    assert reserve[True] - reserve[False] == pytest.approx(gap, abs=2)
    assert "--disable-custom-all-reduce" in verdict(off, 8192)["flags"]
    with pytest.raises(ValueError, match="custom_all_reduce"):
        deployment(arch, weights="Q4_K_M", gpu="h100-sxm", engine="llamacpp", custom_all_reduce=False)


def test_serve_and_the_simulation_take_disable_custom_all_reduce(capsys):
    """`kvlab serve` sizes the same deployment as `kvlab fit`: with vLLM's --disable-custom-all-reduce the reserve
    drops the NVLink group's extra, so the closed form's verdict and the simulation's pool both grow, and the
    launch line shows the flag; SGLang refuses it by name."""
    from kvlab.memory.scheduler import simulate

    kw = {"n_gpus": 2, "max_model_len": 8192, "num_prompts": 8, "max_concurrency": 4}
    on, off = (simulate("llama-3.1-8b", "h100-sxm", **kw, custom_all_reduce=c) for c in (True, False))
    assert off["kv_pool"]["blocks"] > on["kv_pool"]["blocks"]
    assert "--disable-custom-all-reduce" in off["flags"] and "--disable-custom-all-reduce" not in on["flags"]
    est = {
        c: serving_estimate("llama-3.1-8b", "h100-sxm", 8192, n_gpus=2, custom_all_reduce=c)["verdict"]
        for c in (True, False)
    }
    assert est[False]["max_sequences"] > est[True]["max_sequences"]
    with pytest.raises(ValueError, match="custom_all_reduce is a vLLM setting"):
        simulate("llama-3.1-8b", "h100-sxm", engine="sglang", custom_all_reduce=False, num_prompts=4)
    with pytest.raises(ValueError, match="custom_all_reduce must be true or false"):
        simulate("llama-3.1-8b", "h100-sxm", custom_all_reduce="no", num_prompts=4)
    argv = ["serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--n-gpus", "2", "--context", "8192"]
    assert main([*argv, "--max-concurrency", "4", "--num-prompts", "8", "--disable-custom-all-reduce"]) == 0
    assert "--disable-custom-all-reduce" in capsys.readouterr().out
    assert main([*argv, "--batch", "4", "--disable-custom-all-reduce", "--json"]) == 0
    assert "--disable-custom-all-reduce" in json.loads(capsys.readouterr().out)["verdict"]["flags"]
