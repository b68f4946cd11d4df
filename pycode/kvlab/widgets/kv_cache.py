"""Figure data for the two cache pages ("Why decoding is quadratic", "The KV cache").

Thin wrappers around kvlab.figures: each adds what its page states in words
(landmarks, a summary of the last step, the cached-vs-uncached check), so that
every number on those pages comes out of one function call. Same contract as
kvlab.figures: plain JSON-able data, inputs validated and clamped, "params"
echoes what was used.
"""
from __future__ import annotations

import numpy as np

from kvlab.decoding import DecoderConfig, ToyDecoder
from kvlab.figures import _int, quadratic_wall, race, step_through

# The page's landmark sentences: "exactly 10× at ... tokens", "a 1,000-token reply".
RACE_TARGET_RATIO = 10
RACE_REPLY_TOKENS = 1000


def race_figure(n: int = 19, reply: int = RACE_REPLY_TOKENS, target_ratio: int = RACE_TARGET_RATIO) -> dict:
    """kvlab.race(n) plus two landmarks: where the saving first reaches `target_ratio`, and a `reply`-token reply.

    landmarks.target: the smallest n whose total (no cache / cache) ratio is >= target_ratio,
    with both totals there and whether the ratio is exact. landmarks.reply: the totals for `reply` tokens.

    >>> f = race_figure(19)
    >>> f["totals"], f["landmarks"]["target"]["n"], f["landmarks"]["target"]["exact"]
    ({'no_cache': 190, 'cache': 19, 'ratio': 10.0}, 19, True)
    >>> f["landmarks"]["reply"]
    {'n': 1000, 'no_cache': 500500, 'cache': 1000, 'ratio': 500.5}
    """
    clamped: dict = {}
    reply = _int("reply", reply, clamped, "n")
    target_ratio = _int("target_ratio", target_ratio, clamped, "n")
    data = race(n)
    longest = race(max(reply, data["params"]["n"]))
    cum_nc, cum_c = longest["no_cache"]["cumulative"], longest["cache"]["cumulative"]
    hit = next((i for i, r in enumerate(longest["ratio"]) if r >= target_ratio), None)
    target = None
    if hit is not None:
        target = {
            "ratio": target_ratio,
            "n": hit + 1,
            "no_cache": cum_nc[hit],
            "cache": cum_c[hit],
            "exact": cum_nc[hit] == target_ratio * cum_c[hit],
        }
    r = reply - 1
    data["landmarks"] = {
        "target": target,
        "reply": {"n": reply, "no_cache": cum_nc[r], "cache": cum_c[r], "ratio": cum_nc[r] / cum_c[r]},
    }
    data["clamped"] = {**data["clamped"], **clamped}
    return data


def _sample_steps(n: int, max_points: int) -> list[int]:
    """0-based step indices to plot: all of them when few, else evenly spread, first and last kept.

    >>> _sample_steps(5, 10)
    [0, 1, 2, 3, 4]
    >>> _sample_steps(100, 5)
    [0, 25, 50, 74, 99]
    """
    if n <= max_points:
        return list(range(n))
    return sorted({int(round(x)) for x in np.linspace(0, n - 1, max_points)})


def quadratic_wall_figure(
    n: int = 1024,
    n_layers: int = 12,
    d_model: int = 768,
    n_heads: int = 12,
    n_kv_heads: int = 12,
    d_ff: int = 3072,
    max_points: int = 128,
) -> dict:
    """kvlab.quadratic_wall, thinned to at most `max_points` plotted steps, plus the first and last step in full.

    "tokens" are the sampled step numbers (1-based) and every per-step list is
    sampled at them. "first" and "last" hold the step-1 and step-n values of
    each side (weight, attention, total MACs, cumulative MACs), and "growth"
    how many times step n costs more than step 1 (weights / attention, each side).
    Shape: {"params", "clamped", "tokens", "no_cache": {...}, "cache": {...},
    "attention_share": {...}, "first": {...}, "last": {...}, "growth": {...}, "ratio_cumulative_last": float}
    """
    clamped: dict = {}
    max_points = _int("max_points", max_points, clamped, "n")
    full = quadratic_wall(n=n, n_layers=n_layers, d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, d_ff=d_ff)
    idx = _sample_steps(len(full["tokens"]), max(max_points, 2))
    keys = ("weight_macs", "attention_macs", "total_macs", "cumulative_macs")

    def pick(side: dict, i: int) -> dict:
        return {k: side[k][i] for k in keys}

    sides = ("no_cache", "cache")
    return {
        "params": {**full["params"], "max_points": max_points},
        "clamped": {**full["clamped"], **clamped},
        "tokens": [full["tokens"][i] for i in idx],
        **{s: {k: [full[s][k][i] for i in idx] for k in keys} for s in sides},
        "attention_share": {s: [full["attention_share"][s][i] for i in idx] for s in sides},
        "first": {s: pick(full[s], 0) for s in sides},
        "last": {s: pick(full[s], -1) for s in sides},
        "last_attention_share": {s: full["attention_share"][s][-1] for s in sides},
        "growth": {
            s: {
                "weight": full[s]["weight_macs"][-1] / full[s]["weight_macs"][0],
                "attention": full[s]["attention_macs"][-1] / full[s]["attention_macs"][0],
            }
            for s in sides
        },
        "ratio_cumulative_last": full["ratio_cumulative"][-1],
    }


def step_through_figure(prompt_len: int = 6, steps: int = 4, layers: int = 2, seed: int = 0) -> dict:
    """kvlab.step_through plus the check that caching changes nothing but the work.

    The same toy decoder (same layers and seed, same prompt) generates the
    same steps + 1 steps with and without a cache, as kvlab.cache_equivalence
    does for the default two layers. "equivalence": {"tokens_no_cache",
    "tokens_cache", "same_tokens", "max_abs_logit_diff", "tokens_processed":
    {"no_cache", "cache"}, "total_macs": {"no_cache", "cache"}}.

    >>> f = step_through_figure(6, 4, 2)
    >>> f["steps"][0]["cache_len_after"], f["equivalence"]["same_tokens"]
    (6, True)
    """
    data = step_through(prompt_len=prompt_len, steps=steps, layers=layers, seed=seed)
    p = data["params"]
    model = ToyDecoder(DecoderConfig(n_layers=p["layers"], seed=p["seed"]))
    prompt = [int(t) for t in np.random.default_rng(p["seed"]).integers(0, model.config.vocab_size, p["prompt_len"])]
    a = model.generate(prompt, p["steps"] + 1, use_cache=False)
    b = model.generate(prompt, p["steps"] + 1, use_cache=True)
    total_a, total_b = a.steps[-1]["cumulative"], b.steps[-1]["cumulative"]
    data["equivalence"] = {
        "tokens_no_cache": a.tokens,
        "tokens_cache": b.tokens,
        "same_tokens": a.tokens == b.tokens,
        "max_abs_logit_diff": float(np.max(np.abs(a.logits - b.logits))),
        "tokens_processed": {"no_cache": total_a["tokens_processed"], "cache": total_b["tokens_processed"]},
        "total_macs": {"no_cache": total_a["total_macs"], "cache": total_b["total_macs"]},
    }
    return data
