"""Weights memory: exact GGUF block sizes and measured mixes."""

from __future__ import annotations

import pytest

from kvlab.memory.weights import list_weight_formats, weight_format, weights_bytes

GIB = 2**30


@pytest.mark.parametrize(
    "fmt, block_bytes, block_values",
    [
        ("Q8_0", 34, 32),  # fp16 scale + 32 int8
        ("Q4_0", 18, 32),  # fp16 scale + 16 bytes of nibbles
        ("Q6_K", 210, 256),  # 128 B low bits + 64 B high bits + 16 int8 scales + fp16 d
        ("IQ4_XS", 136, 256),
        ("Q4_K", 144, 256),
    ],
)
def test_pure_gguf_types_are_bytes_per_block(fmt, block_bytes, block_values):
    assert weights_bytes(1e9, fmt)["bits_per_weight"] == block_bytes * 8 / block_values


def test_llama31_8b_q4_k_m_matches_the_measured_file():
    # llama-bench: "llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B"
    assert weights_bytes(8.03e9, "Q4_K_M")["gib"] == pytest.approx(4.58, rel=0.005)
    assert weights_bytes(8.03e9, "Q8_0")["gib"] == pytest.approx(7.95, rel=0.005)


def test_bf16_is_two_bytes_per_weight():
    assert weights_bytes(8.03e9, "bf16")["bytes"] == 16_060_000_000


def test_names_are_normalised_and_unknown_ones_rejected():
    assert weight_format("q4_k_m") == "Q4_K_M" and weight_format("awq") == "INT4"
    with pytest.raises(ValueError, match="Q7"):
        weight_format("Q7")
    with pytest.raises(ValueError, match="params"):
        weights_bytes(None, "Q4_0")


def test_every_format_has_a_source():
    assert all(row["source"] for row in list_weight_formats())


def test_nvfp4_is_four_and_a_half_bits_as_its_blocks_store_it():
    """NVFP4 (issue 39: missing as a format): 16 E2M1 values share one FP8 scale, 16 x 4 + 8 = 72 bits per
    16 weights; kvlab.memory.checkpoint counts ggml's NVFP4 block (36 B / 64 weights) the same."""
    from kvlab.memory.weights import weights_bytes

    w = weights_bytes(8e9, "NVFP4")
    assert w["bits_per_weight"] == (16 * 4 + 8) / 16 == 36 * 8 / 64
    assert w["bytes"] == 8e9 * 4.5 / 8


def test_quantized_checkpoints_keep_the_embedding_and_output_projection_in_16_bits():
    """GPTQ/AWQ, INT8, FP8 and NVFP4 checkpoints quantize the decoder's Linear layers, not the token embedding nor
    lm_head (weights.EMBEDDINGS_AT_16_BITS). Checked against vLLM's own loads: Llama-3(.1)-70B AWQ on 2 GPUs,
    'Model loading took 18.55 GiB' each; Llama-3.1-70B W8A8 on one, 67.7229 GB (vllm PR 12569)."""
    from kvlab.memory.catalogue import model_architecture
    from kvlab.memory.weights import model_weights_bytes

    arch = model_architecture("llama-3.1-70b")
    embedding = arch.vocab_size * arch.hidden_size * 2  # untied: the embedding and lm_head
    for fmt, bits in (("INT4", 4.15625), ("INT8", 8.0), ("FP8", 8.0), ("NVFP4", 4.5)):
        w = model_weights_bytes(arch, fmt, as_stored=False)
        assert w["bytes"] == int((arch.params - embedding) * bits / 8) + embedding * 2, fmt
    assert abs(model_weights_bytes(arch, "AWQ", as_stored=False)["bytes"] / 2 / 2**30 - 18.55) < 0.05
    assert abs(model_weights_bytes(arch, "INT8", as_stored=False)["bytes"] / 2**30 - 67.7229) < 0.1
    # GGUF quantizes token_embd and output too, and BF16 is 16 bits throughout: params x bits
    for fmt in ("Q4_K_M", "Q8_0", "BF16"):
        w = model_weights_bytes(arch, fmt, as_stored=False)
        assert w["bytes"] == int(arch.params * w["bits_per_weight"] / 8), fmt
    # a tied embedding is one tensor
    from dataclasses import replace

    one = replace(arch, tied_embeddings=True)
    assert (
        model_weights_bytes(one, "INT4", as_stored=False)["bytes"]
        == int((arch.params - embedding / 2) * 4.15625 / 8) + embedding
    )


def test_an_l40s_shows_the_memory_nvidia_smi_reports():
    """48 GB of GDDR6 with ECC on: nvidia-smi reports 46068MiB, and every engine sizes against that."""
    from kvlab.memory.deployment import deployment

    d = deployment("llama-3.1-8b", gpu="l40s", engine="vllm")
    assert d.memory_bytes == int(44.99 * 2**30)
    assert "nvidia-smi" in d.device["how"] and "46068MiB" in d.device["how"]
