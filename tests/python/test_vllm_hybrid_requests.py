"""What one request of a hybrid (attention + recurrent state) model takes in vLLM's pool, with prefix caching
and MTP speculative decoding (kv_bytes.vllm_state_blocks, vllm_with_draft_layers), checked against a real
start-up log and against the rule written out by hand."""

from __future__ import annotations

import math

import pytest

from kvlab.memory import kv_bytes as kb
from kvlab.memory.catalogue import model_architecture
from kvlab.memory.deployment import deployment
from kvlab.memory.verdict import fit_verdict

GIB = 2**30
# https://github.com/mitchross/talos-argocd-proxmox/pull/1995 (2026-08-16): Qwen3.8-27B-FP8 (the Qwen3.5/3.6-27B
# layout: 64 layers, 16 full attention with 4 KV heads of 256, 48 Gated DeltaNet), TP 2 on RTX 3090s, fp8 KV,
# prefix caching on, --max-num-batched-tokens 8192, --max-model-len 131072, no speculative decoding. Its boot log:
#   GPU KV cache size: 302,921 tokens
#   Maximum concurrency for 131,072 tokens per request: 2.31x
# and "the measured 2 x 4.99 = 9.98 GiB pool" (Available KV cache memory 4.99 GiB per GPU).
PR1995 = {"available_gib": 4.99, "tokens": 302_921, "concurrency": "2.31", "max_model_len": 131072}


def layout(prefix_caching=False, speculative_tokens=0, mtp=False, max_model_len=131072):
    kv = kb.vllm_kv_cache(
        model_architecture("qwen3.6-27b"),
        max_model_len,
        "fp8",
        tp=2,
        max_num_batched_tokens=8192,
        prefix_caching=prefix_caching,
        speculative_tokens=speculative_tokens,
        mtp=mtp,
    )
    return kb.gpu_stages(kv)[0]["layout"]


def test_prefix_caching_rebuilds_the_logged_pool_exactly():
    """vLLM 0.2x prints int(max_concurrency x max_model_len) tokens; max_concurrency is the pool's blocks over one
    request's blocks. With prefix caching the Gated DeltaNet state takes 2 blocks per group ("align" mode)."""
    lay = layout(prefix_caching=True)
    blocks = int(PR1995["available_gib"] * GIB // lay["memory_per_block"])
    concurrency = blocks / lay["blocks_per_request"]
    assert int(concurrency * PR1995["max_model_len"]) == PR1995["tokens"]
    assert f"{concurrency:.2f}" == PR1995["concurrency"]
    # without the rule (one state block per group, as before) the same pool gives other figures
    plain = layout()
    assert int(blocks / plain["blocks_per_request"] * PR1995["max_model_len"]) != PR1995["tokens"]


def test_the_rule_by_hand():
    """Blocks per request: cdiv(max_model_len, block) for the full-attention group, and per state group
    1 + k blocks (k speculative tokens), 2 + k with prefix caching; MTP adds a full-attention layer, so the
    groups are 17 layers wide (48 state layers in 3 groups, 3 of them padding)."""
    plain = layout()
    block = plain["block_size"]
    attn = math.ceil(131072 / block)
    assert plain["blocks_per_request"] == attn + 3 * 1 and plain["group_size"] == 16
    assert layout(prefix_caching=True)["blocks_per_request"] == attn + 3 * 2
    spec = layout(prefix_caching=True, speculative_tokens=3, mtp=True)
    assert spec["group_size"] == 17 and spec["padding_layers"] == 3
    assert spec["blocks_per_request"] == attn + 3 * (2 + 3)
    assert spec["memory_per_block"] == plain["memory_per_block"] // 16 * 17
    # speculative tokens without MTP (an n-gram or external drafter) add state blocks but no draft layer
    assert layout(speculative_tokens=2)["group_size"] == 16
    assert layout(speculative_tokens=2)["blocks_per_request"] == attn + 3 * 3
    assert kb.vllm_state_blocks() == 1 and kb.vllm_state_blocks(True, 3) == 5


def test_a_dense_model_is_unchanged_by_prefix_caching_and_its_mtp_layer_is_counted():
    llama = model_architecture("llama-3.1-8b")
    a = kb.vllm_kv_cache(llama, 8192, prefix_caching=True, speculative_tokens=4)["bytes_per_sequence"]
    assert a == kb.vllm_kv_cache(llama, 8192)["bytes_per_sequence"]
    with pytest.raises(ValueError, match="mtp: .*no MTP layers"):
        deployment("llama-3.1-8b", gpu="h100-sxm", engine="vllm", speculative_tokens=2, mtp=True)


def test_the_verdict_and_its_command_carry_the_settings():
    v = fit_verdict(
        "qwen3.6-27b",
        131072,
        weights="FP8",
        kv="fp8",
        gpu="rtx-3090",
        n_gpus=2,
        engine="vllm",
        prefix_caching=True,
        speculative_tokens=3,
        mtp=True,
    )
    assert "--enable-prefix-caching" in v["flags"] and '"num_speculative_tokens": 3' in v["flags"]
    base = fit_verdict("qwen3.6-27b", 131072, weights="FP8", kv="fp8", gpu="rtx-3090", n_gpus=2, engine="vllm")
    kv = {c["name"]: c["bytes"] for c in v["components"]}["kv_cache"]
    assert kv > {c["name"]: c["bytes"] for c in base["components"]}["kv_cache"]


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"speculative_tokens": -1}, "speculative_tokens"),
        ({"speculative_tokens": 1.5}, "speculative_tokens"),
        ({"mtp": True}, "mtp"),
        ({"prefix_caching": True, "engine": "llamacpp"}, "prefix_caching"),
    ],
)
def test_bad_settings_name_the_field(kw, field):
    args = {"gpu": "h100-sxm", "engine": "vllm"} | kw
    with pytest.raises(ValueError, match=field):
        deployment("qwen3.6-27b", **args)
