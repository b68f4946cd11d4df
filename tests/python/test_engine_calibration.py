"""The calculators against real engine start-ups: the calibration logs, kvlab's reading of each,
its verdict from the model and card alone, the engine model's data, and one meaning per setup across
memory, fit, serve and explain-log.

Data: tests/python/data/engine_logs/calibration.json (each log's URL, GPU, command, logged figures);
kvlab.memory.calibration makes the comparisons and derives kvlab/data/engines.json; bench/engine_calibration.py
prints them as tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlab.cli import main
from kvlab.memory import calibration as bench
from kvlab.memory.catalogue import get_gpu, model_architecture
from kvlab.memory.engine_logs import explain_engine_log, parse_engine_log
from kvlab.memory.engines import GIB, vllm_batch_defaults, vllm_data, vllm_reserve, vllm_version_from_tags
from kvlab.memory.kv_bytes import memory_report, vllm_blocks, vllm_kv_layout
from kvlab.memory.serving import serving_estimate
from kvlab.memory.deployment import deployment
from kvlab.memory.verdict import verdict

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "python" / "data" / "engine_logs"
CALIBRATION = json.loads((LOGS / "calibration.json").read_text(encoding="utf-8"))["logs"]


# Figures kvlab does not rebuild, and why (each needs settings the excerpt does not show).
NOT_REBUILT = {
    # The Qwen3.6-27B logs come from club-3090 (github.com/noonghunna/club-3090), which runs vLLM with its own
    # patches and speculative decoding (DFlash, MTP: a draft layer with a cache group of its own). Their token line
    # is vLLM 0.20.2+'s int(concurrency x max_model_len) and is read as such (rebuilt from the concurrency line);
    # the concurrency itself needs the blocks one request takes in that patched layout, which is not stock vLLM's
    "calibration/vllm_qwen36_27b_rtx3090_tp2_dflash.txt": {"maximum concurrency"},
    "calibration/vllm_qwen36_27b_rtx3090_tp2_dflash_noviz.txt": {"maximum concurrency"},
    # (the two MTP 3 + prefix caching logs, vllm_qwen36_27b_fp8_tp2_dualmax.txt and
    # vllm_qwen36_27b_int4_rtx3090_tp2_mtp.txt, are rebuilt: 179 blocks per request, kv_bytes.vllm_speculative_state)
    "calibration/vllm_qwen36_27b_int4_rtx3090_tp2_util088.txt": {"maximum concurrency"},
    # (club-3090 #74, #77 and #142, cut before their args line, are rebuilt since session 14 gave their entries the
    # compose's settings: MTP 3 and prefix caching)
    # 0.20.1 still printed blocks // groups x block size; 67,728 is no whole number of kvlab's 784-token blocks
    "calibration/vllm_qwen36_27b_rtx4090_tp2_v0201.txt": {"KV cache size in tokens"},
    # Qwen3-235B-A22B-FP8 on 4 x H100 (vllm-project/vllm#21348, read with its config.json since issue 39): 178,880
    # tokens is 1.1 % fewer than whole 16-token blocks of the printed 8.11 GiB at 94 layers x 1 KV head per GPU x 128
    # (180,816-181,040); the two-line excerpt (no version, no block count, an LMCache connector) does not show why
    "calibration/vllm_qwen3_235b_a22b_fp8_h100_tp4.txt": {"KV cache size in tokens"},
}


def test_at_least_twenty_real_logs_with_sources_three_gpu_kinds_two_multi_gpu():
    assert len(CALIBRATION) >= 20
    for entry in CALIBRATION:
        assert entry["source"].startswith("https://"), entry["file"]
        assert (LOGS / entry["file"]).read_text(encoding="utf-8").strip(), entry["file"]
        # every engine here is one explain-log reads (issue 39 item 5): none is marked engine_supported: false
        assert entry["engine"] in ("vllm", "llama.cpp", "sglang", "tensorrt-llm"), entry["file"]
        assert entry.get("engine_supported") is not False, entry["file"]
    gpus = {bench.gpu_of(e)["id"] for e in CALIBRATION if bench.gpu_of(e)}
    assert len(gpus) >= 3, gpus
    assert sum((e.get("n_gpus") or 1) > 1 for e in CALIBRATION) >= 2
    versions = {e["engine_version"] for e in CALIBRATION if e.get("engine_version")}
    assert any(v.startswith("0.8") for v in versions) and any(v.startswith("0.1") for v in versions)


def test_every_logged_kv_figure_is_read_within_two_percent_or_the_reason_is_listed():
    rows, ok, total = bench.reading_table()
    assert total >= 20
    missed = {}
    for r in rows:
        if r["note"]:
            missed[r["file"]] = set(r["note"].split("; "))
    assert missed == NOT_REBUILT
    assert ok >= total - sum(len(v) for v in NOT_REBUILT.values())


def test_every_sglang_and_tensorrt_llm_log_is_read_as_its_engine():
    """The fourteen SGLang and TensorRT-LLM logs: recognised, their figures read, and no figure called a mismatch."""
    entries = [e for e in CALIBRATION if e["engine"] in ("sglang", "tensorrt-llm")]
    assert len(entries) == 14
    for entry in entries:
        model, _ = bench.model_of(entry)
        r = explain_engine_log(bench.log_text(entry), model)
        assert r["engine"] == entry["engine"], entry["file"]
        assert r["lines_read"] >= 1, entry["file"]
        assert not [c for c in r["checks"] if c["status"] == "differs"], entry["file"]
        assert any("not modelled yet" in n for n in r["notes"]), entry["file"]


# Logs whose predicted KV memory is outside the verdict's band, each with its cause. The test checks each is still
# outside it, so a fix shows here as a failure that asks for the entry to go. (Session 14: the two Qwen3.6-35B-A3B
# NVFP4 logs left it once their entries gave the checkpoint's stored size, less the MTP head vLLM does not load:
# +2.7 GiB -> +0.8 GiB, within the band; see the test below.)
OUTSIDE_THE_BAND = {
    # Gemma 4 26B-A4B FP8 on an L40S with a separate draft model (google/gemma-4-26B-A4B-it-assistant, one speculative
    # token): the drafter's own weights and KV cache are not modelled, so kvlab's KV is 6.4 GiB (+54 %) too large
    "calibration/vllm_gemma4_26b_a4b_fp8_l40s_v0202.txt",
}


def test_a_logs_checkpoint_is_counted_as_stored_less_the_mtp_head_vllm_skips():
    """The NVFP4 pair's checkpoint (nvidia/Qwen3.6-35B-A3B-NVFP4, 23.41e9 B with a 1.689e9 B BF16 MTP head) is
    what the prediction counts, less the head: neither log runs an MTP drafter."""
    entry = next(e for e in CALIBRATION if e["file"] == "calibration/vllm_qwen36_35b_a3b_nvfp4_rtx5090.txt")
    ck = bench.checkpoint_of(entry)
    assert (ck["bytes"], ck["mtp_bytes"], ck["name"]) == (23_410_000_000, 1_689_000_000, "nvidia/Qwen3.6-35B-A3B-NVFP4")
    case = next(c for c in bench.prediction_cases() if c["entry"]["file"] == entry["file"])
    _, v = bench.predict_after(case)
    weights = next(c for c in v["components"] if c["name"] == "weights")
    assert weights["bytes"] == 23_410_000_000 - 1_689_000_000
    # without the entry's checkpoint the same case is params x bits (the embedding and lm_head at 16 bits), 0.5 GiB
    # lighter than the stored file less MTP (2.7 GiB when they were counted at 4.5 bits)
    bare = dict(case, entry={k: x for k, x in entry.items() if k != "checkpoint"})
    after_bare, _ = bench.predict_after(bare)
    after, _ = bench.predict_after(case)
    assert after_bare - after > 0.3
    assert abs(after - entry["logged"]["available_kv_gib"]) < abs(after_bare - entry["logged"]["available_kv_gib"])


def test_verdict_from_the_model_and_card_matches_every_real_start_or_refusal():
    rows = bench.prediction_table()
    assert len(rows) >= 5
    for r in rows:
        assert r["starts_after"] == r["starts_logged"], r
    # and the predicted KV memory is within the error band the verdict states for it (the fit's, or a measured
    # model's own, wider where the evidence disagrees: gpt-oss-120b), but for the named misses
    for r in rows:
        assert r["band"] >= vllm_data()["reserve_fit"]["band_gib"] - 1e-9, r
        outside = abs(r["after"] - r["logged"]) > r["band"]
        assert outside == (r["file"] in OUTSIDE_THE_BAND), r
    assert OUTSIDE_THE_BAND <= {r["file"] for r in rows}


def test_the_engine_data_is_what_the_logs_give():
    """engines.json's derived keys equal a fresh derivation from the calibration logs (no drift, no hand edits)."""
    stored = json.loads((ROOT / "pycode" / "kvlab" / "data" / "engines.json").read_text(encoding="utf-8"))["vllm"]
    derived = bench.derive()
    for key in ("driver_memory", "driver_ratio", "reserve_fit", "measured_reserve", "loaded_weights"):
        assert stored[key] == derived[key], key


def test_vllm_batch_defaults_follow_the_card():
    assert vllm_batch_defaults({"id": "h100-sxm", "name": "NVIDIA H100 SXM 80GB", "memory_gib": 80}) | {} == {
        **vllm_batch_defaults({"id": "h200", "name": "NVIDIA H200", "memory_gib": 141}),
    }
    big = vllm_batch_defaults({"id": "h200", "name": "NVIDIA H200", "memory_gib": 141})
    assert (big["max_num_batched_tokens"], big["max_num_seqs"]) == (8192, 1024)
    for card in ({"id": "a100-80gb", "name": "NVIDIA A100 80GB", "memory_gib": 80}, {"id": "l4", "memory_gib": 24}):
        small = vllm_batch_defaults(card)
        assert (small["max_num_batched_tokens"], small["max_num_seqs"]) == (2048, 256)
    assert vllm_batch_defaults(None)["tier"] == "small"


def test_gpt_oss_120b_at_131072_on_one_h100_does_not_fit_as_vllm_refuses():
    """vllm-project/vllm#27508 and #23278, both on vLLM's Marlin MXFP4 path: 1.71 GiB of KV at 0.95, -2.14 GiB at
    0.9; one request needs 4.54 GiB."""
    v = verdict(
        deployment(
            "gpt-oss-120b",
            weights="MXFP4",
            gpu="h100-sxm",
            engine="vllm",
            gpu_memory_utilization=0.95,
            max_num_batched_tokens=1024,
            mxfp4_backend="marlin",
        ),
        131072,
    )
    assert not v["fits"] and v["binding"] == "kv_cache"
    kv = next(c for c in v["components"] if c["name"] == "kv_cache")
    assert f"{kv['bytes'] / GIB:.2f}" == "4.54"  # the log's "4.54 GiB KV cache is needed"
    available = v["budget_bytes"] - v["total_bytes"] + kv["bytes"]
    assert abs(available / GIB - 1.71) <= v["error_band_bytes"] / GIB
    assert v["engine_model"]["mxfp4_kernel"] == "marlin" and "as given" in v["engine_model"]["mxfp4_kernel_how"]


def test_gpt_oss_120b_on_one_h100_takes_the_kernel_paths_own_weights_and_reserve():
    """Marlin (#23278: 65.97 GiB loaded, -2.14 GiB of KV at the defaults) refuses at 32,768; Triton, the card's path
    (#33155: 64.38 GiB loaded), refuses too where the sampler warm-up sorts natively (a pip install up to 0.16:
    #33155 is "OOM on one H100 after upgrading from v0.11.2 to v0.14.1"), and starts, a close call, where it runs
    FlashInfer (GPUStack's six runs on vLLM 0.10.2's Docker image started at 32,768), with the pool the fit run shows
    it held."""
    dep = {"weights": "MXFP4", "gpu": "h100-sxm", "engine": "vllm"}
    marlin = verdict(deployment("gpt-oss-120b", **dep, mxfp4_backend="marlin"), 32768)
    native = verdict(deployment("gpt-oss-120b", **dep), 32768)
    triton = verdict(deployment("gpt-oss-120b", **dep, sampler="flashinfer"), 32768)
    assert not marlin["fits"] and not native["fits"] and triton["fits"] and triton["confidence"] == "low"
    assert "native top-k/top-p sort" in {c["name"]: c for c in native["components"]}["activation_reserve"]["how"]
    assert triton["engine_model"]["mxfp4_kernel"] == "triton" and "Marlin" in triton["engine_model"]["mxfp4_kernel_how"]
    part = {v["engine_model"]["mxfp4_kernel"]: {c["name"]: c for c in v["components"]} for v in (marlin, triton)}
    assert f"{part['marlin']['weights']['bytes'] / GIB:.2f}" == "65.97"
    assert f"{part['triton']['weights']['bytes'] / GIB:.2f}" == "64.38"
    assert "Triton MXFP4 path" in part["triton"]["activation_reserve"]["how"]
    assert "gpustack" in part["triton"]["activation_reserve"]["how"]
    # the Triton pool: what the fit run's own figures say vLLM held, no more
    pool = triton["budget_bytes"] - part["triton"]["weights"]["bytes"] - part["triton"]["activation_reserve"]["bytes"]
    run = next(
        r
        for r in json.loads(bench.SERVING_RUNS.read_text())["runs"]
        if r["id"] in bench.pool_runs() and "gptoss120b" in r["id"]
    )
    assert pool / GIB == pytest.approx(bench.serving_pool(run)["gib"], abs=0.01)


def test_gemma3_27b_pays_for_vllms_padded_layer_groups():
    """52 sliding + 10 full layers: groups of 10, the sliding type padded to 60 layers. At 8,192 tokens with
    8192 batched tokens a sliding layer holds ceil(min(1023 + 8192, 8192) / 16) + 1 = 513 blocks, a full one
    512: a request takes (6 x 513 + 512) blocks of 10 layers x 16 tokens x 2 x 16 heads x 128 x 2 B."""
    arch = model_architecture("gemma-3-27b-it")
    layout = vllm_kv_layout(arch, 8192, max_num_batched_tokens=8192)
    page = 16 * 2 * 16 * 128 * 2
    assert (layout["group_size"], layout["n_groups"], layout["padding_layers"]) == (10, 7, 8)
    assert layout["bytes_per_request"] == (6 * 513 + 512) * 10 * page
    v = verdict(deployment("gemma-3-27b-it", weights="BF16", gpu="h100-sxm", engine="vllm"), 8192)
    assert next(c["bytes"] for c in v["components"] if c["name"] == "kv_cache") == layout["bytes_per_request"]
    # what vLLM prints for an available memory: blocks, tokens, concurrency
    out = vllm_blocks(layout, 100 * layout["memory_per_block"] + 5)
    assert out == {"blocks": 100, "tokens": 100 // 7 * 16, "concurrency": 100 / (6 * 513 + 512)}


def test_a_close_call_says_so():
    v = verdict(deployment("llama-3.1-8b", weights="BF16", gpu="rtx-3090", engine="vllm", version="v0"), 29000)
    assert v["confidence"] == "low" and v["warnings"] and "close call" in v["warnings"][0]
    far = verdict(deployment("llama-3.1-8b", weights="BF16", gpu="h100-sxm", engine="vllm", sampler="native"), 4096)
    assert far["confidence"] == "high" and not far["warnings"]


def test_max_num_seqs_caps_the_sequences_vllm_runs():
    v = verdict(deployment("qwen3-0.6b", weights="BF16", gpu="h100-sxm", engine="vllm"), 256)
    assert v["max_sequences"] == 1024 and v["engine_model"]["max_num_seqs_caps_sequences"]
    assert "max_num_seqs" in v["max_sequences_text"]


CASES = [
    ("llama-3.1-8b", "h100-sxm", 32768),
    ("gemma-3-27b-it", "h100-sxm", 8192),
    ("gpt-oss-20b", "a100-80gb", 131072),
    ("qwen3.6-27b", "h100-sxm", 32768),
]


@pytest.mark.parametrize("model, gpu, context", CASES)
def test_one_setup_one_number_in_memory_fit_serve_and_explain_log(model, gpu, context):
    """The KV memory one request takes under vLLM, the same in all four calculators."""
    batched = vllm_batch_defaults({"id": gpu, "name": gpu, "memory_gib": 80})["max_num_batched_tokens"]
    v = verdict(deployment(model, weights="BF16", gpu=gpu, engine="vllm"), context, solve=False)
    fit_kv = next(c["bytes"] for c in v["components"] if c["name"] == "kv_cache")
    mem = memory_report(model, context, mode="vllm", max_num_batched_tokens=batched)
    assert mem["total_bytes"] == fit_kv
    serve = serving_estimate(model, gpu, context, batch=1, weights_format="BF16", solve=False)
    assert serve["verdict"]["components"][1]["bytes"] == fit_kv
    # explain-log: vLLM's refusal line for a request that needs this much
    log = (
        f"ValueError: To serve at least one request with the models's max seq len ({context}), "
        f"({fit_kv / GIB:.2f} GiB KV cache is needed, which is larger than the available KV cache memory (0.50 GiB)."
    )
    r = explain_engine_log(log, model, max_num_batched_tokens=batched)
    check = next(c for c in r["checks"] if c["figure"] == "KV memory one max-length request needs")
    assert check["status"] == "exact", check


def test_memory_json_carries_the_warnings_the_text_prints(capsys):
    assert main(["memory", "--model", "llama-2-7b", "--context", "8192", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["warnings"] and "beyond the 4,096 tokens" in data["warnings"][0]
    assert main(["memory", "--model", "llama-2-7b", "--context", "8192"]) == 0
    assert "WARNING: " + data["warnings"][0] in capsys.readouterr().out


def test_batch_means_sequences_of_context_tokens_in_memory_as_in_fit(capsys):
    """--batch 4 is four sequences of --context tokens in memory (both engines) and in fit."""
    for mode in ("llamacpp", "vllm"):
        assert (
            main(["memory", "--model", "llama-3.1-8b", "--context", "8192", "--batch", "4", "--mode", mode, "--json"])
            == 0
        )
        mem = json.loads(capsys.readouterr().out)["total_bytes"]
        v = verdict(deployment("llama-3.1-8b", weights="BF16", gpu="h100-sxm", engine=mode), 8192, n_seq=4)
        assert mem == next(c["bytes"] for c in v["components"] if c["name"] == "kv_cache") == 4 * 8192 * 128 * 1024


def test_fit_json_carries_warnings_confidence_and_the_engine_version(capsys):
    args = ["fit", "--model", "gpt-oss-120b", "--context", "131072", "--gpu", "h100-sxm", "--mode", "vllm"]
    assert main([*args, "--weights", "MXFP4", "--gpu-memory-utilization", "0.95", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"warnings", "confidence", "engine_model"} <= set(data) and "V1" in data["engine_model"]["version"]
    assert main([*args, "--weights", "MXFP4", "--gpu-memory-utilization", "0.95"]) == 0
    assert "engine model: vLLM 0.8-0.19 (V1 engine)" in capsys.readouterr().out


def test_bad_engine_arguments_are_named_errors():
    with pytest.raises(ValueError, match="max_num_batched_tokens"):
        verdict(
            deployment("llama-3.1-8b", gpu="h100-sxm", engine="vllm", weights="BF16", max_num_batched_tokens=0), 4096
        )
    with pytest.raises(ValueError, match="engine_version"):
        verdict(deployment("llama-3.1-8b", gpu="h100-sxm", engine="vllm", weights="BF16", version="v2"), 4096)


def test_a_logs_mxfp4_kernel_path_is_read_off_the_log_or_its_entry():
    entries = {e["file"]: e for e in bench.calibration()}
    marlin = entries["calibration/vllm_gpt_oss_120b_h100_negative_kv_error.txt"]
    triton = entries["calibration/vllm_gpt_oss_120b_h100_v0141_weights.txt"]
    stated = entries["vllm_gpt_oss_120b_h100_error.txt"]
    assert bench.mxfp4_backend_of(marlin, bench.log_text(marlin)) == "marlin"  # printed by marlin_utils_fp4.py
    assert bench.mxfp4_backend_of(triton, bench.log_text(triton)) == "triton"  # "[mxfp4.py:165] Using Triton backend"
    assert bench.mxfp4_backend_of(stated, bench.log_text(stated)) == "marlin" and stated["mxfp4_backend_why"]
    assert bench.mxfp4_backend_of({}, "INFO Model loading took 13.72 GiB") is None


def test_a_pcie_pair_keeps_no_custom_all_reduce_buffers():
    """The tensor-parallel extra is an NVLink pair's (H100: non_torch 3.58 GiB at TP2 against 1.79 at TP1); GPUs
    on PCIe get the PCIe figure (club-3090#1087: the whole non-torch memory of a 2 x RTX 5090 pair is 0.75 GiB)."""
    fit = vllm_data()["reserve_fit"]
    assert fit["tensor_parallel_extra_pcie_gib"] < fit["tensor_parallel_extra_gib"]
    arch = model_architecture("qwen3-8b")
    nvlink, pcie = (vllm_reserve(arch, 2048, 256, 2, card=get_gpu(g)) for g in ("h100-sxm", "rtx-3090"))
    assert nvlink["gib"] - pcie["gib"] == pytest.approx(
        fit["tensor_parallel_extra_gib"] - fit["tensor_parallel_extra_pcie_gib"]
    )
    assert "PCIe" in pcie["how"] and "PCIe" not in nvlink["how"]
    # and the verdict on a PCIe card says so
    v = verdict(deployment("qwen3-8b", weights="BF16", gpu="rtx-3090", engine="vllm", tp=2), 8192)
    assert "PCIe" in {x["name"]: x for x in v["components"]}["activation_reserve"]["how"]


def test_the_line_tag_table_is_the_stored_logs_that_state_their_version():
    """engines.json vllm.log_tags equals a fresh reading of the stored logs with a stated vLLM version (no hand
    edits); a fork's build (Intel's llm-scaler image) gives no tags."""
    assert vllm_data()["log_tags"] == bench.log_tag_table()
    tags = vllm_data()["log_tags"]["tags"]
    assert tags["gpu_worker.py:508"] == ["0.24.0"]  # vllm_qwen36_27b_fp8_tp2_dualmax.txt, 'vLLM: 0.24.0'
    assert not any("llm-scaler" in r or "0.26" in r for releases in tags.values() for r in releases)


def test_a_log_that_prints_no_version_is_placed_by_its_line_tags():
    """club-3090#751 prints no version; [gpu_worker.py:538] is 0.25's line for "Available KV cache memory", so the
    log is read as a 0.25 start-up (the CUDA graph estimate subtracted) and explain-log says why."""
    entry = {e["file"]: e for e in bench.calibration()}["calibration/vllm_qwen36_27b_fp8_rtx3090_tp2_gpuworker538.txt"]
    assert entry["engine_version"] is None
    text = bench.log_text(entry)
    parsed = parse_engine_log(text)["vllm"]["version"]
    assert parsed["value"] == (0, 25) and parsed["releases"] == ["0.25.0", "0.25.1"]
    setting = {s["name"]: s for s in explain_engine_log(text, "qwen3.6-27b")["settings"]}["vLLM version"]
    assert setting["value"] == "0.25" and "[gpu_worker.py:538]" in setting["from"]
    # a printed version wins over the tags; tags of two releases that never share a log place nothing
    printed = "INFO Initializing a V1 LLM engine (v0.20.1) with config\n" + text
    assert parse_engine_log(printed)["vllm"]["version"]["value"] == (0, 20)
    assert vllm_version_from_tags("[gpu_worker.py:508] a\n[gpu_worker.py:563] b") is None
    assert vllm_version_from_tags("[gpu_worker.py:1] unknown line") is None


def test_the_prediction_bench_counts_int8_per_token_head_as_itself():
    """bench/engine_calibration.py --prediction passes --kv-cache-dtype int8_per_token_head through (it was
    "predicted as fp8"): club-3090 #602's KV tokens are the available memory over one request of its own layout,
    181 blocks of 17 layers x 1,584 tokens x 1,040 B, where its fp8 sibling (PR 594) takes 179 blocks of 17 x 1,600 x
    1,024 B. vLLM 0.20.2+ prints int(blocks / blocks per request x max_model_len), its null block among the blocks,
    so the request's own blocks divide, not the request plus the null block (which the bench did before session 11:
    8 % too few tokens for Qwen3.5-4B's 11-block requests)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import engine_calibration  # bench/engine_calibration.py

    rows = {r["file"]: r for r in engine_calibration.vllm_prediction_rows(engine_calibration.constant_sources())}
    for name, blocks, block_bytes in (
        ("vllm_qwen36_27b_fp8_rtx3090_3090ti_tp2_int8kv.txt", 181, 17 * 1584 * 1040),
        ("vllm_qwen36_27b_fp8_tp2_dualmax.txt", 179, 17 * 1600 * 1024),
    ):
        r = rows["calibration/" + name]
        assert "predicted as fp8" not in r["how"], name
        assert r["predicted_tokens"] == pytest.approx(r["predicted_gib"] * GIB * 262144 / (blocks * block_bytes))


def test_the_stored_cuda_graph_fit_is_what_the_logs_give():
    """engines.json versions["0.20+"].cuda_graphs equals bench/engine_calibration.py's fit of the stored logs, its
    held-out list included (session 10 left four newer held-out logs out of the stored list)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import engine_calibration  # bench/engine_calibration.py

    stored = vllm_data()["versions"]["0.20+"]["cuda_graphs"]
    derived = engine_calibration.cuda_graph_fit(write=False)
    assert {k: stored[k] for k in derived} == derived


def test_a_log_a_fit_holds_out_did_not_set_a_constant():
    """The prediction bench splits logs into 'set a constant' and held out by what engines.json cites; a log that a
    fit lists under "held_out" is cited as a check, not as a source (util088 was counted as fit until session 11)."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import engine_calibration  # bench/engine_calibration.py

    cited = engine_calibration.constant_sources()
    entries = {e["file"]: e for e in bench.calibration()}
    held = vllm_data()["versions"]["0.20+"]["cuda_graphs"]["held_out"]
    util088 = "calibration/vllm_qwen36_27b_int4_rtx3090_tp2_util088.txt"
    assert util088 in {h["file"] for h in held}
    assert not engine_calibration.set_a_constant(entries[util088], cited)
    fitted = vllm_data()["versions"]["0.20+"]["cuda_graphs"]["fitted_on"][0]["file"]
    assert engine_calibration.set_a_constant(entries[fitted], cited)


def test_line_tags_place_a_log_left_out_of_the_table_on_its_own_side_of_0_20():
    """Leave one out: each log that states its release, placed by the other logs' tags alone, lands on its own side
    of 0.20, the release from which vLLM subtracts its CUDA graph estimate (vllm/envs.py at v0.20.0). Before the
    range started at 0.20, 0.21.0 placed with the 0.20.2rc1 nightlies (kv_cache_utils.py:1710-1711 is both) was the
    one on the wrong side."""
    rows = bench.log_tag_leave_one_out()
    placed = [r for r in rows if r["same_range"] is not None]
    assert len(placed) >= 15
    assert [(r["stated"], r["releases"]) for r in placed if not r["same_range"]] == []
    # placed at the very release stated: 19 of 24 since session 17's logs (was 0.85 of the placed before them); the
    # others land on a neighbour with the same lines (0.17.1 with 0.19.x, 0.19.1 with 0.19.0, 0.25.0 with 0.25.1)
    assert sum(r["stated"] in r["releases"] for r in placed) >= 0.75 * len(placed)


# llama.cpp logs whose own figure in table 2b (the KV size, the cells or context, --fit's pick) is more than 5 % off
# kvlab's prediction, each with its cause. The test checks each is still off, so a fix shows here as a failure that
# asks for the entry to go.
LLAMACPP_MISSES = {
    # (ggml-org/llama.cpp#9390, DeepSeek's 61 layers on 8 GPUs with K q4_0: a miss until session 15. That build or
    # GGUF predates llama.cpp's MLA cache and cached every head, K 128 x 192 and V 128 x 128 values per layer per
    # cell: 8 layers x 16,384 cells x (24,576 x 18/32 + 16,384 x 2) B = 5,824.00 MiB. Its entry now states
    # mla_cache "per-head", read off those very buffers, so the bench counts it with the logs that set a constant;
    # test_explain_log_finds_the_per_head_mla_layout_in_an_old_log checks explain-log finds the layout alone.)
    # ggml-org/llama.cpp#25465: Qwen3.6-27B UD-Q4_K_XL with MTP drafting on an RTX 5090, --fit-target 512, -c unset:
    # --fit chose 188,672 (the comment's prose), kvlab 235,776 (+25 %). kvlab does not model the MTP draft's context
    # (1,024 + 648 MiB in the log's first breakdown; llamacpp.FIT_NOT_MODELLED), and its free memory (32 GiB less
    # 0.5 GiB, 32,256 MiB), weights (Q4_K_M, 15,739 MiB) and compute buffer (1,118 MiB) are estimates where the log
    # has 31,153, 16,386 and 756 MiB: with the log's three and the draft's 1,672 MiB, fit_params gives 186,624 (-1.1 %).
    "calibration/llamacpp_qwen36_27b_rtx5090_fit_mtp.txt": "context --fit chose",
}


def test_the_prediction_bench_predicts_llamacpp_logs_with_kvlabs_llamacpp_model():
    """Table 2b's llama.cpp rows: every llama.cpp log is predicted or listed with its reason; the settings are the
    entry's args (not its printed KV figures); the KV bytes are kvlab's llama.cpp model's, and the verdict's where a
    deployment can state the same settings; --fit's pick is the verdict's rule (llamacpp_fit) with the log's
    --fit-target; and the figures more than 5 % off are exactly the named misses."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import engine_calibration  # bench/engine_calibration.py

    from kvlab.memory.kv_bytes import llamacpp_kv_cache
    from kvlab.memory.verdict import llamacpp_fit

    rows = engine_calibration.llamacpp_prediction_rows(engine_calibration.constant_sources())
    skipped = dict(engine_calibration.LLAMACPP_SKIPPED)
    files = {e["file"] for e in CALIBRATION if e["engine"] == "llama.cpp"}
    predicted = {r["file"] for r in rows}
    assert predicted | set(skipped) == files and not predicted & set(skipped)
    assert all(skipped.values())
    assert len(rows) >= 7 and sum(r["primary"]["kv"] is not None for r in rows) >= 6
    entries = {e["file"]: e for e in CALIBRATION}
    by_verdict = 0
    for r in rows:
        entry, s = entries[r["file"]], r["settings"]
        args = entry.get("args", {})
        arch = model_architecture(bench.model_of(entry)[0])
        assert s["n_ctx"] == args.get("n_ctx", arch.max_position_embeddings), r["file"]
        assert (s["n_seq"], s["type_k"]) == (args.get("n_parallel") or 1, args.get("type_k") or "f16"), r["file"]
        assert not {c["key"].split("[")[0] for c in r["compared"]} & set(args), r["file"]  # no figure is an input
        kv = llamacpp_kv_cache(
            arch,
            s["n_ctx"],
            s["type_k"],
            s["type_v"],
            n_seq=s["n_seq"],
            n_ubatch=s["n_ubatch"],
            kv_unified=s["kv_unified"],
            swa_full=s["swa_full"],
            flash_attn=s["flash_attn"],
            mla_cache=args.get("mla_cache", "latent"),
        )
        assert s["mla_cache"] == args.get("mla_cache", "latent"), r["file"]
        assert r["kv"]["total_bytes"] == kv["total_bytes"], r["file"]
        # the verdict's KV per GPU, where a deployment states the same settings (one cache type, -fa on or one V
        # width, one stream per sequence, -c a multiple of -np)
        widths = {layer.v_values for layer in arch.layers if layer.v_values}
        if (
            s["type_k"] == s["type_v"]
            and (s["flash_attn"] or len(widths) <= 1)
            and not s["swa_full"]
            and s["kv_unified"] == (s["n_seq"] == 1)
            and s["n_ctx"] % s["n_seq"] == 0
        ):
            dep = deployment(
                arch, kv=s["type_k"], memory_gib=4096, tp=r["gpus"], engine="llamacpp", n_ubatch=s["n_ubatch"]
            )
            v = verdict(dep, s["n_ctx"] // s["n_seq"], n_seq=s["n_seq"], solve=False)
            assert next(c["bytes"] for c in v["components"] if c["name"] == "kv_cache") == r["kv_bytes_per_gpu"]
            by_verdict += 1
        if r["fit"]:
            dep = r["fit_deployment"]
            assert r["fit"]["target_bytes"] == (args.get("fit_target_mib") or 1024) * 2**20
            same = engine_calibration.llamacpp_fit_context(dep, s["n_seq"])  # at the default --fit-target
            assert same["n_ctx"] == llamacpp_fit(dep, n_seq=s["n_seq"])["unset"]["n_ctx"]
    assert by_verdict >= 5
    assert sum(r["primary"]["fit"] is not None for r in rows) >= 1
    misses = {r["file"]: c["label"] for r in rows for c in r["primary"].values() if c and abs(c["error"]) > 0.05}
    assert misses == LLAMACPP_MISSES
    # and every other llama.cpp figure compared (not only each log's own) is within 2 %, but the missed logs'
    for r in rows:
        if r["file"] not in LLAMACPP_MISSES:
            assert all(abs(c["error"]) <= 0.02 for c in r["compared"]), r["file"]


def test_the_vision_tower_off_frees_what_a_real_pair_of_start_ups_shows():
    """club-3090 #75 and #76: one reporter, one build, two RTX 3090s, Qwen3.6-27B AutoRound INT4; #76 adds
    --language-model-only. vLLM then neither loads the vision tower's blocks (0.77 GiB in BF16, half a GPU each)
    nor profiles the encoder (0.81 GiB at its widest at tp 2, 0.38 above the text run): 0.77 GiB more cache per GPU
    in kvlab, 0.78 GiB (10.36 against 9.58) in the logs. Both logs run a DFlash drafter kvlab does not model, so
    their absolute errors are large; the difference is the tower's."""
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    import engine_calibration  # bench/engine_calibration.py

    rows = {r["file"]: r for r in engine_calibration.vllm_prediction_rows(engine_calibration.constant_sources())}
    on, off = (rows[f"calibration/vllm_qwen36_27b_rtx3090_tp2_dflash{s}.txt"] for s in ("", "_noviz"))
    assert off["logged_gib"] - on["logged_gib"] == pytest.approx(0.78)
    assert off["predicted_gib"] - on["predicted_gib"] == pytest.approx(0.78, abs=0.05)
