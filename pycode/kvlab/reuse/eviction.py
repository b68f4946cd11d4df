"""Eviction: which token positions a bounded KV cache keeps.

A policy sees one token at a time: `append(position)`, then (for policies that
score tokens) `observe(weights)` with the new token's attention over what is
cached, then `evict()`, which drops positions until the cache fits its budget
and returns them. `cached` lists the positions still held, oldest first.

    FullCache         keeps everything (the baseline: memory grows with context)
    SlidingWindow     keeps the last W
    AttentionSinks    keeps the first S and the last W (StreamingLLM)
    HeavyHitters      keeps the last R plus the highest accumulated attention (H2O)

`simulate` runs a policy over n tokens with seeded toy attention and reports,
at every step, what is cached, what was evicted, and how much of the full
(uncached-everything) attention mass the kept tokens still carry.
"""

from __future__ import annotations

import numpy as np

from kvlab.core.attention import softmax
from kvlab.inputs import short_repr


class EvictionPolicy:
    """Base class: an ordered set of cached positions and a budget.

    Subclasses say which position goes first by overriding `_victim`.
    """

    name = "base"

    def __init__(self) -> None:
        self.cached: list[int] = []  # positions held, ascending

    @property
    def budget(self) -> int | None:
        """Most positions held after `evict()`; None means unbounded."""
        return None

    def append(self, position: int) -> None:
        """Cache the K/V of a new token; positions must arrive in increasing order."""
        if self.cached and position <= self.cached[-1]:
            raise ValueError(f"positions must increase: got {position} after {self.cached[-1]}")
        self.cached.append(int(position))

    def observe(self, weights: np.ndarray) -> None:
        """The newest query's attention over `cached` (same order). Ignored unless the policy scores tokens."""

    def evict(self) -> list[int]:
        """Drop positions until the budget holds; return them in the order dropped."""
        dropped: list[int] = []
        while self.budget is not None and len(self.cached) > self.budget:
            victim = self._victim()
            self.cached.remove(victim)
            dropped.append(victim)
        return dropped

    def _victim(self) -> int:
        raise NotImplementedError

    def describe(self) -> dict:
        return {"policy": self.name, "budget": self.budget}


class FullCache(EvictionPolicy):
    """Keep every token.

    Unlike the bounded policies: nothing is ever forgotten, and memory grows
    linearly with the context (the cache every other policy is compared to).
    """

    name = "full"


class SlidingWindow(EvictionPolicy):
    """Keep the last `window` tokens.

    Unlike FullCache: memory stops growing at `window` entries, and the oldest
    token always goes first, including the very first tokens that models
    trained with full attention lean on (why a pure window can break them).
    """

    name = "window"

    def __init__(self, window: int) -> None:
        super().__init__()
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.window = int(window)

    @property
    def budget(self) -> int:
        return self.window

    def _victim(self) -> int:
        return self.cached[0]

    def describe(self) -> dict:
        return {**super().describe(), "window": self.window}


class AttentionSinks(SlidingWindow):
    """Keep the first `n_sink` tokens ("attention sinks") and the last `window` (StreamingLLM).

    Unlike SlidingWindow: the first tokens, which soak up a large share of
    attention in full-attention models, are never evicted; the victim is the
    oldest token after the sinks (Xiao et al., arXiv 2309.17453).
    """

    name = "sinks"

    def __init__(self, n_sink: int, window: int) -> None:
        super().__init__(window)
        if n_sink < 0:
            raise ValueError(f"n_sink must be >= 0, got {n_sink}")
        self.n_sink = int(n_sink)

    @property
    def budget(self) -> int:
        return self.n_sink + self.window

    def _victim(self) -> int:
        # subtle: the first n_sink positions *held* are the sinks, since they are never evicted
        return self.cached[self.n_sink]

    def describe(self) -> dict:
        return {**super().describe(), "n_sink": self.n_sink}


class HeavyHitters(EvictionPolicy):
    """Keep the last `recent` tokens plus the tokens with the most accumulated attention (H2O).

    Unlike SlidingWindow and AttentionSinks, which decide by position alone:
    every token's attention weights are summed over the steps it was cached,
    and when the cache exceeds `budget` the lowest-scoring token outside the
    recent window goes (ties: the oldest). Zhang et al., arXiv 2306.14048.

    >>> p = HeavyHitters(budget=2, recent=1)
    >>> for pos, w in [(0, [1.0]), (1, [0.9, 0.1]), (2, [0.8, 0.1, 0.1])]:
    ...     p.append(pos); p.observe(np.array(w)); dropped = p.evict()
    >>> p.cached, dropped
    ([0, 2], [1])
    """

    name = "h2o"

    def __init__(self, budget: int, recent: int) -> None:
        super().__init__()
        if recent < 1:
            raise ValueError(f"recent must be >= 1, got {recent}")
        if budget < recent:
            raise ValueError(f"budget ({budget}) must be >= recent ({recent})")
        self._budget, self.recent = int(budget), int(recent)
        self.scores: dict[int, float] = {}

    @property
    def budget(self) -> int:
        return self._budget

    def append(self, position: int) -> None:
        super().append(position)
        self.scores[int(position)] = 0.0

    def observe(self, weights: np.ndarray) -> None:
        if len(weights) != len(self.cached):
            raise ValueError(f"observe: {len(weights)} weights for {len(self.cached)} cached positions")
        for pos, w in zip(self.cached, weights):
            self.scores[pos] += float(w)

    def _victim(self) -> int:
        candidates = self.cached[: len(self.cached) - self.recent]  # the recent window is safe
        return min(candidates, key=lambda pos: (self.scores[pos], pos))

    def evict(self) -> list[int]:
        dropped = super().evict()
        for pos in dropped:
            del self.scores[pos]
        return dropped

    def describe(self) -> dict:
        return {**super().describe(), "recent": self.recent, "heavy": self._budget - self.recent}


POLICIES = {"full": FullCache, "window": SlidingWindow, "sinks": AttentionSinks, "h2o": HeavyHitters}


def make_policy(policy: str, *, window: int = 8, n_sink: int = 4, budget: int = 12, recent: int = 4) -> EvictionPolicy:
    """Build a policy by name: "full", "window", "sinks" or "h2o"."""
    if policy == "full":
        return FullCache()
    if policy == "window":
        return SlidingWindow(window)
    if policy == "sinks":
        return AttentionSinks(n_sink, window)
    if policy == "h2o":
        return HeavyHitters(budget, recent)
    raise ValueError(f"policy must be one of {sorted(POLICIES)}, got {short_repr(policy)}")


def toy_attention_logits(n: int, seed: int = 0, d: int = 16, sink_strength: float = 3.0) -> np.ndarray:
    """Seeded (n, n) attention scores q_t·k_j/√d for a toy sequence (causal part used).

    Keys get a random salience, so some tokens are consistently "heavy"; the
    first token's key leans towards the average query, making it an attention
    sink as observed in trained models (strength `sink_strength`; 0 turns it off).
    """
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((n, d)) + 1.0  # (n, d): a shared mean direction, like real queries
    k = rng.standard_normal((n, d)) * rng.lognormal(0.0, 0.5, size=(n, 1))  # (n, d)
    k[0] += sink_strength / np.sqrt(d)  # (d,): lean the first key towards the mean query: score up by ~sink_strength
    return q @ k.T / np.sqrt(d)  # (n, d) x (d, n) -> (n, n)


def simulate(policy: EvictionPolicy, n: int, seed: int = 0, scores: np.ndarray | None = None) -> list[dict]:
    """Feed positions 0..n-1 to `policy`; per step the cached positions *after* the step.

    At step t the new token's query attends to the cached positions (after
    appending t, before evicting), the policy observes those weights, then evicts.
    `attention_kept` is the share of the full-cache attention weights of query t
    that falls on positions still cached after the step.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    scores = toy_attention_logits(n, seed) if scores is None else scores
    timeline = []
    for t in range(n):
        size_before = len(policy.cached)
        policy.append(t)
        held = np.array(policy.cached)
        policy.observe(softmax(scores[t, held]))
        evicted = policy.evict()
        full = softmax(scores[t, : t + 1])  # (t+1,): what a full cache would give
        timeline.append(
            {
                "step": t,
                "position": t,
                "cache_len_before": size_before,
                "cache_len_after": len(policy.cached),
                "cached": list(policy.cached),
                "evicted": evicted,
                "attention_kept": round(float(full[policy.cached].sum()), 6),
            }
        )
    return timeline
