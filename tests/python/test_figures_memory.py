"""Figure data for the memory and serving pages: the widgets show what the calculators compute."""

from __future__ import annotations

import json

import pytest

import kvlab
from kvlab import wording
from kvlab.widgets import memory as fm
from kvlab.widgets import pickers
from kvlab.memory.catalogue import get_model

GIB = 2**30


def test_human_bytes_examples():
    assert wording.human_bytes(524288) == "512 KiB"
    assert wording.human_bytes(64 * GIB) == "64 GiB"
    assert wording.human_bytes(156893184) == "149.62 MiB"  # llama.cpp prints 149.62 for the same bytes
    assert wording.human_bytes(1000) == "1,000 B"
    assert wording.human_bytes(-3 * GIB // 2) == "-1.5 GiB"
    assert wording.exact_bytes(68719476736) == "68,719,476,736 B"


def test_context_steps_are_log_spaced_multiples_of_256():
    steps = pickers.CONTEXT_STEPS
    assert steps[0] == 1024 and steps[-1] == 2**20 and steps == sorted(steps)
    assert all(s % 256 == 0 for s in steps)
    assert steps[pickers.context_step(131072)] == 131072


def test_kv_memory_default_is_llama_2_7b_within_its_trained_context():
    data = kvlab.kv_memory_figure()
    report = kvlab.memory_report("llama-2-7b", 4096, kv="f16", mode="llamacpp")
    assert data["params"]["context"] == 4096 == data["result"]["max_position_embeddings"]
    assert data["context_flag"] is None
    assert data["result"]["per_token"] == {
        "bytes": 524288,
        "human": "512 KiB",
        "exact": "524,288 B",
        "gib": 524288 / GIB,
    }
    assert data["result"]["total"]["bytes"] == report["total_bytes"] == 2 * GIB
    assert data["result"]["formula"] == report["formula"]
    assert data["result"]["log_lines"] == report["detail"]["log_lines"]


def test_kv_memory_flags_a_context_beyond_the_trained_one():
    data = kvlab.kv_memory_figure(model="llama-2-7b", context=131072)
    assert data["result"]["total"]["bytes"] == 64 * GIB  # the claim's number, still computed
    flag = data["context_flag"]
    assert flag["trained"] == 4096 and "llama.cpp warns" in flag["message"]
    assert (
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN"
        in kvlab.kv_memory_figure(model="llama-2-7b", context=131072, mode="vllm")["context_flag"]["message"]
    )


def test_windowed_models_show_the_fixed_part_and_the_growth_per_token():
    # Gemma-2-9B: 21 full + 21 sliding (4,096) layers, 8 KV heads x 256, f16
    data = kvlab.kv_memory_figure(model="gemma-2-9b", context=131072, mode="exact")
    g = data["result"]["growth"]
    assert g["bounded"] and g["growth_per_token"]["bytes"] == 2 * 21 * 8 * 256 * 2 == 168 * 1024
    assert g["fixed"]["bytes"] == 2 * 21 * 8 * 256 * 2 * 4096
    # fixed + growth x context is the total: the two numbers add up, unlike 336 KiB x 131,072
    assert g["fixed"]["bytes"] + g["growth_per_token"]["bytes"] * 131072 == data["result"]["total"]["bytes"]
    assert "168 KiB" == g["growth_per_token"]["human"] and "336 KiB per token" in data["view"]["head"]["text"]
    assert not kvlab.kv_memory_figure(model="llama-3.1-8b")["result"]["growth"]["bounded"]


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
    # n_seq sequences of `context` tokens each: llama.cpp -c context*n_seq -np n_seq, one stream each
    data = kvlab.kv_memory_figure(model=model, context=40960, kv=kv, mode=mode, n_seq=3)
    llama = mode == "llamacpp"
    report = kvlab.memory_report(model, 40960 * 3 if llama else 40960, kv=kv, mode=mode, n_seq=3, kv_unified=not llama)
    assert data["result"]["per_token"]["bytes"] == report["bytes_per_token"]
    assert data["result"]["total"]["bytes"] == report["total_bytes"]
    assert sum(k["total"]["bytes"] for k in data["result"]["kinds"]) == report["total_bytes"]
    chosen = data["curve"]["series"][0]
    assert (
        chosen["chosen"]
        and chosen["bytes"][data["curve"]["contexts"].index(32768)]
        == kvlab.memory_report(model, 32768 * 3 if llama else 32768, kv=kv, mode=mode, n_seq=3, kv_unified=not llama)[
            "total_bytes"
        ]
    )


def test_every_mode_counts_n_seq_sequences_of_the_context():
    # Llama-3.1-8B, 4 x 8192 tokens, f16: 4 x 8192 x 128 KiB = 4 GiB in every accounting
    for mode in ("llamacpp", "vllm", "exact"):
        assert (
            kvlab.kv_memory_figure(model="llama-3.1-8b", context=8192, n_seq=4, mode=mode)["result"]["total"]["bytes"]
            == 4 * GIB
        )


@pytest.mark.parametrize("model", ["llama-2-7b", "gemma-2-9b", "deepseek-v3", "qwen3.6-27b", "phi-3-mini-4k"])
def test_pasted_config_gives_the_catalogue_numbers(model):
    text = json.dumps(get_model(model)["config"], indent=2)
    pasted = kvlab.kv_memory_figure(config=text, context=65536, kv="q8_0")
    listed = kvlab.kv_memory_figure(model=model, context=65536, kv="q8_0")
    assert pasted["params"]["source"] == "config" and pasted["model_info"] is None
    for key in ("per_token", "total", "kinds", "formula", "log_lines"):
        assert pasted["result"][key] == listed["result"][key]


@pytest.mark.parametrize(
    ("model", "context", "kv", "n_seq"),
    [("llama-2-7b", 4096, "f16", 1), ("gemma-2-9b", 40960, "q8_0", 2), ("qwen3.6-27b", 131072, "q4_0", 3)],
)
def test_kv_memory_shows_the_llama_server_command_that_allocates_its_total(model, context, kv, n_seq):
    data = kvlab.kv_memory_figure(model=model, context=context, kv=kv, mode="llamacpp", n_seq=n_seq)
    server = data["server"]
    want = kvlab.llama_server_command(ctx_size=context * n_seq, cache_type_k=kv, parallel=n_seq, model=model)
    assert server["command"] == want["command"] and server["flags"] == want["flags"]
    # the command allocates exactly the total the widget shows for llama.cpp
    assert server["kv_bytes"] == data["result"]["total"]["bytes"] == want["kv"]["total_bytes"]
    argv = want["argv"]
    assert argv[argv.index("--ctx-size") + 1] == str(context * n_seq)
    # --parallel always: without it llama-server would run 4 slots over one unified cache
    assert argv[argv.index("--parallel") + 1] == str(n_seq) and ("-ctk" in argv) == (kv != "f16")
    said = data["view"]["server_text"]
    assert data["result"]["total"]["human"] in said and f"{context:,} tokens per slot" in said


def test_kv_memory_server_command_for_a_pasted_config_and_for_fp8():
    text = json.dumps(get_model("llama-3.1-8b")["config"])
    pasted = kvlab.kv_memory_figure(config=text, context=8192, kv="q8_0")["server"]
    listed = kvlab.kv_memory_figure(model="llama-3.1-8b", context=8192, kv="q8_0")["server"]
    assert pasted["kv_bytes"] == listed["kv_bytes"]
    assert "-m model-Q4_K_M.gguf" in pasted["command"] and "-m Llama-3.1-8B-Q4_K_M.gguf" in listed["command"]
    fp8_data = kvlab.kv_memory_figure(model="llama-3.1-8b", kv="fp8", mode="vllm")
    fp8 = fp8_data["server"]
    assert fp8["command"] is None and fp8["flags"] == [] and "no fp8 cache type" in fp8_data["view"]["server_text"]


def test_pasted_config_errors_name_the_problem_and_keep_the_catalogue_figure():
    cfg = dict(get_model("llama-3.1-8b")["config"])
    del cfg["num_hidden_layers"]
    for text, message in (
        (json.dumps(cfg), "'num_hidden_layers' is missing"),
        ('{"model_type": "llama", "num_hidden_layers": 32,,}', "not valid JSON"),
        ("meta-llama/Llama-3.1-8B", "paste the text of a config.json"),
        (json.dumps(dict(cfg, num_hidden_layers=1e30)), "'num_hidden_layers'"),
        ('{"model_type": "llama", "num_hidden_layers": NaN}', "'num_hidden_layers'"),
    ):
        data = kvlab.kv_memory_figure(model="llama-3.1-8b", config=text)
        assert message in data["config_error"], (text, data["config_error"])
        assert data["params"]["source"] == "catalogue" and data["params"]["model"] == "llama-3.1-8b"


def test_kv_type_must_suit_the_engine():
    with pytest.raises(ValueError, match="not a llama.cpp cache type"):
        kvlab.kv_memory_figure(kv="fp8", mode="llamacpp")
    with pytest.raises(ValueError, match="not a vLLM cache type"):
        kvlab.kv_memory_figure(kv="q4_0", mode="vllm")


def test_context_and_n_seq_are_clamped_and_say_so():
    data = kvlab.kv_memory_figure(context=10**9, n_seq=0)
    assert data["params"]["context"] == 2**20 and data["params"]["n_seq"] == 1
    assert data["clamped"] == {"context": {"requested": 10**9, "used": 2**20}, "n_seq": {"requested": 0, "used": 1}}
    for bad in (float("nan"), float("inf"), "lots"):
        with pytest.raises(ValueError, match="context"):
            kvlab.kv_memory_figure(context=bad)
    assert data["options"]["limits"]["context"] == {"min": 1, "max": 2**20, "step": 1}


def test_model_groups_cover_the_catalogue_once():
    ids = [m["id"] for g in pickers.model_groups() for m in g["models"]]
    assert sorted(ids) == sorted(m["id"] for m in kvlab.list_models())
    kinds = {g["kind"] for g in pickers.model_groups()}
    assert {"mha", "gqa", "mla", "interleaved", "hybrid"} <= kinds


def test_gpu_fit_adds_up_and_shows_the_verdict():
    data = kvlab.gpu_fit_figure()
    v = kvlab.verdict(kvlab.deployment("qwen3.6-27b", weights="Q4_K_M", kv="q8_0", gpu="rtx-4090"), 131072)
    assert [s["bytes"] for s in data["segments"]] == [c["bytes"] for c in v["components"]]
    assert data["total"]["bytes"] == sum(s["bytes"] for s in data["segments"]) == v["total_bytes"]
    assert data["verdict"] == v["verdict"] and data["headline"] == v["headline"]
    assert data["max_context"] == v["max_context"] and data["max_sequences"] == v["max_sequences"]
    assert data["model_info"]["confirmed"] is False and "linear_conv_kernel_dim" in data["model_info"]["note"]
    assert len(data["gpus"]) == len(kvlab.list_gpus())
    assert data["log_lines"][0].startswith("llama_kv_cache: size = 4352.00 MiB (131072 cells,  16 layers")


def test_gpu_fit_never_says_fits_beside_a_smaller_largest_context():
    # the case: Llama-2-7B BF16, f16 cache, H100, 131,072 tokens (trained on 4,096)
    data = kvlab.gpu_fit_figure(model="llama-2-7b", gpu="h100-sxm", weights="BF16", kv="f16", context=131072)
    assert not data["fits"] and data["binding"] == "trained_context"
    assert data["verdict"] == "beyond the trained context" and data["max_context"] == 4096
    assert "llama.cpp warns" in data["context_flag"]["message"]
    for row in data["gpus"]:  # the per-GPU table agrees with itself
        assert not row["fits"] and row["verdict"] in ("beyond the trained context", "does not fit")
    for model in ("llama-3.1-8b", "gemma-2-9b", "qwen3.6-27b"):
        for context in (4096, 131072, 2**20):
            for gpu in ("rtx-4090", "h100-sxm"):
                d = kvlab.gpu_fit_figure(model=model, gpu=gpu, weights="Q4_K_M", kv="q8_0", context=context)
                if d["fits"]:
                    assert d["max_context"] >= context, (model, context, gpu)
                else:
                    assert d["max_context"] is None or d["max_context"] < context or d["binding"] in ("kv_cache",), (
                        model,
                        context,
                        gpu,
                    )


def test_gpu_fit_does_not_fit_and_bar_scales_to_the_larger():
    data = kvlab.gpu_fit_figure(model="llama-3.1-70b", gpu="rtx-4090", weights="BF16", kv="f16", context=8192)
    assert not data["fits"] and data["verdict"] == "does not fit" and data["binding"] == "weights"
    assert data["max_context_text"] == "none: not even 256 tokens fit"
    assert abs(sum(s["percent"] for s in data["segments"]) - 100) < 0.01
    assert data["memory_percent"] < 100


def test_gpu_fit_vllm_max_context_is_the_boundary():
    data = kvlab.gpu_fit_figure(model="llama-3.1-8b", gpu="rtx-4090", weights="BF16", kv="f16", mode="vllm")
    best = data["max_context"]
    assert 16 <= best < 131072 and best % 16 == 0
    # the widget models vLLM 0.20 and later unless told otherwise (engine_version)
    vllm = kvlab.deployment("llama-3.1-8b", weights="BF16", kv="f16", gpu="rtx-4090", engine="vllm", version="0.20+")
    assert kvlab.verdict(vllm, best)["fits"]
    assert not kvlab.verdict(vllm, best + 16)["memory_fits"]


def test_gpu_fit_vllm_utilization_and_block_size_reach_the_verdict():
    args = {
        "model": "llama-3.1-8b",
        "gpu": "h100-sxm",
        "weights": "BF16",
        "kv": "f16",
        "context": 30000,
        "mode": "vllm",
        "n_seq": 4,
    }
    base = kvlab.gpu_fit_figure(**args)
    # vLLM 0.20+'s defaults (the widget's default version)
    assert base["params"]["gpu_memory_utilization"] == 0.92 and base["params"]["block_size"] == 16
    half = kvlab.gpu_fit_figure(**args, gpu_memory_utilization=0.5)
    # vLLM multiplies the memory the driver reports (79.22 GiB on an H100), not the nominal 80 GiB
    memory = kvlab.verdict(kvlab.deployment("llama-3.1-8b", gpu="h100-sxm", engine="vllm", weights="BF16"), 30000)[
        "engine_model"
    ]["usable_bytes"]
    assert memory < base["memory"]["bytes"]
    assert base["budget"]["bytes"] == int(memory * 0.92) and half["budget"]["bytes"] == int(memory * 0.5)
    assert "--gpu-memory-utilization 0.5" in half["flags"] and "--block-size" not in half["flags"]
    assert half["max_sequences"] < base["max_sequences"] and half["max_context"] < base["max_context"]
    # 30,000 tokens is 1,875 blocks of 16 but 235 blocks of 128 (30,080 tokens): more KV per sequence; and vLLM 0.20+
    # holds one null block back from the pool
    big = kvlab.gpu_fit_figure(**args, block_size=128)
    kv = {d["params"]["block_size"]: next(x for x in d["segments"] if x["name"] == "kv_cache") for d in (base, big)}
    per_token = 32 * 2 * 8 * 128 * 2  # Llama-3.1-8B: 32 layers, K and V, 8 KV heads of 128, 2 B
    assert kv[16]["bytes"] == (4 * 30000 + 16) * per_token and kv[128]["bytes"] == (4 * 30080 + 128) * per_token
    assert "--block-size 128" in big["flags"] and big["max_context"] % 128 == 0
    assert [g["max_context"] for g in big["gpus"]] == [
        kvlab.verdict(
            kvlab.deployment(
                "llama-3.1-8b", weights="BF16", kv="f16", gpu=g["id"], engine="vllm", block_size=128, version="0.20+"
            ),
            30000,
            4,
        )["max_context_text"]
        for g in big["options"]["gpus"]
    ]
    # llama.cpp has no such flags: the same figure whatever they say
    llama = dict(args, mode="llamacpp")
    assert (
        kvlab.gpu_fit_figure(**llama, gpu_memory_utilization=0.3, block_size=64)["budget"]
        == kvlab.gpu_fit_figure(**llama)["budget"]
    )


def test_gpu_fit_vllm_settings_are_clamped_with_a_notice_or_refused():
    data = kvlab.gpu_fit_figure(mode="vllm", kv="fp8", gpu_memory_utilization=1.5, block_size=1000)
    assert data["clamped"] == {
        "gpu_memory_utilization": {"requested": 1.5, "used": 1.0},
        "block_size": {"requested": 1000, "used": 128},
    }
    assert data["params"]["gpu_memory_utilization"] == 1.0 and data["params"]["block_size"] == 128
    low = kvlab.gpu_fit_figure(mode="vllm", kv="fp8", gpu_memory_utilization=0)
    assert low["clamped"]["gpu_memory_utilization"]["used"] == pickers.GPU_MEMORY_UTILIZATION_LIMITS[0]
    limits = data["options"]["limits"]
    assert limits["gpu_memory_utilization"] == {"min": 0.1, "max": 1.0, "step": 0.01}
    assert limits["block_size"] == {"min": 1, "max": 128, "step": 1, "choices": [1, 8, 16, 32, 64, 128]}
    with pytest.raises(ValueError, match="^block_size must be one of 1, 8, 16, 32, 64, 128, got 24"):
        kvlab.gpu_fit_figure(mode="vllm", kv="fp8", block_size=24)
    with pytest.raises(ValueError, match="^gpu_memory_utilization must be a finite number"):
        kvlab.gpu_fit_figure(mode="vllm", kv="fp8", gpu_memory_utilization=float("nan"))
    with pytest.raises(ValueError, match="^block_size must be one of"):
        kvlab.verdict(kvlab.deployment("llama-3.1-8b", gpu="h100-sxm", engine="vllm", block_size=12), 4096)


def test_gpu_fit_tensor_parallel_splits_weights_and_kv_heads():
    one = kvlab.gpu_fit_figure(
        model="llama-3.1-70b", gpu="h100-sxm", weights="BF16", kv="f16", context=32768, mode="vllm", n_gpus=1
    )
    four = kvlab.gpu_fit_figure(
        model="llama-3.1-70b", gpu="h100-sxm", weights="BF16", kv="f16", context=32768, mode="vllm", n_gpus=4
    )
    assert not one["fits"] and one["binding"] == "weights" and four["fits"]
    seg = {s["name"]: s["bytes"] for s in four["segments"]}
    assert seg["weights"] == -(-int(70.55e9 * 2) // 4)
    # 8 KV heads over 4 GPUs: 2 each, a quarter of 80 layers x 2 x 8 x 128 x 2 B per token, for 32,768 tokens and
    # vLLM 0.20+'s null block of 16 tokens (the widget's default version)
    assert seg["kv_cache"] == 80 * 2 * 8 * 128 * 2 // 4 * (32768 + 16)
    v1 = kvlab.gpu_fit_figure(
        model="llama-3.1-70b",
        gpu="h100-sxm",
        weights="BF16",
        kv="f16",
        context=32768,
        mode="vllm",
        n_gpus=4,
        engine_version="v1",
    )
    assert next(s["bytes"] for s in v1["segments"] if s["name"] == "kv_cache") == 80 * 2 * 8 * 128 * 2 * 32768 // 4


def test_serving_matches_serving_estimate_and_shows_the_working():
    data = kvlab.serving_figure(model="llama-3.1-8b", gpu="h100-sxm", context=32768, batch=8)
    # the widget models vLLM 0.20 and later at that version's own share (serving_estimate's default is v1)
    est = kvlab.serving_estimate("llama-3.1-8b", "h100-sxm", 32768, 8, "BF16", "f16", version="0.20+")
    assert data["fits"] and data["ms_per_token"] == est["seconds_per_token"] * 1000
    assert data["total_tokens_per_second"] == est["total_tokens_per_second"]
    assert data["usd_per_million_tokens"] == est["usd_per_million_tokens"]
    assert data["chats_that_fit"] == est["chats_that_fit_in_memory"]
    assert data["assumptions"] == est["assumptions"]
    # the roofline step, which bound binds, then the calibrated efficiency that gives the figure shown
    said = data["view"]
    assert "(bandwidth-bound)" in said["working"] and said["working"].endswith(f": {said['ms_per_token_text']}")
    assert data["gpu_info"]["price_date"] == "2026-05-07" and "on-demand" in said["price_label"]
    i = data["curve"]["contexts"].index(32768)
    assert data["curve"]["ms_batch"][i] == data["ms_per_token"]
    assert data["curve"]["ms_batch1"][i] < data["curve"]["ms_batch"][i]


def test_serving_prices_and_times_nothing_that_does_not_fit():
    for context, batch in ((131072, 16), (2**20, 16)):
        data = kvlab.serving_figure(context=context, batch=batch)
        assert not data["fits"] and data["usd_per_million_tokens"] is None
        said = data["view"]
        assert said["cost_text"].startswith("not priced") and said["ms_per_token_text"] == "does not fit"
        assert said["working"].startswith("Not timed")
    data = kvlab.serving_figure(context=2**20, batch=16)
    assert data["chats_that_fit_text"].startswith("none") and data["context_flag"]
    curve = kvlab.serving_figure(context=32768, batch=16)["curve"]
    assert all(ms is None for ms, fits in zip(curve["ms_batch"], curve["fits_batch"]) if not fits)


def test_serving_compares_prices_of_one_kind_only():
    data = kvlab.serving_figure(gpu="h100-sxm")
    kinds = {kvlab.get_gpu(row["id"])["price_kind"] for row in data["same_kind"]}
    assert kinds == {"on-demand"} and any(row["chosen"] for row in data["same_kind"])


def test_serving_without_a_price_says_so():
    data = kvlab.serving_figure(gpu="mi300x")
    assert data["usd_per_million_tokens"] is None
    assert data["view"]["cost_text"].startswith("no hourly price") and data["same_kind"] == []
    assert "tools" not in data["view"]["price_label"]


def test_figures_are_json_and_reachable_from_the_bridge():
    from kvlab.bridge import call_json

    for name in ("kv_memory_figure", "gpu_fit_figure", "serving_figure"):
        reply = json.loads(call_json(name, "{}"))
        assert "result" in reply, reply
    bad = json.loads(call_json("kv_memory_figure", json.dumps({"config": '{"model_type": "llama"}'})))
    assert (
        bad["result"]["view"]["config_error"]
        == "Could not read this config.json: config field 'num_hidden_layers' is missing"
    )


def test_gpu_fit_says_which_mxfp4_kernel_path_it_modelled():
    data = kvlab.gpu_fit_figure(
        model="gpt-oss-120b", gpu="h100-sxm", weights="MXFP4", kv="f16", context=32768, mode="vllm"
    )
    text = fm.gpu_fit_view(data)["engine_text"]
    assert "Triton kernel path" in text and "runs Marlin" in text and "--mxfp4-backend marlin" in text
    # each card's own path, in its own words: an A100 is already on Marlin, a B200 on its FP4 tensor cores
    a100 = fm.gpu_fit_view(
        kvlab.gpu_fit_figure(model="gpt-oss-20b", gpu="a100-80gb", weights="MXFP4", kv="f16", mode="vllm")
    )
    assert "Marlin kernel path" in a100["engine_text"] and "runs Marlin" not in a100["engine_text"]
    b200 = fm.gpu_fit_view(
        kvlab.gpu_fit_figure(model="gpt-oss-20b", gpu="b200", weights="MXFP4", kv="f16", mode="vllm")
    )
    assert "FP4 tensor cores" in b200["engine_text"] and "Marlin" not in b200["engine_text"]
    plain = kvlab.gpu_fit_figure(model="llama-3.1-8b", gpu="h100-sxm", weights="BF16", kv="f16", mode="vllm")
    assert "kernel path" not in fm.gpu_fit_view(plain)["engine_text"]
