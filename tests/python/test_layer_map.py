"""The per-layer memory map: every layer by kind, what it needs and what the engine allocates."""

from __future__ import annotations

import pytest

from kvlab.memory.catalogue import list_models, model_architecture
from kvlab.memory.kv_bytes import MIB, layer_memory_map, memory_report, row_bytes
from kvlab.widgets.memory import _report, kv_memory_figure

MODELS = [m["id"] for m in list_models()]


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("mode", ["llamacpp", "vllm", "exact"])
def test_layers_add_up_to_the_widgets_total_and_never_allocate_less_than_needed(model, mode):
    arch = model_architecture(model)
    for context, n_seq in ((100, 1), (4096, 1), (70_000, 3)):
        m = layer_memory_map(arch, context, "f16", mode, n_seq)
        assert len(m["layers"]) == arch.n_layers
        assert m["allocated_bytes"] == _report(model, context, "f16", mode, n_seq)["total_bytes"]
        assert all(la["allocated_bytes"] >= la["ideal_bytes"] for la in m["layers"])
        if mode == "exact":
            assert m["padding_bytes"] == 0


def test_exact_ideal_is_the_plain_cache():
    arch = model_architecture("gemma-2-9b")
    m = layer_memory_map(arch, 131072, "f16", "exact")
    assert m["ideal_bytes"] == memory_report(arch, 131072, mode="exact")["total_bytes"]


def test_llamacpp_swa_cache_pads_the_window_with_the_ubatch():
    # Gemma-3-27B: 1024-token window; llama.cpp's SWA cache holds pad(1024 + 512, 256) = 1536 cells
    arch = model_architecture("gemma-3-27b-it")
    m = layer_memory_map(arch, 32768, "f16", "llamacpp")
    sliding = [la for la in m["layers"] if la["kind"] == "sliding"]
    row = row_bytes("f16", arch.layers[0].k_values) * 2
    assert sliding and all(la["ideal_bytes"] == 1024 * row and la["allocated_bytes"] == 1536 * row for la in sliding)
    assert "SWA 1,536" in m["how"]


def test_llamacpp_runs_phi3_sliding_layers_at_full_length():
    # Phi-3-mini's config slides every layer over 2047 tokens; llama.cpp keeps them all (SWA disabled for phi3)
    m = layer_memory_map(model_architecture("phi-3-mini-4k"), 4096, "f16", "llamacpp")
    la = m["layers"][0]
    assert la["kind"] == "sliding" and la["holds"] == "2,047 tokens"
    assert la["allocated_bytes"] == 2 * 3072 * 2 * 4096 and la["ideal_bytes"] == 2 * 3072 * 2 * 2047


def test_vllm_rounds_full_layers_to_blocks_and_keeps_a_chunk_in_sliding_ones():
    m = layer_memory_map(model_architecture("llama-3.1-8b"), 1000, "f16", "vllm")
    row = 2 * 1024 * 2
    assert m["layers"][0]["ideal_bytes"] == 1000 * row and m["layers"][0]["allocated_bytes"] == 1008 * row
    g = layer_memory_map(model_architecture("gpt-oss-20b"), 65536, "f16", "vllm")
    sliding = next(la for la in g["layers"] if la["kind"] == "sliding")
    per_token = row_bytes("bf16", 512) * 2
    assert sliding["ideal_bytes"] == 128 * per_token
    assert sliding["allocated_bytes"] == (-(-(127 + 2048) // 16) + 1) * 16 * per_token


def test_kinds_mla_and_recurrent():
    assert layer_memory_map(model_architecture("deepseek-v3"), 4096)["kinds"] == ["mla"]
    q = layer_memory_map(model_architecture("qwen3-next-80b-a3b"), 4096, "f16", "llamacpp", n_seq=2)
    assert q["kinds"] == ["full", "linear"]
    state = next(la for la in q["layers"] if la["kind"] == "linear")
    assert state["ideal_bytes"] == state["allocated_bytes"] > MIB  # f32 state, one per sequence


def test_widget_layer_map_is_drawn_from_python():
    data = kv_memory_figure(model="gemma-3-27b-it", context=32768, kv="f16", mode="llamacpp")
    lm = data["layer_map"]
    assert len(lm["layers"]) == 62 and {k["kind"] for k in lm["kinds"]} == {"full", "sliding"}
    assert max(la["allocated_pct"] for la in lm["layers"]) == 100
    assert lm["allocated"]["bytes"] == data["result"]["total"]["bytes"]
    assert lm["plot"]["unit"] in ("MiB", "GiB") and len(lm["plot"]["needed"]) == 62
    assert "beyond the need" in data["view"]["layer_map_text"]
    with pytest.raises(ValueError, match="mode must be one of"):
        layer_memory_map(model_architecture("llama-2-7b"), 10, mode="tgi")
