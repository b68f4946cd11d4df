"""What one request of a hybrid (attention + recurrent state) model takes in vLLM's pool, with prefix caching
and MTP speculative decoding (kv_bytes.vllm_state_blocks, vllm_with_draft_layers), checked against a real
start-up log and against the rule written out by hand."""

from __future__ import annotations

import math

import pytest

from kvlab.memory import kv_bytes as kb
from kvlab.memory.catalogue import model_architecture
from kvlab.memory.deployment import deployment
from kvlab.memory.verdict import verdict

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


# Qwen3.6-27B's Gated DeltaNet state per layer on one of 2 GPUs: the conv state, (conv_kernel 4 - 1 + k) rows of
# conv_dim (16 x 128 x 2 + 48 x 128 = 10,240) / 2 in bf16, and the SSM state, 48 / 2 heads x 128 x 128 in f32;
# an fp8 attention token on one GPU: 2 KV heads x 256 x (K and V) x 1 B
CONV_ROW = 10240 // 2 * 2
SSM = 48 // 2 * 128 * 128 * 4
ATTN_TOKEN = 4 // 2 * 256 * 2


def state_block(k: int) -> int:
    """The attention block vLLM picks for the state page: the smallest multiple of 16 tokens that holds it."""
    return 16 * math.ceil(((3 + k) * CONV_ROW + SSM) / (16 * ATTN_TOKEN))


def test_the_rule_by_hand():
    """Blocks per request: cdiv(max_model_len, block) for the full-attention group, and per state group
    1 + k blocks (k speculative tokens), 2 + k with prefix caching; MTP adds a full-attention layer, so the
    groups are 17 layers wide (48 state layers in 3 groups, 3 of them padding). k speculative tokens also add k
    rows to every conv state, so the state page, and the attention block that must hold it, grow."""
    plain = layout()
    block = plain["block_size"]
    assert block == state_block(0) == 1568
    attn = math.ceil(131072 / block)
    assert plain["blocks_per_request"] == attn + 3 * 1 and plain["group_size"] == 16
    assert layout(prefix_caching=True)["blocks_per_request"] == attn + 3 * 2
    spec = layout(prefix_caching=True, speculative_tokens=3, mtp=True)
    assert spec["block_size"] == state_block(3) == 1600
    assert spec["group_size"] == 17 and spec["padding_layers"] == 3
    assert spec["blocks_per_request"] == math.ceil(131072 / 1600) + 3 * (2 + 3)
    assert spec["memory_per_block"] == 1600 * ATTN_TOKEN * 17
    assert spec["state_page_bytes"] == 6 * CONV_ROW + SSM
    # speculative tokens without MTP (an n-gram or external drafter) add state blocks and conv rows but no draft
    # layer
    two = layout(speculative_tokens=2)
    assert two["group_size"] == 16 and two["block_size"] == state_block(2)
    assert two["blocks_per_request"] == math.ceil(131072 / state_block(2)) + 3 * 3
    assert kb.vllm_state_blocks() == 1 and kb.vllm_state_blocks(True, 3) == 5


# Two Qwen3.6-27B starts with MTP 3 and prefix caching on 2 RTX 3090s (fp8 KV, max_model_len 262,144):
# https://github.com/noonghunna/club-3090/pull/594 (vLLM 0.24.0, FP8 weights; MTP 3 from the variant's compose file)
#   Available KV cache memory: 5.33 GiB / GPU KV cache size: 300,220 tokens / Maximum concurrency ...: 1.15x
# https://github.com/noonghunna/club-3090/issues/295 (AutoRound INT4, float16, fp8_e5m2 KV, MTP 3)
#   GPU KV cache size: 620,944 tokens / Maximum concurrency for 262,144 tokens per request: 2.37x
def test_mtp_rebuilds_both_logs_179_blocks_per_request():
    """With the conv rows of the 3 speculative tokens the block is 1,600 tokens, so one request takes
    cdiv(262,144, 1,600) = 164 + 3 groups x (2 + 3) = 179 blocks (183 with the 1,568-token block of no
    speculation); the first log's 5.33 GiB then gives exactly its tokens and concurrency."""
    lay = layout(prefix_caching=True, speculative_tokens=3, mtp=True, max_model_len=262144)
    assert lay["blocks_per_request"] == 179
    blocks = int(5.33 * GIB // lay["memory_per_block"])
    assert int(blocks / 179 * 262144) == 300_220 and f"{blocks / 179:.2f}" == "1.15"
    # the second log prints no memory; its tokens are int(n / 179 x 262,144) for a whole number of blocks n
    assert any(int(n / lay["blocks_per_request"] * 262144) == 620_944 for n in range(300, 500))
    # without the conv rows (the draft layer and 5 state blocks, but the block of no speculation) neither is
    arch = kb.vllm_with_draft_layers(model_architecture("qwen3.6-27b"), 3)
    old = kb.vllm_kv_layout(arch, 262144, "fp8", 2, 4, 16, 8192, tp=2, state_blocks=5)
    assert (old["block_size"], old["blocks_per_request"]) == (1568, 183)
    assert int(int(5.33 * GIB // old["memory_per_block"]) / 183 * 262144) != 300_220
    assert not any(int(n / 183 * 262144) == 620_944 for n in range(300, 500))


def test_a_dense_model_is_unchanged_by_prefix_caching_and_its_mtp_layer_is_counted():
    llama = model_architecture("llama-3.1-8b")
    a = kb.vllm_kv_cache(llama, 8192, prefix_caching=True, speculative_tokens=4)["bytes_per_sequence"]
    assert a == kb.vllm_kv_cache(llama, 8192)["bytes_per_sequence"]
    with pytest.raises(ValueError, match="mtp: .*no MTP layers"):
        deployment("llama-3.1-8b", gpu="h100-sxm", engine="vllm", speculative_tokens=2, mtp=True)


def test_the_verdict_and_its_command_carry_the_settings():
    v = verdict(
        deployment(
            "qwen3.6-27b",
            weights="FP8",
            kv="fp8",
            gpu="rtx-3090",
            tp=2,
            engine="vllm",
            prefix_caching=True,
            speculative_tokens=3,
            mtp=True,
        ),
        131072,
    )
    assert "--enable-prefix-caching" in v["flags"] and '"num_speculative_tokens": 3' in v["flags"]
    base = verdict(deployment("qwen3.6-27b", weights="FP8", kv="fp8", gpu="rtx-3090", tp=2, engine="vllm"), 131072)
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
