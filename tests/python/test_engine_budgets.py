"""SGLang's and TensorRT-LLM's KV budgets (kvlab.memory.sglang / .trtllm) against real start-up logs.

The comparisons live in bench/engine_budgets.py (which prints them as a table): every row is
within its tolerance (the engine's arithmetic on the log's own memory: 0.5 %, the printed
rounding; kvlab's whole prediction from model and card: 15 %, see the bench's docstring) or is a
known difference with its reason, and each known difference still differs.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from kvlab.memory.catalogue import get_gpu, model_architecture
from kvlab.memory.engine_budget import RESULT_KEYS
from kvlab.memory.sglang import default_mem_fraction_static, pool_tokens, sglang_budget
from kvlab.memory.trtllm import blocks_for, trtllm_budget

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("engine_budgets_bench", ROOT / "bench" / "engine_budgets.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

ROWS = bench.rows()


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['log']}:{r['kind']}:{r['figure']}" for r in ROWS])
def test_each_log_comparison_is_within_tolerance_or_a_known_difference(row):
    if row["known"]:
        assert not row["ok"], f"known difference now agrees: drop it from KNOWN_DIFFERENCES ({row})"
    else:
        assert row["ok"], row


def test_every_sglang_and_trtllm_log_with_a_model_is_compared():
    compared = {r["log"] for r in ROWS}
    assert len(compared) >= 7
    assert {"sglang", "tensorrt-llm"} == {e["engine"] for e in bench.calibration()}
    assert {k[0] for k in bench.KNOWN_DIFFERENCES} <= compared


def test_rule_rows_are_exact_where_the_log_prints_the_memory():
    """Qwen1.5-7B: 21.89 GiB x 0.9 / 524,288 B = 40,346 tokens -> ceil(/ 64) = 631 blocks, as logged."""
    b = blocks_for(int(21.89 * 2**30 * 0.9), 524288, 64)
    assert b["blocks"] == 631 and b["pool_tokens"] == 631 * 64
    # floor division would give 630: the block count is rounded up (kvCacheManager.cpp ceilDiv)
    assert b["tokens"] // 64 == 630


def test_sglang_pr18263_charges_the_aiter_workspace_to_the_kv_budget():
    """PR 18263's build (sglang_qwen3_moe_amd_aiter.txt): the KV budget it prints, 219,721,119,039 B, less the
    AITER workspace of the request pool the tokens imply, gives the logged 1,669,816 tokens to the token."""
    from kvlab.memory.sglang import aiter_charged_tokens, aiter_workspace_bytes

    per_req = aiter_workspace_bytes(1, 32, 128, 262144)  # Qwen3-30B-A3B-Instruct-2507, tp 1
    assert per_req == 32 * 1024 * (128 * 4 + 8)
    r = aiter_charged_tokens(219_721_119_039, 98_304, per_req, 262144, None)
    assert r["tokens"] == 1_669_816 and r["max_num_reqs"] == 3261
    assert round(r["workspace"] / 2**30, 2) == 51.75  # the PR's "self.workspace_buffer size: 51.75 GB"
    # the clamp's ends: a short context takes the 4096-slot ceiling, --max-running-requests fixes the slots
    short = aiter_charged_tokens(10 * 2**30, 98_304, aiter_workspace_bytes(1, 32, 128, 4096), 4096, None)
    assert short["max_num_reqs"] == 4096 and short["tokens"] == (10 * 2**30 - 4096 * 266_240) // 98_304
    fixed = aiter_charged_tokens(219_721_119_039, 98_304, per_req, 262144, 64)
    assert fixed["max_num_reqs"] == 64 and fixed["tokens"] == (219_721_119_039 - 64 * per_req) // 98_304
    # through the budget: the charged pool is smaller by the workspace, main's (uncharged) is unchanged
    arch, card = model_architecture("qwen3-30b-a3b"), {"id": "mi355x", "name": "AMD Instinct MI355X", "memory_gib": 288}
    main = sglang_budget(arch, card, context=262144, mem_fraction_static=0.911)
    pr = sglang_budget(arch, card, context=262144, mem_fraction_static=0.911, charge_aiter_workspace=True)
    ws = next(s for s in pr["steps"] if s["label"].startswith("AITER decode workspace"))
    assert ws["bytes"] < 0 and not any(s["label"].startswith("AITER") for s in main["steps"])
    assert pr["max_tokens"] * 98_304 - ws["bytes"] <= main["kv_budget_bytes"] < main["max_tokens"] * 98_304 + 98_304
    assert pr["max_tokens"] < main["max_tokens"]


@pytest.mark.parametrize("engine", ["sglang", "trtllm"])
def test_result_shape_is_shared_flat_and_json(engine):
    arch, card = model_architecture("llama-3.1-8b"), get_gpu("h100-sxm")
    r = (sglang_budget if engine == "sglang" else trtllm_budget)(arch, card, context=8192)
    assert tuple(r) == RESULT_KEYS
    json.dumps(r)
    assert r["fits"] and r["refusal"] is None
    assert r["max_tokens"] > 8192 and r["max_sequences_at_context"] >= 1 and r["longest_context"] == 8192
    assert all(set(s) == {"label", "bytes", "how", "source"} and s["source"] for s in r["steps"])
    assert all(set(v) == {"value", "from"} for v in r["settings"].values())
    assert r["unsure"] and r["rule"].endswith(".")
    assert r["kv_budget_bytes"] >= r["max_tokens"] * r["kv_bytes_per_token"] * (0.99 if engine == "sglang" else 0.9)


def test_sglang_default_fraction_follows_the_card_tiers():
    # H100 (80 GiB): 512 + 8192 x 1.5 + 128 + 256 x 2 + 58 prefill sizes x 8 = 13,904 MiB
    d = default_mem_fraction_static(79.22 * 1024, tp=1)
    assert d["chunked_prefill_size"] == 8192 and d["cuda_graph_max_bs"] == 256
    assert d["reserved_mib"] == 13904 and d["mem_fraction_static"] == round(1 - 13904 / (79.22 * 1024), 3)
    # a 24 GiB card: below the 10 GiB floor's threshold; tp 4 gets the larger decode batch
    small = default_mem_fraction_static(24 * 1024, tp=4)
    assert small["cuda_graph_max_bs"] == 80 and not small["floor_10gib"]
    # a 60+ GiB card with a small reserve is raised to 10 GiB
    assert default_mem_fraction_static(64 * 1024, chunked_prefill_size=2048, cuda_graph_max_bs=1)["floor_10gib"]


def test_sglang_refuses_when_the_weights_leave_no_pool():
    """sglang_deepseek_v4_pro_fp8_h200_tp8_error.txt: 12.25 GiB free after 125.65 GiB of weights at 0.88."""
    p = pool_tokens(12.25 * 2**30, 137.9 * 2**30, 0.88, 1)
    assert p["tokens"] == 0 and p["rest_bytes"] < 0
    arch = model_architecture("llama-3.1-70b")
    r = sglang_budget(arch, get_gpu("h100-sxm"), context=8192, weights_format="FP8", mem_fraction_static=0.8)
    assert not r["fits"] and r["max_tokens"] == 0
    assert "Loaded weights leave no GPU memory for the KV cache under --mem-fraction-static=0.8" in r["refusal"]
    assert sglang_budget(arch, get_gpu("h100-sxm"), context=8192, weights_format="FP8", mem_fraction_static=0.95)[
        "fits"
    ]
    r = sglang_budget(arch, get_gpu("h100-sxm"), context=8192)  # BF16: 131 GiB of weights on one 80 GB card
    assert not r["fits"] and "more than the GPU's free memory" in r["refusal"]


def _sglang_used_before_weights(card: str, tp: int) -> float:
    """GiB the SGLang budget takes off the device total before the weights load (CUDA context, NCCL, all-reduce)."""
    r = sglang_budget(model_architecture("llama-3.1-8b"), get_gpu(card), context=4096, n_gpus=tp)
    steps = {s["label"]: s["bytes"] for s in r["steps"]}
    total = steps["GPU memory the device reports (gpu_mem)"]
    return (total - steps["free before the weights load (pre_model_load_memory)"]) / 2**30


def test_sglang_distributed_init_memory_is_one_amount_at_any_tp_on_nvlink():
    """SGLang reads pre_model_load_memory after init_torch_distributed (model_runner.py: the NCCL communicators and,
    on NVLink cards, the custom all-reduce buffers). vLLM's tp-2 H100 log already takes 1.79 GiB for them and
    SGLang's tp-8 logs 1.31-2.01 GiB, so on NVLink cards it is one amount for any tp > 1, not a per-GPU slope;
    PCIe pairs keep 0.19 GiB per extra GPU (the RTX 4090 tp-2 KTransformers log frees 22.84 of ~23.67 GiB)."""
    from kvlab.memory.sglang import CONTEXT_GIB, NVLINK_DIST_INIT_LOGS, NVLINK_TP_GIB

    assert NVLINK_TP_GIB == 1.79
    assert sorted(g for g, _, _ in NVLINK_DIST_INIT_LOGS) == [1.31, 1.79, 2.01]
    assert all(url.startswith("https://github.com/") for _, _, url in NVLINK_DIST_INIT_LOGS)
    # the H200 tp-8 figure is the stored log's own memory, less the tp-1 context
    entry = next(e for e in bench.calibration() if e["file"].endswith("sglang_deepseek_v4_pro_fp8_h200_tp8_error.txt"))
    before_weights = entry["logged"]["avail_mem_after_weights_gb"] + entry["logged"]["weights_gb_per_rank"]
    assert round(139.81 - before_weights - CONTEXT_GIB, 2) == 1.31
    assert _sglang_used_before_weights("h100-sxm", 1) == pytest.approx(0.60, abs=0.005)
    for tp in (2, 4, 8):
        assert _sglang_used_before_weights("h100-sxm", tp) == pytest.approx(0.60 + 1.79, abs=0.005), tp
    assert _sglang_used_before_weights("rtx-4090", 2) == pytest.approx(0.79, abs=0.005)
    assert _sglang_used_before_weights("rtx-4090", 4) == pytest.approx(0.60 + 3 * 0.19, abs=0.005)


def test_sglang_context_longer_than_the_pool_does_not_fit():
    arch = model_architecture("llama-3.1-8b")
    r = sglang_budget(arch, get_gpu("rtx-4090"), context=131072)
    assert not r["fits"] and r["max_tokens"] < 131072
    assert "max_req_input_len" in r["refusal"] and r["longest_context"] == r["max_tokens"]


def test_trtllm_too_small_pool_names_the_engine_message():
    """trtllm_mistral_7b_a10g_triton_error.txt: 29,184 tokens cannot hold 272 blocks of 128."""
    r = trtllm_budget(
        model_architecture("mistral-7b-v0.3"),
        bench.A10G,
        context=272 * 128,
        n_gpus=4,
        max_tokens=29184,
        tokens_per_block=128,
    )
    assert r["max_tokens"] == 29184 and not r["fits"]
    assert "tokensPerBlock (128) * maxBlocksPerSeq (272)" in r["refusal"]


def test_trtllm_max_tokens_caps_and_blocks_round_up():
    arch, card = model_architecture("llama-3.1-8b"), get_gpu("h100-sxm")
    free = trtllm_budget(arch, card, context=4096)
    capped = trtllm_budget(arch, card, context=4096, max_tokens=10001, tokens_per_block=64)
    assert capped["max_tokens"] == 10048 and capped["max_tokens"] < free["max_tokens"]  # ceil(10001 / 64) x 64
    assert capped["settings"]["max_tokens"] == {"value": 10001, "from": "you"}


def _v05(**kwargs) -> dict:
    """trtllm_llama2_7b_a10_v05_tokens.txt's deployment under 0.5's C++ runtime (the bench's predicted row)."""
    settings = {"free_gpu_memory_fraction": 0.95, "max_batch_size": 25, "tokens_per_block": 16} | kwargs
    return trtllm_budget(
        model_architecture("llama-2-7b"), bench.A10, context=6144, runtime="cpp", weights_format="F16", **settings
    )


def test_trtllm_05_cpp_runtime_keeps_the_engines_activation_buffer_for_its_build_tokens():
    """0.5's C++ runtime has no estimation pass: the TensorRT engine's activation buffer, sized at build time for
    max_input_len x max_batch_size tokens (generation_mixin.py at release/0.5.0), is allocated when the engine
    loads (TllmRuntime), and the fraction applies to what is left. The PyTorch backend's rule is unchanged."""
    from kvlab.memory.engines import vllm_reserve

    arch = model_architecture("llama-2-7b")
    r = _v05()
    assert r["version_modelled"].startswith("TensorRT-LLM 0.5 (release/0.5.0) C++ runtime")
    assert r["settings"]["max_input_len"] == {"value": 2048, "from": "default (build.py 0.5: 2048)"}
    assert r["settings"]["max_num_tokens"]["value"] == 25 * 2048
    steps = {s["label"]: s for s in r["steps"]}
    engine = steps["TensorRT engine's activation buffer and the CUDA context (allocated when the engine loads)"]
    assert engine["bytes"] == vllm_reserve(arch, 51200, 25)["bytes"] and "51,200 tokens" in engine["how"]
    total = steps["total GPU memory (cudaMemGetInfo)"]["bytes"]
    weights = steps["weights per GPU (the TensorRT engine's)"]["bytes"]
    assert steps["free after the engine loads"]["bytes"] == total - weights - engine["bytes"]
    assert r["kv_budget_bytes"] == int((total - weights - engine["bytes"]) * 0.95)
    # the logged 10,718 tokens, within the predicted tolerance (the row in bench/engine_budgets.py)
    assert abs(r["max_tokens"] - 10718) / 10718 <= bench.PREDICTED_TOLERANCE
    # the engine's build sets the buffer: a longer max_input_len or a given max_num_tokens moves the pool
    assert _v05(max_input_len=4096)["max_tokens"] < r["max_tokens"] < _v05(max_num_tokens=8192)["max_tokens"]
    # 0.5's defaults: kv_cache_free_gpu_mem_fraction 0.85 (the backend), build.py's batch 8 and blocks of 64
    d = trtllm_budget(arch, bench.A10, context=2560, runtime="cpp", weights_format="F16")
    assert d["settings"]["free_gpu_memory_fraction"]["value"] == 0.85
    assert d["settings"]["max_num_tokens"]["value"] == 8 * 2048
    assert d["settings"]["tokens_per_block"]["value"] == 64 and d["max_tokens"] % 64 == 0
    # the default runtime is the PyTorch backend's, as before: an 8,192-token estimation pass at 0.9
    p = trtllm_budget(arch, bench.A10, context=2560, weights_format="F16")
    assert p == trtllm_budget(arch, bench.A10, context=2560, weights_format="F16", runtime="pytorch")
    assert p["settings"]["max_num_tokens"] == {"value": 8192, "from": "default (LLM API 8192)"}
    assert p["version_modelled"].startswith("TensorRT-LLM 1.2") and "max_input_len" not in p["settings"]


def test_trtllm_05_max_tokens_alone_sets_the_pool():
    """docs/source/memory.md: with only maxTokens set it is used as is; with both, the smaller wins."""
    fraction_only = _v05()["max_tokens"]
    alone = _v05(free_gpu_memory_fraction=None, max_tokens=fraction_only + 4000)
    assert alone["max_tokens"] == fraction_only + 4000 and alone["fits"]
    assert alone["kv_budget_bytes"] == (fraction_only + 4000) * 524288
    both = _v05(max_tokens=fraction_only + 4000)
    assert both["max_tokens"] == fraction_only
    assert _v05(max_tokens=5000)["max_tokens"] == 5008  # ceil(5000 / 16) x 16


def test_trtllm_05_pool_too_small_for_one_sequence_is_refused():
    r = _v05(max_tokens=4000)
    assert not r["fits"] and r["max_sequences_at_context"] == 0
    assert r["refusal"].startswith("maxTokensInPagedKvCache must be large enough to process at least 1 sequence")
    assert "1 x 16 x 384" in r["refusal"]  # 6,144 tokens in blocks of 16


def test_trtllm_sliding_layers_share_the_memory_by_window():
    arch = model_architecture("gemma-3-4b-it")
    r = trtllm_budget(arch, get_gpu("h100-sxm"), context=32768)
    assert any("VSWA" in s["how"] for s in r["steps"])
    assert r["max_tokens"] > 0 and r["fits"]


def test_sglang_hybrid_linear_model_sets_states_aside():
    arch = next(
        (model_architecture(m) for m in ("qwen3-next-80b-a3b", "qwen3.5-27b", "qwen3.6-27b") if _known(m)), None
    )
    if arch is None:
        pytest.skip("no hybrid linear-attention model in the catalogue")
    r = sglang_budget(arch, get_gpu("h200"), context=32768, n_gpus=2 if arch.params > 60e9 else 1)
    states = [s for s in r["steps"] if s["label"].startswith("recurrent states")]
    assert states and states[0]["bytes"] < 0
    full = [la for la in arch.layers if la.kind == "full"]
    assert r["kv_bytes_per_token"] > 0 and len(full) < len(arch.layers)


def _known(model: str) -> bool:
    try:
        model_architecture(model)
    except ValueError:
        return False
    return True


# --- properties -------------------------------------------------------------------------


def _card(gib: float) -> dict:
    return {"id": f"custom-{gib}", "name": f"custom {gib} GiB", "memory_gib": gib}


SIZES = (16, 20, 24, 32, 40, 48, 59, 63, 80, 89, 91, 141, 159, 161, 192, 288)


@pytest.mark.parametrize("engine", ["sglang", "trtllm", "trtllm-cpp"])
def test_more_memory_never_gives_fewer_tokens(engine):
    """With the engine's settings held (SGLang: a given mem_fraction_static), a larger card never holds less."""
    arch = model_architecture("llama-3.1-8b")
    fn = sglang_budget if engine == "sglang" else trtllm_budget
    kwargs = {"sglang": {"mem_fraction_static": 0.85}, "trtllm": {}, "trtllm-cpp": {"runtime": "cpp"}}[engine]
    last = -1
    for gib in SIZES:
        tokens = fn(arch, _card(gib), context=4096, **kwargs)["max_tokens"]
        assert tokens >= last, (gib, tokens, last)
        last = tokens


def test_sglang_default_fraction_is_monotonic_within_a_tier_and_drops_at_the_60_gib_floor():
    """SGLang's own default is not monotonic: past 60 GiB the reserve jumps to its 10 GiB floor and the
    larger tier's batch sizes, so a 63 GiB card (61.9 GiB as the driver reports it) holds fewer tokens than a 59 GiB one (server_args.py)."""
    arch = model_architecture("llama-3.1-8b")
    tokens = {gib: sglang_budget(arch, _card(gib), context=4096)["max_tokens"] for gib in SIZES}
    assert tokens[63] < tokens[59]
    for a, b in ((16, 20), (24, 32), (40, 48), (63, 80), (80, 89), (91, 141), (141, 159), (161, 192), (192, 288)):
        assert tokens[b] >= tokens[a], (a, b)


def test_larger_mem_fraction_static_more_tokens():
    arch, card = model_architecture("llama-3.1-8b"), get_gpu("h100-sxm")
    tokens = [sglang_budget(arch, card, context=4096, mem_fraction_static=f)["max_tokens"] for f in (0.7, 0.8, 0.9)]
    assert tokens[0] < tokens[1] < tokens[2]
    fractions = [
        trtllm_budget(arch, card, context=4096, free_gpu_memory_fraction=f)["max_tokens"] for f in (0.5, 0.7, 0.9)
    ]
    assert fractions[0] < fractions[1] < fractions[2]


def test_more_gpus_more_tokens_per_gpu_pool():
    arch = model_architecture("llama-3.1-70b")
    one = sglang_budget(arch, get_gpu("h200"), context=4096, n_gpus=2)["max_tokens"]
    four = sglang_budget(arch, get_gpu("h200"), context=4096, n_gpus=4)["max_tokens"]
    assert four > one


@pytest.mark.parametrize(
    "engine, field, value",
    [
        ("sglang", "context", float("nan")),
        ("sglang", "context", 0),
        ("sglang", "n_gpus", 1.5),
        ("sglang", "mem_fraction_static", 1.5),
        ("sglang", "mem_fraction_static", "lots"),
        ("sglang", "chunked_prefill_size", -1),
        ("sglang", "cuda_graph_max_bs", float("inf")),
        ("sglang", "max_running_requests", 0),
        ("sglang", "page_size", True),
        ("trtllm", "context", -5),
        ("trtllm", "free_gpu_memory_fraction", 1.0),
        ("trtllm", "max_tokens", 0),
        ("trtllm", "max_batch_size", "x"),
        ("trtllm", "tokens_per_block", 33),
        ("trtllm", "n_gpus", 0),
        ("trtllm", "runtime", "v0.5"),
        ("trtllm", "max_num_tokens", 0),
        ("trtllm", "max_input_len", 2048),  # a TensorRT engine's build setting: runtime="cpp" only
    ],
)
def test_bad_inputs_name_the_field(engine, field, value):
    arch, card = model_architecture("llama-3.1-8b"), get_gpu("h100-sxm")
    kwargs = {"context": 4096, field: value}
    with pytest.raises(ValueError, match=field):
        (sglang_budget if engine == "sglang" else trtllm_budget)(arch, card, **kwargs)


@pytest.mark.parametrize("engine", ["sglang", "trtllm"])
def test_bad_kv_weights_model_and_card_are_refused(engine):
    arch, card = model_architecture("llama-3.1-8b"), get_gpu("h100-sxm")
    fn = sglang_budget if engine == "sglang" else trtllm_budget
    with pytest.raises(ValueError, match="kv"):
        fn(arch, card, context=4096, kv="q4_0")
    with pytest.raises(ValueError, match="weights format"):
        fn(arch, card, context=4096, weights_format="Q9")
    with pytest.raises(ValueError, match="arch"):
        fn("llama-3.1-8b", card, context=4096)
    with pytest.raises(ValueError, match="card"):
        fn(arch, None, context=4096)
