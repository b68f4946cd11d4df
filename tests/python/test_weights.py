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
