"""KV-cache storage formats, bit for bit: what one cached vector becomes in bytes.

A cache entry is one vector of `head_dim` values (one token, one head, one of K or V,
one layer). Each format turns it into bytes and back:

| format | bytes per vector (head_dim D) | layout |
|---|---|---|
| fp32 | 4 D | IEEE float32, little-endian |
| fp16 | 2 D | IEEE float16 (round to nearest even), little-endian |
| int8 | D + 4 | float32 scale s = amax / 127, then D int8 q = round(x / s): absmax per token and head |
| q8_0 | 34 D / 32 | ggml block_q8_0, one per 32 values: fp16 d = amax / 127, then 32 int8 round(x / d) |
| q4_0 | 18 D / 32 | ggml block_q4_0, one per 32 values: fp16 d = max / -8, then 16 bytes of nibbles |

q8_0 and q4_0 follow ggml's reference quantizers (ggml-quants.c, quantize_row_q8_0_ref,
quantize_row_q4_0_ref) exactly: float32 arithmetic, the inverse scale id = 1/d taken from
the float32 d before d is rounded to fp16 for storage, roundf (halves away from zero) for
q8_0, and for q4_0 `max` the signed value of largest magnitude (the first one on a tie),
q = min(15, trunc(x·id + 8.5)) with element j in the low nibble of byte j and element
j + 16 in its high nibble; x ≈ (q − 8)·d. Dequantizing multiplies by the stored fp16 d.

The browser's port (site_src/runtime/model.js, kvQuant) writes the same bytes; tests hold
them equal, and hold this module equal to a line-by-line transliteration of ggml's loops.

`generate_stored` runs the numpy reference (kvlab.core.gpt) with its cache stored in a
format, as the browser's `kvlab.generate({kvFormat})` does: each step's new cache entries
are quantized when written (after the forward pass that computed them, so a token's own
K and V enter its own attention unrounded), and the next step reads the whole cache back
dequantized. (llama.cpp writes a batch's K and V into the cache before attention, so
there a token also reads its own entry quantized.)

>>> x = np.linspace(-1, 1, 32, dtype=np.float32)
>>> [quantize(x, f).shape[-1] for f in FORMATS]
[128, 64, 36, 34, 18]
>>> float(np.abs(dequantize(quantize(x, "q8_0"), "q8_0", 32) - x).max()) < 1 / 127
True
"""

from __future__ import annotations

import numpy as np

from kvlab.dtypes import row_bytes
from kvlab.inputs import short_repr

__all__ = ["FORMATS", "bytes_per_vector", "bytes_per_token", "quantize", "dequantize", "round_trip", "generate_stored"]

FORMATS = ("fp32", "fp16", "int8", "q8_0", "q4_0")
QK = 32  # ggml's block size for q8_0 and q4_0 (QK8_0 = QK4_0 = 32)
_F32 = np.float32


def _check(fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"kv format {short_repr(fmt)} unknown; choose one of {', '.join(FORMATS)}")
    return fmt


def bytes_per_vector(fmt: str, head_dim: int) -> int:
    """Bytes one cached vector of `head_dim` values takes in `fmt`.

    >>> [bytes_per_vector(f, 32) for f in FORMATS]
    [128, 64, 36, 34, 18]
    """
    fmt = _check(fmt)
    if fmt in ("q8_0", "q4_0") and head_dim % QK:
        raise ValueError(f"{fmt} needs head_dim divisible by {QK}, got {head_dim}")
    return {
        "fp32": 4 * head_dim,
        "fp16": 2 * head_dim,
        "int8": head_dim + 4,
        "q8_0": head_dim // QK * 34,
        "q4_0": head_dim // QK * 18,
    }[fmt]


def _round_away(x: np.ndarray) -> np.ndarray:
    """C's roundf: halves away from zero (numpy's round goes to even). Exact in float64."""
    a = np.abs(x.astype(np.float64))
    return (np.sign(x) * np.floor(a + 0.5)).astype(np.int64)


def _inverse(d: np.ndarray) -> np.ndarray:
    """id = d ? 1.0f/d : 0.0f, in float32."""
    out = np.zeros_like(d, dtype=_F32)
    np.divide(_F32(1), d, out=out, where=d != 0)
    return out


def _fp16_bytes(d: np.ndarray) -> np.ndarray:
    """(..., ) float32 -> (..., 2) uint8: IEEE half, round to nearest even, little-endian."""
    with np.errstate(over="ignore"):
        return np.ascontiguousarray(d.astype("<f2")).view(np.uint8).reshape(*d.shape, 2)


def _fp16_from_bytes(b: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(b).view("<f2")[..., 0].astype(_F32)


def quantize(x: np.ndarray, fmt: str) -> np.ndarray:
    """(..., D) float32 -> (..., bytes_per_vector(fmt, D)) uint8."""
    fmt = _check(fmt)
    x = np.ascontiguousarray(x, dtype=_F32)
    D = x.shape[-1]
    lead = x.shape[:-1]
    bytes_per_vector(fmt, D)
    if fmt == "fp32":
        return x.astype("<f4").view(np.uint8).reshape(*lead, 4 * D)
    if fmt == "fp16":
        with np.errstate(over="ignore"):  # beyond 65504 is inf in fp16, as in C
            return np.ascontiguousarray(x.astype("<f2")).view(np.uint8).reshape(*lead, 2 * D)
    if fmt == "int8":
        amax = np.abs(x).max(axis=-1)  # (...,)
        s = (amax / _F32(127)).astype(_F32)
        q = np.zeros_like(x)
        np.divide(x, s[..., None], out=q, where=s[..., None] != 0)
        q = np.clip(_round_away(q.astype(_F32)), -127, 127).astype(np.int8)
        sb = np.ascontiguousarray(s.astype("<f4")).view(np.uint8).reshape(*lead, 4)
        return np.concatenate([sb, q.view(np.uint8)], axis=-1)
    blocks = x.reshape(*lead, D // QK, QK)  # (..., nb, 32)
    if fmt == "q8_0":
        amax = np.abs(blocks).max(axis=-1)  # (..., nb)
        d = (amax / _F32(127)).astype(_F32)
        q = _round_away((blocks * _inverse(d)[..., None]).astype(_F32)).astype(np.int8)
        out = np.concatenate([_fp16_bytes(d), q.view(np.uint8)], axis=-1)  # (..., nb, 34)
    else:  # q4_0
        first = np.abs(blocks).argmax(axis=-1)  # first index of the largest magnitude
        mx = np.take_along_axis(blocks, first[..., None], axis=-1)[..., 0]  # signed
        d = (mx / _F32(-8)).astype(_F32)
        v = (blocks * _inverse(d)[..., None]).astype(_F32) + _F32(8.5)
        q = np.minimum(15, np.trunc(v.astype(_F32))).astype(np.uint8)  # (..., nb, 32)
        nib = q[..., : QK // 2] | (q[..., QK // 2 :] << 4)
        out = np.concatenate([_fp16_bytes(d), nib.astype(np.uint8)], axis=-1)  # (..., nb, 18)
    return out.reshape(*lead, -1)


def dequantize(b: np.ndarray, fmt: str, head_dim: int) -> np.ndarray:
    """(..., bytes_per_vector(fmt, head_dim)) uint8 -> (..., head_dim) float32."""
    fmt = _check(fmt)
    b = np.ascontiguousarray(b, dtype=np.uint8)
    D = head_dim
    if b.shape[-1] != bytes_per_vector(fmt, D):
        raise ValueError(f"{fmt}: expected {bytes_per_vector(fmt, D)} bytes per vector, got {b.shape[-1]}")
    lead = b.shape[:-1]
    if fmt == "fp32":
        return b.view("<f4").astype(_F32).reshape(*lead, D)
    if fmt == "fp16":
        return b.view("<f2").astype(_F32).reshape(*lead, D)
    if fmt == "int8":
        s = np.ascontiguousarray(b[..., :4]).view("<f4").astype(_F32)  # (..., 1)
        q = b[..., 4:].view(np.int8).astype(_F32)
        return (q * s).astype(_F32)
    blocks = b.reshape(*lead, D // QK, -1)
    d = _fp16_from_bytes(blocks[..., :2])[..., None]  # (..., nb, 1)
    if fmt == "q8_0":
        q = blocks[..., 2:].view(np.int8).astype(_F32)
    else:
        nib = blocks[..., 2:]
        q = np.concatenate([nib & 0x0F, nib >> 4], axis=-1).astype(_F32) - _F32(8)
    return (q * d).astype(_F32).reshape(*lead, D)


def round_trip(x: np.ndarray, fmt: str) -> np.ndarray:
    """What reading back a vector stored in `fmt` gives."""
    x = np.asarray(x, dtype=_F32)
    return dequantize(quantize(x, fmt), fmt, x.shape[-1])


def bytes_per_token(fmt: str, n_layer: int, n_kv_head: int, head_dim: int) -> int:
    """Bytes one token adds to the cache: K and V, every layer and KV head.

    fp32, fp16, q8_0 and q4_0 come from kvlab.dtypes (ggml's type sizes, the table the memory
    calculator reads); int8's float32 scale per token and head is ours.

    >>> [bytes_per_token(f, 4, 4, 32) for f in FORMATS]  # the tiny model
    [4096, 2048, 1152, 1088, 576]
    """
    fmt = _check(fmt)
    if fmt == "int8":
        return 2 * n_layer * n_kv_head * bytes_per_vector(fmt, head_dim)
    ggml = {"fp32": "f32", "fp16": "f16"}.get(fmt, fmt)
    return n_layer * 2 * row_bytes(ggml, n_kv_head * head_dim)


def generate_stored(model, ids: list[int], n_new: int, kv_format: str = "fp32", force: list[int] | None = None) -> dict:
    """Prefill `ids`, then decode greedily for `n_new` steps (n_new forward passes, as
    the browser's generate) with the cache stored in `kv_format`.

    force: feed these tokens instead of the greedy choices (teacher forcing), so that
    every format reads the same text. Returns the greedy choice of each step (`tokens`),
    each step's last-position logits (float32), and the bytes the cache holds at the end.
    """
    fmt = _check(kv_format)
    D = model.config.head_dim
    stored = None  # per layer [k_bytes, v_bytes], each (1, nh, L, bytes_per_vector)
    past = None
    feed = [int(t) for t in ids]
    tokens, logits_out = [], []
    for step in range(int(n_new)):
        logits, present = model.forward(np.array([feed]), past)
        P = 0 if stored is None else stored[0][0].shape[2]
        new = [[quantize(t[:, :, P:], fmt) for t in kv] for kv in present]  # only the new slots
        stored = (
            new
            if stored is None
            else [[np.concatenate([old, nw], axis=2) for old, nw in zip(o, n)] for o, n in zip(stored, new)]
        )
        past = [tuple(dequantize(b, fmt, D) for b in kv) for kv in stored]
        row = np.asarray(logits[0, -1], dtype=_F32)
        logits_out.append(row)
        token = int(np.argmax(row))
        tokens.append(token)
        feed = [int(force[step]) if force is not None and step < len(force) else token]
    cache_bytes = int(sum(b.size for kv in stored for b in kv)) if stored else 0
    return {
        "kv_format": fmt,
        "tokens": tokens,
        "logits": logits_out,
        "cache_bytes": cache_bytes,
        "cache_len": 0 if stored is None else int(stored[0][0].shape[2]),
    }
