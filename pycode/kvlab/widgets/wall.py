"""Figure data for the cache widgets: one function per figure, plain JSON-able data.

Each function validates its inputs (a ValueError names the bad parameter),
clamps numbers into the ranges in LIMITS, and echoes what it used under
"params" (and what it had to clamp under "clamped"), so the page can show
exactly what was computed.
"""
from __future__ import annotations

import math

import numpy as np

from kvlab.cache import cache_lengths
from kvlab.context import run_out_of_context
from kvlab.decoding import DecoderConfig, ToyDecoder, decoding_costs, positions_processed, times_processed
from kvlab.eviction import make_policy, simulate
from kvlab.prefix_cache import run_requests, shared_prompt_requests

# Ranges shared by the page controls, the embed query-string parser and this code.
LIMITS = {
    "n": (1, 4096),
    "eviction_n": (1, 512),  # eviction_timeline's n: the timeline lists every cached position at every step
    "prompt_len": (1, 32),
    "steps": (1, 32),
    "layers": (1, 8),
    "n_layers": (1, 128),
    "d_model": (8, 16384),
    "n_heads": (1, 256),
    "n_kv_heads": (1, 256),
    "d_ff": (8, 65536),
    "window": (1, 512),
    "n_sink": (0, 64),
    "budget": (1, 1024),
    "recent": (1, 512),
    "seed": (0, 2**31 - 1),
    "n_requests": (1, 1000),
    "prefix_len": (0, 1024),
    "suffix_len": (1, 256),
    "block_size": (1, 256),
    "capacity": (0, 1_000_000),
    "n_ctx": (4, 8192),
    "n_generate": (0, 8192),
    "n_keep": (-1, 8192),
    "context_prompt_len": (1, 8191),
}

GRANULARITY_BLOCK_SIZES = [1, 2, 4, 8, 16, 32, 64]


def _int(name: str, value, clamped: dict, limits_key: str | None = None) -> int:
    """`value` as an int within LIMITS[limits_key or name]; non-integers raise, out-of-range values are clamped."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if isinstance(value, float) or isinstance(value, np.floating):
        if not math.isfinite(value) or not float(value).is_integer():
            raise ValueError(f"{name} must be a whole number, got {value!r}")
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    lo, hi = LIMITS[limits_key or name]
    used = min(max(v, lo), hi)
    if used != v:
        clamped[name] = {"requested": v, "used": used}
    return used


def _number(name: str, value, lo: float, hi: float, clamped: dict) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    used = min(max(v, lo), hi)
    if used != v:
        clamped[name] = {"requested": v, "used": used}
    return used


def _choice(name: str, value, choices: list[str]) -> str:
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
    return value


# ----------------------------------------------------------------------------
# Without vs with a cache


def race(n: int = 19) -> dict:
    """Token-computations of both models while generating n tokens (one-token prompt).

    Step t pushes t tokens through the model without a cache and 1 with one.
    Shape: {"params": {"n": 19}, "clamped": {}, "tokens": [1, ..., 19],
    "no_cache": {"per_step": [1, 2, ...], "cumulative": [1, 3, ...]},
    "cache": {"per_step": [1, 1, ...], "cumulative": [1, 2, ...]},
    "ratio": [1.0, 1.5, ...], "totals": {"no_cache": 190, "cache": 19, "ratio": 10.0}}

    >>> race(19)["totals"]
    {'no_cache': 190, 'cache': 19, 'ratio': 10.0}
    """
    clamped: dict = {}
    n = _int("n", n, clamped)
    config = DecoderConfig()  # token counts do not depend on the model's size
    sides = {}
    for key, use_cache in (("no_cache", False), ("cache", True)):
        rows = decoding_costs(config, prompt_len=1, n_steps=n, use_cache=use_cache)
        sides[key] = {
            "per_step": [r["step_cost"]["tokens_processed"] for r in rows],
            "cumulative": [r["cumulative"]["tokens_processed"] for r in rows],
        }
    ratio = [a / b for a, b in zip(sides["no_cache"]["cumulative"], sides["cache"]["cumulative"])]
    total_nc, total_c = sides["no_cache"]["cumulative"][-1], sides["cache"]["cumulative"][-1]
    return {
        "params": {"n": n},
        "clamped": clamped,
        "tokens": list(range(1, n + 1)),
        **sides,
        "ratio": ratio,
        "totals": {"no_cache": total_nc, "cache": total_c, "ratio": total_nc / total_c},
    }


def reprocessing(n: int = 50) -> dict:
    """How many times each token was pushed through the model by the time there are n tokens.

    Shape: {"params": {"n": 50}, "clamped": {}, "tokens": [1, ..., 50],
    "no_cache": [50, 49, ..., 1], "cache": [1, 1, ..., 1]}
    """
    clamped: dict = {}
    n = _int("n", n, clamped)
    return {
        "params": {"n": n},
        "clamped": clamped,
        "tokens": list(range(1, n + 1)),
        "no_cache": times_processed(n, use_cache=False),
        "cache": times_processed(n, use_cache=True),
    }


def quadratic_wall(
    n: int = 1024,
    n_layers: int = 12,
    d_model: int = 768,
    n_heads: int = 12,
    n_kv_heads: int = 12,
    d_ff: int = 3072,
) -> dict:
    """Multiply-adds per generated token, split into weights (projections + MLP) and attention.

    Defaults are GPT-2 small's shapes (vocabulary 50,257). Without a cache the
    weight work per step grows ∝ t and attention ∝ t²; with a cache, weights
    stay flat and attention grows ∝ t. MAC counts are floats (they pass 2**53
    for big models, beyond what JavaScript numbers hold exactly).
    Shape: {"params": {...}, "clamped": {}, "tokens": [1, ..., n],
    "no_cache": {"weight_macs": [...], "attention_macs": [...], "total_macs": [...], "cumulative_macs": [...]},
    "cache": {same keys}, "ratio_cumulative": [...], "attention_share": {"no_cache": [...], "cache": [...]}}
    """
    clamped: dict = {}
    n = _int("n", n, clamped)
    n_layers = _int("n_layers", n_layers, clamped)
    d_model = _int("d_model", d_model, clamped)
    n_heads = _int("n_heads", n_heads, clamped)
    n_kv_heads = _int("n_kv_heads", n_kv_heads, clamped)
    d_ff = _int("d_ff", d_ff, clamped)
    if d_model % n_heads:
        raise ValueError(f"n_heads ({n_heads}) must divide d_model ({d_model})")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_kv_heads ({n_kv_heads}) must divide n_heads ({n_heads})")
    config = DecoderConfig(
        n_layers=n_layers, n_heads=n_heads, n_kv_heads=n_kv_heads, head_dim=d_model // n_heads,
        d_model=d_model, d_ff=d_ff, vocab_size=50257,
    )
    sides = {}
    for key, use_cache in (("no_cache", False), ("cache", True)):
        rows = decoding_costs(config, prompt_len=1, n_steps=n, use_cache=use_cache)
        cost = [r["step_cost"] for r in rows]
        weight = [float(c["projection_macs"] + c["mlp_macs"] + c["lm_head_macs"]) for c in cost]
        attention = [float(c["attention_macs"]) for c in cost]
        sides[key] = {
            "weight_macs": weight,
            "attention_macs": attention,
            "total_macs": [w + a for w, a in zip(weight, attention)],
            "cumulative_macs": [float(r["cumulative"]["total_macs"]) for r in rows],
        }
    return {
        "params": {"n": n, "n_layers": n_layers, "d_model": d_model, "n_heads": n_heads, "n_kv_heads": n_kv_heads, "d_ff": d_ff},
        "clamped": clamped,
        "tokens": list(range(1, n + 1)),
        **sides,
        "ratio_cumulative": [a / b for a, b in zip(sides["no_cache"]["cumulative_macs"], sides["cache"]["cumulative_macs"])],
        "attention_share": {k: [a / t for a, t in zip(s["attention_macs"], s["total_macs"])] for k, s in sides.items()},
    }


def step_through(prompt_len: int = 4, steps: int = 4, layers: int = 2, seed: int = 0) -> dict:
    """Run the toy decoder with a cache, step by step: what each layer computes and reads.

    `steps` counts decode steps after the prefill, so the result has steps + 1
    entries (step 0 = prefill). Per step and layer, "computed" are the
    positions whose K, V were computed and written this step, "read" those read
    from the cache; "without_cache_recomputed" is what the uncached model
    would push through the layers at the same step.
    Shape: {"params": {...}, "clamped": {}, "tokens": [...], "steps": [{"step": 1, "phase": "decode",
    "n_new": 1, "cache_len_before": 4, "cache_len_after": 5, "bytes_read": ..., "bytes_written": ...,
    "layers": [{"layer": 0, "computed": [4], "read": [0, 1, 2, 3]}, ...],
    "without_cache_recomputed": [0, 1, 2, 3, 4]}, ...]}
    """
    clamped: dict = {}
    prompt_len = _int("prompt_len", prompt_len, clamped)
    steps = _int("steps", steps, clamped)
    layers = _int("layers", layers, clamped)
    seed = _int("seed", seed, clamped)
    config = DecoderConfig(n_layers=layers, seed=seed)
    prompt = [int(t) for t in np.random.default_rng(seed).integers(0, config.vocab_size, prompt_len)]
    run = ToyDecoder(config).generate(prompt, steps + 1, use_cache=True)
    out = []
    for r in run.cache_readouts:
        out.append(
            {
                "step": r["step"],
                "phase": r["phase"],
                "n_new": r["n_new"],
                "cache_len_before": r["cache_len_before"],
                "cache_len_after": r["cache_len_after"],
                "bytes_read": r["bytes_read"],
                "bytes_written": r["bytes_written"],
                "layers": [
                    {"layer": lay["layer"], "computed": list(range(*lay["computed"])), "read": list(range(*lay["read"]))}
                    for lay in r["layers"]
                ],
                "without_cache_recomputed": list(positions_processed(prompt_len, r["step"], use_cache=False)),
            }
        )
    return {
        "params": {"prompt_len": prompt_len, "steps": steps, "layers": layers, "seed": seed},
        "clamped": clamped,
        "tokens": run.tokens,
        "steps": out,
    }


def cache_equivalence(prompt_len: int = 4, steps: int = 8, seed: int = 0) -> dict:
    """The toy decoder generates the same tokens with and without a cache; only the work differs.

    Shape: {"params": {...}, "clamped": {}, "tokens_no_cache": [...], "tokens_cache": [...],
    "same_tokens": true, "max_abs_logit_diff": 1e-15, "totals": {"no_cache": {cost...}, "cache": {cost...}}}
    """
    clamped: dict = {}
    prompt_len = _int("prompt_len", prompt_len, clamped)
    steps = _int("steps", steps, clamped)
    seed = _int("seed", seed, clamped)
    model = ToyDecoder(DecoderConfig(seed=seed))
    prompt = [int(t) for t in np.random.default_rng(seed).integers(0, model.config.vocab_size, prompt_len)]
    a = model.generate(prompt, steps, use_cache=False)
    b = model.generate(prompt, steps, use_cache=True)
    return {
        "params": {"prompt_len": prompt_len, "steps": steps, "seed": seed},
        "clamped": clamped,
        "tokens_no_cache": a.tokens,
        "tokens_cache": b.tokens,
        "same_tokens": a.tokens == b.tokens,
        "max_abs_logit_diff": float(np.max(np.abs(a.logits - b.logits))),
        "totals": {"no_cache": a.steps[-1]["cumulative"], "cache": b.steps[-1]["cumulative"]},
    }


def cache_phases(prompt_len: int = 4, steps: int = 4) -> dict:
    """Phase and cache length before/after each step (no model run; formula of the cache).

    Shape: {"params": {...}, "clamped": {}, "steps": [{"step": 0, "phase": "prefill", "n_new": 4,
    "cache_len_before": 0, "cache_len_after": 4}, ...]}
    """
    clamped: dict = {}
    prompt_len = _int("prompt_len", prompt_len, clamped)
    steps = _int("steps", steps, clamped)
    return {
        "params": {"prompt_len": prompt_len, "steps": steps},
        "clamped": clamped,
        "steps": [cache_lengths(prompt_len, k) for k in range(steps + 1)],
    }


# ----------------------------------------------------------------------------
# Forgetting: eviction and context shift


def eviction_timeline(
    policy: str = "sinks",
    n: int = 32,
    window: int = 8,
    n_sink: int = 4,
    budget: int = 12,
    recent: int = 4,
    seed: int = 0,
) -> dict:
    """Which positions a policy keeps at each step, over n tokens with seeded toy attention.

    policy: "full", "window" (last `window`), "sinks" (first `n_sink` + last
    `window`), "h2o" (last `recent` + heavy hitters up to `budget`).
    Shape: {"params": {...}, "clamped": {}, "policy": {"policy": "sinks", "budget": 12, ...},
    "steps": [{"step": 0, "position": 0, "cache_len_before": 0, "cache_len_after": 1,
    "cached": [0], "evicted": [], "attention_kept": 1.0}, ...], "mean_attention_kept": 0.9}
    """
    clamped: dict = {}
    policy = _choice("policy", policy, ["full", "window", "sinks", "h2o"])
    n = _int("n", n, clamped, "eviction_n")
    window = _int("window", window, clamped)
    n_sink = _int("n_sink", n_sink, clamped)
    budget = _int("budget", budget, clamped)
    recent = _int("recent", recent, clamped)
    seed = _int("seed", seed, clamped)
    if policy == "h2o" and budget < recent:
        raise ValueError(f"budget ({budget}) must be >= recent ({recent})")
    p = make_policy(policy, window=window, n_sink=n_sink, budget=budget, recent=recent)
    timeline = simulate(p, n, seed=seed)
    return {
        "params": {"policy": policy, "n": n, "window": window, "n_sink": n_sink, "budget": budget, "recent": recent, "seed": seed},
        "clamped": clamped,
        "policy": p.describe(),
        "steps": timeline,
        "mean_attention_kept": round(sum(s["attention_kept"] for s in timeline) / n, 6),
    }


def context_shift_timeline(
    prompt_len: int = 8, n_generate: int = 40, n_ctx: int = 32, n_keep: int = 4, mode: str = "shift"
) -> dict:
    """llama.cpp running out of context: what the model still sees at each step.

    Shape: {"params": {...}, "clamped": {}, "prompt_len": 8, "n_ctx": 32, "n_keep": 4, "mode": "shift",
    "steps": [{"step": 0, "phase": "prefill", "token": null, "n_past_before": 0, "n_past_after": 8,
    "n_discarded": 0, "visible": [[0, 8]]}, ...], "shifts": [{"step": 24, "n_past_before": 31,
    "n_left": 27, "n_discard": 13, "discarded": [[4, 17]]}], "stopped_at": null,
    "tokens_fed": 40, "total_discarded": 13}
    """
    clamped: dict = {}
    mode = _choice("mode", mode, ["shift", "stop"])
    n_ctx = _int("n_ctx", n_ctx, clamped)
    prompt_len = _int("prompt_len", prompt_len, clamped, "context_prompt_len")
    n_generate = _int("n_generate", n_generate, clamped)
    n_keep = _int("n_keep", n_keep, clamped)
    if prompt_len >= n_ctx:
        raise ValueError(f"prompt_len ({prompt_len}) must be smaller than n_ctx ({n_ctx})")
    data = run_out_of_context(prompt_len, n_generate, n_ctx, n_keep, mode)
    return {"params": {"prompt_len": prompt_len, "n_generate": n_generate, "n_ctx": n_ctx, "n_keep": n_keep, "mode": mode}, "clamped": clamped, **data}


# ----------------------------------------------------------------------------
# Across requests: prefix caching


def prefix_cache_demo(
    n_requests: int = 1000,
    prefix_len: int = 100,
    suffix_len: int = 20,
    block_size: int = 16,
    capacity: int | None = None,
    flops_per_token: float = 1.4e10,
    bytes_per_token: int = 131072,
) -> dict:
    """One shared system prompt, many requests: prefill saved by a prefix cache.

    Every request is the same `prefix_len`-token system prompt plus its own
    `suffix_len` tokens. "token_granular" is the radix tree (SGLang); "blocks"
    is hashed blocks of `block_size` (vLLM), which only reuses whole blocks;
    "granularity" repeats the block run for several block sizes. capacity is
    in blocks for "blocks" and in tokens for "token_granular" (None: unbounded).
    flops_per_token defaults to ≈2 FLOPs per parameter of a 7B model;
    bytes_per_token to Llama-3-8B's f16 KV (2·32·8·128·2 B = 128 KiB).
    Shape: {"params": {...}, "clamped": {}, "requests": [1, ..., n],
    "token_granular": {"tokens_reused": 99900, "tokens_computed": ..., "flops_saved": ..., "hit_rate": ...,
      "tokens_computed_per_request": [...], "memory_bytes_held": [...]},
    "blocks": {same keys, "block_size": 16}, "granularity": [{"block_size": 1, "tokens_reused": ...,
      "tokens_reused_per_request": ..., "partial_block_tokens": ...}, ...]}
    """
    clamped: dict = {}
    n_requests = _int("n_requests", n_requests, clamped)
    prefix_len = _int("prefix_len", prefix_len, clamped)
    suffix_len = _int("suffix_len", suffix_len, clamped)
    block_size = _int("block_size", block_size, clamped)
    if capacity is not None:
        capacity = _int("capacity", capacity, clamped)
    flops_per_token = _number("flops_per_token", flops_per_token, 0.0, 1e15, clamped)
    bytes_per_token = int(_number("bytes_per_token", bytes_per_token, 0, 2**30, clamped))
    requests = shared_prompt_requests(n_requests, prefix_len, suffix_len)

    def summary(run: dict) -> dict:
        return {
            "tokens_reused": run["tokens_reused"],
            "tokens_computed": run["tokens_computed"],
            "flops_saved": run["flops_saved"],
            "hit_rate": run["hit_rate"],
            "tokens_computed_per_request": [r["tokens_computed"] for r in run["requests"]],
            "memory_bytes_held": [r["memory_bytes_held"] for r in run["requests"]],
        }

    kw = {"flops_per_token": flops_per_token, "bytes_per_token": bytes_per_token}
    radix = run_requests(requests, mode="radix", capacity=capacity, **kw)
    blocks = run_requests(requests, mode="blocks", block_size=block_size, capacity=capacity, **kw)
    granularity = []
    for b in sorted(set(GRANULARITY_BLOCK_SIZES + [block_size])):
        run = blocks if b == block_size else run_requests(requests, mode="blocks", block_size=b, capacity=capacity, **kw)
        granularity.append(
            {
                "block_size": b,
                "tokens_reused": run["tokens_reused"],
                "tokens_reused_per_request": run["requests"][-1]["tokens_reused"],
                "partial_block_tokens": prefix_len % b,
            }
        )
    return {
        "params": {
            "n_requests": n_requests, "prefix_len": prefix_len, "suffix_len": suffix_len, "block_size": block_size,
            "capacity": capacity, "flops_per_token": flops_per_token, "bytes_per_token": bytes_per_token,
        },
        "clamped": clamped,
        "requests": list(range(1, n_requests + 1)),
        "token_granular": summary(radix),
        "blocks": {"block_size": block_size, **summary(blocks)},
        "granularity": granularity,
    }
