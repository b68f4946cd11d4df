"""One function per widget: plain, JSON-able data for the page.

The build calls each function with its defaults to render the static figure;
the browser calls the very same function in Pyodide when the reader moves a
control. JS never computes a number of its own.
"""
from __future__ import annotations

import numpy as np

from kvlab.attention import scaled_dot_product_attention

ATTENTION_SENTENCE = "The cat sat on the mat because it was tired"

# Limits shared by the page controls, the embed query-string parser and this code.
ATTENTION_LIMITS = {
    "d": (2, 64),
    "temperature": (0.1, 5.0),
    "seed": (0, 2**31 - 1),
}


def _clamp(name: str, value: float, limits: dict) -> float:
    lo, hi = limits[name]
    return min(max(value, lo), hi)


def attention_demo(
    d: int = 8,
    temperature: float = 1.0,
    seed: int = 0,
    causal: bool = True,
    sentence: str = ATTENTION_SENTENCE,
) -> dict:
    """Scaled dot-product attention on a short sentence with seeded random Q, K, V.

    Returns the tokens, the (T, T) attention weights, the (T, d) outputs and the
    inputs after clamping, so the page can show exactly what was computed.
    """
    d = int(_clamp("d", int(d), ATTENTION_LIMITS))
    temperature = float(_clamp("temperature", float(temperature), ATTENTION_LIMITS))
    seed = int(_clamp("seed", int(seed), ATTENTION_LIMITS))
    tokens = sentence.split()
    if not tokens:
        raise ValueError("attention_demo needs at least one word")
    rng = np.random.default_rng(seed)
    t = len(tokens)
    q = rng.standard_normal((t, d))  # (T, d)
    k = rng.standard_normal((t, d))  # (T, d)
    v = rng.standard_normal((t, d))  # (T, d)
    out, weights = scaled_dot_product_attention(q, k, v, causal=causal, temperature=temperature)
    return {
        "tokens": tokens,
        "d": d,
        "temperature": temperature,
        "seed": seed,
        "causal": bool(causal),
        "scale": float(1 / np.sqrt(d)),
        "weights": np.round(weights, 6).tolist(),
        "outputs": np.round(out, 6).tolist(),
    }
