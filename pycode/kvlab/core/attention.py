"""Scaled dot-product attention, the readable way.

    softmax(Q Kᵀ / √d / temperature) · V

Shapes are written once and commented on every reshape (nanoGPT style):
T = query positions, S = key positions, d = head dimension,
H = query heads, G = key/value heads (G divides H; G == H is multi-head,
1 < G < H is grouped-query, G == 1 is multi-query attention).
"""

from __future__ import annotations

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax; rows that are entirely -inf give zeros."""
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(x - m)
    s = np.sum(e, axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def causal_mask(t: int, s: int | None = None) -> np.ndarray:
    """Boolean (T, S) mask, True where query i may attend to key j.

    With S > T the queries are the *last* T positions of an S-long sequence
    (decoding with a cache): query i sits at absolute position S - T + i.

    >>> causal_mask(3).astype(int).tolist()
    [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    >>> causal_mask(1, 3).astype(int).tolist()
    [[1, 1, 1]]
    """
    s = t if s is None else s
    if s < t:
        raise ValueError(f"causal_mask: {s} keys cannot cover {t} queries")
    query_pos = np.arange(t)[:, None] + (s - t)  # (T, 1)
    key_pos = np.arange(s)[None, :]  # (1, S)
    return key_pos <= query_pos


def scaled_dot_product_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    causal: bool = False,
    temperature: float = 1.0,
    mask: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Attention for one head (or any leading batch dims).

    q: (..., T, d), k: (..., S, d), v: (..., S, dv).
    Returns (output (..., T, dv), weights (..., T, S)); each weight row sums to 1
    over the keys the query may see.
    """
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    d = q.shape[-1]
    if k.shape[-1] != d:
        raise ValueError(f"q has head dim {d} but k has {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k has {k.shape[-2]} positions but v has {v.shape[-2]}")
    scores = (q @ np.swapaxes(k, -1, -2)) / np.sqrt(d) / temperature  # (..., T, d) x (..., d, S) -> (..., T, S)
    allowed = np.ones(scores.shape[-2:], dtype=bool)
    if causal:
        allowed &= causal_mask(q.shape[-2], k.shape[-2])
    if mask is not None:
        allowed = allowed & mask
    scores = np.where(allowed, scores, -np.inf)
    weights = softmax(scores, axis=-1)  # (..., T, S)
    return weights @ v, weights  # (..., T, S) x (..., S, dv) -> (..., T, dv)


def multi_head_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    *,
    causal: bool = True,
    temperature: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head attention with grouped key/value heads (MHA, GQA, MQA).

    q: (H, T, d); k, v: (G, S, d) with G dividing H. Query head h reads
    key/value head h // (H // G): several query heads share one KV head,
    which is why GQA/MQA shrink the KV cache by H / G.
    Returns (output (H, T, d), weights (H, T, S)).
    """
    h, g = q.shape[0], k.shape[0]
    if v.shape[0] != g:
        raise ValueError(f"k has {g} heads but v has {v.shape[0]}")
    if g == 0 or h % g:
        raise ValueError(f"kv heads ({g}) must divide query heads ({h})")
    k_rep = np.repeat(k, h // g, axis=0)  # (G, S, d) -> (H, S, d)
    v_rep = np.repeat(v, h // g, axis=0)  # (G, S, d) -> (H, S, d)
    return scaled_dot_product_attention(q, k_rep, v_rep, causal=causal, temperature=temperature)
