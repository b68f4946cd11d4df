"""A separate draft model under vLLM speculative decoding (kvlab.memory.drafters): its KV layers as a cache type of
their own in vLLM's layout, its weights on each GPU, and the refusals naming the field. The figures are checked
against real start-ups (tests/python/data/engine_logs/calibration: the club-3090 DFlash logs)."""

from __future__ import annotations

import pytest

from kvlab.memory.deployment import deployment
from kvlab.memory.drafters import _params, drafter_weights, get_drafter
from kvlab.memory.kv_bytes import vllm_blocks
from kvlab.memory.verdict import verdict, vllm_layout

GIB = 2**30
DFLASH = "z-lab/Qwen3.6-27B-DFlash"


def _dep(gpu="rtx-3090", seqs=1, drafter=DFLASH, **kw):
    return deployment(
        "qwen3.6-27b",
        weights="INT4",
        gpu=gpu,
        tp=2,
        engine="vllm",
        version="v1",
        gpu_memory_utilization=0.95,
        max_num_seqs=seqs,
        max_num_batched_tokens=8192,
        prefix_caching=True,
        speculative_tokens=5,
        drafter=drafter,
        **kw,
    )


def test_the_drafters_layers_are_a_cache_type_of_their_own():
    """Qwen3.6-27B at TP2: 16 full-attention layers (2 KV heads x 256 per GPU) and 48 Gated DeltaNet layers group
    in 16s (4 groups). The DFlash drafter's 5 layers (4 KV heads x 128 per GPU: the same bytes per token, another
    spec) are a third type, so the group size falls to 5: 4 full + 1 drafter + 10 state groups, 6 padding layers."""
    alone = vllm_layout(_dep(drafter=None), 185000)
    drafted = vllm_layout(_dep(), 185000)
    assert (alone["n_groups"], alone["group_size"], alone["padding_layers"]) == (4, 16, 0)
    assert (drafted["n_groups"], drafted["group_size"], drafted["padding_layers"]) == (15, 5, 6)
    assert drafted["block_size"] == alone["block_size"] == 816  # the target's state page sets it
    # per request: 5 attention groups x cdiv(185,000, 816) blocks + 10 state groups x (2 + 5 speculative) blocks
    assert drafted["blocks_per_request"] == 5 * 227 + 10 * 7


@pytest.mark.parametrize(
    "gpu, seqs, context, logged_gib, blocks_form, logged_tokens",
    [
        # club-3090 #75 (vLLM 0.20.2rc1 nightly): "9.58 GiB", "188,838 tokens" = int(concurrency x max_model_len)
        ("rtx-3090", 1, 185000, 9.575, False, 188838),
        # club-3090 #46 (0.20.1rc1 nightly, before vllm#38364): "9.74 GiB", "67,728 tokens" = blocks // 15 x 816
        ("rtx-4090", 2, 180000, 9.74, True, 67728),
    ],
)
def test_the_logged_token_counts_are_rebuilt_from_the_logged_memory(
    gpu, seqs, context, logged_gib, blocks_form, logged_tokens
):
    layout = vllm_layout(_dep(gpu=gpu, seqs=seqs), context)
    b = vllm_blocks(layout, logged_gib * GIB)
    tokens = b["tokens"] if blocks_form else int(b["blocks"] / layout["blocks_per_request"] * context)
    assert tokens == logged_tokens
    # without the drafter the same memory gives far more (the group size would be 16): the drafter is what decides
    alone = vllm_layout(_dep(gpu=gpu, seqs=seqs, drafter=None, mtp=False), context)
    a = vllm_blocks(alone, logged_gib * GIB)
    assert a["concurrency"] * context > 1.4 * b["concurrency"] * context


def test_the_drafters_weights_are_counted_from_its_config_and_leave_the_kv_budget():
    d = get_drafter(DFLASH.upper())  # any case
    p = _params(d["config"])
    assert 1.72e9 < p["sharded"] + p["replicated"] < 1.74e9  # about 1.73B parameters (club-3090: ~1.75 GB per card)
    per_gpu = drafter_weights(d, 2)["bytes_per_gpu"]
    assert per_gpu == (p["sharded"] + p["kv_copy"]) * 2 // 2 + p["replicated"] * 2
    with_d, without = verdict(_dep(), 185000, solve=False), verdict(_dep(drafter=None), 185000, solve=False)
    weights = {
        v: next(c["bytes"] for c in r["components"] if c["name"] == "weights")
        for v, r in (("with", with_d), ("without", without))
    }
    assert weights["with"] - weights["without"] == pytest.approx(per_gpu, abs=1)
    assert "z-lab/Qwen3.6-27B-DFlash" in with_d["components"][1]["how"]  # the flags name the drafter


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"drafter": "nobody/drafter"}, "drafter must be one of z-lab/Qwen3.6-27B-DFlash"),
        ({"drafter": DFLASH, "model": "llama-3.1-8b"}, "reads a target's hidden states of 5120"),
        ({"drafter": DFLASH, "speculative_tokens": 0}, "drafter: give speculative_tokens too"),
        ({"drafter": DFLASH, "engine": "llamacpp", "speculative_tokens": 0}, "vLLM"),
    ],
)
def test_a_drafter_that_cannot_be_modelled_is_refused_naming_the_field(kw, message):
    args = {"model": "qwen3.6-27b", "gpu": "rtx-3090", "engine": "vllm", "speculative_tokens": 5, **kw}
    with pytest.raises(ValueError, match=message):
        deployment(args.pop("model"), **args)


def test_explain_log_rebuilds_a_dflash_start_up_told_the_drafter():
    """club-3090 #75: the excerpt's args line is cut, so the settings are stated; the drafter named by the local path
    the compose gives vLLM. Without it the concurrency line differs (the layout lacks the drafter's group)."""
    from pathlib import Path

    from kvlab.memory.engine_logs import explain_engine_log

    log = (Path(__file__).parent / "data/engine_logs/calibration/vllm_qwen36_27b_rtx3090_tp2_dflash.txt").read_text()
    said = {
        "max_model_len": 185000,
        "tensor_parallel_size": 2,
        "num_speculative_tokens": 5,
        "speculative_method": "dflash",
        "enable_prefix_caching": True,
    }
    told = explain_engine_log(log, "qwen3.6-27b", speculative_model="~/.cache/huggingface/qwen3.6-27b-dflash", **said)
    check = next(c for c in told["checks"] if c["figure"] == "maximum concurrency")
    assert check["status"] == "consistent" and "1,230 blocks / 1,205" in check["rebuilt"]
    assert any("z-lab/Qwen3.6-27B-DFlash (read from what you said)" in n for n in told["notes"])
    untold = explain_engine_log(log, "qwen3.6-27b", **said)
    assert next(c for c in untold["checks"] if c["figure"] == "maximum concurrency")["status"] == "differs"
