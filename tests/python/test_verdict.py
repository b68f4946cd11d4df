"""kvlab.memory.verdict.verdict: one answer to 'does it fit', what binds and by how much."""

from __future__ import annotations

import json

import pytest

from kvlab.memory.catalogue import model_architecture
from kvlab.memory.kv_bytes import GIB, llamacpp_kv_cache
from kvlab.memory.deployment import deployment
from kvlab.memory.verdict import verdict


def test_the_issue_case_is_beyond_the_trained_context_not_fits():
    # Llama-2-7B (max_position_embeddings 4096), BF16, f16 cache, H100, 131,072 tokens
    v = verdict(deployment("llama-2-7b", weights="BF16", kv="f16", gpu="h100-sxm"), 131072)
    assert v["memory_fits"] and not v["fits"] and v["binding"] == "trained_context"
    assert v["max_context"] == 4096 and v["max_context_limited_by"] == "trained_context"
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in v["long_context"]["vllm"]
    # allowed explicitly: memory decides, and the largest context is memory's
    ok = verdict(deployment("llama-2-7b", weights="BF16", kv="f16", gpu="h100-sxm", allow_long_context=True), 131072)
    assert ok["fits"] and ok["max_context"] == ok["max_context_by_memory"] >= 131072
    json.dumps(v)


def test_binding_order_weights_then_reserve_then_kv():
    assert verdict(deployment("llama-3.1-70b", weights="BF16", gpu="rtx-4090"), 4096)["binding"] == "weights"
    kv = verdict(deployment("llama-3.1-8b", weights="BF16", kv="f16", gpu="rtx-4090"), 131072)
    assert kv["binding"] == "kv_cache" and kv["over_bytes"] == kv["total_bytes"] - kv["budget_bytes"] > 0
    # weights fit alone, but not with the vLLM reserve: 0.9 x the ~23.7 GiB the driver reports = 21.3 GiB,
    # so a 21 GiB model
    tight = verdict(
        deployment(
            model_architecture("llama-3.1-8b", params=21.0 * GIB / 2),
            weights="BF16",
            kv="f16",
            gpu="rtx-4090",
            engine="vllm",
        ),
        256,
    )
    assert tight["binding"] == "reserve"


def test_llamacpp_holds_n_sequences_as_context_times_n_cells():
    # 4 x 8192 tokens of Llama-3.1-8B f16 = -c 32768 -np 4: 32768 cells x 128 KiB = 4 GiB
    v = verdict(deployment("llama-3.1-8b", weights="Q4_K_M", kv="f16", gpu="rtx-4090"), 8192, n_seq=4)
    parts = {c["name"]: c["bytes"] for c in v["components"]}
    assert parts["kv_cache"] == 4 * GIB and v["flags"] == "-c 32768 -np 4"
    arch = model_architecture("llama-3.1-8b")
    assert parts["kv_cache"] == llamacpp_kv_cache(arch, 32768, n_seq=4, kv_unified=False)["total_bytes"]


@pytest.mark.parametrize("engine,step", [("llamacpp", 256), ("vllm", 16)])
def test_largest_context_and_most_sequences_are_boundaries(engine, step):
    kw = {"weights": "BF16", "kv": "f16", "gpu": "rtx-4090", "engine": engine}
    v = verdict(deployment("llama-3.1-8b", **kw), 8192)
    best = v["max_context"]
    assert verdict(deployment("llama-3.1-8b", **kw), best)["fits"]
    assert not verdict(deployment("llama-3.1-8b", **kw), best + step)["memory_fits"]
    n = v["max_sequences"]
    assert verdict(deployment("llama-3.1-8b", **kw), 8192, n_seq=n)["fits"]
    assert not verdict(deployment("llama-3.1-8b", **kw), 8192, n_seq=n + 1)["fits"]


def test_tensor_parallel_replicates_kv_heads_when_fewer_than_gpus():
    # Llama-3.1-70B: 8 KV heads, 2 per GPU over 4 and 1 over 8
    kw = {"weights": "BF16", "kv": "f16", "gpu": "h100-sxm", "engine": "vllm"}
    four = verdict(deployment("llama-3.1-70b", tp=4, **kw), 8192)
    eight = verdict(deployment("llama-3.1-70b", tp=8, **kw), 8192)
    assert four["kv_share_per_gpu"] == 2 / 8 and eight["kv_share_per_gpu"] == 1 / 8
    arch = model_architecture("qwen3-30b-a3b")  # 4 KV heads
    rep = verdict(deployment(arch, tp=8, **kw), 8192)
    assert rep["kv_share_per_gpu"] == 1 / 4  # one head per GPU, replicated: not 4/8
    assert any("replica" in c["how"] for c in rep["components"])
    mla = verdict(deployment("deepseek-v2-lite", tp=2, **kw), 8192)
    assert mla["kv_share_per_gpu"] == 1.0  # the MLA latent is on every GPU


def test_apple_unified_memory_uses_the_usable_share_and_one_chip():
    v = verdict(deployment("llama-3.1-70b", weights="Q4_K_M", kv="q8_0", gpu="m4-max-128gb"), 8192)
    assert v["memory_bytes"] == 96 * GIB
    with pytest.raises(ValueError, match="unified memory"):
        verdict(deployment("llama-3.1-8b", gpu="m4-max-128gb", tp=2), 8192)


@pytest.mark.parametrize(
    "field,value",
    [
        ("context", float("nan")),
        ("context", float("inf")),
        ("context", 1e30),
        ("n_seq", 0),
        ("n_gpus", 3),
        ("memory_gib", float("nan")),
    ],
)
def test_absurd_input_names_the_field(field, value):
    asked = {"context": 4096, "n_seq": 1}
    kw = {"gpu": None, "memory_gib": 24}
    if field in asked:
        asked[field] = value
    else:
        kw[{"n_gpus": "tp"}.get(field, field)] = value  # the error names n_gpus, the CLI's and the widgets' field
    with pytest.raises(ValueError, match=field):
        verdict(deployment("llama-3.1-8b", **kw), **asked)


def test_llamacpp_fit_lowers_an_unset_context_keeping_its_margin():
    """--fit (on by default), by llama.cpp's rule (llamacpp.fit_params): with -c unset, the context interpolated
    down to what leaves 1 GiB free, not below 4,096; with -c given it keeps layers on the CPU, so the verdict
    still says the asked context does not fit."""
    from kvlab.memory.verdict import llamacpp_fit

    v = verdict(deployment("qwen3-32b", weights="Q4_K_M", gpu="rtx-4090"), 65536)
    assert not v["fits"] and any("--fit (on by default)" in w and "instead of failing" in w for w in v["warnings"])
    fit = llamacpp_fit(deployment("qwen3-32b", weights="Q4_K_M", gpu="rtx-4090"), 65536)
    assert fit["as_given"]["outcome"] == "layers_to_cpu" and fit["unset"]["outcome"] == "context_reduced"
    # 256 KiB a token: the 1 GiB margin costs 4,096 tokens against the plain longest context
    assert fit["context_unset"] == v["max_context"] - 4096
    at = verdict(deployment("qwen3-32b", weights="Q4_K_M", gpu="rtx-4090"), fit["context_unset"])
    assert at["headroom_bytes"] >= 2**30 > at["headroom_bytes"] - 256 * 2**10 * 256
    big = llamacpp_fit(deployment("llama-3.1-70b", weights="Q4_K_M", gpu="rtx-4090"))
    assert big["context_unset"] is None and "not even its minimum of 4,096 tokens" in big["text"]
    assert not any(
        "--fit" in w for w in verdict(deployment("qwen3-32b", weights="Q4_K_M", gpu="rtx-4090"), 4096)["warnings"]
    )


def test_llamacpp_fit_moves_layers_when_a_fit_leaves_under_its_target():
    """A setting that fits with less than --fit-target (1 GiB) free still makes --fit move layers to the CPU."""
    v = verdict(deployment("qwen3-32b", weights="Q4_K_M", gpu="rtx-4090"), 16384)
    assert v["fits"] and 0 < v["headroom_bytes"] < 2**30
    (w,) = [w for w in v["warnings"] if "--fit" in w]
    assert "under --fit-target's 1,024 MiB, so it moves some layers to system memory" in w
    assert "--fit off keeps them all on the GPU" in w
    roomy = verdict(deployment("qwen3-32b", weights="Q4_K_M", gpu="rtx-4090"), 8192)
    assert roomy["headroom_bytes"] > 2**30 and not any("--fit" in w for w in roomy["warnings"])


def test_llamacpp_fit_slots_share_the_training_context():
    """-np 2 with -c unset: the training context split over the slots, not each slot's."""
    v = verdict(deployment("qwen3-30b-a3b", weights="Q4_K_M", gpu="rtx-4090"), 65536, n_seq=2)
    (w,) = [w for w in v["warnings"] if "--fit" in w]
    assert "40,960 tokens of context (20,480 per slot, 2 slots)" in w


def test_a_vision_language_model_on_vllm_warns_of_the_encoder_profile():
    """vLLM's profiling pass also runs a vision-language model's encoder: for a Qwen3-VL-family tower kvlab counts
    an estimate of its peak in the reserve (and says so), for other towers it warns that the peak is not counted;
    for vLLM only, and not when the tower is off (--language-model-only, or every modality at 0)."""
    from kvlab.memory import engines
    from kvlab.memory.hf_config import parse_hf_config
    from kvlab.memory.verdict import VLLM_VISION_PROFILE

    def run(model, engine="vllm", **kw):
        version = {"version": "0.20+"} if engine == "vllm" else {}
        return verdict(deployment(model, weights="BF16", gpu="rtx-4090-d", engine=engine, **version, **kw), 4096)

    on, off = run("qwen3.5-4b"), run("qwen3.5-4b", multimodal=False)
    # the tower's widest block: 65,536 patches x (2 x 1,024 + 2 x 4,096) values in bf16 = 1.25 GiB, less the text
    # model's run at the card's defaults (2,048 tokens, 256 rows of logits through 0.21's FlashInfer sampler, the version's default)
    arch = deployment("qwen3.5-4b", gpu="rtx-4090-d").arch
    profile = engines.vllm_vision_profile(arch, 2048, 256, sampler="flashinfer")
    assert profile["encoder_peak_bytes"] == 65536 * (2 * 1024 + 2 * 4096) * 2 == 5 * GIB // 4
    reserve = {c["name"]: c["bytes"] for c in on["components"]}["activation_reserve"]
    assert reserve - {c["name"]: c["bytes"] for c in off["components"]}["activation_reserve"] == profile["bytes"] > 0
    assert (
        on["engine_model"]["vision_profile_gib"] == profile["gib"] and "vision_profile_gib" not in off["engine_model"]
    )
    assert any(w.startswith("vision-language model: at start-up vLLM also runs") and "kvlab counts" in w
               for w in on["warnings"])  # fmt: skip
    assert not any(w.startswith("vision-language model") for w in off["warnings"])
    # up to 0.16 the sampler's native sort (9.5 x 256 x 248,320 x 4 B = 2.25 GiB) peaks above the tower: nothing added
    assert engines.vllm_vision_profile(arch, 2048, 256, sampler="native")["bytes"] == 0
    assert VLLM_VISION_PROFILE in run("gemma-3-4b-it")["warnings"]  # a tower kvlab does not size
    assert not any(w.startswith("vision-language model") for w in run("qwen3.5-4b", "llamacpp")["warnings"])
    assert not any(w.startswith("vision-language model") for w in run("llama-3.1-8b")["warnings"])
    text = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
            "vocab_size": 100, "model_type": "llama"}  # fmt: skip
    assert parse_hf_config({"text_config": text, "vision_config": {"depth": 2}}, params=1e8).vision
    assert parse_hf_config({"text_config": text, "architectures": ["XForConditionalGeneration"]}, params=1e8).vision
    assert not parse_hf_config(text, params=1e8).vision
    assert not parse_hf_config({"text_config": text, "architectures": ["XForCausalLM"]}, params=1e8).vision


def test_language_model_only_leaves_the_vision_tower_unloaded():
    """vLLM's --language-model-only does not load the tower: a checkpoint counted as stored loses its blocks in BF16
    (Qwen3.6-27B: 27 x (4 x 1,152^2 + 2 x 1,152 x 4,304) weights); a parameter count, which may not hold the tower,
    is left as it is; llama.cpp has no such flag."""
    on = deployment("qwen3.6-27b", weights="FP8", gpu="h100-sxm", engine="vllm")
    off = deployment("qwen3.6-27b", weights="FP8", gpu="h100-sxm", engine="vllm", multimodal=False)
    assert on.weights.get("stored")
    assert on.weights["bytes"] - off.weights["bytes"] == 2 * 27 * (4 * 1152**2 + 2 * 1152 * 4304)
    assert any("--language-model-only" in n for n in off.weights["notes"])
    mix = {"weights": "Q4_K_M", "gpu": "h100-sxm", "engine": "vllm"}
    assert (
        deployment("qwen3.6-27b", **mix).weights["bytes"]
        == deployment("qwen3.6-27b", multimodal=False, **mix).weights["bytes"]
    )
