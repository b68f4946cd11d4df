"""The "Disaggregated prefill and decode" page (disaggregated.md): the pd-transfer widget (the KV cache a
prefill worker hands to a decode worker, its transfer time on common links, colocated vs disaggregated time
to first token and decode steps) and the kv-routing widget (prefix-cache hit rate of round-robin,
least-loaded and prefix-aware routing across replicas, on a small seeded trace).

Every display string comes from here; the templates bind them (kvlab.kit.bind).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kvlab.inputs import SEED, Param, Spec, note_clamped, takes
from kvlab.memory.catalogue import get_gpu, model_architecture
from kvlab.memory.kv_bytes import VLLM_BLOCK_SIZE
from kvlab.reuse.disagg import (
    get_link,
    interconnects,
    kv_bytes_per_request,
    links,
    pd_compare,
    prefill_seconds,
    transfer_seconds,
)
from kvlab.reuse.routing import IN_FLIGHT, POLICY_LABELS, simulate_routing
from kvlab.widgets.pickers import gpu_options, model_groups, model_info
from kvlab.widgets.views import significant, with_view
from kvlab.wording import amount, human_bytes, plural, trim

if TYPE_CHECKING:
    from kvlab.widgets.disagg_types import KvRoutingFigureResult, KvRoutingView, PdTransferFigureResult, PdTransferView

# ---------------------------------------------------------------------------
# pd-transfer
# ---------------------------------------------------------------------------

# What pd_transfer_figure accepts (rounded, clamped with a notice); the page's controls offer the same.
PD_INPUTS = Spec(prompt_tokens=Param(16, 2**17), batch=Param(1, 256), output_tokens=Param(1, 8192))
CURVE_PROMPTS = [2**k for k in range(9, 18)]  # 512 .. 131,072 tokens


def seconds_text(s: float | None) -> str:
    """A duration with 3 significant figures in the unit that reads best.

    >>> seconds_text(0.0432), seconds_text(1.5), seconds_text(0.00081), seconds_text(None)
    ('43.2 ms', '1.5 s', '810 µs', '—')
    """
    if s is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:,.3g} {unit}"
    return f"{s * 1e9:,.3g} ns"


def _percent(x: float) -> str:
    return f"{100 * x:.1f}%" if x < 10 else f"{100 * x:,.0f}%"


def link_options() -> list[dict]:
    return [{"id": x["id"], "label": f"{x['name']} · {trim(x['gb_per_s'])} GB/s"} for x in links()]


LANE_CHUNKS_DRAWN = 24  # a colocated prefill of more chunks is drawn as its total prefill and its total decode steps


def _lanes(col: dict, dis: dict, pre: float, step: float, transfer: float, n_chunks: int, link: str) -> list[dict]:
    """The new request's wait for its first token, as two lanes on one time scale: colocated (its prompt in
    chunks, each riding a decode step of the running requests) and disaggregated (prefill on its own GPU, the
    cache over the link, one decode step)."""
    longest = max(col["ttft"], dis["ttft"])

    def seg(kind: str, seconds: float, what: str) -> dict:
        return {"kind": kind, "percent": round(100 * seconds / longest, 3), "title": f"{what}: {seconds_text(seconds)}"}

    chunk = pre / n_chunks
    if n_chunks <= LANE_CHUNKS_DRAWN:
        colocated = [
            part
            for k in range(n_chunks)
            for part in (
                seg("decode", step, "a decode step of the running requests"),
                seg("prefill", chunk, f"prefill chunk {k + 1} of {n_chunks}"),
            )
        ]
    else:
        colocated = [
            seg("decode", n_chunks * step, f"{n_chunks} decode steps of the running requests"),
            seg("prefill", pre, f"prefill, in {n_chunks} chunks"),
        ]
    lanes = [
        {
            "name": "Colocated",
            "text": f"{seconds_text(col['ttft'])} to the first token",
            "segments": colocated,
        },
        {
            "name": "Disaggregated",
            "text": f"{seconds_text(dis['ttft'])} to the first token",
            "segments": [
                seg("prefill", pre, "prefill on the prefill GPU"),
                seg("transfer", transfer, f"the KV cache over {link}"),
                seg("decode", step, "the first decode step"),
            ],
        },
    ]
    return [{**lane, "label": f"{lane['name']}: {lane['text']}"} for lane in lanes]


def pd_transfer_view(data: dict) -> PdTransferView:
    c, t, p = data["curve"], data["timing"], data["params"]
    prompt_tokens, batch, output_tokens = p["prompt_tokens"], p["batch"], p["output_tokens"]
    kv, link = data["kv"], data["link_info"]["name"]
    pre, step, transfer = data["prefill_seconds"], data["step_seconds"], data["transfer_seconds"]
    chunk = t["chunk"]

    def ms(ys: list) -> list[str]:
        return [f"{x:,} tokens: {significant(y)} ms" for x, y in zip(c["prompts"], ys)]

    if data["fits"]:
        col, dis = t["colocated"], t["disaggregated"]
        diff = dis["ttft"] - col["ttft"]
        if abs(diff) < 0.05 * col["ttft"]:
            ttft_words = "its first token comes about when it would colocated"
        elif diff < 0:
            ttft_words = f"its first token comes {seconds_text(-diff)} sooner than colocated"
        else:
            ttft_words = f"its first token comes {seconds_text(diff)} later than colocated"
        headline = (
            f"Over {link} the {kv['human']} cache of a prompt of {prompt_tokens:,} tokens takes "
            f"{seconds_text(transfer)} to move: {_percent(t['transfer_share'])} of its "
            f"{seconds_text(pre)} prefill. Disaggregated, {ttft_words} ({seconds_text(dis['ttft'])} against "
            f"{seconds_text(col['ttft'])}), and the {plural(batch, 'running request')} never see a decode step "
            f"stretched from {seconds_text(step)} to {seconds_text(col['step_during_prefill'])}."
        )
        rows = [
            {
                "label": "time to first token (the new request)",
                "colocated": seconds_text(col["ttft"]),
                "disaggregated": seconds_text(dis["ttft"]),
            },
            {
                "label": "a decode step while the prompt is prefilled",
                "colocated": seconds_text(col["step_during_prefill"]),
                "disaggregated": seconds_text(dis["step_during_prefill"]),
            },
            {"label": "a decode step otherwise", "colocated": seconds_text(step), "disaggregated": seconds_text(step)},
            {
                "label": "extra wait for each running request",
                "colocated": seconds_text(col["delay_per_running_request"]),
                "disaggregated": "none",
            },
            {
                "label": "KV cache sent between GPUs",
                "colocated": "none (it stays on the GPU)",
                "disaggregated": f"{kv['human']} in {seconds_text(transfer)}",
            },
        ]
        lanes = _lanes(col, dis, pre, step, transfer, t["n_chunks"], link)
        working = (
            f"prefill {seconds_text(pre)} (compute roofline); decode step {seconds_text(step)} for "
            f"{plural(batch, 'request')} at {prompt_tokens + output_tokens:,} tokens (efficiency "
            f"{t['efficiency']:.2f}, calibrated); colocated: {plural(t['n_chunks'], 'chunk')} of up to "
            f"{chunk['chunk']:,} tokens ({chunk['budget']:,}-token budget per step less {batch} decode tokens), "
            f"each adding {seconds_text(pre / t['n_chunks'])} to a step, so TTFT = {t['n_chunks']} x "
            f"({seconds_text(step)} + {seconds_text(pre / t['n_chunks'])}); disaggregated: TTFT = prefill + "
            f"transfer + one decode step"
        )
    else:
        headline = (
            f"The {kv['human']} cache of a prompt of {prompt_tokens:,} tokens takes {seconds_text(transfer)} "
            f"over {link}. Not timed on {data['gpu_name']}: {t['verdict']}."
        )
        rows, lanes = [], []
        working = f"Not timed: {t['verdict']}."
    return {
        "prompt": f"{prompt_tokens:,}",
        "transfer": seconds_text(transfer),
        "prefill": seconds_text(pre),
        "headline": headline,
        "rows": rows,
        "lanes": lanes,
        "working": working,
        "assumptions": [
            f"bytes per request: the prompt's whole KV cache, every layer's K and V in f16 (sliding layers hold "
            f"their window, linear layers their state): {kv['human']} for {prompt_tokens:,} tokens",
            "transfer: the bytes / the link's line rate in one direction, one NIC per GPU: a lower bound on the "
            "time (connectors such as NIXL or Mooncake add setup, and send layer by layer while prefill runs)",
            "colocated: vLLM's chunked prefill; each chunk's share of the prefill time is added to the decode step "
            f"it rides on ({chunk['how']}); the running requests' own prefills are not counted",
            "disaggregated: the decode GPU only decodes; receiving the cache by RDMA does not slow its steps",
            "one new request at a time: queueing when prompts arrive faster than a GPU prefills them is not modelled",
        ],
        "hover": {"prefill": ms(c["prefill_ms"]), "links": [ms(x["ms"]) for x in c["links"]]},
        "status": f"Computed in your browser by kvlab.pd_transfer_figure ({data['model_name']} on {data['gpu_name']}, "
        f"{link}).",
    }


@takes(PD_INPUTS)
@with_view(pd_transfer_view)
def pd_transfer_figure(
    model: str = "llama-3.1-8b",
    gpu: str = "h100-sxm",
    link: str = "roce-200",
    prompt_tokens: int = 8192,
    batch: int = 32,
    output_tokens: int = 512,
) -> PdTransferFigureResult:
    """The pd-transfer widget: the KV cache of one prompt, its transfer time on every link, and one new request
    arriving while `batch` others decode on `gpu`, colocated (chunked prefill) and disaggregated (over `link`).

    Numbers out of range are clamped and say so; an unknown model, GPU or link is a ValueError naming it."""
    clamped: dict = {}
    p = PD_INPUTS.check({"prompt_tokens": prompt_tokens, "batch": batch, "output_tokens": output_tokens}, clamped)
    prompt_tokens, batch, output_tokens = p.values()
    info = model_info(model)
    arch = model_architecture(info["id"])
    card = get_gpu(gpu)
    chosen = get_link(link)
    c = pd_compare(arch, card, chosen, prompt_tokens, batch, output_tokens)
    facts = interconnects()["disaggregation"]
    kv = amount(c["kv_bytes"])
    pre = c["prefill_seconds"]

    link_rows = []
    for x in links():
        t = transfer_seconds(c["kv_bytes"], x)
        link_rows.append(
            {
                "id": x["id"],
                "name": x["name"],
                "chosen": x["id"] == chosen["id"],
                "rate": f"{trim(x['gb_per_s'])} GB/s",
                "seconds": t,
                "time": seconds_text(t),
                "share": _percent(t / pre) if pre else "—",
                "ttft": seconds_text(pre + t + c["step_seconds"]) if pre else "—",
                "status": x["status"],
                "source": x["source"],
            }
        )

    curve_bytes = [kv_bytes_per_request(arch, p) for p in CURVE_PROMPTS]
    curve = {
        "prompts": CURVE_PROMPTS,
        "labels": [f"{p // 1024}k" if p >= 1024 else str(p) for p in CURVE_PROMPTS],
        "prefill_ms": [1000 * prefill_seconds(arch, card, p) for p in CURVE_PROMPTS],
        "links": [
            {"id": x["id"], "name": x["name"], "ms": [1000 * transfer_seconds(b, x) for b in curve_bytes]}
            for x in links()
        ],
    }
    curve_rows = [
        {
            "prompt": f"{p:,}",
            "kv": human_bytes(b),
            "prefill": seconds_text(curve["prefill_ms"][i] / 1000),
            "transfer": seconds_text(transfer_seconds(b, chosen)),
        }
        for i, (p, b) in enumerate(zip(CURVE_PROMPTS, curve_bytes))
    ]

    return {
        "params": {
            "model": info["id"],
            "gpu": card["id"],
            "link": chosen["id"],
            "prompt_tokens": prompt_tokens,
            "batch": batch,
            "output_tokens": output_tokens,
        },
        "clamped": clamped,
        "limits": PD_INPUTS.ranges(),
        "model_name": info["hf_id"],
        "gpu_name": card["name"],
        "link_info": {
            "name": chosen["name"],
            "rate": f"{trim(chosen['gb_per_s'])} GB/s",
            "how": chosen["how"],
            "note": chosen["note"],
            "status": chosen["status"],
            "source": chosen["source"],
            "read": chosen["read"],
        },
        "fits": c["fits"],
        "kv": kv,
        "kv_per_token": human_bytes(c["kv_bytes"] / prompt_tokens),
        "transfer_seconds": c["transfer_seconds"],
        "prefill_seconds": pre,
        "step_seconds": c["step_seconds"],
        "timing": {  # None where the model does not fit the GPU (not timed)
            k: c.get(k) for k in ("n_chunks", "chunk", "efficiency", "transfer_share", "colocated", "disaggregated")
        }
        | {"verdict": c["verdict"]},
        "link_rows": link_rows,
        "curve": curve,
        "curve_rows": curve_rows,
        "throughput": {
            "vllm": f"“{facts['vllm_throughput']['quote']}” {facts['vllm_throughput']['why']}",
            "vllm_source": facts["vllm_throughput"]["source"],
            "llmd": f"“{facts['llmd_throughput']['quote']}” {facts['llmd_throughput']['why']}",
            "llmd_source": facts["llmd_throughput"]["source"],
        },
        "options": {"models": model_groups(), "gpus": gpu_options(), "links": link_options()},
    }


# ---------------------------------------------------------------------------
# kv-routing
# ---------------------------------------------------------------------------

# What kv_routing_figure accepts (rounded, clamped with a notice); the page's controls offer the same.
ROUTING_INPUTS = Spec(
    replicas=Param(1, 16),
    groups=Param(1, 64),
    skew=Param(0.0, 3.0, step=0.1, digits=2),
    cache_blocks=Param(16, 4096),  # and at least one request's blocks
    requests=Param(100, 2000, step=100),
    seed=Param(*SEED),
    prefix_tokens=Param(0, 1024),  # then to whole vLLM blocks
    own_tokens=Param(VLLM_BLOCK_SIZE, 256),
)


def _to_block(name: str, value: int, clamped: dict) -> int:
    """`value` rounded to a whole number of vLLM blocks, recorded in `clamped` if that changed it."""
    used = VLLM_BLOCK_SIZE * round(value / VLLM_BLOCK_SIZE)
    if used != value:
        note_clamped(clamped, name, clamped.get(name, {}).get("requested", value), used)
    return used


def kv_routing_view(data: dict) -> KvRoutingView:
    c, p, sim = data["curve"], data["params"], data["sim"]
    by = {x["policy"]: x for x in data["policies"]}
    rr, pa, ceiling = by["round_robin"], by["prefix_aware"], data["ceiling"]
    more = pa["tokens_reused"] - rr["tokens_reused"]
    requests, replicas, skew, seed = p["requests"], p["replicas"], p["skew"], p["seed"]
    cache_blocks, block, request_blocks = p["cache_blocks"], data["block_tokens"], sim["request_blocks"]
    rule, in_flight = sim["rule"], sim["in_flight"]
    groups = ", ".join(f"{n:,}" for n in sim["trace_groups"][:12]) + (" …" if p["groups"] > 12 else "")
    return {
        "headline": (
            f"Prefix-aware routing reuses {_percent(pa['hit_rate'])} of the prompt tokens, round-robin "
            f"{_percent(rr['hit_rate'])} (the ceiling is {_percent(ceiling['hit_rate'])}): "
            f"{abs(more):,} prefill tokens {'fewer' if more >= 0 else 'more'} to compute. The price is balance: its "
            f"busiest replica gets {pa['busiest_share']:.2f}× an even share of the requests and holds up to "
            f"{pa['peak_in_flight']:,} at once, against {by['least_loaded']['peak_in_flight']:,} for least-loaded "
            f"({in_flight} on average)."
        ),
        "skew": trim(skew),
        "trace": (
            f"{requests:,} requests, each {p['prefix_tokens']:,} tokens of its group's prefix + {p['own_tokens']:,} of "
            f"its own ({request_blocks} blocks of {block}); requests per group, most popular first: {groups}"
        ),
        "cache": (
            f"{cache_blocks:,} blocks per replica ({cache_blocks * block:,} tokens): room for "
            f"{cache_blocks / max(request_blocks, 1):.1f} requests"
        ),
        "ceiling": {"hit_rate": _percent(ceiling["hit_rate"]), "saved": f"{ceiling['tokens_reused']:,}"},
        "ceiling_label": f"ceiling {_percent(ceiling['hit_rate'])}",
        "policies": [
            {
                "label": x["label"],
                "hit_rate": _percent(x["hit_rate"]),
                "computed": f"{x['tokens_computed']:,}",
                "saved": f"{x['tokens_reused']:,}",
                "busiest": f"{x['busiest_share']:.2f}×",
                "peak": f"{x['peak_in_flight']:,}",
            }
            for x in data["policies"]
        ],
        "replica_rows": [
            {"replica": f"replica {r + 1}", "counts": [f"{x['requests_per_replica'][r]:,}" for x in data["policies"]]}
            for r in range(replicas)
        ],
        "assumptions": [
            f"each replica: vLLM-style prefix cache of {cache_blocks:,} blocks of {block} tokens, LRU, "
            "a finished request's blocks freed tail first (kvlab.reuse.prefix_cache.BlockPrefixCache, checked block "
            "for block in kvlab's tests)",
            f"groups drawn with Zipf weights 1/(rank)^{trim(skew)}, seed {seed}; a request's own tokens never match",
            f"one request per time unit; each stays on its replica for an exponential time with mean "
            f"{in_flight} x {replicas} units (its decode), so {in_flight} run on each replica on average; load = "
            "requests held",
            f"prefix-aware: the SGLang router's cache_aware rule with its defaults (match at least "
            f"{trim(rule['cache_threshold'])} of the request, else least loaded; least loaded when the busiest "
            f"holds more than {rule['balance_abs_threshold']} requests over and {trim(rule['balance_rel_threshold'])}"
            "× the idlest), seeing each cache exactly as KV events let Dynamo and llm-d do",
            "a sampled trace with scaled-down caches: a real cluster's millions of requests and 10^5 blocks per GPU "
            "would take the browser minutes; the ceiling (every group's prefix cached after its first request) "
            "is a closed form",
        ],
        "hover": [
            [f"after {x:,} requests: {y:.1f}%" for x, y in zip(c["requests"], s["percent"])] for s in c["series"]
        ],
        "status": f"Simulated in your browser by kvlab.kv_routing_figure ({requests:,} requests, "
        f"{plural(replicas, 'replica')}, seed {seed}).",
    }


@takes(ROUTING_INPUTS)
@with_view(kv_routing_view)
def kv_routing_figure(
    replicas: int = 4,
    groups: int = 8,
    skew: float = 1.0,
    cache_blocks: int = 256,
    requests: int = 2000,
    seed: int = 0,
    prefix_tokens: int = 512,
    own_tokens: int = 128,
) -> KvRoutingFigureResult:
    """The kv-routing widget: one seeded trace of `requests` requests from `groups` prefix groups (Zipf `skew`)
    routed to `replicas` replicas with `cache_blocks` blocks of prefix cache each, by round-robin, least-loaded
    and prefix-aware routing; hit rate, prefill tokens saved and load balance per policy.

    Numbers out of range are clamped (token counts to whole 16-token blocks; the cache to at least one request)."""
    clamped: dict = {}
    spec = ROUTING_INPUTS
    p = spec.check({"replicas": replicas, "groups": groups, "skew": skew, "requests": requests, "seed": seed}, clamped)
    replicas, groups, skew, requests, seed = p.values()
    prefix_tokens = _to_block(
        "prefix_tokens", spec["prefix_tokens"].check("prefix_tokens", prefix_tokens, clamped), clamped
    )
    own_tokens = _to_block("own_tokens", spec["own_tokens"].check("own_tokens", own_tokens, clamped), clamped)
    request_blocks = (prefix_tokens + own_tokens) // VLLM_BLOCK_SIZE
    at_least_one_request = replace(spec["cache_blocks"], lo=max(spec["cache_blocks"].lo, request_blocks))
    cache_blocks = at_least_one_request.check("cache_blocks", cache_blocks, clamped)
    routers = interconnects()["routers"]
    sglang = next(r for r in routers if r["id"] == "sglang")
    rule = {k: sglang[k] for k in ("cache_threshold", "balance_abs_threshold", "balance_rel_threshold")}
    sim = simulate_routing(
        n_requests=requests,
        replicas=replicas,
        groups=groups,
        skew=skew,
        cache_blocks=cache_blocks,
        prefix_tokens=prefix_tokens,
        own_tokens=own_tokens,
        block_size=VLLM_BLOCK_SIZE,
        seed=seed,
        rule=rule,
    )
    ceiling = sim["ceiling"]
    policies = [
        {
            "policy": p["policy"],
            "label": p["label"],
            "hit_rate": p["hit_rate"],
            "tokens_computed": p["tokens_computed"],
            "tokens_reused": p["tokens_reused"],
            "busiest_share": p["busiest_share"],
            "peak_in_flight": p["peak_in_flight"],
            "requests_per_replica": p["requests_per_replica"],
        }
        for p in sim["policies"]
    ]
    return {
        "params": {
            "replicas": replicas,
            "groups": groups,
            "skew": skew,
            "cache_blocks": cache_blocks,
            "requests": requests,
            "seed": seed,
            "prefix_tokens": prefix_tokens,
            "own_tokens": own_tokens,
        },
        "clamped": clamped,
        "limits": ROUTING_INPUTS.ranges(),
        "block_tokens": VLLM_BLOCK_SIZE,
        "sim": {
            "request_blocks": request_blocks,
            "trace_groups": sim["trace_groups"],
            "in_flight": IN_FLIGHT,
            "rule": rule,
        },
        "ceiling": {"hit_rate": ceiling["hit_rate"], "tokens_reused": ceiling["tokens_reused"]},
        "policies": policies,
        "curve": {
            "requests": sim["curve_requests"],
            "series": [
                {"label": p["label"], "percent": [100 * x for x in p["cumulative_hit_rate"]]} for p in sim["policies"]
            ],
            "ceiling_percent": 100 * ceiling["hit_rate"],
        },
        "routers": [
            {"name": r["name"], "rule": r["rule"], "source": r["source"], "status": r["status"]} for r in routers
        ],
        "policy_labels": list(POLICY_LABELS.values()),
    }
