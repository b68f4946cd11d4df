"""Figure data for the memory and serving pages: the widgets show what the calculators compute."""
from __future__ import annotations

import json

import pytest

import kvlab
from kvlab import figures_memory as fm
from kvlab.catalogue import get_model

GIB = 2**30


def test_human_bytes_examples():
    assert fm.human_bytes(524288) == "512 KiB"
    assert fm.human_bytes(64 * GIB) == "64 GiB"
    assert fm.human_bytes(156893184) == "149.62 MiB"  # llama.cpp prints 149.62 for the same bytes
    assert fm.human_bytes(1000) == "1,000 B"
    assert fm.human_bytes(-3 * GIB // 2) == "-1.5 GiB"
    assert fm.exact_bytes(68719476736) == "68,719,476,736 B"


def test_context_steps_are_log_spaced_multiples_of_256():
    steps = fm.CONTEXT_STEPS
    assert steps[0] == 1024 and steps[-1] == 2**20 and steps == sorted(steps)
    assert all(s % 256 == 0 for s in steps)
    assert steps[fm.context_step(131072)] == 131072


def test_kv_memory_default_is_the_seed_claim_for_llama_2_7b():
    data = kvlab.kv_memory_figure()
    report = kvlab.memory_report("llama-2-7b", 131072, kv="f16", mode="llamacpp")
    assert data["result"]["per_token"] == {"bytes": 524288, "human": "512 KiB", "exact": "524,288 B",
                                           "gib": 524288 / GIB}
    assert data["result"]["total"]["bytes"] == report["total_bytes"] == 64 * GIB
    assert data["result"]["formula"] == report["formula"]
    assert data["result"]["log_lines"] == report["detail"]["log_lines"]


def test_claim_table_shows_gqa_models_four_times_smaller():
    rows = {r["id"]: r for r in fm.seed_claim()["rows"]}
    assert rows["llama-2-7b"]["per_token"]["human"] == "512 KiB"
    assert rows["llama-2-7b"]["total"]["human"] == "64 GiB"
    for gqa in ("mistral-7b-v0.3", "llama-3.1-8b"):
        assert rows[gqa]["per_token"]["bytes"] * 4 == rows["llama-2-7b"]["per_token"]["bytes"]
        assert rows[gqa]["times_smaller"] == "4"


@pytest.mark.parametrize("model", ["llama-3.1-8b", "gemma-2-9b", "deepseek-v2-lite", "qwen3.6-27b", "gpt-oss-20b"])
@pytest.mark.parametrize("mode,kv", [("llamacpp", "q8_0"), ("vllm", "fp8"), ("exact", "f16")])
def test_kv_memory_matches_memory_report(model, mode, kv):
    data = kvlab.kv_memory_figure(model=model, context=40960, kv=kv, mode=mode, n_seq=3)
    report = kvlab.memory_report(model, 40960, kv=kv, mode=mode, n_seq=3)
    assert data["result"]["per_token"]["bytes"] == report["bytes_per_token"]
    assert data["result"]["total"]["bytes"] == report["total_bytes"]
    assert sum(k["total"]["bytes"] for k in data["result"]["kinds"]) == report["total_bytes"]
    chosen = data["curve"]["series"][0]
    assert chosen["chosen"] and chosen["bytes"][data["curve"]["contexts"].index(32768)] == \
        kvlab.memory_report(model, 32768, kv=kv, mode=mode, n_seq=3)["total_bytes"]


@pytest.mark.parametrize("model", ["llama-2-7b", "gemma-2-9b", "deepseek-v3", "qwen3.6-27b", "phi-3-mini-4k"])
def test_pasted_config_gives_the_catalogue_numbers(model):
    text = json.dumps(get_model(model)["config"], indent=2)
    pasted = kvlab.kv_memory_figure(config=text, context=65536, kv="q8_0")
    listed = kvlab.kv_memory_figure(model=model, context=65536, kv="q8_0")
    assert pasted["params"]["source"] == "config" and pasted["model_info"] is None
    for key in ("per_token", "total", "kinds", "formula", "log_lines"):
        assert pasted["result"][key] == listed["result"][key]


def test_pasted_config_errors_name_the_problem():
    cfg = dict(get_model("llama-3.1-8b")["config"])
    del cfg["num_hidden_layers"]
    with pytest.raises(ValueError, match="'num_hidden_layers' is missing"):
        kvlab.kv_memory_figure(config=json.dumps(cfg))
    with pytest.raises(ValueError, match="not valid JSON"):
        kvlab.kv_memory_figure(config='{"model_type": "llama", "num_hidden_layers": 32,,}')
    with pytest.raises(ValueError, match="paste the text of a config.json"):
        kvlab.kv_memory_figure(config="meta-llama/Llama-3.1-8B")


def test_kv_type_must_suit_the_engine():
    with pytest.raises(ValueError, match="not a llama.cpp cache type"):
        kvlab.kv_memory_figure(kv="fp8", mode="llamacpp")
    with pytest.raises(ValueError, match="not a vLLM cache type"):
        kvlab.kv_memory_figure(kv="q4_0", mode="vllm")


def test_context_and_n_seq_are_clamped():
    data = kvlab.kv_memory_figure(context=10**9, n_seq=0)
    assert data["params"]["context"] == 2**20 and data["params"]["n_seq"] == 1


def test_model_groups_cover_the_catalogue_once():
    ids = [m["id"] for g in fm.model_groups() for m in g["models"]]
    assert sorted(ids) == sorted(m["id"] for m in kvlab.list_models())
    kinds = {g["kind"] for g in fm.model_groups()}
    assert {"mha", "gqa", "mla", "interleaved", "hybrid"} <= kinds


def test_gpu_fit_adds_up_and_matches_fit_report():
    data = kvlab.gpu_fit_figure()
    report = kvlab.fit_report("qwen3.6-27b", 131072, gpu="rtx-4090", weights="Q4_K_M", kv="q8_0")
    assert [s["bytes"] for s in data["segments"]] == [c["bytes"] for c in report["components"]]
    assert data["total"]["bytes"] == sum(s["bytes"] for s in data["segments"]) == report["total_bytes"]
    assert data["verdict"] == report["verdict"] and data["max_context"] == report["max_context_that_fits"]
    assert data["model_info"]["confirmed"] is False and "linear_conv_kernel_dim" in data["model_info"]["note"]
    assert len(data["gpus"]) == len(kvlab.list_gpus())
    assert data["log_lines"][0].startswith("llama_kv_cache: size = 4352.00 MiB (131072 cells,  16 layers")


def test_gpu_fit_does_not_fit_and_bar_scales_to_the_larger():
    data = kvlab.gpu_fit_figure(model="llama-3.1-70b", gpu="rtx-4090", weights="BF16", kv="f16", context=8192)
    assert not data["fits"] and data["verdict"] == "does not fit"
    assert data["max_context_text"] == "none: not even 256 tokens fit"
    assert abs(sum(s["percent"] for s in data["segments"]) - 100) < 0.01
    assert data["memory_percent"] < 100


def test_gpu_fit_vllm_max_context_is_the_boundary():
    data = kvlab.gpu_fit_figure(model="llama-3.1-8b", gpu="rtx-4090", weights="BF16", kv="f16", mode="vllm")
    best = data["max_context"]
    arch = kvlab.model_architecture("llama-3.1-8b")
    memory = 24 * GIB
    assert 256 <= best < 131072
    assert kvlab.memory_fit(arch, best, memory, "BF16", "f16", mode="vllm")["fits"]
    assert not kvlab.memory_fit(arch, best + 256, memory, "BF16", "f16", mode="vllm")["fits"]


def test_serving_matches_serving_estimate_and_shows_the_working():
    data = kvlab.serving_figure(model="llama-3.1-8b", gpu="h100-sxm", context=32768, batch=16)
    est = kvlab.serving_estimate("llama-3.1-8b", "h100-sxm", 32768, 16, "BF16", "f16")
    assert data["ms_per_token"] == est["seconds_per_token"] * 1000
    assert data["total_tokens_per_second"] == est["total_tokens_per_second"]
    assert data["usd_per_million_tokens"] == est["usd_per_million_tokens"]
    assert data["chats_that_fit"] == est["chats_that_fit_in_memory"]
    assert data["assumptions"] == est["assumptions"]
    assert data["working"].endswith(f"= {data['ms_per_token_text']} per step")
    assert data["gpu_info"]["price_date"] == "2026-05-07"
    i = data["curve"]["contexts"].index(32768)
    assert data["curve"]["ms_batch"][i] == data["ms_per_token"]
    assert data["curve"]["ms_batch1"][i] < data["curve"]["ms_batch"][i]


def test_serving_without_a_price_says_so():
    data = kvlab.serving_figure(gpu="mi300x")
    assert data["usd_per_million_tokens"] is None
    assert data["cost_text"].startswith("no hourly price")


def test_figures_are_json_and_reachable_from_the_bridge():
    from kvlab.bridge import call_json

    for name in ("kv_memory_figure", "gpu_fit_figure", "serving_figure"):
        reply = json.loads(call_json(name, "{}"))
        assert "result" in reply, reply
    bad = json.loads(call_json("kv_memory_figure", json.dumps({"config": '{"model_type": "llama"}'})))
    assert bad["error"] == "ValueError: config field 'num_hidden_layers' is missing"
