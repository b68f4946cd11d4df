"""Reading Hugging Face config.json files: every family, and bad input named by field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlab.memory.architecture import FULL, LINEAR, SLIDING
from kvlab.memory.hf_config import load_config, parse_hf_config
from kvlab.memory.llama_server import llama_server_command
from kvlab.memory.kv_bytes import GIB, MIB, kv_bytes_per_token, layer_memory_map, llamacpp_kv_cache


def base(**extra):
    cfg = {
        "model_type": "llama",
        "num_hidden_layers": 4,
        "hidden_size": 256,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
    }
    cfg.update(extra)
    return cfg


# --- inputs -------------------------------------------------------------------


def test_reads_dict_json_text_and_path(tmp_path):
    cfg = base()
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    for source in (cfg, json.dumps(cfg), str(path), path, str(tmp_path)):
        arch = parse_hf_config(source)
        assert arch.n_layers == 4 and arch.layers[0].k_values == 2 * 32


def test_bad_json_text_says_so():
    with pytest.raises(ValueError, match="not valid JSON"):
        load_config('{"model_type": "llama",')


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="neither JSON text nor an existing file"):
        load_config(str(tmp_path / "nope.json"))


# --- families -----------------------------------------------------------------------


def test_llama_2_is_mha():
    # meta-llama/Llama-2-7b-hf: 32 layers, 32 heads, 32 KV heads, hidden 4096
    arch = parse_hf_config(base(num_hidden_layers=32, hidden_size=4096, num_attention_heads=32, num_key_value_heads=32))
    assert arch.attention == "mha" and arch.layers[0].head_dim_k == 128


def test_mqa_is_recognised():
    arch = parse_hf_config(base(num_key_value_heads=1))
    assert arch.attention == "mqa" and arch.layers[0].k_values == 32


def test_qwen3_head_dim_is_taken_from_config_not_hidden_over_heads():
    # Qwen/Qwen3-32B: hidden 5120, 64 heads (5120/64 = 80) but head_dim 128; 8 KV heads; 64 layers
    cfg = {
        "model_type": "qwen3",
        "num_hidden_layers": 64,
        "hidden_size": 5120,
        "num_attention_heads": 64,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "use_sliding_window": False,
        "sliding_window": None,
    }
    arch = parse_hf_config(cfg)
    assert kv_bytes_per_token(arch)["bytes_per_token"] == 2 * 64 * 8 * 128 * 2  # 256 KiB, not 160 KiB
    assert any("head size 128" in note and "head_dim" in note for note in arch.notes)


def test_qwen2_sliding_window_ignored_unless_enabled():
    # Qwen/Qwen2.5-7B-Instruct: sliding_window 131072 but use_sliding_window false
    cfg = base(model_type="qwen2", sliding_window=131072, use_sliding_window=False, max_window_layers=28)
    assert {l.kind for l in parse_hf_config(cfg).layers} == {FULL}
    on = parse_hf_config(dict(cfg, use_sliding_window=True, max_window_layers=2, sliding_window=64))
    assert [l.kind for l in on.layers] == [FULL, FULL, SLIDING, SLIDING]


def test_mistral_with_sliding_window_slides_every_layer():
    # mistralai/Mistral-7B-v0.1: sliding_window 4096
    arch = parse_hf_config(base(model_type="mistral", sliding_window=4096))
    assert {(l.kind, l.window) for l in arch.layers} == {(SLIDING, 4096)}
    assert {l.kind for l in parse_hf_config(base(model_type="mixtral", sliding_window=None)).layers} == {FULL}


def test_gemma2_alternates_starting_with_sliding():
    arch = parse_hf_config(base(model_type="gemma2", head_dim=64, sliding_window=4096))
    assert [l.kind for l in arch.layers] == [SLIDING, FULL, SLIDING, FULL]


def test_gemma3_nested_text_config_and_pattern():
    # google/gemma-3-27b-it nests the language model in text_config; sliding_window_pattern 6
    cfg = {
        "model_type": "gemma3",
        "text_config": dict(
            base(model_type="gemma3_text", num_hidden_layers=12, head_dim=128),
            sliding_window=1024,
            sliding_window_pattern=6,
        ),
    }
    kinds = [l.kind for l in parse_hf_config(cfg).layers]
    assert [i for i, k in enumerate(kinds) if k == FULL] == [5, 11]


def test_gemma3_without_pattern_or_layer_types_names_both_fields():
    cfg = base(model_type="gemma3_text", sliding_window=1024)
    with pytest.raises(ValueError, match="layer_types.*sliding_window_pattern"):
        parse_hf_config(cfg)


def test_gpt_oss_reads_layer_types():
    types = ["sliding_attention", "full_attention"] * 2
    arch = parse_hf_config(base(model_type="gpt_oss", head_dim=64, sliding_window=128, layer_types=types))
    assert [(l.kind, l.window) for l in arch.layers] == [(SLIDING, 128), (FULL, None)] * 2


def test_gpt_oss_without_layer_types_is_an_error():
    with pytest.raises(ValueError, match="layer_types"):
        parse_hf_config(base(model_type="gpt_oss", sliding_window=128))


HYBRID = {
    "model_type": "qwen3_next",
    "num_hidden_layers": 8,
    "head_dim": 64,
    "full_attention_interval": 4,
    "linear_conv_kernel_dim": 4,
    "linear_num_key_heads": 2,
    "linear_key_head_dim": 16,
    "linear_num_value_heads": 4,
    "linear_value_head_dim": 16,
}


def test_qwen3_next_interval_makes_every_fourth_layer_full():
    arch = parse_hf_config(base(**HYBRID))
    assert [l.kind for l in arch.layers] == [LINEAR, LINEAR, LINEAR, FULL] * 2
    assert arch.layers[0].ssm_state_values == 16 * 4 * 16


def test_qwen3_5_layer_types_with_linear_attention():
    types = ["linear_attention"] * 3 + ["full_attention"]
    cfg = {
        "model_type": "qwen3_5",
        "text_config": base(**dict(HYBRID, model_type="qwen3_5_text", num_hidden_layers=4, layer_types=types)),
    }
    assert [l.kind for l in parse_hf_config(cfg).layers] == [LINEAR, LINEAR, LINEAR, FULL]


def test_hybrid_missing_linear_field_is_named():
    cfg = base(**HYBRID)
    del cfg["linear_num_value_heads"]
    with pytest.raises(ValueError, match="linear_num_value_heads"):
        parse_hf_config(cfg)


def test_deepseek_mla():
    cfg = {
        "model_type": "deepseek_v2",
        "num_hidden_layers": 27,
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "q_lora_rank": None,
    }
    arch = parse_hf_config(cfg)
    assert arch.attention == "mla"
    assert {(l.k_values, l.v_values) for l in arch.layers} == {(576, 0)}


def test_deepseek_without_kv_lora_rank_is_named():
    with pytest.raises(ValueError, match="kv_lora_rank"):
        parse_hf_config(
            {
                "model_type": "deepseek_v3",
                "num_hidden_layers": 2,
                "hidden_size": 64,
                "num_attention_heads": 4,
                "qk_rope_head_dim": 64,
            }
        )


# --- contradictions and missing fields ---------------------------------------------------


@pytest.mark.parametrize("field", ["num_hidden_layers", "num_attention_heads", "hidden_size"])
def test_missing_required_field_is_named(field):
    cfg = base()
    del cfg[field]
    with pytest.raises(ValueError, match=field):
        parse_hf_config(cfg)


def test_missing_num_key_value_heads_defaults_to_the_attention_heads_with_a_note():
    # transformers' configs, vLLM and llama.cpp all default the KV heads to the attention heads (MHA)
    cfg = base()
    del cfg["num_key_value_heads"]
    arch = parse_hf_config(cfg)
    assert arch.attention == "mha" and {layer.kv_heads for layer in arch.layers} == {8}
    assert arch.layers[0].k_values == 8 * 32  # 8 heads x head_dim 256/8
    assert any("num_key_value_heads not given" in note for note in arch.notes)


def test_layer_types_length_must_match_layers():
    with pytest.raises(ValueError, match="layer_types.*3 entries.*4"):
        parse_hf_config(base(model_type="gpt_oss", sliding_window=128, layer_types=["full_attention"] * 3))


def test_unknown_layer_type_is_named():
    with pytest.raises(ValueError, match="chunked_attention"):
        parse_hf_config(base(layer_types=["full_attention", "chunked_attention", "full_attention", "full_attention"]))


def test_heads_must_be_a_multiple_of_kv_heads():
    with pytest.raises(ValueError, match="num_key_value_heads"):
        parse_hf_config(base(num_key_value_heads=3))


def test_sliding_layers_need_a_window():
    with pytest.raises(ValueError, match="sliding_window"):
        parse_hf_config(base(layer_types=["sliding_attention", "full_attention"] * 2))


def test_non_integer_field_is_named():
    with pytest.raises(ValueError, match="num_key_value_heads.*integer"):
        parse_hf_config(base(num_key_value_heads="8"))


def test_missing_head_dim_with_indivisible_hidden_is_an_error():
    with pytest.raises(ValueError, match="head_dim"):
        parse_hf_config(base(hidden_size=250))


def test_unknown_family_is_refused_naming_what_is_missing():
    with pytest.raises(ValueError, match=r"model_type 'mystery' is not one kvlab reads yet.*which of its layers"):
        parse_hf_config(base(model_type="mystery"))


@pytest.mark.parametrize(
    "family,name,missing",
    [
        ("zamba2", "Zamba2", "shared attention"),
        ("bamba", "Bamba", "not checked"),
        ("lfm2", "LFM2", "short-convolution"),
    ],
)
def test_state_space_families_not_read_are_refused_by_name_with_the_missing_piece(family, name, missing):
    with pytest.raises(ValueError, match=f"{name}.*not read yet.*{missing}.*guesses"):
        parse_hf_config(base(model_type=family))


# --- Mamba + attention hybrids -----------------------------------------------------------
# Real configs with their URLs: data/state_space_configs.json. The state sizes are llama.cpp's
# (src/llama-hparams.cpp n_embd_r / n_embd_s, f32 in src/llama-memory-recurrent.cpp) over the
# GGUF hparams convert_hf_to_gguf.py writes (JambaModel, GraniteHybridModel, NemotronHModel).
# No public llama.cpp load log of these families with its llama_memory_recurrent line was found;
# the expected values are worked by hand from those formulas.

SSM = json.loads((Path(__file__).resolve().parent / "data" / "state_space_configs.json").read_text())["configs"]


def test_jamba_1_5_mini_attention_every_8th_layer_from_4_and_mamba1_state():
    arch = parse_hf_config(SSM["jamba-1.5-mini"]["config"])
    full = [i for i, la in enumerate(arch.layers) if la.kind == "full"]
    assert full == [4, 12, 20, 28]  # i >= attn_layer_offset 4 and (i - 4) % attn_layer_period 8 == 0
    assert arch.count("linear") == 28
    assert {la.k_values for la in arch.layers if la.kind == "full"} == {8 * 128}  # 8 KV heads x 4096 / 32
    mamba = next(la for la in arch.layers if la.kind == "linear")
    d_inner = 2 * 4096  # mamba_expand x hidden_size
    assert mamba.conv_state_values == (4 - 1) * d_inner  # Mamba-1: ssm_n_group 0
    assert mamba.ssm_state_values == 16 * d_inner  # d_state x d_inner
    r = llamacpp_kv_cache(arch, 262_144)
    kv, rec = r["caches"]
    assert kv["bytes"] == 4 * 2 * 1024 * 2 * 262_144 == 4 * GIB  # 4 layers x K,V x 1024 x f16
    assert rec["k_bytes"] == 28 * 3 * 8192 * 4  # R: 2.625 MiB
    assert rec["v_bytes"] == 28 * 16 * 8192 * 4 == 14 * MIB  # S
    assert rec["log_line"].startswith("llama_memory_recurrent: size =   16.62 MiB (     1 cells,  32 layers,  1 seqs)")


def test_nemotron_h_8b_mamba2_attention_and_mlp_only_layers():
    arch = parse_hf_config(SSM["nemotron-h-8b"]["config"])
    assert arch.summary()["layers_by_kind"] == {"full": 4, "sliding": 0, "linear": 24, "none": 24}
    assert arch.summary()["head_dim"] == [128]  # attention_head_dim
    mamba = next(la for la in arch.layers if la.kind == "linear")
    d_inner = 128 * 64  # mamba_num_heads x mamba_head_dim
    assert mamba.conv_state_values == 3 * (d_inner + 2 * 8 * 128)  # (d_conv - 1)(d_inner + 2 n_group d_state)
    assert mamba.ssm_state_values == 128 * d_inner
    r = llamacpp_kv_cache(arch, 8192, n_seq=2, kv_unified=True)
    kv, rec = r["caches"]
    assert (kv["layers"], kv["bytes"]) == (4, 4 * 2 * 8 * 128 * 2 * 8192)  # MLP layers hold no KV
    assert (rec["cells"], rec["layers"], rec["layers_logged"]) == (2, 24, 52)
    assert rec["bytes"] == 2 * 24 * (30_720 + 1_048_576) * 4
    m = layer_memory_map(arch, 4096)
    assert m["kinds"] == ["full", "linear", "none"]
    assert {la["allocated_bytes"] for la in m["layers"] if la["kind"] == "none"} == {0}


def test_granite_4_h_small_matches_what_llama_cpp_loaded():
    entry = SSM["granite-4.0-h-small"]
    arch = parse_hf_config(entry["config"])
    assert (arch.count("full"), arch.count("linear")) == (4, 36)
    assert arch.layers[5].kind == "full"  # head_count_kv [0, 0, 0, 0, 0, 8, ...] in the ollama issue's llama.cpp load
    mamba = arch.layers[0]
    # the print_info: ssm_d_conv 4, ssm_d_inner 8192, ssm_d_state 128, ssm_n_group 1
    assert mamba.conv_state_values == (4 - 1) * (8192 + 2 * 1 * 128)
    assert mamba.ssm_state_values == 128 * 8192
    rec = llamacpp_kv_cache(arch, 4096)["caches"][1]
    assert rec["v_bytes"] == 36 * 4 * MIB  # S: 36 layers x 128 x 8192 x 4 B
    assert f"{rec['k_bytes'] / MIB:.2f}" == "3.48"  # R: 36 x 25,344 x 4 B


# --- Falcon-H1 and pure Mamba / Mamba-2 ------------------------------------------------------
# llama.cpp (src/llama-model.cpp): load_hparams marks every LLM_ARCH_FALCON_H1 layer recurrent, and
# create_memory gives Falcon-H1 a llama_memory_hybrid whose filter_attn and filter_recr both accept
# every layer: a KV row per cell AND a recurrent state in each layer. Mamba / Mamba-2 are
# llm_arch_is_recurrent: a llama_memory_recurrent alone, no KV cache. Each state is
# n_embd_r = (d_conv - 1) x (d_inner + 2 x n_group x d_state) and n_embd_s = d_state x d_inner values
# (src/llama-hparams.cpp), f32, one row per layer per sequence. The sizes below are worked by hand
# from the configs' numbers.


def test_falcon_h1_1_5b_keeps_a_kv_cache_and_a_state_in_every_layer_as_llama_cpp_logged():
    arch = parse_hf_config(SSM["falcon-h1-1.5b"]["config"])
    assert arch.n_layers == 24 and all(la.kind == "full" and la.parallel_hybrid for la in arch.layers)
    assert arch.summary()["layers_by_kind"] == {"full": 24, "sliding": 0, "linear": 0, "full_with_state": 24}
    layer = arch.layers[0]
    assert layer.k_values == layer.v_values == 2 * 128  # 2 KV heads x head_dim 128
    assert layer.conv_state_values == (4 - 1) * (3072 + 2 * 1 * 256) == 10_752  # mamba_d_ssm 3072, 1 group
    assert layer.ssm_state_values == 256 * 3072  # mamba_d_state x mamba_d_ssm
    assert kv_bytes_per_token(arch)["bytes_per_token"] == 24 * 2 * 256 * 2 == 24 * 1024  # 24 KiB per token
    kv, rec = llamacpp_kv_cache(arch, 32_768)["caches"]
    # the GeniePod issue's llama.cpp load at 32,768 tokens: KV 768.00 MiB (K 384 + V 384), 24 layers;
    # recurrent 72.98 MiB (1 cell, 24 layers, R 0.98 + S 72.00)
    assert (kv["layers"], kv["cells"]) == (24, 32_768)
    assert kv["k_bytes"] == kv["v_bytes"] == 24 * 256 * 2 * 32_768 == 384 * MIB
    assert (rec["layers"], rec["cells"]) == (24, 1)
    assert rec["k_bytes"] == 24 * 10_752 * 4  # R: 0.98 MiB
    assert rec["v_bytes"] == 24 * 256 * 3072 * 4 == 72 * MIB  # S
    assert (
        "size =   72.98 MiB (     1 cells,  24 layers,  1 seqs), R (f32):    0.98 MiB, S (f32):   72.00 MiB"
        in (rec["log_line"])
    )
    m = layer_memory_map(arch, 4096)
    assert m["kinds"] == ["hybrid"]
    assert {la["label"] for la in m["layers"]} == {"attention + recurrent state"}
    per_layer = 2 * 256 * 2 * 4096 + (10_752 + 786_432) * 4  # K and V rows of 4,096 cells, and the f32 state
    assert {la["allocated_bytes"] for la in m["layers"]} == {per_layer}
    assert m["allocated_bytes"] == kv["bytes"] // 8 + rec["bytes"]  # 4,096 cells are 1/8 of 32,768


@pytest.mark.parametrize("drop", ["mamba_d_ssm", "mamba_d_state", "mamba_n_groups", "head_dim"])
def test_a_missing_falcon_h1_field_is_named_not_defaulted(drop):
    cfg = dict(SSM["falcon-h1-1.5b"]["config"])
    cfg.pop(drop)
    with pytest.raises(ValueError, match=f"'{drop}' is missing|missing.*looked for.*'{drop}'"):
        parse_hf_config(cfg)


def test_mamba_130m_has_no_kv_cache_only_a_fixed_state():
    arch = parse_hf_config(SSM["mamba-130m"]["config"])
    assert arch.summary()["layers_by_kind"] == {"full": 0, "sliding": 0, "linear": 24}
    assert arch.attention == "none"
    layer = arch.layers[0]
    assert layer.conv_state_values == (4 - 1) * 1536  # Mamba-1: no groups; d_inner = intermediate_size 1536
    assert layer.ssm_state_values == 16 * 1536  # state_size 16
    per = kv_bytes_per_token(arch)
    assert per["bytes_per_token"] == 0 and "no attention layer" in per["formula"]
    short, long = llamacpp_kv_cache(arch, 4096), llamacpp_kv_cache(arch, 131_072)
    assert [c["cache"] for c in short["caches"]] == ["recurrent"]  # no llama_kv_cache at all
    assert short["total_bytes"] == long["total_bytes"] == 24 * (4608 + 24_576) * 4 == 2_801_664
    assert llamacpp_kv_cache(arch, 4096, n_seq=2)["total_bytes"] == 2 * 2_801_664  # one state per sequence
    assert layer_memory_map(arch, 4096)["kinds"] == ["linear"]
    text = llama_server_command(ctx_size=4096, model=arch)["text"]["kv"]
    assert "of recurrent state (no layer has attention, so no KV cache)" in text


def test_falcon_mamba_7b_reads_intermediate_size_not_expand():
    arch = parse_hf_config(SSM["falcon-mamba-7b"]["config"])
    layer = arch.layers[0]
    assert layer.conv_state_values == 3 * 8192 and layer.ssm_state_values == 16 * 8192  # not expand 16 x 4096
    rec = llamacpp_kv_cache(arch, 8192)["caches"][0]
    assert rec["bytes"] == 64 * (3 * 8192 + 16 * 8192) * 4 == 38 * MIB
    assert rec["log_line"].startswith("llama_memory_recurrent: size =   38.00 MiB (     1 cells,  64 layers,  1 seqs)")


def test_mamba2_codestral_state_includes_the_groups_b_and_c():
    arch = parse_hf_config(SSM["mamba-codestral-7b"]["config"])
    layer = arch.layers[0]
    assert layer.conv_state_values == (4 - 1) * (8192 + 2 * 8 * 128) == 30_720  # n_groups 8, state_size 128
    assert layer.ssm_state_values == 128 * 8192 == 4 * MIB // 4
    rec = llamacpp_kv_cache(arch, 4096)["caches"][0]
    assert rec["k_bytes"] == 64 * 30_720 * 4  # R: 7.50 MiB
    assert rec["v_bytes"] == 64 * 4 * MIB  # S: 256 MiB
    assert "size =  263.50 MiB (     1 cells,  64 layers,  1 seqs)" in rec["log_line"]


def test_mamba_1_4b_state_matches_the_logged_14_25_mib():
    # state-spaces/mamba-1.4b (https://huggingface.co/state-spaces/mamba-1.4b/blob/main/config.json): d_model 2048,
    # n_layer 48, and Mamba's expand 2, d_state 16, d_conv 4; the GeniePod issue above logs 14.25 MiB of recurrent
    # state for it in llama.cpp
    arch = parse_hf_config(
        {"model_type": "mamba", "hidden_size": 2048, "num_hidden_layers": 48, "intermediate_size": 4096,
         "conv_kernel": 4, "state_size": 16}
    )  # fmt: skip
    assert llamacpp_kv_cache(arch, 32_768)["total_bytes"] == 48 * (3 * 4096 + 16 * 4096) * 4 == 14.25 * MIB


def test_kv_memory_widget_words_for_state_only_and_parallel_hybrid_models():
    from kvlab.widgets.memory import kv_memory_figure

    mamba = kv_memory_figure(config=json.dumps(SSM["mamba-130m"]["config"]), context=32_768)
    assert mamba["config_error"] is None
    growth, said = mamba["result"]["growth"], mamba["view"]["head"]["text"]
    assert growth["growth_per_token"]["bytes"] == 0 and "nothing grows" in said
    assert "2.67 MiB of recurrent state" in said and "windows" not in said
    assert [k["label"] for k in mamba["result"]["kinds"]] == ["recurrent state (no attention layer)"]
    falcon = kv_memory_figure(config=json.dumps(SSM["falcon-h1-1.5b"]["config"]), context=32_768)
    assert falcon["result"]["total"]["human"] == "840.98 MiB"  # 768 MiB of KV + 72.98 MiB of state
    assert [k["label"] for k in falcon["result"]["kinds"]] == [
        "full attention",
        "Mamba-2 state (in the same layers as the attention)",
    ]
    assert [k["kind"] for k in falcon["layer_map"]["kinds"]] == ["hybrid"]


def test_granite_4_micro_with_only_attention_layers_has_no_state():
    cfg = dict(SSM["granite-4.0-h-small"]["config"], layer_types=["attention"] * 40)
    for key in ("mamba_d_conv", "mamba_d_state", "mamba_expand", "mamba_n_groups"):
        cfg.pop(key)
    arch = parse_hf_config(cfg)
    assert arch.count("full") == 40 and arch.count("linear") == 0


@pytest.mark.parametrize(
    "entry, drop, field",
    [
        ("jamba-1.5-mini", "mamba_d_state", "mamba_d_state"),
        ("jamba-1.5-mini", "attn_layer_period", "attn_layer_period"),
        ("nemotron-h-8b", "n_groups", "n_groups"),
        ("nemotron-h-8b", "hybrid_override_pattern", "hybrid_override_pattern"),
        ("granite-4.0-h-small", "mamba_d_conv", "conv_kernel"),
        ("granite-4.0-h-small", "layer_types", "layer_types"),
        ("mamba-130m", "state_size", "state_size"),
        ("mamba-codestral-7b", "n_groups", "n_groups"),
    ],
)
def test_a_missing_mamba_field_is_named_not_defaulted(entry, drop, field):
    cfg = dict(SSM[entry]["config"])
    cfg.pop(drop)
    with pytest.raises(ValueError, match=f"'{field}'.*missing"):
        parse_hf_config(cfg)


def test_nemotron_h_pattern_must_match_the_layer_count():
    cfg = dict(SSM["nemotron-h-8b"]["config"], hybrid_override_pattern="M*-")
    with pytest.raises(ValueError, match="hybrid_override_pattern.*3 entries.*52"):
        parse_hf_config(cfg)


def test_falcon_multi_query_is_read_as_one_kv_head():
    # tiiuae/falcon-7b config.json: n_layer 32, n_head 71, hidden_size 4544, multi_query true
    arch = parse_hf_config(
        {
            "model_type": "falcon",
            "hidden_size": 4544,
            "n_head": 71,
            "n_layer": 32,
            "multi_query": True,
            "new_decoder_architecture": False,
            "vocab_size": 65024,
        }
    )
    assert arch.attention == "mqa" and arch.n_layers == 32
    assert [layer.k_values for layer in arch.layers] == [1 * 64] * 32  # one KV head x 4544 / 71
    # tiiuae/falcon-40b: new_decoder_architecture, num_kv_heads 8, 128 heads of 64
    arch = parse_hf_config(
        {
            "model_type": "falcon",
            "hidden_size": 8192,
            "num_attention_heads": 128,
            "num_hidden_layers": 60,
            "num_kv_heads": 8,
            "new_decoder_architecture": True,
        }
    )
    assert arch.layers[0].k_values == 8 * 64


def test_vision_language_configs_read_text_config_and_say_vision_is_not_counted():
    arch = parse_hf_config({"model_type": "llava", "vision_config": {"hidden_size": 1024}, "text_config": base()})
    assert any("vision encoder" in note for note in arch.notes)


@pytest.mark.parametrize("value", [1e30, float("nan"), float("inf"), -3, 2.5, "32"])
def test_absurd_numbers_name_the_field(value):
    with pytest.raises(ValueError, match="'num_hidden_layers'"):
        parse_hf_config(base(num_hidden_layers=value))


def test_missing_model_type_is_named():
    cfg = base()
    del cfg["model_type"]
    with pytest.raises(ValueError, match="model_type"):
        parse_hf_config(cfg)
