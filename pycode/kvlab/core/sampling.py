"""What the model worker does with one step's logits, defined once: the top-k next-token
probabilities (softmax at a temperature, over the whole vocabulary) and the negative
log-likelihood of a token. `topK` and `nll` in site_src/runtime/model.js are ports of
these two functions, run at every decode step in the browser; the browser test
tests/browser/test_model_js_parity.py compares them over a grid of logits.

>>> [(i, round(p, 4)) for i, p in top_k_probs([1.0, 3.0, 2.0, 3.0], 3)]
[(1, 0.3995), (3, 0.3995), (2, 0.147)]
>>> [(i, round(p, 4)) for i, p in top_k_probs([1.0, 3.0, 2.0, 3.0], 2, temperature=0.5)]
[(1, 0.4643), (3, 0.4643)]
>>> round(token_nll([1.0, 3.0, 2.0, 3.0], 2), 4)
1.9176
"""

from __future__ import annotations

import numpy as np


def top_k_probs(logits, k: int, temperature: float = 1.0) -> list[tuple[int, float]]:
    """The k most likely tokens, highest first (ties: the lower id first), with their
    probability under softmax(logits / temperature) over the whole vocabulary; k is at
    least 1, and a temperature of 0 or less (greedy decoding) shows temperature 1."""
    x = np.asarray(logits, dtype=np.float64)
    order = np.lexsort((np.arange(x.size), -x))[: max(1, int(k))]
    t = float(temperature) if temperature > 0 else 1.0
    e = np.exp((x - x[order[0]]) / t)
    z = float(e.sum())
    return [(int(i), float(e[i] / z)) for i in order]


def token_nll(logits, target: int) -> float:
    """-ln p(target) under softmax(logits), in nats."""
    x = np.asarray(logits, dtype=np.float64)
    m = float(x.max())
    return float(-(x[target] - m - np.log(np.exp(x - m).sum())))
