"""Model families beyond the common layouts: one real config each (data/family_configs.json, with URLs), its
bytes per token worked out by hand, layer by layer, and refusals that name the missing field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlab.memory.architecture import CHUNKED, FULL, LINEAR, NONE, SLIDING
from kvlab.memory.hf_config import parse_hf_config
from kvlab.memory.kv_bytes import kv_bytes_per_token, kv_cache_bytes, llamacpp_kv_cache, vllm_kv_cache

CFG = json.loads((Path(__file__).resolve().parent / "data" / "family_configs.json").read_text())["configs"]
F16 = 2


def arch_of(key):
    return parse_hf_config(CFG[key]["config"], name=key)


def gqa(layers, kv_heads, head_dim):
    """Brute force: K and V of kv_heads x head_dim per layer, f16, summed one layer at a time."""
    total = 0
    for _ in range(layers):
        total += 2 * kv_heads * head_dim * F16
    return total


# (config, kinds expected, f16 bytes per token by hand)
PLAIN = {
    "smollm3-3b": (36, gqa(36, 4, 128)),  # 73,728
    "olmo-2-7b": (32, gqa(32, 32, 128)),  # 524,288
    "command-r-v01": (40, gqa(40, 64, 128)),  # 1,310,720
    "glm-4.5": (92, gqa(92, 8, 128)),  # 376,832
    "minimax-m2": (62, gqa(62, 8, 128)),  # 253,952
}


@pytest.mark.parametrize("key", sorted(PLAIN))
def test_plain_full_attention_families(key):
    layers, expected = PLAIN[key]
    arch = arch_of(key)
    assert arch.n_layers == layers and {layer.kind for layer in arch.layers} == {FULL}
    assert kv_bytes_per_token(arch, "f16")["bytes_per_token"] == expected
    # llama.cpp and vLLM keep every token of every layer: no padding at a multiple of 256 / 16 tokens
    assert llamacpp_kv_cache(arch, 4096)["total_bytes"] == expected * 4096
    assert vllm_kv_cache(arch, 4096, "f16")["bytes_per_sequence"] == expected * 4096


def test_smollm3_plain_numbers():
    assert PLAIN["smollm3-3b"][1] == 73_728 and PLAIN["glm-4.5"][1] == 376_832 and PLAIN["minimax-m2"][1] == 253_952


def test_llama4_scout_chunked_layers():
    arch = arch_of("llama-4-scout")
    # no_rope_layers [] -> transformers' default interval 4: layers 3, 7, ... are NoPE (full), the rest chunked
    kinds = [layer.kind for layer in arch.layers]
    assert kinds == [CHUNKED, CHUNKED, CHUNKED, FULL] * 12
    assert {layer.window for layer in arch.layers if layer.kind == CHUNKED} == {8192}
    row = 2 * 8 * 128 * F16  # 4096 B per layer per token
    assert kv_bytes_per_token(arch)["bytes_per_token"] == 48 * row == 196_608
    assert kv_bytes_per_token(arch)["bytes_per_token_beyond_windows"] == 12 * row
    # exact at 100k: 12 full layers x 100k + 36 chunked layers x one chunk of 8192
    ctx = 100_000
    assert kv_cache_bytes(arch, ctx)["total_bytes"] == 12 * row * ctx + 36 * row * 8192
    # llama.cpp: chunked layers in the SWA cache, pad(8192 + 512, 256) = 8704 cells
    lc = {c["cache"]: c for c in llamacpp_kv_cache(arch, ctx)["caches"]}
    assert lc["SWA"]["cells"] == 8704 and lc["SWA"]["layers"] == 36
    assert lc["non-SWA"]["cells"] == 100_096 and lc["non-SWA"]["layers"] == 12
    # vLLM ChunkedLocalAttentionSpec: cdiv(min(8192 + 2048, ctx), 16) blocks of 16 tokens
    vk = vllm_kv_cache(arch, ctx, "f16")
    assert vk["by_kind"][CHUNKED]["bytes_per_sequence"] == 36 * row * 10240
    assert vk["by_kind"][FULL]["bytes_per_sequence"] == 12 * row * 100_000
    # Llama-3-style rope scaling: max_position_embeddings is already the scaled length
    assert arch.max_position_embeddings == 10_485_760


def test_gemma_3n_shared_layers_keep_no_cache():
    arch = arch_of("gemma-3n-e4b")
    kinds = [layer.kind for layer in arch.layers]
    assert kinds[20:] == [NONE] * 15
    assert kinds[:20] == ([SLIDING] * 4 + [FULL]) * 4
    row = 2 * 2 * 256 * F16  # 2048
    assert kv_bytes_per_token(arch)["bytes_per_token"] == 20 * row == 40_960
    assert kv_bytes_per_token(arch)["bytes_per_token_beyond_windows"] == 4 * row
    assert kv_cache_bytes(arch, 8192)["total_bytes"] == 4 * row * 8192 + 16 * row * 512


def test_deepseek_v32_caches_latent_and_indexer_key():
    arch = arch_of("deepseek-v3.2-exp")
    assert {layer.index_values for layer in arch.layers} == {128}
    latent = (512 + 64) * F16  # 1152 B
    indexer = 128 + 128 // 128 * 4  # fp8 values + one fp32 scale: 132 B
    assert kv_bytes_per_token(arch)["bytes_per_token"] == 61 * (latent + indexer) == 78_324
    vk = vllm_kv_cache(arch, 4096, "auto")
    assert vk["bytes_per_token"] == 61 * (latent + indexer)
    assert vllm_kv_cache(arch, 4096, "fp8")["bytes_per_token"] == 61 * (656 + indexer)  # fp8_ds_mla
    # llama.cpp: the indexer cache is a second K-only cache of 128 f16 values per layer
    lc = {c["cache"]: c for c in llamacpp_kv_cache(arch, 4096)["caches"]}
    assert lc["indexer"]["bytes"] == 61 * 128 * F16 * 4096 and lc["kv"]["bytes"] == 61 * latent * 4096
    assert arch.max_position_embeddings == 4096 * 40


def test_kimi_linear_kda_state_and_mla():
    arch = arch_of("kimi-linear-48b")
    full_ids = {3, 7, 11, 15, 19, 23, 26}
    for i, layer in enumerate(arch.layers):
        assert layer.kind == (FULL if i in full_ids else LINEAR)
    assert kv_bytes_per_token(arch)["bytes_per_token"] == 7 * (512 + 64) * F16 == 8_064
    conv = (4 - 1) * 3 * 32 * 128  # q, k, v short convolutions
    recurrent = 32 * 128 * 128
    assert kv_bytes_per_token(arch)["by_kind"][LINEAR]["state_values_per_sequence"] == 20 * (conv + recurrent)
    assert arch.max_position_embeddings == 1_048_576  # model_max_length


def test_command_r_context_limit_is_model_max_length():
    arch = arch_of("command-r-v01")
    assert arch.max_position_embeddings == 131_072
    assert any("model_max_length" in note for note in arch.notes)


def test_qwen3_yarn_x4_applies_to_the_context_limit():
    arch = arch_of("qwen3-8b-yarn")
    assert arch.max_position_embeddings == 32_768 * 4
    assert any("factor 4" in note and "yarn" in note for note in arch.notes)
    plain = dict(CFG["qwen3-8b-yarn"]["config"], rope_scaling=None)
    assert parse_hf_config(plain).max_position_embeddings == 40_960


# --- refusals name the field ---------------------------------------------------------


@pytest.mark.parametrize(
    "key,path,field",
    [
        ("deepseek-v3.2-exp", (), "index_head_dim"),
        ("kimi-linear-48b", (), "linear_attn_config"),
        ("kimi-linear-48b", ("linear_attn_config",), "head_dim"),
        ("gemma-3n-e4b", ("text_config",), "num_kv_shared_layers"),
        ("gemma-3n-e4b", ("text_config",), "layer_types"),
        ("llama-4-scout", ("text_config",), "num_attention_heads"),
    ],
)
def test_missing_field_is_named(key, path, field):
    cfg = json.loads(json.dumps(CFG[key]["config"]))
    where = cfg
    for step in path:
        where = where[step]
    del where[field]
    with pytest.raises(ValueError, match=field):
        parse_hf_config(cfg)


def test_minimax_lightning_layers_are_refused_by_name():
    cfg = dict(CFG["minimax-m2"]["config"], attn_type_list=[0, 1] * 31)
    with pytest.raises(ValueError, match="attn_type_list"):
        parse_hf_config(cfg)


def test_yarn_without_original_length_is_named():
    cfg = dict(CFG["qwen3-8b-yarn"]["config"], rope_scaling={"rope_type": "yarn", "factor": 4.0})
    with pytest.raises(ValueError, match="original_max_position_embeddings"):
        parse_hf_config(cfg)


def test_every_known_family_has_one_reader_and_fixups_only_for_known_families():
    """The registry (issue 41): a family is read by exactly one reader, the attention reader unless READERS names
    another; a fixup is keyed by a family kvlab reads."""
    from kvlab.memory import hf_config as hc

    assert set(hc.READERS) <= set(hc.KNOWN_FAMILIES)
    assert set(hc.FIXUPS) <= set(hc.KNOWN_FAMILIES)
    assert {hc.READERS.get(f, hc._parse_attention).__name__ for f in hc.MLA} == {"_parse_mla"}
    assert hc.READERS.get("llama", hc._parse_attention) is hc._parse_attention


def test_gemma_3n_in_llamacpp_mode_keeps_its_sliding_layers_in_the_swa_cache():
    """Issue 39: a Gemma-3n config (read through its text_config, family gemma3n_text) was counted as full
    attention in llama.cpp mode, 4.4 times its cache. llama.cpp builds Gemma-3n with interleaved SWA (4 sliding,
    1 full) over the 20 layers that hold K/V: the SWA cache holds pad(512 + n_ubatch 512, 256) cells."""
    arch = arch_of("gemma-3n-e4b")
    assert arch.family == "gemma3n_text"
    caches = {c["cache"]: c for c in llamacpp_kv_cache(arch, 32768)["caches"]}
    assert (caches["non-SWA"]["cells"], caches["non-SWA"]["layers"]) == (32768, 4)
    assert (caches["SWA"]["cells"], caches["SWA"]["layers"]) == (1024, 16)
    row = 2 * 2 * 256 * F16  # 2048 B per layer per token
    assert llamacpp_kv_cache(arch, 32768)["total_bytes"] == 4 * row * 32768 + 16 * row * 1024  # 288 MiB, not 1,280


@pytest.mark.parametrize(
    ("key", "layers", "full", "sliding_kv", "full_kv"),
    [("gemma-4-31b", 60, 10, 16, 4), ("gemma-4-26b-a4b", 30, 5, 8, 2)],
)
def test_gemma4_full_layers_are_wider_and_cache_both_k_and_v(key, layers, full, sliding_kv, full_kv):
    """Gemma 4: sliding layers cache num_key_value_heads x head_dim (256) over 1,024 tokens; the full layers
    num_global_key_value_heads x global_head_dim (512), K and V both (attention_k_eq_v shares the projection, not
    the cache: vLLM's Gemma4Attention norms K and V apart and caches both)."""
    arch = arch_of(key)
    kinds = [layer.kind for layer in arch.layers]
    assert len(kinds) == layers and kinds.count(FULL) == full and kinds.count(SLIDING) == layers - full
    assert kinds[:6] == [SLIDING] * 5 + [FULL] and arch.vision
    sliding = gqa(1, sliding_kv, 256)  # per layer per token, f16
    wide = gqa(1, full_kv, 512)
    # a 512-token prompt: every layer holds it all
    assert kv_bytes_per_token(arch, "f16")["bytes_per_token"] == (layers - full) * sliding + full * wide
    # a 32,768-token context: the sliding layers stop at their window
    by_hand = (layers - full) * sliding * 1024 + full * wide * 32768
    assert llamacpp_kv_cache(arch, 32768, swa_full=False)["total_bytes"] >= by_hand


def test_gemma4_vllm_raises_the_block_size_of_the_narrower_pages():
    """vLLM gives every layer one page size (unify_kv_cache_spec_page_size): Gemma 4 26B-A4B's full layers take
    2 x 512 x 2 x 2 B = 4 KiB a token against the sliding layers' 8 KiB, so their blocks hold 32 tokens instead of 16.
    A real start-up (vLLM 0.25.1, one GB10, max_model_len 262,144, max_num_batched_tokens raised to 2,496 for video
    input, as it logs) prints 83.89 GiB and 14.78x; with 16-token blocks everywhere kvlab counted 7.86x
    (tests/python/data/engine_logs/calibration/vllm_gemma4_26b_a4b_awq_int4_gb10_v0251.txt)."""
    arch = arch_of("gemma-4-26b-a4b")
    layout = vllm_kv_cache(arch, 262144, "auto", max_num_batched_tokens=2496)["layout"]
    full = next(t for t in layout["types"] if t["kind"] == FULL)
    sliding = next(t for t in layout["types"] if t["kind"] == SLIDING)
    assert layout["block_size"] == 16 and full["block_size"] == 32 and "block_size" not in sliding
    assert full["blocks_per_request"] == 262144 // 32  # one group of the 5 full layers
    assert sliding["groups"] == 5 and layout["memory_per_block"] == 5 * 16 * 8192
    blocks = int(83.89 * 2**30 // layout["memory_per_block"])
    assert round(blocks / layout["blocks_per_request"], 2) == 14.78
