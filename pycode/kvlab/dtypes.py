"""The tables every byte count shares: byte units and the KV cache element types.

A leaf module (it imports nothing from kvlab), so the numpy core (core/kv_quant),
the memory calculators and the wording all read one table.

>>> kv_type("float16"), bits_per_value("q8_0"), row_bytes("q4_0", 128)
('f16', 8.5, 72)
"""

from __future__ import annotations

from kvlab.inputs import short_repr

KIB, MIB, GIB, TIB = 2**10, 2**20, 2**30, 2**40

# ---------------------------------------------------------------------------
# Cache element types: (values per block, bytes per block, where the numbers come from)
#
# llama.cpp types are ggml's type traits (ggml/src/ggml.c `type_traits[]`:
# .blck_size / .type_size; block structs in ggml/src/ggml-common.h):
#   block_q8_0  = fp16 scale + 32 x int8                    = 34 B / 32 values
#   block_q4_0  = fp16 scale + 16 B of nibbles              = 18 B / 32
#   block_q4_1  = fp16 scale + fp16 min + 16 B              = 20 B / 32
#   block_q5_0  = fp16 scale + 4 B high bits + 16 B         = 22 B / 32
#   block_q5_1  = fp16 scale + fp16 min + 4 B + 16 B        = 24 B / 32
#   block_iq4_nl = fp16 scale + 16 B (non-linear 4-bit)     = 18 B / 32
# These nine are exactly the types llama.cpp accepts for -ctk/-ctv
# (common/arg.cpp `kv_cache_types`: f32 f16 bf16 q8_0 q4_0 q4_1 iq4_nl q5_0 q5_1).
# fp8 is vLLM's --kv-cache-dtype fp8 (e4m3 / e5m2: one byte per value; its
# per-tensor scales are a few bytes per layer and are ignored here).
# ---------------------------------------------------------------------------
KV_TYPES: dict[str, tuple[int, int, str]] = {
    "f32": (1, 4, "ggml type_traits: 4 B per value"),
    "f16": (1, 2, "ggml type_traits: 2 B per value"),
    "bf16": (1, 2, "ggml type_traits: 2 B per value"),
    "fp8": (1, 1, "vLLM --kv-cache-dtype fp8 (e4m3/e5m2): 1 B per value"),
    "q8_0": (32, 34, "ggml block_q8_0: 34 B per 32 values"),
    "q5_1": (32, 24, "ggml block_q5_1: 24 B per 32 values"),
    "q5_0": (32, 22, "ggml block_q5_0: 22 B per 32 values"),
    "q4_1": (32, 20, "ggml block_q4_1: 20 B per 32 values"),
    "q4_0": (32, 18, "ggml block_q4_0: 18 B per 32 values"),
    "iq4_nl": (32, 18, "ggml block_iq4_nl: 18 B per 32 values"),
}
_ALIASES = {
    "float32": "f32",
    "fp32": "f32",
    "float16": "f16",
    "fp16": "f16",
    "half": "f16",
    "bfloat16": "bf16",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "float8": "fp8",
}
LLAMACPP_KV_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
QUANTIZED = ("q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl")


def kv_type(name: str) -> str:
    """Normalise a cache type name ('F16', 'float16' -> 'f16'); unknown names are a ValueError."""
    key = str(name).strip().lower()
    key = _ALIASES.get(key, key)
    if key not in KV_TYPES:
        raise ValueError(f"kv type {short_repr(name)} unknown; choose one of {', '.join(KV_TYPES)}")
    return key


def bits_per_value(name: str) -> float:
    """Effective bits per cached value: f16 16, q8_0 8.5, q4_0 4.5.

    >>> bits_per_value("q8_0"), bits_per_value("q4_0"), bits_per_value("q5_1")
    (8.5, 4.5, 6.0)
    """
    block, nbytes, _ = KV_TYPES[kv_type(name)]
    return nbytes * 8 / block


def row_bytes(name: str, n_values: int) -> int:
    """Bytes of one row of `n_values` values, as ggml_row_size computes it.

    A quantized row must be a whole number of 32-value blocks (ggml asserts it).

    >>> row_bytes("q8_0", 1024), row_bytes("f16", 1024)
    (1088, 2048)
    """
    block, nbytes, _ = KV_TYPES[kv_type(name)]
    if n_values % block:
        raise ValueError(
            f"{name}: a row of {n_values} values is not a whole number of "
            f"{block}-value blocks (head_dim x kv_heads must be divisible by {block})"
        )
    return n_values // block * nbytes
