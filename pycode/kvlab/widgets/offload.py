"""The "KV offload tiers" page (kv-offload.md): the kv-offload widget.

The reader's model, GPU, request mix and tier sizes go through kvlab.inputs (clamped with a notice,
junk refused with the field's name); kvlab.reuse.offload computes how often each tier answers (the
Che approximation, checked against a small sampled trace when the browser can afford one) and
what a hit costs against prefilling again. The result keeps the numbers; kv_offload_view writes every
sentence, the status line and the chart's hovers from them, so the page's JavaScript only binds strings
and draws the chart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlab.inputs import Param, Spec, one_of, short_repr, takes
from kvlab.memory.catalogue import get_gpu, get_model
from kvlab.reuse.offload import (
    CURVE_TOKENS,
    POLICIES,
    TIERS,
    offload_data,
    offload_estimate,
)
from kvlab.widgets.pickers import model_groups
from kvlab.widgets.views import with_view
from kvlab.wording import human_bytes, percent

if TYPE_CHECKING:
    from kvlab.widgets.offload_types import OffloadFigureResult, OffloadView

# What kv_offload_figure accepts (whole numbers rounded; clamped with a notice); the page's controls offer the same.
INPUTS = Spec(
    prefix_tokens=Param(256, 1_048_576),
    n_prefixes=Param(1, 100_000),
    zipf=Param(0.0, 2.0, step=0.05, digits=2),
    requests_per_second=Param(0.0, 1000.0, step="any"),
    hbm_percent=Param(0, 100, step=5),
    dram_gib=Param(0, 8192, step="any"),
    nvme_tib=Param(0, 256, step="any"),
    nvme_drives=Param(1, 16),
    remote_tib=Param(0, 10_000, step="any"),
    prefill_percent=Param(5, 100, step=5),
)
TRACE_MAX_PREFIXES = 20_000  # above this the page gives the closed form only
TRACE_REQUESTS = 10_000  # a replay of this many requests stays well under 100 ms in CPython
TIER_NAMES = {"hbm": "GPU HBM", "dram": "CPU DRAM", "nvme": "Local NVMe", "remote": "Remote store"}
POLICY_LABELS = {
    "write-through": "write-through: every tier keeps what the GPU computes (as LMCache and HiCache's write_through do)",
    "evict-down": "evict-down: a tier holds only what fell out of the tier above",
}
POLICY_SHORT = {"write-through": "write-through (every tier keeps a copy)", "evict-down": "evict-down (victim cache)"}
CURVE_TICKS = [256, 1024, 4096, 16384, 65536, 262144, 1048576]


def seconds_text(s: float) -> str:
    """A duration for a reader: µs, ms or s, three significant digits.

    >>> seconds_text(0.1507), seconds_text(0.0170535), seconds_text(2.5e-5), seconds_text(12.3456)
    ('151 ms', '17.1 ms', '25 µs', '12.3 s')
    """
    if s >= 1:
        return f"{s:,.3g} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def tokens_text(n: int) -> str:
    return f"{n:,} tokens" if n != 1 else "1 token"


def tick_text(n: int) -> str:
    """256 → '256', 4096 → '4k', 1048576 → '1M'."""
    if n >= 2**20:
        return f"{n // 2**20}M"
    if n >= 1024:
        return f"{n // 1024}k"
    return str(n)


def _gpu_options() -> list[dict]:
    links = offload_data()["gpu_links"]
    return [{"id": g, "label": get_gpu(g)["name"]} for g in links]


def _link_options() -> list[dict]:
    return [{"id": "auto", "label": "the GPU's own (PCIe)"}] + [
        {"id": link["id"], "label": f"{link['name']}, {link['gb_s']:g} GB/s"} for link in offload_data()["links"]
    ]


def _crossover_text(n: int | None) -> str:
    if n is None:
        return f"never below {tokens_text(CURVE_TOKENS[-1] * 2)}"
    return f"from {tokens_text(n)}"


def kv_offload_view(data: dict) -> OffloadView:
    """Every sentence of the kv-offload widget, its status line and its chart's hovers, from the result's numbers."""
    n, t, params = data["numbers"], data["terms"], data["params"]
    c = data["curve"]
    series = c["series"]
    marks = [s for s in series if s["crossover"] is not None and s["crossover"] >= c["tokens"][0]]
    return {
        "prefix": tokens_text(params["prefix_tokens"]),
        "verdict": _verdict(n, t, params),
        "short": _short(n),
        "working": (
            f"One prefix: {tokens_text(params['prefix_tokens'])} × {human_bytes(n['prefix_bytes'] / params['prefix_tokens'])}"
            f" per token = {human_bytes(n['prefix_bytes'])} of KV. Prefilling it again: "
            f"{n['prefill_flops'] / 1e12:,.1f} TFLOP / ({n['peak_tflops']:g} TFLOPS × {params['prefill_percent']}%) = "
            f"{seconds_text(n['recompute_seconds'])}. Loading it from tier t: {human_bytes(n['prefix_bytes'])} / "
            "bandwidth(t) + latency(t)."
        ),
        "capacity": _capacity_text(n, t, params),
        "trace": _trace_text(n, params, data["traced"]),
        "links": (
            f"Reloads cross {t['host_link']} at {n['host_link_gb_s_used']:,.2f} GB/s on average: "
            f"{percent(n['host_link_busy'])} of its {n['host_link_gb_s']:g} GB/s"
            + (
                ". More than the link can carry: loads queue, and the times above are too low."
                if n["host_link_busy"] > 1
                else "."
            )
            + " Busy: "
            + ", ".join(f"{TIER_NAMES[k]} {percent(v)}" for k, v in n["tier_busy"].items())
            + "."
        ),
        "policy": POLICY_LABELS[params["policy"]],
        "saved": (
            f"{n['gpu_seconds_saved_per_hour']:,.0f} GPU-seconds of prefill saved per hour against HBM alone, "
            f"at {params['requests_per_second']:g} requests a second."
        ),
        "hover": {
            "recompute": [f"{x:,} tokens: {seconds_text(y)}" for x, y in zip(c["tokens"], c["recompute"])],
            "series": [[f"{x:,} tokens: {seconds_text(y)}" for x, y in zip(c["tokens"], s["load"])] for s in series],
            "crossover": [f"{TIER_NAMES[s['tier']]}: loading wins {_crossover_text(s['crossover'])}" for s in marks],
        },
        "status": f"Computed in your browser by kvlab.kv_offload_figure ({data['model_name']} on {data['gpu_name']}).",
    }


@takes(INPUTS)
@with_view(kv_offload_view)
def kv_offload_figure(
    model: str = "llama-3.1-8b",
    gpu: str = "h100-sxm",
    prefix_tokens: int = 8192,
    n_prefixes: int = 10_000,
    zipf: float = 0.8,
    requests_per_second: float = 5,
    hbm_percent: int = 50,
    dram_gib: float = 256,
    nvme_tib: float = 2,
    nvme_drives: int = 1,
    remote_tib: float = 5,
    link: str = "auto",
    nvme: str = "gen4",
    network: str = "100gbe",
    policy: str = "write-through",
    prefill_percent: int = 100,
) -> OffloadFigureResult:
    """Shared prefixes served from GPU HBM, CPU DRAM, local NVMe and a remote store: hit rates per
    tier, what a hit costs against prefilling again, the crossover length per tier, and the prefix
    time per request with and without offloading.

    `n_prefixes` prefixes of `prefix_tokens` tokens, Zipf popularity `zipf`, `requests_per_second`;
    HBM keeps `hbm_percent` of vLLM's KV space on `gpu` for them; `dram_gib`, `nvme_tib` (over
    `nvme_drives` drives of kind `nvme`) and `remote_tib` (over `network`) size the others (0: none).
    `link` is the CPU-GPU link ("auto": the GPU's own); `policy` "write-through" or "evict-down";
    prefill runs at `prefill_percent` of the GPU's dense BF16 peak. Numbers are clamped into
    INPUTS (what was clamped is under "clamped"); the choices must be among the options.

    >>> d = kv_offload_figure()
    >>> [t["hit"] for t in d["tiers"]], d["per_request"][2]["seconds"]
    (['6.6%', '18.2%', '32.4%', '22.6%'], '103 ms')
    """
    clamped: dict = {}
    p = INPUTS.check(
        {
            "prefix_tokens": prefix_tokens,
            "n_prefixes": n_prefixes,
            "zipf": zipf,
            "requests_per_second": requests_per_second,
            "hbm_percent": hbm_percent,
            "dram_gib": dram_gib,
            "nvme_tib": nvme_tib,
            "remote_tib": remote_tib,
            "nvme_drives": nvme_drives,
            "prefill_percent": prefill_percent,
        },
        clamped,
    )
    prefix_tokens, n_prefixes, zipf, hbm_percent = p["prefix_tokens"], p["n_prefixes"], p["zipf"], p["hbm_percent"]
    rate = p["requests_per_second"]
    if float(rate).is_integer():
        rate = int(rate)  # 5, not 5.0, in the page's number box
    sizes = {k: int(p[k]) if float(p[k]).is_integer() else p[k] for k in ("dram_gib", "nvme_tib", "remote_tib")}
    nvme_drives, prefill_percent = p["nvme_drives"], p["prefill_percent"]
    if not isinstance(model, str):
        raise ValueError(f"model must be a catalogue id, got {short_repr(model)}")
    model = get_model(model)["id"]
    gpu = one_of("gpu", gpu, list(offload_data()["gpu_links"]))
    link = one_of("link", link, [o["id"] for o in _link_options()])
    nvme = one_of("nvme", nvme, [d["id"] for d in offload_data()["nvme"]])
    network = one_of("network", network, [d["id"] for d in offload_data()["networks"]])
    policy = one_of("policy", policy, list(POLICIES))
    params = {
        "model": model,
        "gpu": gpu,
        "prefix_tokens": prefix_tokens,
        "n_prefixes": n_prefixes,
        "zipf": zipf,
        "requests_per_second": rate,
        "hbm_percent": hbm_percent,
        **sizes,
        "nvme_drives": nvme_drives,
        "link": link,
        "nvme": nvme,
        "network": network,
        "policy": policy,
        "prefill_percent": prefill_percent,
    }
    traced = n_prefixes <= TRACE_MAX_PREFIXES
    e = offload_estimate(
        model,
        gpu,
        prefix_tokens,
        n_prefixes,
        zipf,
        rate,
        hbm_percent / 100,
        sizes["dram_gib"],
        sizes["nvme_tib"],
        sizes["remote_tib"],
        link_id=None if link == "auto" else link,
        nvme_id=nvme,
        nvme_drives=nvme_drives,
        network_id=network,
        policy=policy,
        prefill_efficiency=prefill_percent / 100,
        trace_requests=TRACE_REQUESTS if traced else 0,
    )
    return _figure(params, clamped, e, traced)


def _figure(params: dict, clamped: dict, e: dict, traced: bool) -> OffloadFigureResult:
    recompute = e["recompute_seconds"]
    per = e["seconds_per_request"]
    tiers = []
    for t in e["tiers"]:
        offload = t["tier"] != "hbm"
        tiers.append(
            {
                "tier": t["tier"],
                "name": TIER_NAMES[t["tier"]],
                "size": human_bytes(t["bytes"]),
                "prefixes": f"{t['prefixes']:,}",
                "hit": percent(t["hit_rate"]),
                "trace": percent(t["trace_rate"]) if t["trace_rate"] is not None else "—",
                "via": t["via"],
                "bandwidth": f"{t['gb_s']:g} GB/s" if offload else "—",
                "load": seconds_text(t["load_seconds"]) if offload else "0 (no copy)",
                "versus": (
                    f"{recompute / t['load_seconds']:.1f}× faster than prefilling"
                    if t["loading_wins"]
                    else f"{t['load_seconds'] / recompute:.1f}× slower than prefilling"
                )
                if offload
                else "no copy",
                "wins": "load" if t["loading_wins"] else "recompute",
                "crossover": _crossover_text(t["crossover_tokens"]) if offload else "always",
            }
        )
    numbers = {
        "prefix_bytes": e["prefix_bytes"],
        "kv_space_bytes": e["kv_space_bytes"],
        "recompute_seconds": recompute,
        "miss_rate": e["miss_rate"],
        "hit_rates": [t["hit_rate"] for t in e["tiers"]],
        "trace_rates": e["trace"]["rates"] if e["trace"] else None,
        "trace_miss": e["trace"]["miss"] if e["trace"] else None,
        "load_seconds": [t["load_seconds"] for t in e["tiers"]],
        "crossover_tokens": [t["crossover_tokens"] for t in e["tiers"]],
        "seconds_no_cache": per["no_cache"],
        "seconds_hbm_only": per["hbm_only"],
        "seconds_with_tiers": per["with_tiers"],
        "seconds_best": per["best"],
        "gpu_seconds_saved_per_hour": e["gpu_seconds_saved_per_hour"],
        "host_link_busy": e["host_link_busy"],
        "host_link_gb_s": e["host_link"]["gb_s"],
        "host_link_gb_s_used": e["host_link_gb_s_used"],
        "tier_busy": e["tier_busy"],
        "hbm_hit_rate_alone": e["hbm_hit_rate_alone"],
        "tier_prefixes": [t["prefixes"] for t in e["tiers"]],
        "loading_wins": [t["loading_wins"] for t in e["tiers"]],
        "prefill_flops": e["prefill_flops"],
        "peak_tflops": e["peak_tflops"],
        "weights_bytes": e["weights_bytes"],
        "n_gpus": e["n_gpus"],
        "max_context": e["max_context"],
        "trace_requests": e["trace"]["n_requests"] if e["trace"] else None,
        "trace_seed": e["trace"]["seed"] if e["trace"] else None,
    }
    per_request = [
        {"label": label, "seconds": seconds_text(per[key]), "busy": _busy(e[busy])}
        for label, key, busy in (
            ("no prefix cache", "no_cache", "recompute_busy_no_cache"),
            ("HBM only", "hbm_only", "recompute_busy_hbm_only"),
            ("HBM + offload tiers (load every hit)", "with_tiers", "recompute_busy"),
            ("… loading only where it beats prefilling", "best", "recompute_busy_best"),
        )
    ]
    curve = e["curve"]
    series = []
    for i, t in enumerate(TIERS[1:], start=1):
        series.append(
            {
                "tier": t,
                "name": f"load from {TIER_NAMES[t]} ({e['paths'][t]['gb_s']:g} GB/s)",
                "load": curve["load"][t],
                "crossover": e["tiers"][i]["crossover_tokens"],
                "crossover_seconds": e["tiers"][i]["crossover_seconds"],
            }
        )
    curve_rows = [
        {
            "tokens": f"{n:,}",
            "recompute": seconds_text(curve["recompute"][j]),
            **{s["tier"]: seconds_text(s["load"][j]) for s in series},
        }
        for j, n in enumerate(curve["tokens"])
    ]
    host = e["host_link"]
    d = offload_data()
    link_src = e["gpu_link"]
    assumptions = [
        "Each prefix is cached whole and whole prefixes are evicted (LRU per tier; engines work in blocks or chunks "
        "of 16–256 tokens, so a partly evicted prefix still saves its start).",
        f"Requests pick prefix i with probability ∝ 1/i^{params['zipf']:g}, independently (Zipf popularity; real traffic "
        "also comes in bursts, which helps LRU).",
        f"{e['gpu']}'s host link: {link_src['link']} ({link_src['source']})"
        + (f"; unconfirmed: {link_src['unconfirmed']}" if link_src.get("unconfirmed") else "")
        + (f"; priced here with {host['name']} instead" if params["link"] != "auto" else "")
        + ".",
        f"{host['name']}: {host['gb_s']:g} GB/s each way ({host['note']}; {host['source']}).",
        *[f"{n['name']}: {n['read_gb_s']:g} GB/s read ({n['note']}; {n['source']})." for n in d["nvme"]],
        *[f"{n['name']}: {n['gb_s']:g} GB/s ({n['note']}; {n['source']})." for n in d["networks"]],
        "Bandwidths are nominal peaks and latencies order-of-magnitude assumptions (offload_tiers.json); a copy "
        "reaches less, and engines overlap loading layer by layer with compute, which hides part of it.",
        "Prefill time is the prefix's FLOPs (2 × active parameters per token, less the vocabulary's tables, + causal "
        "attention) over the dense BF16 "
        f"peak at {params['prefill_percent']}%: in a busy server the weights read each step serve the whole batch, so "
        "a prefix's own cost is its compute. Copies run on the GPU's copy engines, not its SMs.",
        "The remote store is this GPU's alone here; shared by many servers it also holds their prefixes, which "
        "raises the hit rate.",
    ]
    return {
        "params": params,
        "clamped": clamped,
        "limits": INPUTS.ranges(),
        "options": {
            "models": model_groups(),
            "gpus": _gpu_options(),
            "links": _link_options(),
            "nvmes": [{"id": n["id"], "label": f"{n['name']}, {n['read_gb_s']:g} GB/s"} for n in d["nvme"]],
            "networks": [{"id": n["id"], "label": f"{n['name']}, {n['gb_s']:g} GB/s"} for n in d["networks"]],
            "policies": [{"id": k, "label": POLICY_SHORT[k]} for k in POLICIES],
        },
        "model_name": e["model"],
        "gpu_name": _gpus(e),
        "prefix_size": human_bytes(e["prefix_bytes"]),
        "recompute": seconds_text(recompute),
        "miss": {"hit": percent(e["miss_rate"]), "trace": percent(e["trace"]["miss"]) if e["trace"] else "—"},
        "traced": traced,
        "numbers": numbers,
        "tiers": tiers,
        "per_request": per_request,
        "terms": {"gpu": e["gpu"], "weights_format": e["weights_format"], "host_link": host["name"]},
        "curve": {
            "tokens": list(curve["tokens"]),
            "recompute": curve["recompute"],
            "series": series,
            "ticks": {"values": CURVE_TICKS, "labels": [tick_text(n) for n in CURVE_TICKS]},
        },
        "curve_rows": curve_rows,
        "curve_names": [TIER_NAMES[t] for t in TIERS[1:]],
        "assumptions": assumptions,
    }


def _gpus(e: dict) -> str:
    return e["gpu"] if e["n_gpus"] == 1 else f"{e['n_gpus']} × {e['gpu']}"


def _capacity_text(n: dict, t: dict, params: dict) -> str:
    gpus = n["n_gpus"]
    where = (
        t["gpu"]
        if gpus == 1
        else f"Its {t['weights_format']} weights need {gpus} × {t['gpu']} (tensor parallel: each GPU holds and loads its "
        f"share of every prefix over its own link, and they prefill together). Together they"
    )
    return (
        f"{where} keep{'s' if gpus == 1 else ''} {human_bytes(n['kv_space_bytes'])} for the KV cache after "
        f"{human_bytes(n['weights_bytes'])} of {t['weights_format']} weights (vLLM, 0.9 of the memory); "
        f"{params['hbm_percent']}% of it holds cached prefixes, the rest the running requests."
    )


def _busy(gpus: float) -> str:
    return f"{gpus:,.2f} GPUs busy prefilling" if gpus else "no prefill"


def _short(n: dict) -> str:
    """The verdict in one line: the phone's result strip, in view while a slider moves."""
    return (
        f"HBM {percent(n['hbm_hit_rate_alone'])} + offload {percent(sum(n['hit_rates'][1:]))} of requests; "
        f"{seconds_text(n['seconds_with_tiers'])} a prefix (HBM alone {seconds_text(n['seconds_hbm_only'])})"
    )


def _verdict(n: dict, t: dict, params: dict) -> str:
    head = (
        f"HBM alone answers {percent(n['hbm_hit_rate_alone'])} of requests; the offload tiers answer "
        f"{percent(sum(n['hit_rates'][1:]))} more, and {percent(n['miss_rate'])} are prefilled again. A prefix costs "
        f"{seconds_text(n['seconds_with_tiers'])} on average instead of {seconds_text(n['seconds_hbm_only'])} with HBM "
        f"alone ({seconds_text(n['seconds_no_cache'])} with no cache)."
    )
    if n["max_context"] and params["prefix_tokens"] > n["max_context"]:
        head += (
            f" (A prefix of {tokens_text(params['prefix_tokens'])} is longer than the model's context of "
            f"{tokens_text(n['max_context'])}.)"
        )
    losers = [i for i in range(1, len(TIERS)) if n["tier_prefixes"][i] and not n["loading_wins"][i]]
    if losers:
        head += " " + " ".join(
            f"Loading from {TIER_NAMES[TIERS[i]]} ({seconds_text(n['load_seconds'][i])}) is slower than prefilling "
            f"again ({seconds_text(n['recompute_seconds'])}): it pays only {_crossover_text(n['crossover_tokens'][i])}."
            for i in losers
        )
    return head


def _trace_text(n: dict, params: dict, traced: bool) -> str:
    if not traced:
        return (
            f"{params['n_prefixes']:,} prefixes is more than this page replays in your browser: the hit rates are "
            f"the closed form alone (kvlab's tests check it against traces of up to 200,000 requests)."
        )
    shares = ", ".join(
        f"{TIER_NAMES[tier]} {percent(n['trace_rates'][i])} (closed form {percent(n['hit_rates'][i])})"
        for i, tier in enumerate(TIERS)
    )
    return (
        f"Checked against a sampled trace: {n['trace_requests']:,} requests (seed {n['trace_seed']}) replayed through "
        f"the same LRU tiers, started from their steady state, give {shares}, miss {percent(n['trace_miss'])}."
    )
