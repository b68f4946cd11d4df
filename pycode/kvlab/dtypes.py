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
# int8_per_token_head / fp8_per_token_head are vLLM's --kv-cache-dtype with dynamic
# per-token-head scales (vllm/v1/kv_cache_interface.py, KVQuantMode.INT8_PER_TOKEN_HEAD
# "per-token-head dynamic scales for int8", FP8_PER_TOKEN_HEAD; get_kv_quant_mode): one
# byte per value plus a float32 scale per token per KV head, for K and for V
# (HEAD_SCALE_BYTES; a row's bytes need its head count, see row_bytes).
# ---------------------------------------------------------------------------
KV_TYPES: dict[str, tuple[int, int, str]] = {
    "f32": (1, 4, "ggml type_traits: 4 B per value"),
    "f16": (1, 2, "ggml type_traits: 2 B per value"),
    "bf16": (1, 2, "ggml type_traits: 2 B per value"),
    "fp8": (1, 1, "vLLM --kv-cache-dtype fp8 (e4m3/e5m2): 1 B per value"),
    "int8_per_token_head": (1, 1, "vLLM int8_per_token_head: 1 B per value + 4 B per token per KV head"),
    "fp8_per_token_head": (1, 1, "vLLM fp8_per_token_head: 1 B per value + 4 B per token per KV head"),
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
# vLLM's per-token-head types: the scale bytes each KV head adds to a token's K row and to its V row. vLLM
# budgets them in the page (vllm/v1/kv_cache_interface.py, AttentionSpec.page_size_bytes: "+= 2 * block_size *
# num_kv_heads * get_dtype_size(torch.float32)"), and its backends pad the head by them (scale_pad =
# get_dtype_size(torch.float32) // get_dtype_size(cache_dtype); head_size += scale_pad). vLLM's test
# test_reshape_padded_quantized_kv_cache_preserves_scale_stride: block_size 16, 1 KV head, head_size 4, int8:
# real_page_size_bytes 128 (2 x 16 x 4 x 1 B, the values alone), each head padded to 4 + 4 B, so K's half of a
# block is 16 x 1 x 8 = 128 B (its stride(1)) and K + V with their scales 256 B = 2 x 16 x 1 x (4 + 4).
# (int4_per_token_head, packed with fp16 scale and zero point, is not modelled.)
HEAD_SCALE_BYTES = {"int8_per_token_head": 4, "fp8_per_token_head": 4}
VLLM_KV_TYPES = ("f32", "f16", "bf16", "fp8", *HEAD_SCALE_BYTES)
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


def row_bytes(name: str, n_values: int, heads: int | None = None) -> int:
    """Bytes of one row of `n_values` values, as ggml_row_size computes it.

    A quantized row must be a whole number of 32-value blocks (ggml asserts it). `heads`: the KV heads
    the row spans; vLLM's per-token-head types add a float32 scale per head (HEAD_SCALE_BYTES) and
    need it, other types ignore it.

    >>> row_bytes("q8_0", 1024), row_bytes("f16", 1024), row_bytes("int8_per_token_head", 1024, heads=8)
    (1088, 2048, 1056)
    """
    key = kv_type(name)
    block, nbytes, _ = KV_TYPES[key]
    if n_values % block:
        raise ValueError(
            f"{name}: a row of {n_values} values is not a whole number of "
            f"{block}-value blocks (head_dim x kv_heads must be divisible by {block})"
        )
    scale = HEAD_SCALE_BYTES.get(key, 0)
    if scale and heads is None:
        raise ValueError(f"{key}: a row's bytes depend on its KV heads (a {scale} B scale each); give heads")
    return n_values // block * nbytes + (scale * heads if scale else 0)
