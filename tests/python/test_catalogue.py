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
