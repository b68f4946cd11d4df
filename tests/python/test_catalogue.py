"""The model and GPU catalogue: sourced, parseable, and shipped with the package."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import kvlab
from kvlab.memory.catalogue import (
    DATA_DIR,
    get_gpu,
    get_model,
    gpus,
    list_gpus,
    list_models,
    model_architecture,
    models,
)

MODEL_IDS = [m["id"] for m in models()]
GPU_IDS = [g["id"] for g in gpus()]


def test_data_lives_inside_the_package_so_the_pyodide_zip_carries_it():
    assert DATA_DIR == Path(kvlab.__file__).parent / "data"
    assert (DATA_DIR / "models.json").is_file() and (DATA_DIR / "gpus.json").is_file()


def test_catalogue_sizes():
    assert len(MODEL_IDS) >= 15 and len(set(MODEL_IDS)) == len(MODEL_IDS)
    assert len(GPU_IDS) >= 10 and len(set(GPU_IDS)) == len(GPU_IDS)


@pytest.mark.parametrize(
    "hf_id",
    [
        "meta-llama/Llama-2-7b-hf",
        "meta-llama/Llama-3.1-8B",
        "meta-llama/Llama-3.1-70B",
        "mistralai/Mistral-7B-v0.3",
        "google/gemma-3-27b-it",
        "deepseek-ai/DeepSeek-V3",
        "openai/gpt-oss-20b",
        "openai/gpt-oss-120b",
        "Qwen/Qwen3-Next-80B-A3B-Instruct",
        "microsoft/Phi-3-mini-4k-instruct",
        "Qwen/Qwen3-8B",
        "Qwen/Qwen3.6-27B",
    ],
)
def test_required_models_are_present(hf_id):
    assert get_model(hf_id)["hf_id"] == hf_id


@pytest.mark.parametrize("model_id", MODEL_IDS)
def test_every_model_has_its_config_source_and_parses(model_id):
    entry = get_model(model_id)
    assert entry["source"] == f"https://huggingface.co/{entry['hf_id']}/blob/main/config.json"
    assert entry["params"] > 0 and entry["params_source"]
    if entry["active_params"] is not None:
        assert 0 < entry["active_params"] < entry["params"]
    if not entry["confirmed"]:
        assert entry["unconfirmed_fields"] and entry["note"]
    arch = model_architecture(model_id)
    assert arch.n_layers >= 1 and arch.params == entry["params"]
    json.dumps(arch.summary())


def test_qwen3_6_27b_is_recorded_with_what_was_not_confirmed():
    entry = get_model("qwen3.6-27b")
    assert entry["confirmed"] is False and "linear_conv_kernel_dim" in entry["unconfirmed_fields"]
    assert "Qwen3.6-27B" in entry["note"]


@pytest.mark.parametrize("gpu_id", GPU_IDS)
def test_every_gpu_has_specs_and_a_dated_sourced_price_or_a_reason(gpu_id):
    g = get_gpu(gpu_id)
    assert g["memory_gib"] > 0 and g["bandwidth_gb_s"] > 0
    assert re.match(r"https://", g["spec_source"])
    if g["price_per_hour_usd"] is None:
        assert g["note"]
    else:
        assert g["price_per_hour_usd"] > 0 and g["price_source"].startswith("https://")
        assert re.match(r"20\d\d", g["price_date"]) and g["price_provider"]
        # priced the same way or not compared: on-demand, serverless or marketplace
        assert g["price_kind"] in ("on-demand", "serverless", "marketplace")
    assert g["bf16_dense_tflops"] > 0 and g["flops_source"]
    # no note written for ourselves reaches a reader
    assert "tools available" not in g["note"] and "here" not in g["note"].split()


def test_no_internal_notes_in_the_catalogue():
    text = json.dumps(kvlab.list_models()) + json.dumps(kvlab.list_gpus())
    for phrase in ("in the seeds", "tools available here", "not readable here"):
        assert phrase not in text


def test_unknown_ids_list_the_choices():
    with pytest.raises(ValueError, match="llama-3.1-8b"):
        get_model("llama-9")
    with pytest.raises(ValueError, match="h100-sxm"):
        get_gpu("tpu")


def test_listings_are_json():
    json.dumps(list_models())
    json.dumps(list_gpus())


def _qwen3_5_language_params(text: dict) -> tuple[int, int]:
    """(all, per token) parameters of a Qwen3.5 language model, counted from its text_config the way transformers'
    Qwen3_5 / Qwen3_5Moe modules hold them: gated full attention (q_proj twice the heads for the output gate, q/k
    norms), Gated DeltaNet (in_proj_qkvz, in_proj_ba, a depthwise conv over q, k and v, dt_bias, A_log, a gated norm,
    out_proj), a dense MLP or 256 experts with a shared expert and its gate, two norms a layer and a final one, and
    two vocab tables (untied)."""
    h, vocab, layers = text["hidden_size"], text["vocab_size"], text["num_hidden_layers"]
    heads, kv, hd = text["num_attention_heads"], text["num_key_value_heads"], text["head_dim"]
    attn = h * heads * hd * 2 + 2 * h * kv * hd + heads * hd * h + 2 * hd
    key, value = text["linear_num_key_heads"] * text["linear_key_head_dim"], (
        text["linear_num_value_heads"] * text["linear_value_head_dim"]
    )
    vheads, conv = text["linear_num_value_heads"], key * 2 + value
    gdn = h * (2 * key + 2 * value) + h * 2 * vheads + conv * text["linear_conv_kernel_dim"] + 2 * vheads
    gdn += text["linear_value_head_dim"] + value * h
    n_full = layers // text["full_attention_interval"]
    if "num_experts" in text:
        expert = 3 * h * text["moe_intermediate_size"]
        fixed = h * text["num_experts"] + 3 * h * text["shared_expert_intermediate_size"] + h
        mlp_all, mlp_active = fixed + text["num_experts"] * expert, fixed + text["num_experts_per_tok"] * expert
    else:
        mlp_all = mlp_active = 3 * h * text["intermediate_size"]
    common = 2 * vocab * h + n_full * attn + (layers - n_full) * gdn + 2 * h * layers + h
    return common + layers * mlp_all, common + layers * mlp_active


@pytest.mark.parametrize("model_id", ["qwen3.5-9b", "qwen3.5-35b-a3b"])
def test_the_qwen3_5_language_counts_are_their_configs(model_id):
    # the step time runs the language model only (no vision tower, no MTP head): the catalogue's counts of it are
    # the config's arithmetic, and untied
    entry = get_model(model_id)
    text = entry["config"]["text_config"]
    every, per_token = _qwen3_5_language_params(text)
    assert (entry["language_params"], entry["language_active_params"]) == (every, per_token)
    arch = model_architecture(model_id)
    assert arch.tied_embeddings is False
    assert (arch.language_params, arch.language_active_params) == (every, per_token)
    if model_id == "qwen3.5-35b-a3b":
        # the count a third-party implementation of the published config gives (the entry's params_source)
        assert every == 34_660_610_688
    else:
        # the checkpoint: 19,306,216,416 bytes in BF16 hold the language model, the vision tower (27 blocks of
        # 1,152 wide, MLP 4,304, + merger and patch embedding) and the MTP layer (one decoder layer + its 8,192 -> 4,096
        # projection): untied tables are the only count that adds up
        tower = 27 * (4 * 1152**2 + 2 * 1152 * 4304) + (4 * 1152) ** 2 + 4 * 1152 * 4096
        mtp = 3 * 4096 * 12288 + 4096 * 16 * 256 * 2 + 2 * 4096 * 4 * 256 + 16 * 256 * 4096 + 2 * 4096 * 4096
        assert every + tower + mtp == pytest.approx(19_306_216_416 / 2, rel=0.002)
