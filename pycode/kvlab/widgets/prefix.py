"""The "Prefix caching" page (prefix-cache.md): the prefix-cache and prefix-blocks widgets.

One function per widget, plain JSON-able data, inputs validated (a ValueError names
the bad parameter), numbers clamped into the ranges of INPUTS, and what was used
echoed under "params" (what was clamped under "clamped"). Each function also
has a view (its *_view above it) that writes every readout from the result's numbers, so the
page shows exactly these strings and JavaScript only places them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlab.inputs import Param, Spec, short_repr, takes
from kvlab.reuse.prefix_cache import BlockPrefixCache, RadixPrefixCache, run_requests, shared_prompt_requests
from kvlab.widgets.views import computed_status, with_view
from kvlab.wording import sci

if TYPE_CHECKING:
    from kvlab.widgets.prefix_types import (
        PrefixBlocksResult,
        PrefixBlocksView,
        PrefixCacheFigureResult,
        PrefixCacheView,
        PrefixCasesResult,
        PrefixCasesView,
    )


# ---------------------------------------------------------------------------- views: the words this module's widgets show


def prefix_blocks_view(data: dict) -> PrefixBlocksView:
    prefix_len = data["params"]["prefix_len"]
    second, radix_reused = data["requests"][1], data["token_granular_reused"]
    return {
        "status": computed_status("prefix_blocks_figure", f"block size {data['params']['block_size']}"),
        "n_tokens": f"{second['n_tokens']:,}",
        "blocks_hit": f"{second['blocks_hit']:,}",
        "tokens_reused": f"{second['tokens_reused']:,}",
        "tokens_computed": f"{second['tokens_computed']:,}",
        "shared_not_reused": f"{prefix_len - second['tokens_reused']:,}",
        "radix_reused": f"{radix_reused:,}",
        "radix_computed": f"{second['n_tokens'] - radix_reused:,}",
        "requests": [
            {
                "label": f"Request {i}",
                "aria": f"Request {i}: {r['n_tokens']} tokens in {len(r['blocks'])} blocks",
                "prefix": f"{100 * prefix_len / r['n_tokens']:.4f}",
                "blocks": [
                    {
                        "status": b["status"],
                        "grow": b["end"] - b["start"],
                        "what": f"tokens {b['start']}–{b['end'] - 1}: {b['status']}",
                    }
                    for b in r["blocks"]
                ],
            }
            for i, r in enumerate(data["requests"], start=1)
        ],
    }


def prefix_cases_view(data: dict) -> PrefixCasesView:
    t, block_size = data["totals"], data["params"]["block_size"]
    total, radix_reused, blocks_reused = t["tokens"], t["radix_reused"], t["blocks_reused"]
    return {
        "summary": (
            f"Three requests, {total:,} prompt tokens: a token-granular cache reuses {radix_reused:,} "
            f"({100 * radix_reused / total:.0f}%), {block_size}-token blocks reuse {blocks_reused:,} "
            f"({100 * blocks_reused / total:.0f}%)."
        ),
        "status": computed_status(
            "prefix_cases_figure", next(c["label"] for c in data["cases"] if c["key"] == data["params"]["case"]).lower()
        ),
        "case": next(c["label"] for c in data["cases"] if c["key"] == data["params"]["case"]).lower(),
        "requests": [
            {
                "label": f"Request {i} · {r['n_tokens']} tokens · reused: {r['radix_reused']} token-granular, "
                f"{r['blocks_reused']} in blocks",
                "aria": f"Request {i}: its parts",
                "segments": [
                    {
                        "label": sg["label"],
                        "kind": sg["kind"],
                        "reuse": sg["reuse"],
                        "tokens": sg["tokens"],
                        "count": f"{sg['reused']}/{sg['tokens']}",
                        "title": f"{sg['label']}: {sg['reused']} of {sg['tokens']} tokens reused",
                    }
                    for sg in r["segments"]
                ],
                "blocks": [{"status": b["status"], "tokens": b["tokens"]} for b in r["blocks"]],
            }
            for i, r in enumerate(data["requests"], start=1)
        ],
    }


def prefix_cache_view(data: dict) -> PrefixCacheView:
    p = data["params"]
    block_size, n_requests = p["block_size"], p["n_requests"]
    radix, blocks = data["token_granular"], data["blocks"]
    loss_per_request = (
        radix["tokens_reused_per_request"][-1] - blocks["tokens_reused_per_request"][-1] if n_requests > 1 else 0
    )
    return {
        "n_requests": f"{n_requests:,}",
        "later_requests": f"{n_requests - 1:,}",
        "prefix_len": f"{p['prefix_len']:,}",
        "first_request": f"{radix['tokens_computed_per_request'][0]:,}",
        "no_cache_computed": f"{data['no_cache']['tokens_computed']:,}",
        "radix_reused": f"{radix['tokens_reused']:,}",
        "radix_computed": f"{radix['tokens_computed']:,}",
        "radix_flops_saved": sci(radix["flops_saved"]),
        "radix_mib": f"{radix['memory_mib_held']:,.1f}",
        "radix_hit_rate": f"{100 * radix['hit_rate']:.1f}%",
        "blocks_reused": f"{blocks['tokens_reused']:,}",
        "blocks_computed": f"{blocks['tokens_computed']:,}",
        "blocks_flops_saved": sci(blocks["flops_saved"]),
        "blocks_mib": f"{blocks['memory_mib_held']:,.1f}",
        "blocks_hit_rate": f"{100 * blocks['hit_rate']:.1f}%",
        "block_size": f"{block_size:,}",
        "block_loss": f"{radix['tokens_reused'] - blocks['tokens_reused']:,}",
        "block_loss_per_request": f"{loss_per_request:,}",
        "flops_per_token": sci(p["flops_per_token"]),
        "kib_per_token": f"{p['bytes_per_token'] / 1024:,.0f}",
        "hover": {
            key: [
                f"after request {x}: {y:,} tokens computed"
                for x, y in zip(data["requests"], data[key]["cumulative_computed"])
            ]
            for key in ("no_cache", "token_granular", "blocks")
        },
        "status": computed_status("prefix_cache_figure", f"{n_requests:,} requests"),
        "blocks_name": f"{block_size}-token blocks (vLLM)",
        "granularity": [
            {
                "block_size": g["block_size"],
                "row": "current" if g["block_size"] == block_size else None,
                "reused_per_request": f"{g['tokens_reused_per_request']:,}",
                "recomputed_of_prefix": f"{g['tokens_recomputed_of_prefix']:,}",
                "reused": f"{g['tokens_reused']:,}",
            }
            for g in data["granularity"]
        ],
    }


GRANULARITY_BLOCK_SIZES = [1, 2, 4, 8, 16, 32, 64]
# What the functions accept: token counts are whole numbers (a fraction is refused), clamped into these ranges.
INPUTS = Spec(
    n_requests=Param(1, 1000, fractions="refuse"),
    prefix_len=Param(0, 1024, fractions="refuse"),
    suffix_len=Param(1, 256, fractions="refuse"),
    block_size=Param(1, 256, fractions="refuse"),
    capacity=Param(0, 1_000_000, fractions="refuse"),
    flops_per_token=Param(0.0, 1e15, step="any"),
    bytes_per_token=Param(0, 2**30, step="any"),
    shared_len=Param(1, 256, fractions="refuse"),  # prefix_cases_figure: the shared and the own segments
    own_len=Param(1, 256, fractions="refuse"),
)


# ----------------------------------------------------------------------------
# Across requests: prefix caching


@takes(INPUTS)
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
    n_requests, prefix_len, suffix_len, block_size = INPUTS.check(
        {"n_requests": n_requests, "prefix_len": prefix_len, "suffix_len": suffix_len, "block_size": block_size},
        clamped,
    ).values()
    if capacity is not None:
        capacity = INPUTS["capacity"].check("capacity", capacity, clamped)
    flops_per_token, bytes_per_token = INPUTS.check(
        {"flops_per_token": flops_per_token, "bytes_per_token": bytes_per_token}, clamped
    ).values()
    bytes_per_token = int(bytes_per_token)
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
        run = (
            blocks if b == block_size else run_requests(requests, mode="blocks", block_size=b, capacity=capacity, **kw)
        )
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
            "n_requests": n_requests,
            "prefix_len": prefix_len,
            "suffix_len": suffix_len,
            "block_size": block_size,
            "capacity": capacity,
            "flops_per_token": flops_per_token,
            "bytes_per_token": bytes_per_token,
        },
        "clamped": clamped,
        "requests": list(range(1, n_requests + 1)),
        "token_granular": summary(radix),
        "blocks": {"block_size": block_size, **summary(blocks)},
        "granularity": granularity,
    }


MIB = 2**20


def _cumulative(values: list[int]) -> list[int]:
    out, total = [], 0
    for v in values:
        total += v
        out.append(total)
    return out


# ---------------------------------------------------------------------------- prefix_cache_figure, prefix_blocks_figure


@takes(INPUTS)
@with_view(prefix_cache_view)
def prefix_cache_figure(
    n_requests: int = 1000,
    prefix_len: int = 100,
    suffix_len: int = 20,
    block_size: int = 16,
    flops_per_token: float = 1.4e10,
    bytes_per_token: int = 131072,
) -> PrefixCacheFigureResult:
    """One shared system prompt, many requests: prefill with no prefix cache, a radix tree, hashed blocks.

    The same runs as `prefix_cache_demo` (unbounded caches), plus the baseline
    without a prefix cache and cumulative curves. "granularity" gives, per block
    size, the tokens one later request reuses and the total over all requests.
    Shape: {"params", "clamped", "limits", "block_sizes", "requests": [1..n],
    "no_cache": {"tokens_computed_per_request", "cumulative_computed", "tokens_computed"},
    "token_granular"|"blocks": {"tokens_computed_per_request", "tokens_reused_per_request",
      "cumulative_computed", "tokens_reused", "tokens_computed", "flops_saved", "hit_rate",
      "memory_bytes_held", "memory_mib_held"}, "granularity": [...], "view": {...}}

    >>> d = prefix_cache_figure(n_requests=1000, prefix_len=100, suffix_len=20, block_size=16)
    >>> d["token_granular"]["tokens_reused"], d["blocks"]["tokens_reused"]
    (99900, 95904)
    """
    clamped: dict = {}
    p = INPUTS.check(
        {
            "n_requests": n_requests,
            "prefix_len": prefix_len,
            "suffix_len": suffix_len,
            "block_size": block_size,
            "flops_per_token": flops_per_token,
            "bytes_per_token": bytes_per_token,
        },
        clamped,
    )
    p["bytes_per_token"] = int(p["bytes_per_token"])
    n_requests, prefix_len, suffix_len, block_size, flops_per_token, bytes_per_token = p.values()
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
    return {
        "params": p,
        "clamped": clamped,
        "limits": INPUTS.ranges("n_requests", "prefix_len", "suffix_len"),
        "block_sizes": sorted(set(GRANULARITY_BLOCK_SIZES + [block_size])),
        "requests": list(range(1, n_requests + 1)),
        "no_cache": no_cache,
        "token_granular": radix,
        "blocks": {"block_size": block_size, **blocks},
        "granularity": granularity,
    }


@takes(INPUTS)
@with_view(prefix_blocks_view)
def prefix_blocks_figure(prefix_len: int = 40, suffix_len: int = 10, block_size: int = 16) -> PrefixBlocksResult:
    """Two requests that share a prefix, cut into blocks: which blocks of the second one hit.

    Request 1 fills an empty block cache; request 2 (same prefix, its own
    suffix) looks its blocks up. A block hits only if it is full and every token
    in it (and before it) is shared; the partial last block is never cached,
    and the prompt's last token is always recomputed.
    Shape: {"params", "clamped", "limits", "block_sizes", "requests": [{"n_tokens", "blocks":
    [{"index", "start", "end", "shared", "status"}], "tokens_reused", "tokens_computed"}, ...],
    "token_granular_reused": 39, "view": {...}}
    status: "stored" (request 1 computed it and cached it), "hit", "miss" (computed),
    "partial" (computed, never cached).
    """
    clamped: dict = {}
    p = INPUTS.check({"prefix_len": prefix_len, "suffix_len": suffix_len, "block_size": block_size}, clamped)
    prefix_len, suffix_len, block_size = p.values()
    pair = shared_prompt_requests(2, prefix_len, suffix_len)
    cache = BlockPrefixCache(block_size)
    out = []
    for k, tokens in enumerate(pair):
        r = cache.process(tokens)
        blocks = []
        for i, status in enumerate(r["block_status"]):
            start = i * block_size
            end = start + block_size
            blocks.append(
                {
                    "index": i,
                    "start": start,
                    "end": end,
                    "shared": max(0, min(end, prefix_len) - start),
                    "status": "stored" if k == 0 else status,
                }
            )
        if r["partial_block_tokens"]:
            start = r["full_blocks"] * block_size
            blocks.append(
                {
                    "index": r["full_blocks"],
                    "start": start,
                    "end": r["n_tokens"],
                    "shared": max(0, prefix_len - start),
                    "status": "partial",
                }
            )
        out.append(
            {
                "n_tokens": r["n_tokens"],
                "blocks": blocks,
                "blocks_hit": r["blocks_hit"],
                "tokens_reused": r["tokens_reused"],
                "tokens_computed": r["tokens_computed"],
            }
        )
    radix_reused = run_requests(pair, mode="radix")["requests"][1]["tokens_reused"]
    return {
        "params": {"prefix_len": prefix_len, "suffix_len": suffix_len, "block_size": block_size},
        "clamped": clamped,
        "limits": INPUTS.ranges("prefix_len", "suffix_len"),
        "block_sizes": sorted(set(GRANULARITY_BLOCK_SIZES + [block_size])),
        "requests": out,
        "token_granular_reused": radix_reused,
    }


# ---------------------------------------------------------------------------- prefix_cases_figure

# Where a prefix cache shines (and where it cannot help): three requests per case,
# each a list of segments (label, kind, length key). kind "shared" segments are the
# same tokens in every request that has them; "own" segments are new tokens each time.
PREFIX_CASES = {
    "system_prompt": {
        "label": "System prompt",
        "what": "The same system prompt opens every request; only the user's question differs.",
        "requests": [[("system prompt", "shared", "shared"), ("question {k}", "own", "own")]] * 3,
    },
    "code_template": {
        "label": "Code template",
        "what": "Shared boilerplate, a different function body, then the same closing boilerplate. "
        "Only the opening is a prefix: the closing part comes after the difference, so it is computed again.",
        "requests": [
            [
                ("boilerplate", "shared", "shared"),
                ("function body {k}", "own", "own"),
                ("closing boilerplate", "shared_after", "own"),
            ]
        ]
        * 3,
    },
    "instructions_first": {
        "label": "Repeated instructions, first",
        "what": "The same instructions, then different data each time: the instructions are a prefix.",
        "requests": [[("instructions", "shared", "shared"), ("data {k}", "own", "own")]] * 3,
    },
    "instructions_last": {
        "label": "Repeated instructions, last",
        "what": "The same instructions after the data: the requests differ from their first token, "
        "so nothing is a shared prefix and nothing is reused.",
        "requests": [[("data {k}", "own", "own"), ("instructions", "shared_after", "shared")]] * 3,
    },
    "few_shot": {
        "label": "Few-shot examples",
        "what": "The same worked examples before each new query.",
        "requests": [[("examples", "shared", "shared"), ("query {k}", "own", "own")]] * 3,
    },
    "multi_turn": {
        "label": "Multi-turn chat",
        "what": "Each turn's prompt is the previous prompt plus the model's reply plus the new message: "
        "everything but the newest part is a prefix of the next request.",
        "requests": [
            [("system + turn 1", "shared", "shared")],
            [("system + turn 1", "shared", "shared"), ("reply 1", "turn", "own"), ("turn 2", "turn", "own")],
            [
                ("system + turn 1", "shared", "shared"),
                ("reply 1", "turn", "own"),
                ("turn 2", "turn", "own"),
                ("reply 2", "turn", "own"),
                ("turn 3", "turn", "own"),
            ],
        ],
    },
}


@takes(INPUTS)
@with_view(prefix_cases_view)
def prefix_cases_figure(
    case: str = "system_prompt", shared_len: int = 40, own_len: int = 12, block_size: int = 16
) -> PrefixCasesResult:
    """Three requests of one case, through a block cache (vLLM) and a token-granular one (SGLang).

    A segment's tokens are the same wherever the segment is shared (the same
    label in several requests of a multi-turn chat, or a "shared" part), new
    otherwise. Per request: its segments (start, end, label, kind, reused by the
    token-granular cache), its blocks with their status ("hit", "miss",
    "partial"), and both caches' reused/computed counts; totals over the three.
    """
    if case not in PREFIX_CASES:
        raise ValueError(f"case must be one of {sorted(PREFIX_CASES)}, got {short_repr(case)}")
    clamped: dict = {}
    p = INPUTS.check({"shared_len": shared_len, "own_len": own_len, "block_size": block_size}, clamped)
    shared_len, own_len, block_size = p.values()
    spec = PREFIX_CASES[case]
    lengths = {"shared": shared_len, "own": own_len}
    next_id = iter(range(1, 10**9))
    named: dict[str, list[int]] = {}  # a segment's tokens, by label, where it recurs
    blocks_cache = BlockPrefixCache(block_size)
    radix = RadixPrefixCache()
    out = []
    for k, segs in enumerate(spec["requests"], start=1):
        tokens: list[int] = []
        segments = []
        for label, kind, length_key in segs:
            text = label.format(k=k)
            if kind in ("shared", "shared_after", "turn") and text in named:
                ids = named[text]
            else:
                ids = [next(next_id) for _ in range(lengths[length_key])]
                if kind != "own":
                    named[text] = ids
            segments.append(
                {"label": text, "kind": kind, "start": len(tokens), "end": len(tokens) + len(ids), "tokens": len(ids)}
            )
            tokens += ids
        b = blocks_cache.process(tokens)
        r = radix.process(tokens)
        blocks = [
            {"start": i * block_size, "end": (i + 1) * block_size, "tokens": block_size, "status": st}
            for i, st in enumerate(b["block_status"])
        ]
        if b["partial_block_tokens"]:
            blocks.append(
                {
                    "start": b["full_blocks"] * block_size,
                    "end": len(tokens),
                    "tokens": b["partial_block_tokens"],
                    "status": "partial",
                }
            )
        for sgm in segments:
            sgm["reused"] = max(0, min(sgm["end"], r["tokens_reused"]) - sgm["start"])
            sgm["reuse"] = "all" if sgm["reused"] == sgm["tokens"] else "part" if sgm["reused"] else "none"
        out.append(
            {
                "n_tokens": len(tokens),
                "segments": segments,
                "blocks": blocks,
                "blocks_reused": b["tokens_reused"],
                "blocks_computed": b["tokens_computed"],
                "radix_reused": r["tokens_reused"],
                "radix_computed": r["tokens_computed"],
            }
        )
    total = sum(q["n_tokens"] for q in out)
    radix_reused = sum(q["radix_reused"] for q in out)
    blocks_reused = sum(q["blocks_reused"] for q in out)
    return {
        "params": {"case": case, "shared_len": shared_len, "own_len": own_len, "block_size": block_size},
        "clamped": clamped,
        "limits": INPUTS.ranges("shared_len", "own_len"),
        "cases": [{"key": key, "label": c["label"]} for key, c in PREFIX_CASES.items()],
        "block_sizes": GRANULARITY_BLOCK_SIZES,
        "what": spec["what"],
        "requests": out,
        "totals": {
            "tokens": total,
            "radix_reused": radix_reused,
            "blocks_reused": blocks_reused,
            "radix_share": radix_reused / total,
            "blocks_share": blocks_reused / total,
        },
    }
