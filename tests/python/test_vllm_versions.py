"""vLLM version ranges in the fit verdict: "v0", "v1" (0.8-0.19, the default) and "0.20+".

0.20+ adds what recent vLLM does at start-up (kvlab/data/engines.json, versions["0.20+"], each with its source):
the CUDA graph estimate comes off the KV budget, the block pool holds back one null block, a hybrid model is
refused when max_num_seqs exceeds its Mamba cache blocks, and --max-model-len auto fits the longest context.

Checked against the real 0.20+-style logs in tests/python/data/engine_logs/calibration/ (calibration.json holds
each one's URL and settings), read with explain-log's own readers.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from kvlab.dtypes import GIB
from kvlab.memory import engines
from kvlab.memory.engine_logs import parse_engine_log
from kvlab.memory.deployment import deployment
from kvlab.memory.verdict import verdict

ROOT = Path(__file__).resolve().parents[2]
LOGS = ROOT / "tests" / "python" / "data" / "engine_logs"
sys.path.insert(0, str(ROOT / "bench"))

# vLLM's refusal, as real 0.20-0.28 runs print it
REFUSAL = re.compile(
    r"max_num_seqs \((\d+)\) exceeds available Mamba cache blocks \((\d+)\)\. Each decode sequence requires one "
    r"Mamba cache block, so CUDA graph capture cannot proceed\. Please lower max_num_seqs to at most (\d+) or "
    r"increase gpu_memory_utilization\."
)


def _entry(word: str) -> dict:
    logs = json.loads((LOGS / "calibration.json").read_text(encoding="utf-8"))["logs"]
    (entry,) = [e for e in logs if word in e["file"]]
    return entry


def _read(entry: dict) -> dict:
    lines = (LOGS / entry["file"]).read_text(encoding="utf-8").splitlines()
    return parse_engine_log("\n".join(line for line in lines if not line.startswith("# ")))["vllm"]


def _available_gib(v: dict) -> float:
    """KV memory the verdict leaves on the fullest GPU: budget - weights - reserve (with the CUDA graphs)."""
    parts = {c["name"]: c["bytes"] for c in v["components"]}
    return (v["budget_bytes"] - parts["weights"] - parts["activation_reserve"]) / GIB


# The real logs of vLLM 0.20+'s start-up (or the 0.20.2 nightlies that print the same lines) whose model, card and
# settings kvlab knows: Qwen3.6-27B AutoRound INT4 with an fp8_e5m2 cache on RTX 3090s.
LOGGED = {
    "tp4_cgprofile": {
        "tp": 4,
        "gpu_memory_utilization": 0.92,
        "max_num_batched_tokens": 8192,
        "max_num_seqs": 4,
        "kv": "fp8",
        "weights": "INT4",
    },
    "util088": {"tp": 2, "gpu_memory_utilization": 0.88, "kv": "fp8", "weights": "INT4"},
}


@pytest.mark.parametrize("word", sorted(LOGGED))
def test_available_kv_memory_against_real_logs(word):
    """kvlab's available KV memory under "0.20+" is within the verdict's own error band of the logged figure.

    The tolerance is the band the verdict reports (error_band_bytes): the reserve fit's band plus the CUDA
    graph estimate's worst error on its held-out 0.20+ logs (1.315 GiB, the DeepSeek-V4-Flash log that captures
    batches of 192). A 0.19.1 log's estimate (Qwen3-8B on an A100 40GB, 2.35 GiB) is another torch and CUDA stack,
    reported apart (before_0_20)."""
    entry = _entry(word)
    logged = entry["logged"]["available_kv_gib"]
    assert _read(entry)["available_gib"]["value"] == logged  # explain-log reads the same figure
    v = verdict(
        deployment(
            "qwen3.6-27b", gpu="rtx-3090", engine="vllm", version="0.20+", allow_long_context=True, **LOGGED[word]
        ),
        entry["args"]["max_model_len"],
        solve=False,
    )
    assert abs(_available_gib(v) - logged) * GIB <= v["error_band_bytes"]
    graphs = engines.vllm_data()["versions"]["0.20+"]["cuda_graphs"]
    worst = max(abs(h["error_gib"]) for h in graphs["held_out"])
    assert worst == pytest.approx(1.315)
    assert [a["file"] for a in graphs["before_0_20"]] == ["calibration/vllm_qwen3_8b_a100_40gb_v0191.txt"]
    assert v["error_band_bytes"] / GIB == pytest.approx(
        engines.vllm_data()["reserve_fit"]["band_gib"] + worst, abs=0.001
    )
    assert v["engine_model"]["version"].startswith("vLLM 0.20+")
    # the "0.20+" rule takes the CUDA graph estimate more than V1's
    v1 = verdict(
        deployment(
            "qwen3.6-27b", gpu="rtx-3090", engine="vllm", allow_long_context=True, sampler="flashinfer", **LOGGED[word]
        ),
        entry["args"]["max_model_len"],
        solve=False,
    )
    cg = engines.vllm_cuda_graph_estimate()["bytes"]
    assert _available_gib(v1) - _available_gib(v) == pytest.approx(cg / GIB, abs=1e-6)


def test_cuda_graph_estimate_fit_and_hold_out():
    """The constant is the median of the logs that print the estimate under 0.20's default; it is off by at most
    0.10 GiB on them and 1.315 GiB on the held-out ones (an estimate implied by the utilization line, a
    0.18-era log, and a 0.25.0 log that captures batches of 192); the verdict's band covers them."""
    from engine_calibration import cuda_graph_rows  # bench/engine_calibration.py

    rows = {r["file"].split("/")[-1]: r for r in cuda_graph_rows()}
    assert rows["vllm_qwen36_27b_int4_rtx3090_tp4_cgprofile.txt"]["gib"] == 0.17
    assert rows["vllm_unnamed_model_tp2_v0271_cgprofile.txt"]["gib"] == 0.36
    assert rows["vllm_qwen36_27b_int4_rtx3090_tp2_util088.txt"]["gib"] == pytest.approx(0.0208 * 23.58)
    assert not rows["vllm_unnamed_hybrid_mamba_util070_cgprofile.txt"]["subtracted"]
    assert {k for k, r in rows.items() if r["in_fit"]} == {
        "vllm_qwen36_27b_int4_rtx3090_tp4_cgprofile.txt",
        "vllm_unnamed_model_tp2_v0271_cgprofile.txt",
    }
    cg = engines.vllm_cuda_graph_estimate()
    for r in rows.values():
        if not r["other_stack"]:
            assert abs(r["gib"] - cg["gib"]) <= cg["band_gib"] + 0.001, r["file"]
    # a release before 0.20 (torch 2.10, CUDA 12.9) is reported apart: Qwen3-8B's 51 + 35 graphs estimate 2.35 GiB on
    # 0.19.1 and 0.52 GiB on 0.21.0 (the held-out A5000 log), the same estimator on another stack
    assert {k for k, r in rows.items() if r["other_stack"]} == {"vllm_qwen3_8b_a100_40gb_v0191.txt"}
    assert rows["vllm_qwen3_8b_rtxa5000_v0210_cgprofile.txt"]["gib"] == 0.52
    assert cg["gib"] == pytest.approx(0.265)
    assert "gpu_worker.py" in engines.vllm_data()["versions"]["0.20+"]["cuda_graphs"]["source"]


def test_cuda_graph_line_matches_the_utilization_it_is_equivalent_to():
    """util - util' = estimate / total memory: on the TP4 log 0.92 - 0.9129 = 0.0071 of 23.58 GiB = 0.167 GiB,
    the 0.17 GiB it prints (so the RTX 3090's driver memory is the total vLLM divides by)."""
    v = _read(_entry("tp4_cgprofile"))
    eq = v["equivalent_util"]
    assert eq["subtracted"]
    total = engines.driver_memory({"id": "rtx-3090", "memory_gib": 24})["bytes"] / GIB
    assert (float(eq["util"]) - float(eq["without"])) * total == pytest.approx(v["cuda_graph_gib"]["value"], abs=0.005)


def test_null_block():
    """0.20+ holds one block back (vllm/v1/core/block_pool.py: null_block = free_block_queue.popleft()): the KV
    cache the verdict counts is one block more than V1's, and the verdict says so."""
    args = {"weights": "BF16", "kv": "f16", "gpu": "h100-sxm", "engine": "vllm"}
    v1 = verdict(deployment("llama-3.1-8b", **args), 32768, solve=False)
    new = verdict(deployment("llama-3.1-8b", version="0.20+", **args), 32768, solve=False)
    kv1 = next(c for c in v1["components"] if c["name"] == "kv_cache")
    kv = next(c for c in new["components"] if c["name"] == "kv_cache")
    block = 16 * 32 * 8 * 128 * 2 * 2  # 16 tokens x 32 layers x 8 KV heads x 128 x (K, V) x 2 B
    assert kv["bytes"] - kv1["bytes"] == block
    assert "null block" in kv["how"] and "null block" not in kv1["how"]
    assert new["engine_model"]["null_block"] is True
    assert "null_block" not in v1["engine_model"]  # V1's verdict is unchanged (the golden files pin it)


def test_longest_context_counts_the_null_block():
    """At the edge, 0.20+ fits one block less of context than V1 would with the same budget less the graphs
    (both at 0.9: 0.20+'s own default is 0.92, tested below)."""
    args = {"weights": "BF16", "kv": "f16", "gpu": "rtx-3090", "engine": "vllm", "gpu_memory_utilization": 0.9}
    args["sampler"] = "flashinfer"  # the same sampler warm-up (V1's default is the native sort)
    v1 = verdict(deployment("llama-3.1-8b", **args), 8192)
    new = verdict(deployment("llama-3.1-8b", version="0.20+", **args), 8192)
    per_token = 32 * 8 * 128 * 2 * 2
    cg = engines.vllm_cuda_graph_estimate()["bytes"]
    expected = v1["max_context"] - (cg // (16 * per_token) + 1) * 16
    assert new["max_context"] in (expected, expected - 16)


def test_from_0_21_vllm_takes_0_92_of_the_card_unless_told():
    """vLLM's CacheConfig default is 0.92 from the release that subtracts its CUDA-graph estimate (a 0.20.2rc1
    nightly prints "The current --gpu-memory-utilization=0.9200" with no utilization among its non-default args);
    earlier ranges keep 0.9, and a value given is a value given."""
    args = {"weights": "BF16", "kv": "f16", "gpu": "h100-sxm", "engine": "vllm"}
    assert deployment("llama-3.1-8b", version="0.20+", **args).gpu_memory_utilization == 0.92
    assert deployment("llama-3.1-8b", version="v1", **args).gpu_memory_utilization == 0.9
    assert deployment("llama-3.1-8b", version="0.20+", gpu_memory_utilization=0.8, **args).gpu_memory_utilization == 0.8
    new = verdict(deployment("llama-3.1-8b", version="0.20+", **args), 8192)
    assert "--gpu-memory-utilization 0.92" in new["flags"]
    log = (LOGS / "calibration" / "vllm_qwen36_27b_int4_rtx3090_tp4_cgprofile.txt").read_text(encoding="utf-8")
    assert "current --gpu-memory-utilization=0.9200" in log and "'gpu_memory_utilization'" not in log


def test_hybrid_refusal_message():
    """0.20+ refuses a hybrid model whose max_num_seqs exceeds its Mamba cache blocks, with vLLM's own words.

    Qwen3.6-27B (48 Gated DeltaNet layers) in BF16 on one H100 at 0.9: vLLM's default max_num_seqs of 1024 on an
    80 GB card is more than the few hundred blocks the budget holds (real reports: 694 and 348 blocks for 27B
    Qwen3.5/3.8 models on 80 GB cards), at its default of 0.92."""
    args = {"weights": "BF16", "kv": "f16", "gpu": "h100-sxm", "engine": "vllm", "allow_long_context": True}
    v = verdict(deployment("qwen3.6-27b", version="0.20+", **args), 262144)
    assert not v["fits"] and v["binding"] == "max_num_seqs"
    blocks = v["engine_model"]["mamba_cache_blocks"]
    assert 100 < blocks < 1024
    m = REFUSAL.fullmatch(v["engine_model"]["refusal"])
    assert m and m.groups() == ("1024", str(blocks), str(blocks))
    assert v["headline"] == "does not start: " + v["engine_model"]["refusal"]
    assert any(w.startswith("vLLM 0.20+ refuses to start: max_num_seqs (1024)") for w in v["warnings"])
    # the blocks are the pool's less the null block: the KV budget over one block's bytes, minus one
    kv = v["components"][1]
    assert "null block" in kv["how"]
    # at most that many sequences it starts; V1 (which capped the graphs instead) starts either way
    ok = verdict(deployment("qwen3.6-27b", version="0.20+", max_num_seqs=blocks, **args), 262144)
    assert ok["fits"] and ok["engine_model"]["refusal"] is None
    assert verdict(deployment("qwen3.6-27b", max_num_seqs=blocks + 1, **args), 262144)["fits"]
    # a model without a recurrent state is never checked
    dense = verdict(deployment("llama-3.1-8b", version="0.20+", **args), 8192)
    assert dense["engine_model"]["mamba_cache_blocks"] is None and dense["fits"]


def test_max_model_len_auto():
    """--max-model-len auto: the longest context up to the model's own whose one request fits; the full context
    when it fits; the flag is 0.20+'s only."""
    args = {"weights": "BF16", "kv": "f16", "engine": "vllm", "version": "0.20+", "max_model_len_auto": True}
    small = verdict(deployment("llama-3.1-8b", gpu="rtx-3090", **args), None)
    assert small["fits"] and small["context"] == small["max_context"] < 131072
    assert small["context"] % 16 == 0
    over = verdict(
        deployment("llama-3.1-8b", gpu="rtx-3090", weights="BF16", engine="vllm", version="0.20+"),
        small["context"] + 16,
    )
    assert not over["fits"] and over["binding"] == "kv_cache"
    assert small["engine_model"]["max_model_len_auto"]["max_model_len"] == small["context"]
    big = verdict(deployment("llama-3.1-8b", gpu="h100-sxm", **args), None)
    assert big["context"] == 131072 and "full model context length 131,072 fits" in " ".join(big["warnings"])
    with pytest.raises(ValueError, match="max_model_len_auto"):
        verdict(
            deployment("llama-3.1-8b", gpu="h100-sxm", engine="vllm", weights="BF16", max_model_len_auto=True), None
        )


def test_versions_offered():
    assert engines.VLLM_VERSIONS == ("v1", "v0", "0.20+", "v0-pre-mla")
    with pytest.raises(ValueError, match="engine_version must be one of v1, v0, 0.20\\+"):
        verdict(deployment("llama-3.1-8b", weights="BF16", gpu="h100-sxm", engine="vllm", version="0.30"), 8192)


def test_cli_offers_the_new_range(capsys):
    from kvlab import cli

    argv = ["fit", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "8192", "--weights", "BF16"]
    assert cli.main(argv + ["--engine", "vllm", "--engine-version", "0.20+"]) in (0, None)
    assert "engine model: vLLM 0.20+ (V1 engine" in capsys.readouterr().out


# vLLM PR 10927's "Before" log (vLLM V0 before MLA caching, DeepSeek-V2-Lite-Chat on an H100, fp16,
# --max-model-len 8192): "kv_cache_size=35.42GiB", "# GPU blocks: 5373", "Maximum concurrency for 8192 tokens
# per request: 10.49x". https://github.com/vllm-project/vllm/pull/10927
PRE_MLA_LOG = {"kv_cache_gib": 35.42, "gpu_blocks": 5373, "block_size": 16, "max_model_len": 8192, "concurrency": 10.49}


def test_before_mla_caching_deepseek_caches_every_head_as_the_log_shows():
    """v0-pre-mla: each layer caches 16 heads of 256 K and V values (padded), so the log's blocks come out of
    its KV memory to the block; v0 (the MLA latent) would hold 14 times as many tokens: a false fit."""
    log = PRE_MLA_LOG
    per_request = {}
    for version in ("v0-pre-mla", "v0"):
        v = verdict(
            deployment("deepseek-v2-lite", weights="BF16", kv="f16", gpu="h100-sxm", engine="vllm", version=version),
            log["max_model_len"],
            solve=False,
        )
        per_request[version] = next(c["bytes"] for c in v["components"] if c["name"] == "kv_cache")
    per_token = per_request["v0-pre-mla"] / log["max_model_len"]
    blocks = log["kv_cache_gib"] * GIB // (per_token * log["block_size"])
    assert abs(blocks - log["gpu_blocks"]) <= 2, blocks  # 35.42 GiB is rounded to 10 MiB in the log
    assert round(blocks * log["block_size"] / log["max_model_len"], 2) == pytest.approx(log["concurrency"], abs=0.01)
    # 2 x 16 heads x 256 padded values against the 512 + 64 latent: 14.2 times the bytes (DeepSeek-V2's 128 heads: 114)
    assert per_request["v0-pre-mla"] / per_request["v0"] == pytest.approx(2 * 16 * 256 / (512 + 64))


def test_pre_mla_changes_only_mla_models():
    a = verdict(deployment("llama-3.1-8b", weights="BF16", gpu="h100-sxm", engine="vllm", version="v0"), 8192)
    b = verdict(deployment("llama-3.1-8b", weights="BF16", gpu="h100-sxm", engine="vllm", version="v0-pre-mla"), 8192)
    assert a["components"] == b["components"] and a["max_sequences"] == b["max_sequences"]
    assert "before MLA caching" in b["engine_model"]["version"]
