"""Figure data for the reuse and forgetting pages: prefix caching, eviction, context shift.

Same contract as kvlab.figures: one function per widget, plain JSON-able data,
inputs validated (a ValueError names the bad parameter), numbers clamped into
LIMITS, and what was used echoed under "params" (what was clamped under
"clamped"). Each function also returns "text": the readouts already formatted
in Python, so the page shows exactly these strings and JavaScript only places
them.
"""
from __future__ import annotations

from kvlab.context import effective_n_keep, spans
from kvlab.figures import GRANULARITY_BLOCK_SIZES, LIMITS, _choice, _int, _number, context_shift_timeline, eviction_timeline
from kvlab.prefix_cache import BlockPrefixCache, run_requests, shared_prompt_requests

MIB = 2**20

# Tighter than LIMITS where a raster grows with the square of the inputs:
# these views list every position at every step, and the page must stay quick.
VIEW_LIMITS = {"eviction_n": (1, 256), "n_ctx": (4, 256), "n_generate": (0, 256), "n_keep": (-1, 253), "context_prompt_len": (1, 255)}


def _limits(*names: str, key: dict | None = None) -> dict:
    key = key or {}
    return {n: list(VIEW_LIMITS.get(key.get(n, n), LIMITS[key.get(n, n)])) for n in names}


def _view_int(name: str, value, clamped: dict, limits_key: str | None = None) -> int:
    """_int, then the tighter VIEW_LIMITS range (one "clamped" entry with the reader's own value)."""
    v = _int(name, value, clamped, limits_key)
    lo, hi = VIEW_LIMITS[limits_key or name]
    used = min(max(v, lo), hi)
    if used != v:
        clamped[name] = {"requested": clamped.get(name, {}).get("requested", v), "used": used}
    return used


def _cumulative(values: list[int]) -> list[int]:
    out, total = [], 0
    for v in values:
        total += v
        out.append(total)
    return out


def _span_text(runs: list[list[int]]) -> str:
    """[[0, 4], [9, 10]] → "0–3, 9" (inclusive, as a reader counts)."""
    if not runs:
        return "none"
    return ", ".join(str(a) if b - a == 1 else f"{a}–{b - 1}" for a, b in runs)


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _sci(x: float) -> str:
    """1.3986e15 → "1.40 × 10¹⁵" (plain text, so the page needs no markup for it)."""
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"


# ----------------------------------------------------------------------------
# Across requests: prefix caching


def prefix_cache_figure(
    n_requests: int = 1000,
    prefix_len: int = 100,
    suffix_len: int = 20,
    block_size: int = 16,
    flops_per_token: float = 1.4e10,
    bytes_per_token: int = 131072,
) -> dict:
    """One shared system prompt, many requests: prefill with no prefix cache, a radix tree, hashed blocks.

    The same runs as `prefix_cache_demo` (unbounded caches), plus the baseline
    without a prefix cache and cumulative curves. "granularity" gives, per block
    size, the tokens one later request reuses and the total over all requests.
    Shape: {"params", "clamped", "limits", "block_sizes", "requests": [1..n],
    "no_cache": {"tokens_computed_per_request", "cumulative_computed", "tokens_computed"},
    "token_granular"|"blocks": {"tokens_computed_per_request", "tokens_reused_per_request",
      "cumulative_computed", "tokens_reused", "tokens_computed", "flops_saved", "hit_rate",
      "memory_bytes_held", "memory_mib_held"}, "granularity": [...], "text": {...}}

    >>> d = prefix_cache_figure(n_requests=1000, prefix_len=100, suffix_len=20, block_size=16)
    >>> d["token_granular"]["tokens_reused"], d["blocks"]["tokens_reused"]
    (99900, 95904)
    """
    clamped: dict = {}
    n_requests = _int("n_requests", n_requests, clamped)
    prefix_len = _int("prefix_len", prefix_len, clamped)
    suffix_len = _int("suffix_len", suffix_len, clamped)
    block_size = _int("block_size", block_size, clamped)
    flops_per_token = _number("flops_per_token", flops_per_token, 0.0, 1e15, clamped)
    bytes_per_token = int(_number("bytes_per_token", bytes_per_token, 0, 2**30, clamped))
    requests = shared_prompt_requests(n_requests, prefix_len, suffix_len)
    kw = {"flops_per_token": flops_per_token, "bytes_per_token": bytes_per_token}

    def summary(run: dict) -> dict:
        computed = [r["tokens_computed"] for r in run["requests"]]
        held = run["requests"][-1]["memory_bytes_held"]
        return {
            "tokens_computed_per_request": computed,
            "tokens_reused_per_request": [r["tokens_reused"] for r in run["requests"]],
            "cumulative_computed": _cumulative(computed),
            "tokens_reused": run["tokens_reused"],
            "tokens_computed": run["tokens_computed"],
            "flops_saved": run["flops_saved"],
            "hit_rate": run["hit_rate"],
            "memory_bytes_held": held,
            "memory_mib_held": held / MIB,
        }

    radix = summary(run_requests(requests, mode="radix", **kw))
    blocks = summary(run_requests(requests, mode="blocks", block_size=block_size, **kw))
    per_request = prefix_len + suffix_len
    no_cache_computed = [per_request] * n_requests
    no_cache = {
        "tokens_computed_per_request": no_cache_computed,
        "cumulative_computed": _cumulative(no_cache_computed),
        "tokens_computed": per_request * n_requests,
    }
    # Per block size, what one later request reuses: two requests tell it (the cache is unbounded).
    granularity = []
    pair = shared_prompt_requests(2, prefix_len, suffix_len)
    for b in sorted(set(GRANULARITY_BLOCK_SIZES + [block_size])):
        later = run_requests(pair, mode="blocks", block_size=b)["requests"][1]
        granularity.append(
            {
                "block_size": b,
                "tokens_reused_per_request": later["tokens_reused"],
                "tokens_recomputed_of_prefix": prefix_len - later["tokens_reused"],
                "tokens_reused": later["tokens_reused"] * (n_requests - 1),
            }
        )
    fmt = lambda x: f"{x:,}"  # noqa: E731
    text = {
        "n_requests": fmt(n_requests),
        "later_requests": fmt(n_requests - 1),
        "prefix_len": fmt(prefix_len),
        "first_request": fmt(radix["tokens_computed_per_request"][0]),
        "no_cache_computed": fmt(no_cache["tokens_computed"]),
        "radix_reused": fmt(radix["tokens_reused"]),
        "radix_computed": fmt(radix["tokens_computed"]),
        "radix_flops_saved": _sci(radix["flops_saved"]),
        "radix_mib": f"{radix['memory_mib_held']:,.1f}",
        "radix_hit_rate": f"{100 * radix['hit_rate']:.1f}%",
        "blocks_reused": fmt(blocks["tokens_reused"]),
        "blocks_computed": fmt(blocks["tokens_computed"]),
        "blocks_flops_saved": _sci(blocks["flops_saved"]),
        "blocks_mib": f"{blocks['memory_mib_held']:,.1f}",
        "blocks_hit_rate": f"{100 * blocks['hit_rate']:.1f}%",
        "block_size": fmt(block_size),
        "block_loss": fmt(radix["tokens_reused"] - blocks["tokens_reused"]),
        "block_loss_per_request": fmt(
            (radix["tokens_reused_per_request"][-1] - blocks["tokens_reused_per_request"][-1]) if n_requests > 1 else 0
        ),
        "flops_per_token": _sci(flops_per_token),
        "kib_per_token": f"{bytes_per_token / 1024:,.0f}",
    }
    return {
        "params": {
            "n_requests": n_requests, "prefix_len": prefix_len, "suffix_len": suffix_len, "block_size": block_size,
            "flops_per_token": flops_per_token, "bytes_per_token": bytes_per_token,
        },
        "clamped": clamped,
        "limits": _limits("n_requests", "prefix_len", "suffix_len"),
        "block_sizes": sorted(set(GRANULARITY_BLOCK_SIZES + [block_size])),
        "requests": list(range(1, n_requests + 1)),
        "no_cache": no_cache,
        "token_granular": radix,
        "blocks": {"block_size": block_size, **blocks},
        "granularity": granularity,
        "text": text,
    }


def prefix_blocks(prefix_len: int = 40, suffix_len: int = 10, block_size: int = 16) -> dict:
    """Two requests that share a prefix, cut into blocks: which blocks of the second one hit.

    Request 1 fills an empty block cache; request 2 (same prefix, its own
    suffix) looks its blocks up. A block hits only if it is full and every token
    in it (and before it) is shared; the partial last block is never cached,
    and the prompt's last token is always recomputed.
    Shape: {"params", "clamped", "limits", "block_sizes", "requests": [{"n_tokens", "blocks":
    [{"index", "start", "end", "shared", "status"}], "tokens_reused", "tokens_computed"}, ...],
    "token_granular_reused": 39, "text": {...}}
    status: "stored" (request 1 computed it and cached it), "hit", "miss" (computed),
    "partial" (computed, never cached).
    """
    clamped: dict = {}
    prefix_len = _int("prefix_len", prefix_len, clamped)
    suffix_len = _int("suffix_len", suffix_len, clamped)
    block_size = _int("block_size", block_size, clamped)
    pair = shared_prompt_requests(2, prefix_len, suffix_len)
    cache = BlockPrefixCache(block_size)
    out = []
    for k, tokens in enumerate(pair):
        r = cache.process(tokens)
        blocks = []
        for i, status in enumerate(r["block_status"]):
            start = i * block_size
            end = start + block_size
            blocks.append({"index": i, "start": start, "end": end, "shared": max(0, min(end, prefix_len) - start),
                           "status": "stored" if k == 0 else status})
        if r["partial_block_tokens"]:
            start = r["full_blocks"] * block_size
            blocks.append({"index": r["full_blocks"], "start": start, "end": r["n_tokens"],
                           "shared": max(0, prefix_len - start), "status": "partial"})
        out.append({"n_tokens": r["n_tokens"], "blocks": blocks, "blocks_hit": r["blocks_hit"],
                    "tokens_reused": r["tokens_reused"], "tokens_computed": r["tokens_computed"]})
    radix_reused = run_requests(pair, mode="radix")["requests"][1]["tokens_reused"]
    second = out[1]
    text = {
        "n_tokens": f"{second['n_tokens']:,}",
        "blocks_hit": f"{second['blocks_hit']:,}",
        "tokens_reused": f"{second['tokens_reused']:,}",
        "tokens_computed": f"{second['tokens_computed']:,}",
        "shared_not_reused": f"{prefix_len - second['tokens_reused']:,}",
        "radix_reused": f"{radix_reused:,}",
        "radix_computed": f"{second['n_tokens'] - radix_reused:,}",
    }
    return {
        "params": {"prefix_len": prefix_len, "suffix_len": suffix_len, "block_size": block_size},
        "clamped": clamped,
        "limits": _limits("prefix_len", "suffix_len"),
        "block_sizes": sorted(set(GRANULARITY_BLOCK_SIZES + [block_size])),
        "requests": out,
        "token_granular_reused": radix_reused,
        "text": text,
    }


# ----------------------------------------------------------------------------
# Forgetting: eviction and context shift

POLICY_NAMES = {
    "full": "Full cache",
    "window": "Sliding window",
    "sinks": "Attention sinks + window (StreamingLLM)",
    "h2o": "Heavy hitters + recent (H2O)",
}
NOT_YET, EVICTED, CACHED, NEW = 0, 1, 2, 3


def eviction_view(
    policy: str = "sinks",
    n: int = 32,
    window: int = 8,
    n_sink: int = 4,
    budget: int = 12,
    recent: int = 4,
    seed: int = 0,
) -> dict:
    """`eviction_timeline` as a step × position raster, plus every policy's attention kept for comparison.

    grid[step][position]: 0 not seen yet, 1 evicted, 2 cached, 3 the token added
    at this step (and still cached). recent is clamped to budget (H2O needs
    budget >= recent). "compare" runs all four policies with the same settings.
    Shape: {"params", "clamped", "limits", "policy", "steps": [... + "cached_text", "evicted_text",
    "n_evicted_total"], "mean_attention_kept", "grid": [[...]], "compare": {"full": {"name",
    "attention_kept": [...], "mean_attention_kept", "cache_len": [...]}, ...}, "text": {...}}
    """
    clamped: dict = {}
    policy = _choice("policy", policy, list(POLICY_NAMES))
    budget = _int("budget", budget, clamped)
    recent = _int("recent", recent, clamped)
    if recent > budget:
        clamped["recent"] = {"requested": recent, "used": budget}
        recent = budget
    n = _view_int("n", n, clamped, "eviction_n")
    kw = {"n": n, "window": window, "n_sink": n_sink, "budget": budget, "recent": recent, "seed": seed}
    base = eviction_timeline(policy, **kw)
    clamped.update(base["clamped"])
    n = base["params"]["n"]
    grid, seen_evicted = [], 0
    for s in base["steps"]:
        row = [NOT_YET] * n
        for p in range(s["position"] + 1):
            row[p] = EVICTED
        for p in s["cached"]:
            row[p] = CACHED
        if s["position"] in s["cached"]:
            row[s["position"]] = NEW
        grid.append(row)
        seen_evicted += len(s["evicted"])
        s["cached_text"] = _span_text(spans(s["cached"]))
        s["evicted_text"] = _span_text(spans(sorted(s["evicted"])))
        s["n_evicted_total"] = seen_evicted
        s["attention_kept_text"] = f"{100 * s['attention_kept']:.1f}%"
    compare = {}
    for name, label in POLICY_NAMES.items():
        run = base if name == policy else eviction_timeline(name, **kw)
        compare[name] = {
            "name": label,
            "attention_kept": [s["attention_kept"] for s in run["steps"]],
            "cache_len": [s["cache_len_after"] for s in run["steps"]],
            "mean_attention_kept": run["mean_attention_kept"],
            "mean_text": f"{100 * run['mean_attention_kept']:.1f}%",
        }
    last = base["steps"][-1]
    return {
        **base,
        "clamped": clamped,
        "limits": _limits("n", "window", "n_sink", "budget", "recent", key={"n": "eviction_n"}),
        "policy_name": POLICY_NAMES[policy],
        "grid": grid,
        "compare": compare,
        "text": {
            "mean_attention_kept": f"{100 * base['mean_attention_kept']:.1f}%",
            "final_cache_len": f"{last['cache_len_after']:,}",
            "n_evicted_total": f"{last['n_evicted_total']:,}",
        },
    }


KEPT, VISIBLE, DISCARDED = 3, 2, 1


def context_shift_view(
    prompt_len: int = 8, n_generate: int = 40, n_ctx: int = 32, n_keep: int = 4, mode: str = "shift"
) -> dict:
    """`context_shift_timeline` as a step × text-token raster, with the shifts spelled out.

    prompt_len is clamped to n_ctx - 1 and, for a shift, n_keep to n_ctx - 3
    (what llama.cpp can work with), both reported under "clamped".
    grid[step][token]: 0 not fed yet, 1 discarded, 2 seen by the model, 3 seen and
    protected (one of the first n_keep tokens).
    Shape: {... context_shift_timeline ..., "limits", "n_text": 48, "grid": [[...]],
    "n_past": [8, 9, ...], "shifts": [... + "text"], "text": {...}}
    """
    clamped: dict = {}
    mode = _choice("mode", mode, ["shift", "stop"])
    n_ctx = _view_int("n_ctx", n_ctx, clamped)
    prompt_len = _view_int("prompt_len", prompt_len, clamped, "context_prompt_len")
    n_generate = _view_int("n_generate", n_generate, clamped)
    n_keep = _view_int("n_keep", n_keep, clamped)
    if prompt_len > n_ctx - 1:
        clamped["prompt_len"] = {"requested": clamped.get("prompt_len", {}).get("requested", prompt_len), "used": n_ctx - 1}
        prompt_len = n_ctx - 1
    if mode == "shift" and effective_n_keep(n_keep, prompt_len) > n_ctx - 3:
        clamped["n_keep"] = {"requested": clamped.get("n_keep", {}).get("requested", n_keep), "used": n_ctx - 3}
        n_keep = n_ctx - 3
    data = context_shift_timeline(prompt_len=prompt_len, n_generate=n_generate, n_ctx=n_ctx, n_keep=n_keep, mode=mode)
    data["clamped"] = {**data["clamped"], **clamped}
    keep = data["n_keep"]
    n_text = prompt_len + data["tokens_fed"]
    grid = []
    fed = 0
    for s in data["steps"]:
        fed = prompt_len if s["step"] == 0 else s["token"] + 1
        row = [DISCARDED] * fed + [0] * (n_text - fed)
        for a, b in s["visible"]:
            for t in range(a, b):
                row[t] = KEPT if t < keep else VISIBLE
        grid.append(row)
        s["visible_text"] = _span_text(s["visible"])
    for sh in data["shifts"]:
        sh["text"] = (
            f"step {sh['step']}: {sh['n_past_before']} + 1 ≥ n_ctx = {n_ctx}; kept the first {keep}, "
            f"discarded {sh['n_discard']} (tokens {_span_text(sh['discarded'])}), half of the {sh['n_left']} after them"
        )
    if data["stopped_at"] is not None:
        outcome = (f"Stopped at step {data['stopped_at']}: the cache was full after "
                   f"{data['tokens_fed']} of {n_generate} generated tokens.")
    elif data["shifts"]:
        outcome = (f"Generated all {data['tokens_fed']} tokens with {len(data['shifts'])} context shift"
                   f"{'' if len(data['shifts']) == 1 else 's'}; {data['total_discarded']} tokens discarded in all.")
    else:
        outcome = f"Generated all {data['tokens_fed']} tokens without running out of context."
    final = data["steps"][-1]
    return {
        **data,
        "params": {**data["params"], "n_keep": n_keep},
        "limits": _limits("n_ctx", "prompt_len", "n_generate", "n_keep", key={"prompt_len": "context_prompt_len"}),
        "n_text": n_text,
        "grid": grid,
        "n_past": [s["n_past_after"] for s in data["steps"]],
        "text": {
            "outcome": outcome,
            "final_visible": _span_text(final["visible"]),
            "final_n_past": f"{final['n_past_after']:,}",
            "n_text": f"{n_text:,}",
            "n_keep": f"{keep:,}",
        },
    }
