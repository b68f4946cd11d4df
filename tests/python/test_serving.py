"""Decode speed, chats per GPU, cost per token; fit verdicts; the CLI."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

import kvlab

from kvlab.__main__ import main
from kvlab.memory.catalogue import get_gpu
from kvlab.dtypes import GIB
from kvlab.memory.deployment import deployment
from kvlab.memory.verdict import verdict
from kvlab.memory.serving import (
    BENCHMARKS_FILE,
    calibrated_efficiency,
    cost_per_million_tokens,
    decode_time_per_token,
    serving_estimate,
    users_per_gpu,
)


def test_batch_one_reads_weights_plus_cache():
    # 16 GB of weights + 1 GB of cache over 2000 GB/s = 8.5 ms per token
    r = decode_time_per_token(16e9, 1e9, 2000)
    assert r["seconds_per_token"] == pytest.approx(17e9 / 2000e9)
    assert r["assumptions"]


def test_batching_shares_weight_reads_not_kv_reads():
    one = decode_time_per_token(16e9, 1e9, 2000, batch=1)
    eight = decode_time_per_token(16e9, 1e9, 2000, batch=8)
    assert eight["bytes_read_per_step"] == 16e9 + 8 * 1e9
    assert eight["total_tokens_per_second"] == pytest.approx(8 * 2000e9 / 24e9)
    assert eight["tokens_per_second"] < one["tokens_per_second"]


def test_cost_per_million_tokens():
    # $3.60/h at 1000 tokens/s: 3.6e6 tokens per hour -> $1.00 per million
    assert cost_per_million_tokens(3.6, 1000)["usd_per_million_tokens"] == pytest.approx(1.0)


def test_serving_estimate_llama3_8b_on_h100():
    # bf16 weights as the checkpoint stores them (16,060,522,496 B) less the token embedding's table, of which a
    # step gathers one row per token (128,256 x 4,096 x 2 B, untied); cache of an 8192-token chat = 128 KiB x 8192 =
    # 1 GiB; H100 SXM 3350 GB/s
    r = serving_estimate("llama-3.1-8b", "h100-sxm", 8192, batch=4)
    roofline_step = (16_060_522_496 - 128_256 * 4_096 * 2 + 4 * GIB) / 3350e9
    assert r["roofline_seconds_per_token"] == pytest.approx(roofline_step) and r["bound"] == "bandwidth"
    # the step is the roofline step over the efficiency calibrated for a batch of 4
    eff = calibrated_efficiency(4)["value"]
    assert r["efficiency"] == eff and r["efficiency_calibrated"] and 0.3 < eff < 1
    expected_step = roofline_step / eff
    assert r["seconds_per_token"] == pytest.approx(expected_step)
    # prefill of the 8192 - 512 = 7680-token prompt: the linear layers per token + causal attention
    # (32 layers x 2 x 32 heads x (128 + 128) x 7680 x 7681 / 2), at 989.5 dense BF16 TFLOPS
    prompt = 7680
    # the linear layers' FLOPs leave out the vocab tables (128,256 x 4,096 each, untied): the embedding is a gather,
    # and the lm_head runs once, at the position that samples the first answer token
    table = 128256 * 4096
    prefill = (
        2 * (8.03e9 - 2 * table) * prompt + 2 * table + 32 * 2 * 32 * 256 * prompt * (prompt + 1) // 2
    ) / 989.5e12
    assert r["prefill_seconds_per_chat"] == pytest.approx(prefill)
    hour_tokens = 4 * 512 / (4 * prefill + 512 * expected_step) * 3600
    assert r["usd_per_million_tokens"] == pytest.approx(3.78 / hour_tokens * 1e6)
    roofline_hour_tokens = 4 * 512 / (4 * prefill + 512 * roofline_step) * 3600
    assert r["usd_per_million_tokens_roofline"] == pytest.approx(3.78 / roofline_hour_tokens * 1e6)
    assert any(f"efficiency {eff:.2f}" in a for a in r["assumptions"])
    json.dumps(r)
    assert any("bandwidth" in a for a in r["assumptions"])


def test_large_batches_are_compute_bound():
    # 1024 chats x 128 tokens: 1024 x 2 x (8.03e9 - the embedding, a gather: 128,256 x 4,096) FLOPs = 15.4 TFLOP > what
    # 3350 GB/s reads in the same time
    r = serving_estimate("llama-3.1-8b", "h100-sxm", 128, batch=1024, answer_tokens=64, bandwidth_efficiency=1.0)
    assert r["fits"] and r["bound"] == "compute"
    assert r["seconds_per_token"] == r["compute_seconds"] > r["memory_seconds"]
    assert r["compute_seconds"] >= 1024 * 2 * (8.03e9 - 128256 * 4096) / 989.5e12


def test_a_batch_that_does_not_fit_is_neither_timed_nor_priced():
    r = serving_estimate("llama-3.1-8b", "h100-sxm", 131072, batch=16)
    assert not r["fits"] and r["verdict"]["binding"] == "kv_cache"
    assert r["seconds_per_token"] is None and r["usd_per_million_tokens"] is None
    assert r["chats_that_fit_in_memory"] == r["verdict"]["max_sequences"] < 16
    # the same verdict the GPU-fit widget shows
    v = verdict(deployment("llama-3.1-8b", gpu="h100-sxm", weights="BF16", kv="f16", engine="vllm"), 131072, n_seq=16)
    assert v["headline"] == r["verdict"]["headline"]


def test_mxfp4_covers_only_the_expert_weights():
    # gpt-oss-20b: 19.12e9 MLP params in MXFP4 (4.25 bits), the other 20.9e9 - 19.12e9 in BF16
    from kvlab.memory.catalogue import model_architecture
    from kvlab.memory.weights import model_weights_bytes

    arch = model_architecture("gpt-oss-20b")
    formula = model_weights_bytes(dataclasses.replace(arch, name="a gpt-oss-20b outside the catalogue"), "MXFP4")
    assert formula["bytes"] == int(19.12e9 * 4.25 / 8) + int((20.9e9 - 19.12e9) * 16 / 8)
    # the catalogue model is counted as its published checkpoint stores it (kvlab/data/checkpoints.json), 0.3 % more
    stored = model_weights_bytes(arch, "MXFP4")
    assert stored["stored"] and stored["bytes"] == 13_761_264_768 and stored["covered_params"] == 19.12e9
    assert 1 < stored["bytes"] / formula["bytes"] < 1.005
    with pytest.raises(ValueError, match="expert_params"):
        model_weights_bytes(model_architecture("llama-3.1-8b"), "MXFP4")


def test_moe_reads_only_active_parameters_at_batch_one():
    # Qwen3-30B-A3B: 3.3e9 of 30.5e9 params per token, Q8_0 = 8.5 bits
    r = serving_estimate(
        "qwen3-30b-a3b", "h100-sxm", 1024, weights_format="Q8_0", engine="llamacpp", kv="f16", bandwidth_efficiency=1.0
    )
    kv = 48 * 2 * 4 * 128 * 2 * 1024  # 48 layers, 4 KV heads x 128, f16
    assert r["seconds_per_token"] == pytest.approx((int(3.3e9 * 8.5 / 8) + kv) / 3350e9)


def test_users_per_gpu_memory_and_speed_limits():
    # vLLM: 0.9 x the H100's 79.22 GiB - 16.06e9 B weights - the reserve, 1 GiB per 8192-token chat
    r = users_per_gpu("llama-3.1-8b", "h100-sxm", 8192)
    assert r["users_by_memory"] == (int(0.9 * H100_DRIVER_BYTES) - 16_060_000_000 - LLAMA_VLLM_RESERVE) // GIB
    # at >= 50 tok/s each: B <= (3350e9 / 50 - the weights a step reads) / 1 GiB, the weights less the embedding table
    s = users_per_gpu("llama-3.1-8b", "h100-sxm", 8192, min_tokens_per_second=50, bandwidth_efficiency=1.0)
    assert s["users_by_speed"] == int((3350e9 / 50 - (16_060_522_496 - 128_256 * 4_096 * 2)) // GIB)
    assert s["users"] == min(s["users_by_memory"], s["users_by_speed"])


# --- fit verdicts (docs/claims.md: Llama-3-8B at 131,072 tokens) -------------------------------


def test_llama3_8b_128k_f16_fits_80gb_not_24gb_unless_quantised():
    assert verdict(deployment("llama-3.1-8b", gpu="h100-sxm", weights="BF16", kv="f16"), 131072)["fits"]
    assert not verdict(deployment("llama-3.1-8b", gpu="rtx-4090", weights="BF16", kv="f16"), 131072)["fits"]
    # BF16 weights with a q8_0 cache fit, by 0.7 GiB: llama.cpp keeps the 1 GiB token_embd in system memory
    close = verdict(deployment("llama-3.1-8b", gpu="rtx-4090", weights="BF16", kv="q8_0"), 131072)
    assert close["fits"] and close["headroom_bytes"] < GIB
    small = verdict(deployment("llama-3.1-8b", gpu="rtx-4090", weights="Q4_K_M", kv="q8_0"), 131072)
    assert small["fits"] and small["verdict"] == "fits"
    parts = {c["name"]: c["bytes"] for c in small["components"]}
    assert parts["kv_cache"] == int(8.5 * GIB)
    assert small["total_bytes"] == sum(parts.values())


def test_fit_reports_the_largest_context():
    r = verdict(deployment("llama-3.1-8b", memory_gib=8, weights="Q4_K_M"), 8192)
    fixed = r["total_bytes"] - r["components"][1]["bytes"]
    ctx = r["max_context"]
    assert r["max_context_limited_by"] == "memory"
    assert ctx % 256 == 0 and fixed + ctx * 128 * 1024 <= 8 * GIB < fixed + (ctx + 256) * 128 * 1024


def test_fit_needs_exactly_one_of_gpu_or_memory():
    with pytest.raises(ValueError, match="exactly one"):
        verdict(deployment("llama-3.1-8b"), 1024)


def test_vllm_fit_uses_the_utilisation_budget():
    vllm = deployment("llama-3.1-8b", gpu="h100-sxm", weights="BF16", engine="vllm")
    r = verdict(vllm, 8192, n_seq=40)
    assert r["budget_bytes"] == int(H100_DRIVER_BYTES * 0.9) and r["fits"]
    assert not verdict(vllm, 8192, n_seq=60)["fits"]


# --- CLI -------------------------------------------------------------------------------------


def run(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr()


def test_cli_memory_json_has_the_breakdown(capsys):
    code, out = run(capsys, "memory", "--model", "llama-2-7b", "--context", "131072", "--json")
    data = json.loads(out.out)
    assert code == 0 and data["bytes_per_token"] == 512 * 1024 and data["total_bytes"] == 64 * GIB
    assert data["by_layer_kind_bytes"]["full"] == 64 * GIB and data["per_token"]["formula"]


def test_cli_memory_text_prints_the_llamacpp_log_line(capsys):
    code, out = run(capsys, "memory", "--model", "gemma-3-27b-it", "--context", "32768", "--kv-type", "q8_0")
    assert code == 0 and "llama_kv_cache: size =" in out.out and "1536 cells" in out.out


def test_cli_memory_from_a_config_path(tmp_path, capsys):
    cfg = {
        "model_type": "llama",
        "num_hidden_layers": 32,
        "hidden_size": 4096,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, out = run(capsys, "memory", "--model", str(path), "--context", "1024", "--mode", "vllm", "--json")
    assert code == 0 and json.loads(out.out)["total_bytes"] == 1024 * 128 * 1024


def test_cli_fit_and_serve_and_listings(capsys):
    code, out = run(
        capsys,
        "fit",
        "--model",
        "qwen3.6-27b",
        "--gpu",
        "rtx-4090",
        "--weights",
        "Q4_K_M",
        "--context",
        "65536",
        "--json",
    )
    assert code == 0 and json.loads(out.out)["verdict"] in ("fits", "does not fit")
    code, out = run(
        capsys, "serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "8192", "--batch", "8"
    )
    assert code == 0 and "per million" in out.out
    assert run(capsys, "models")[0] == 0 and run(capsys, "gpus", "--json")[0] == 0


def test_cli_bad_input_is_an_error_not_a_traceback(capsys):
    code, out = run(capsys, "memory", "--model", "no-such-model", "--context", "10")
    assert code == 2 and "not in the catalogue" in out.err
    code, out = run(capsys, "fit", "--model", "my-config.json", "--memory-gib", "8", "--context", "10")
    assert code == 2


# --- vLLM's --gpu-memory-utilization and --block-size reach the serving verdict ----------------

# Llama-3.1-8B (config.json): 32 layers, 8 KV heads x 128, hidden 4096, intermediate 14336, vocab 128256,
# 8.03e9 params; H100 SXM: 80 GiB.
LLAMA_KV_PER_TOKEN = 32 * 2 * 8 * 128 * 2  # K and V, f16: 128 KiB
# the published BF16 checkpoint as stored (kvlab/data/checkpoints.json: its safetensors index's total_size), not
# 8.03e9 x 2 B: 522,496 bytes more (8,030,261,248 parameters)
LLAMA_BF16_WEIGHTS = 16_060_522_496
# vLLM's reserve as the engine model counts it (kvlab/data/engines.json, fitted on real logs): on an H100 vLLM
# batches 8192 tokens and warms its sampler up on 1024 rows of logits; V1's sampler (up to 0.16) sorts natively,
# and the profile's peak is the larger of the forward's activations and that sort; the fixed term is the fitted one
_ENGINES = json.loads((Path(kvlab.__file__).parent / "data" / "engines.json").read_text())["vllm"]
_FIXED_GIB = _ENGINES["reserve_fit"]["coefficients"]["fixed"]
_SORT = _ENGINES["sampler_warmup"]["paths"]["native"]["multiple"]
LLAMA_VLLM_RESERVE = int(
    max(8192 * (4 * 4096 + 2 * 14336) * 2, _SORT * 1024 * 128256 * 4) / GIB * GIB + _FIXED_GIB * GIB
)
H100_DRIVER_BYTES = int(_ENGINES["driver_memory"]["h100-sxm"]["gib"] * GIB)  # what vLLM sees of the 80 GiB
# the serving widget models vLLM 0.20 and later, as gpu-fit does by default: FlashInfer's sampler (no sort), and the
# CUDA-graph estimate and one null block off the budget
_RECENT = _ENGINES["versions"]["0.20+"]
_FLASHINFER = _ENGINES["sampler_warmup"]["paths"]["flashinfer"]["multiple"]
LLAMA_VLLM_RESERVE_RECENT = int(
    max(8192 * (4 * 4096 + 2 * 14336) * 2, _FLASHINFER * 1024 * 128256 * 4) / GIB * GIB + _FIXED_GIB * GIB
) + int(_RECENT["cuda_graphs"]["gib"] * GIB)


def vllm_chats(utilization: float, context: int, block_size: int = 16) -> int:
    """verdict.py's vLLM 0.20+ accounting by hand: (utilization x memory - weights - reserve - the null block) // KV
    per sequence, the sequence's KV in whole blocks."""
    budget = int(H100_DRIVER_BYTES * utilization)
    per_chat = -(-context // block_size) * block_size * LLAMA_KV_PER_TOKEN
    null_block = block_size * LLAMA_KV_PER_TOKEN
    return (budget - LLAMA_BF16_WEIGHTS - LLAMA_VLLM_RESERVE_RECENT - null_block) // per_chat


def test_serving_gpu_memory_utilization_moves_the_batch_limit_and_the_verdict():
    from kvlab import serving_figure

    default = serving_figure()  # vLLM 0.20+, 8 chats of 32,768 tokens: vLLM's own default share, 0.92
    assert default["params"]["gpu_memory_utilization"] == 0.92 and default["params"]["block_size"] == 16
    assert default["chats_that_fit"] == vllm_chats(0.92, 32768) == 13 and default["fits"]
    assert default["budget"]["bytes"] == int(0.92 * H100_DRIVER_BYTES)

    half = serving_figure(gpu_memory_utilization=0.5)
    assert half["chats_that_fit"] == vllm_chats(0.5, 32768) == 5
    assert half["chats_that_fit_text"] == "5 sequences of 32,768 tokens"
    assert half["budget"]["bytes"] == int(0.5 * H100_DRIVER_BYTES)
    assert not half["fits"] and half["verdict"] == "does not fit" and half["binding"] == "kv_cache"
    assert half["ms_per_token"] is None and half["usd_per_million_tokens"] is None  # not timed nor priced
    assert "--gpu-memory-utilization 0.5" in half["flags"] and "--block-size" not in half["flags"]
    # the same batch of 5 fits at 0.5 and is timed; the memory used does not depend on the share
    five = serving_figure(gpu_memory_utilization=0.5, batch=5)
    assert five["fits"] and five["ms_per_token"] > 0
    # the curve and the like-for-like prices follow the share too: batch 8 at 32,768 tokens does not fit
    i = half["curve"]["contexts"].index(32768)
    assert half["curve"]["fits_batch"][i] is False and default["curve"]["fits_batch"][i] is True
    chosen = next(i for i, row in enumerate(half["same_kind"]) if row["chosen"])
    assert not half["same_kind"][chosen]["fits"] and half["view"]["same_kind"][chosen]["cost_text"] == "does not fit"


def test_serving_block_size_rounds_each_chat_up_to_whole_blocks():
    from kvlab import serving_figure

    # 30,000 tokens: 1,875 blocks of 16 (exactly) but 235 blocks of 128 = 30,080 tokens a chat
    small = serving_figure(context=30000, gpu_memory_utilization=0.6)
    big = serving_figure(context=30000, gpu_memory_utilization=0.6, block_size=128)
    assert small["chats_that_fit"] == vllm_chats(0.6, 30000) and big["chats_that_fit"] == vllm_chats(0.6, 30000, 128)
    used = (8 * 30080 + 128) * LLAMA_KV_PER_TOKEN + LLAMA_BF16_WEIGHTS + LLAMA_VLLM_RESERVE_RECENT  # + the null block
    assert big["memory_used"]["bytes"] == used
    assert big["memory_used"]["bytes"] - small["memory_used"]["bytes"] == (8 * 80 + 128 - 16) * LLAMA_KV_PER_TOKEN
    assert big["flags"].endswith("--block-size 128")


def test_serving_llamacpp_ignores_the_vllm_settings():
    from kvlab import serving_figure

    base = serving_figure(engine="llamacpp")
    other = serving_figure(engine="llamacpp", gpu_memory_utilization=0.3, block_size=64)
    for key in ("chats_that_fit", "budget", "flags", "verdict", "ms_per_token", "memory_used"):
        assert other[key] == base[key], key


def test_serving_vllm_settings_are_clamped_with_a_notice_or_refused():
    from kvlab import serving_figure

    data = serving_figure(gpu_memory_utilization=1.5, block_size=1000)
    assert data["clamped"] == {
        "gpu_memory_utilization": {"requested": 1.5, "used": 1.0},
        "block_size": {"requested": 1000, "used": 128},
    }
    assert data["params"]["gpu_memory_utilization"] == 1.0 and data["params"]["block_size"] == 128
    assert serving_figure(gpu_memory_utilization=0)["clamped"]["gpu_memory_utilization"]["used"] == 0.1
    # the template's limits and choices are the gpu-fit widget's
    from kvlab import gpu_fit_figure

    # (the serving widget models vLLM 0.20 and later, gpu-fit's default version)
    fit = gpu_fit_figure()["options"]
    assert data["options"]["vllm_defaults"] == fit["vllm_defaults"]
    for key in ("gpu_memory_utilization", "block_size"):
        assert data["options"]["limits"][key] == fit["limits"][key], key
    assert fit["limits"]["block_size"]["choices"] == [1, 8, 16, 32, 64, 128]
    with pytest.raises(ValueError, match="^block_size must be one of 1, 8, 16, 32, 64, 128, got 24"):
        serving_figure(block_size=24)
    with pytest.raises(ValueError, match="^gpu_memory_utilization must be a finite number"):
        serving_figure(gpu_memory_utilization=float("nan"))


# --- decode_time_per_token with nothing to read ---------------------------------------------


def test_a_step_that_reads_nothing_is_refused_with_the_fields_named():
    # 0 bytes / bandwidth = 0 s per step: tokens per second would be 1 / 0
    with pytest.raises(ValueError, match="^weight_bytes and kv_bytes must not both be 0"):
        decode_time_per_token(0, 0, 2000)
    with pytest.raises(ValueError, match="^weight_bytes and kv_bytes must not both be 0"):
        decode_time_per_token(0, 0, 2000, batch=8, flops_per_step=0, peak_tflops=989)
    # with a positive compute bound the step has a time: the compute one
    r = decode_time_per_token(0, 0, 2000, flops_per_step=1e12, peak_tflops=1000)
    assert r["seconds_per_token"] == pytest.approx(1e-3) and r["bound"] == "compute"
    assert r["kv_share_of_reads"] == 0.0
    # either one alone is a defined step
    assert decode_time_per_token(0, 1e9, 1000)["seconds_per_token"] == pytest.approx(1e-3)
    assert decode_time_per_token(1e9, 0, 1000)["seconds_per_token"] == pytest.approx(1e-3)
    for name, args in (("weight_bytes", (-1, 1e9, 1000)), ("kv_bytes", (1e9, float("nan"), 1000))):
        with pytest.raises(ValueError, match=f"^{name} must be"):
            decode_time_per_token(*args)


# --- the calibrated efficiency (kvlab/data/serving_benchmarks.json, bench/serving_calibration.py) --------

from kvlab.memory.serving import (  # noqa: E402
    benchmark_prediction,
    default_max_num_seqs,
    efficiency_table,
    fit_efficiency,
    serving_benchmarks,
)

# How close the calibrated prediction must come to each published time per output token: within 25 %
# at batch 1 and medium batches (where decode dominates), within a factor of 2.5 when saturated (prefills
# of queued requests share the steps, and the engines differ most there).
TOLERANCE = {"batch 1": 1.25, "medium": 1.25, "saturated": 2.5}
POINTS = serving_benchmarks()["points"]


def test_the_benchmark_file_has_sources_for_every_point():
    assert len(POINTS) >= 6 and len({p["id"] for p in POINTS}) == len(POINTS)
    for p in POINTS:
        for key in ("url", "date", "engine", "engine_version", "model", "gpu", "concurrency"):
            assert p[key], (p["id"], key)
        assert p["url"].startswith("https://") and p["measured"]["tpot_ms"] > 0
        assert p["input_tokens"] > 0 and p["output_tokens"] > 0
    assert {p["regime"] for p in POINTS} == {"batch 1", "medium", "saturated"}


@pytest.mark.parametrize("point", POINTS, ids=[p["id"] for p in POINTS])
def test_calibrated_prediction_is_within_tolerance_of_each_published_point(point):
    after = benchmark_prediction(point)
    before = benchmark_prediction(point, calibrated=False)
    tolerance = TOLERANCE[after["regime"]]
    assert 1 / tolerance <= after["ratio"] <= tolerance, after
    # and never further from the measurement than the roofline was
    assert abs(math.log(after["ratio"])) <= abs(math.log(before["ratio"])) + 1e-9
    assert before["efficiency"] == 1.0 and before["ratio"] > 1  # the roofline is optimistic on every point


def test_the_stored_fit_is_the_fit_of_the_stored_points():
    # refit from the points (what bench/serving_calibration.py --write stores); 5 % slack for memory-model
    # changes that move a saturated point's batch
    samples = []
    for p in POINTS:
        r = benchmark_prediction(p, calibrated=False)
        samples.append((r["batch"], r["achieved_efficiency"], p["id"]))
    refit = fit_efficiency(samples)["anchors"]
    stored = efficiency_table()
    assert [a["regime"] for a in stored] == ["batch 1", "medium", "saturated"]
    for new, old in zip(refit, stored):
        assert new["efficiency"] == pytest.approx(old["efficiency"], rel=0.05), old["regime"]
        assert set(new["points"]) == set(old["points"])
    # efficiency falls as the batch grows, and is a share of the roofline
    values = [a["efficiency"] for a in stored]
    assert 1 > values[0] > values[1] > values[2] > 0


def test_efficiency_interpolates_in_log_batch_and_is_flat_outside():
    table = {a["batch"]: a["efficiency"] for a in efficiency_table()}
    assert calibrated_efficiency(1)["value"] == pytest.approx(table[1])
    assert calibrated_efficiency(16)["value"] == pytest.approx(table[16])
    assert calibrated_efficiency(64)["value"] == pytest.approx(table[64])
    assert calibrated_efficiency(1024)["value"] == pytest.approx(table[64])  # saturated: flat
    # batch 4 is halfway between 1 and 16 in log2: the geometric mean
    assert calibrated_efficiency(4)["value"] == pytest.approx(math.sqrt(table[1] * table[16]))
    assert calibrated_efficiency(4)["regime"] == "medium" and calibrated_efficiency(300)["regime"] == "saturated"
    with pytest.raises(ValueError, match="no benchmark point near the 'saturated' anchor"):
        fit_efficiency([(1, 0.8, "a"), (16, 0.5, "b")])


def test_vllm_caps_the_running_batch_at_max_num_seqs():
    # vLLM's default: 1024 on an H100 (>= 70 GiB, not an A100), 256 on an A100 80GB and on smaller cards
    assert default_max_num_seqs(get_gpu("h100-sxm"))["value"] == 1024
    assert default_max_num_seqs(get_gpu("a100-80gb"))["value"] == 256
    assert default_max_num_seqs(get_gpu("l40s"))["value"] == 256
    r = serving_estimate("qwen3-0.6b", "a100-80gb", 256, batch=600, answer_tokens=64)
    assert r["requested_batch"] == 600 and r["batch"] == r["max_num_seqs"] == 256 and r["queued"] == 344
    assert r["fits"] and r["total_tokens_per_second"] == pytest.approx(256 / r["seconds_per_token"])
    assert any("344 wait in its queue" in n for n in r["notes"])
    assert "vLLM runs at most 256 sequences at once (max_num_seqs" in r["bounds_text"]
    # given explicitly, it wins; llama.cpp has no such cap
    assert serving_estimate("qwen3-0.6b", "a100-80gb", 256, batch=600, max_num_seqs=100)["batch"] == 100
    assert serving_estimate("qwen3-0.6b", "a100-80gb", 256, batch=8, engine="llamacpp")["max_num_seqs"] is None
    # users per GPU: memory allows far more 256-token chats of Qwen3-0.6B than 256
    u = users_per_gpu("qwen3-0.6b", "a100-80gb", 256)
    assert u["users_by_memory"] >= 256 and u["users"] == 256 and u["limited_by"] == "max_num_seqs"
    assert "the max num seqs limit binds: 256 chats" in u["bounds_text"]


def test_both_bounds_are_said_in_words():
    r = serving_estimate("llama-3.1-8b", "h100-sxm", 8192, batch=4)
    text = r["bounds_text"]
    assert text.startswith("memory bound: ") and "speed bound: " in text
    assert "3,350 GB/s" in text and "TFLOPS" in text and "the bandwidth bound binds" in text
    assert f"at efficiency {r['efficiency']:.2f} (medium)" in text
    assert f"{r['seconds_per_token'] * 1000:.3g} ms" in text
    assert any("prefill and decode share the GPU" in n for n in r["notes"])
    # a batch that does not fit says so instead of a speed
    big = serving_estimate("llama-3.1-8b", "h100-sxm", 131072, batch=16)
    assert big["bounds"]["speed"] == "speed bound: not timed, the batch does not fit"
    assert "Not timed or priced: does not fit" in big["bounds_text"]


def test_users_per_gpu_speed_limit_uses_the_calibrated_efficiency():
    cal = users_per_gpu("llama-3.1-8b", "h100-sxm", 8192, min_tokens_per_second=50)
    roof = users_per_gpu("llama-3.1-8b", "h100-sxm", 8192, min_tokens_per_second=50, bandwidth_efficiency=1.0)
    assert cal["users_by_speed"] < roof["users_by_speed"]
    b = cal["users_by_speed"]
    # b chats get at least 50 tokens/s each at the calibrated efficiency, b + 1 do not
    for n, ok in ((b, True), (b + 1, False)):
        step = serving_estimate("llama-3.1-8b", "h100-sxm", 8192, batch=n, solve=False)["seconds_per_token"]
        assert (1 / step >= 50) is ok, n


def test_serve_counts_a_hybrids_state_as_the_verdict_does():
    # Qwen3-Next: 36 Gated DeltaNet layers with a fixed state; vLLM keeps it in the model dtype (bf16),
    # llama.cpp in f32; serve's bytes read per chat follow the engine
    from kvlab.memory.catalogue import model_architecture
    from kvlab.memory.kv_bytes import kv_cache_bytes

    arch = model_architecture("qwen3-next-80b-a3b")
    vllm = serving_estimate("qwen3-next-80b-a3b", "b200", 4096, weights_format="FP8", solve=False)
    cpp = serving_estimate("qwen3-next-80b-a3b", "b200", 4096, weights_format="Q8_0", engine="llamacpp", solve=False)
    assert vllm["kv_bytes_per_chat"] == kv_cache_bytes(arch, 4096, "f16", state_type="bf16")["total_bytes"]
    assert cpp["kv_bytes_per_chat"] == kv_cache_bytes(arch, 4096, "f16", state_type="f32")["total_bytes"]
    assert cpp["kv_bytes_per_chat"] > vllm["kv_bytes_per_chat"]


def test_cli_serve_says_the_efficiency_and_both_bounds(capsys):
    code, out = run(
        capsys, "serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "8192", "--batch", "8"
    )
    assert code == 0 and "efficiency 0." in out.out and "memory bound: " in out.out and "speed bound: " in out.out
    assert "prefill and decode share the GPU" in out.out
    code, out = run(
        capsys, "serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "8192", "--efficiency", "1"
    )
    assert code == 0 and "efficiency 1.00 (given" in out.out


SIM = ("serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "4096")


def test_cli_serve_with_workload_flags_prints_a_benchmark_result(capsys):
    code, out = run(capsys, *SIM, "--num-prompts", "50", "--request-rate", "10", "--input-len", "512")
    assert code == 0, out.err
    lines = out.out.splitlines()
    assert lines[0] == "============ Serving Benchmark Result ============"
    assert lines[1].split() == ["Successful", "requests:", "50"]
    for label in ("Benchmark duration (s):", "Request throughput (req/s):", "Output token throughput (tok/s):"):
        assert any(line.startswith(label) for line in lines), label
    for name in ("TTFT", "TPOT", "ITL"):
        assert any(line.startswith(f"Median {name} (ms):") for line in lines), name
    assert "simulated by kvlab" in out.out and "--max-model-len 4096" in out.out and "per million output" in out.out
    assert "not modelled: " in out.out
    # the accuracy of the fitted constants on runs they were not fitted on, from the stored validation
    accuracy = next(line for line in lines if line.startswith("  accuracy: "))
    held = json.loads(BENCHMARKS_FILE.read_text(encoding="utf-8"))["validation"]["vllm_held_out"]
    assert f"Checked against {held['runs']} published vLLM runs" in accuracy
    assert f"off by {held['output_tok_s']['median_error']:.0%} at the median" in accuracy
    # and which way it leaned on runs of this kind (card, dense or MoE, one GPU or several), or that it cannot say
    kind = next(line for line in lines if line.startswith("  this kind of run: "))
    from kvlab.memory.serving import NO_KIND_SENTENCE, accuracy_of_kind

    want = accuracy_of_kind(SIM[SIM.index("--gpu") + 1], SIM[SIM.index("--model") + 1], 1)
    assert kind.endswith(want["sentence"] if want else NO_KIND_SENTENCE)
    code, l4 = run(capsys, *SIM[: SIM.index("--gpu") + 1], "l4", *SIM[SIM.index("--gpu") + 2 :], "--num-prompts", "4")
    assert code == 0 and f"this kind of run: {NO_KIND_SENTENCE}" in l4.out, l4.err
    # given efficiencies are not the fitted ones: no accuracy claimed for them
    code, given = run(capsys, *SIM, "--num-prompts", "20", "--efficiency", "0.5")
    assert code == 0 and "accuracy: " not in given.out


def test_cli_serve_simulation_json_carries_everything(capsys):
    code, out = run(
        capsys, *SIM, "--max-concurrency", "4", "--num-prompts", "20", "--dataset", "random",
        "--random-range-ratio", "0.5", "--max-num-batched-tokens", "1024", "--seed", "3", "--json",
    )  # fmt: skip
    data = json.loads(out.out)
    assert code == 0 and data["completed"] == 20 and data["workload"]["max_concurrency"] == 4
    assert (
        data["engine_settings"]["max_num_batched_tokens"] == 1024 and data["engine_settings"]["max_model_len"] == 4096
    )
    assert data["workload"]["seed"] == 3 and data["workload"]["random_range_ratio"] == 0.5
    assert {"ttft_ms", "tpot_ms", "itl_ms", "series", "timeline", "efficiency", "engine_rules"} <= set(data)
    code, again = run(
        capsys, *SIM, "--max-concurrency", "4", "--num-prompts", "20", "--dataset", "random",
        "--random-range-ratio", "0.5", "--max-num-batched-tokens", "1024", "--seed", "3", "--json",
    )  # fmt: skip
    assert json.loads(again.out) == data


def test_cli_serve_simulation_takes_vllms_eager_and_async_flags(capsys):
    """--enforce-eager and --async-scheduling reach the simulation: both stated, each changing the steps' time."""
    flags = (*SIM, "--max-concurrency", "1", "--num-prompts", "4", "--output-len", "64", "--json")
    runs = {}
    for extra in ((), ("--enforce-eager",), ("--async-scheduling",)):
        code, out = run(capsys, *flags, *extra)
        assert code == 0, out.err
        runs[extra] = json.loads(out.out)
    plain, eager, overlapped = runs.values()
    assert eager["engine_settings"]["enforce_eager"] and "--enforce-eager" in eager["flags"]
    assert overlapped["engine_settings"]["async_scheduling"] and "--async-scheduling" in overlapped["flags"]
    assert eager["tpot_ms"]["median"] > plain["tpot_ms"]["median"] > overlapped["tpot_ms"]["median"]
    code, out = run(capsys, *flags[:-1], "--async-scheduling")
    share = overlapped["efficiency"]["async_hidden_share"]
    assert code == 0 and f"{share:.0%} of the per-request time hide" in out.out


def test_cli_serve_simulation_takes_the_chat_templates_time(capsys):
    """--chat-template-ms: the API server's time per request grows by it, so 16 requests sent at once reach the
    engine 16 x that later, and the run says so in its overheads."""
    flags = (*SIM, "--num-prompts", "16", "--output-len", "8", "--json")
    code, plain = run(capsys, *flags)
    assert code == 0, plain.err
    code, chat = run(capsys, *flags, "--chat-template-ms", "20")
    assert code == 0, chat.err
    plain, chat = json.loads(plain.out), json.loads(chat.out)
    assert chat["efficiency"]["chat_template_ms"] == 20.0 and plain["efficiency"]["chat_template_ms"] == 0.0
    assert chat["efficiency"]["frontend_ms"] == plain["efficiency"]["frontend_ms"]
    assert chat["ttft_ms"]["median"] - plain["ttft_ms"]["median"] == pytest.approx(16 * 20.0, rel=0.02)
    code, out = run(capsys, *flags, "--chat-template-ms", "-1")
    assert code != 0 and "chat_template_ms" in out.err
    code, out = run(capsys, *flags[:-1], "--chat-template-ms", "20")  # the text says what it added
    assert code == 0 and "+ 20 ms for the chat template's parse" in out.out
    code, out = run(capsys, *flags[:-1])
    assert code == 0 and "API server: " in out.out and "chat template" not in out.out


def test_cli_serve_says_when_the_weights_run_through_a_weight_only_kernel(capsys):
    """INT4 on an A100 runs at the Marlin constant, and `kvlab serve` says so beside the efficiency; BF16 does not."""
    code, out = run(
        capsys, "serve", "--model", "qwen3-8b", "--gpu", "a100-80gb", "--weights", "INT4", "--num-prompts", "4"
    )
    assert code == 0, out.err
    line = next(x for x in out.out.splitlines() if x.strip().startswith("efficiency:"))
    assert "INT4 weights dequantized inside each GEMM: vLLM's Marlin path" in line
    code, out = run(capsys, "serve", "--model", "qwen3-8b", "--gpu", "a100-80gb", "--num-prompts", "4")
    assert code == 0 and "dequantized" not in out.out


def test_cli_serve_simulates_sglang_with_its_own_flags(capsys):
    """--engine sglang plays SGLang's scheduler: its launch command and token pool printed, its own flags taken,
    vLLM's refused by name, and the closed form (no workload) refused with a way out."""
    base = ("serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--engine", "sglang")
    code, out = run(capsys, *base, "--max-concurrency", "4", "--num-prompts", "8", "--chunked-prefill-size", "2048")
    assert code == 0, out.err
    assert "sglang.launch_server" in out.out and "--chunked-prefill-size 2048" in out.out
    assert "SGLang's token pool" in out.out and "Serving Benchmark Result" in out.out
    code, out = run(capsys, *base, "--max-concurrency", "4", "--max-num-batched-tokens", "2048")
    assert code == 2 and "max_num_batched_tokens is a vLLM setting" in out.err and "Traceback" not in out.err
    code, out = run(capsys, *base, "--context", "8192")
    assert code == 2 and "give a workload flag" in out.err


def test_cli_serve_needs_a_context_only_without_a_workload(capsys):
    """A simulated benchmark defaults --max-model-len to the model's trained context, as vllm serve does;
    the closed form has no workload to size, so it asks for --context."""
    base = ("serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm")
    code, out = run(capsys, *base, "--max-concurrency", "2", "--num-prompts", "4", "--json")
    assert code == 0 and json.loads(out.out)["engine_settings"]["max_model_len"] == 131072
    code, out = run(capsys, *base)
    assert code == 2 and "--context is required" in out.err and "Traceback" not in out.err


def test_cli_serve_without_workload_flags_is_the_closed_form(capsys):
    code, out = run(capsys, *SIM, "--batch", "8")
    assert code == 0 and "Serving Benchmark Result" not in out.out and "speed bound: " in out.out


@pytest.mark.parametrize(
    ("flags", "field"),
    [
        (("--request-rate", "0"), "request_rate"),
        (("--num-prompts", "0"), "num_prompts"),
        (("--input-len", "5000"), "input_len"),
        (("--max-concurrency", "0"), "max_concurrency"),
        (("--num-prompts", "5", "--pp", "2"), "--pipeline-parallel-size"),
    ],
)
def test_cli_serve_simulation_refuses_bad_workloads_naming_the_flag(capsys, flags, field):
    code, out = run(capsys, *SIM, *flags)
    assert code == 2 and field in out.err and "Traceback" not in out.err


def test_the_users_grid_empties_as_the_context_grows_and_the_price_per_chat_climbs():
    """serving_figure's users grid: one cell a chat at the shortest context, filled for the chats that
    fit at this one; the GPU's hourly price over the chats that fit (the seed's EP04)."""
    from kvlab.widgets.serving import serving_figure

    rows = []
    for context in (1024, 8192, 32768, 131072):
        d = serving_figure(context=context)
        u = d["users"]
        on = sum(c["state"] == "on" for c in u["cells"])
        assert on * u["per_cell"] <= d["chats_that_fit"] < (on + 1) * u["per_cell"]
        assert u["chats"] == d["chats_that_fit"] and len(u["cells"]) * u["per_cell"] >= u["most"]
        price = d["gpu_info"]["price_per_hour"] / d["chats_that_fit"]
        assert d["view"]["users"]["price_text"] == f"${price:.2f} per chat-hour"
        rows.append((on, price))
    assert all(a[0] > b[0] and a[1] < b[1] for a, b in zip(rows, rows[1:])), rows
    assert serving_figure(context=2**20)["view"]["users"]["text"].startswith("not one chat")


def test_cli_fit_engine_all_puts_the_four_engines_side_by_side(capsys):
    """fit --engine all: vLLM, SGLang, TensorRT-LLM and llama.cpp on the same model and card, each with the
    version it models and its rule; the same rows as kvlab.memory.compare.engines_side_by_side."""
    from kvlab.memory.compare import engines_side_by_side

    argv = ("fit", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--context", "32768", "--weights", "BF16")
    code, out = run(capsys, *argv, "--engine", "all", "--json")
    assert code == 0, out.err
    data = json.loads(out.out)
    assert data == json.loads(json.dumps(engines_side_by_side("qwen3-32b", "h100-sxm", 32768, weights="BF16")))
    assert [r["engine_name"] for r in data["rows"]] == ["vLLM", "SGLang", "TensorRT-LLM", "llama.cpp"]
    code, out = run(capsys, *argv, "--engine", "all")
    assert code == 0 and all(name in out.out for name in ("vLLM", "SGLang", "TensorRT-LLM", "llama.cpp"))
    assert "refuses" in out.out and "unsure:" in out.out
    code, out = run(capsys, "fit", "--model", "qwen3-32b", "--memory-gib", "80", "--context", "4096", "--engine", "all")
    assert code == 2 and "--engine all needs --gpu" in out.err


def test_serving_sim_says_when_the_engine_would_not_start():
    """A model too big for the card is a sentence, not an error: the reader picks it from the menu (the
    keyboard gate walks every option), and the widget says why nothing is served."""
    from kvlab.widgets.serving import serving_sim_figure

    d = serving_sim_figure(model="llama-3.1-70b", gpu="h100-sxm", weights="BF16")
    v = d["view"]
    assert "would not start" in v["headline"] and "weights alone take" in v["headline"] and d["run"] is None
    assert v["stats"] == [] and d["rows"] == [] and v["pool"].startswith("No chat is served")
    # what the simulation leaves out does not depend on the run: the fold lists it even when nothing is played
    played = serving_sim_figure(model="llama-3.1-8b", gpu="h100-sxm", weights="BF16", num_prompts=8, users=4)
    assert d["not_modelled"] == played["not_modelled"] and "speculative decoding" in d["not_modelled"]
    four_bits = serving_sim_figure(model="llama-3.1-70b", gpu="h100-sxm", weights="Q4_K_M")
    assert four_bits["view"]["stats"] and four_bits["run"]  # it fits in 4 bits


def test_serving_sim_names_the_gpus_when_more_than_one_plays():
    """The served headline and the status line say how many cards the throughput and the price are for, once
    there is more than one (the GPUs control); one card is the default and is not named."""
    from kvlab.widgets.serving import serving_sim_figure

    one = serving_sim_figure(model="llama-3.1-8b", gpu="h100-sxm", weights="BF16", num_prompts=8, users=4)
    four = serving_sim_figure(model="llama-3.1-8b", gpu="h100-sxm", weights="BF16", num_prompts=8, users=4, n_gpus=4)
    name = four["gpu_info"]["name"]
    assert f"at a time on 4 x {name}: " in four["view"]["headline"] and "on 4 GPUs" in four["view"]["status"]
    assert " on " not in one["view"]["headline"].split(":")[0] and "GPUs" not in one["view"]["status"]
    # under the figures: which way kvlab leaned on published runs of this kind (a dense model on one H100: some)
    from kvlab.memory.serving import accuracy_of_kind

    assert one["view"]["kind_accuracy"] == accuracy_of_kind("h100-sxm", "llama-3.1-8b", 1)["sentence"]


@pytest.mark.parametrize("engine", ["sglang", "trtllm"])
def test_cli_fit_one_engine_prints_its_budget_through_the_one_protocol(capsys, engine):
    """fit --engine sglang|trtllm: the same row as engine_budget(deployment(...)) gives, step by step."""
    from kvlab.memory.compare import engine_budget
    from kvlab.memory.deployment import deployment

    argv = ("fit", "--model", "qwen3-32b", "--gpu", "h100-sxm", "--context", "32768", "--weights", "BF16")
    code, out = run(capsys, *argv, "--engine", engine, "--json")
    assert code == 0, out.err
    dep = deployment("qwen3-32b", gpu="h100-sxm", weights="BF16", kv="auto", engine=engine)
    want = engine_budget(dep, 32768)
    assert json.loads(out.out) == json.loads(json.dumps(want))
    assert want["engine"] == {"sglang": "sglang", "trtllm": "tensorrt-llm"}[engine] and want["max_tokens"] > 0
    code, out = run(capsys, *argv, "--engine", engine)
    assert code == 0 and f"{want['max_tokens']:,} tokens" in out.out and "rule:" in out.out
    code, out = run(
        capsys, "fit", "--model", "qwen3-32b", "--memory-gib", "80", "--context", "4096", "--engine", engine
    )
    assert code == 2 and f"--engine {engine} needs --gpu" in out.err
