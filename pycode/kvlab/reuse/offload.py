"""KV offload tiers: GPU HBM -> CPU DRAM -> local NVMe -> a remote store.

A server that keeps prefixes' KV caches beyond the GPU (vLLM's offloading connector or LMCache,
SGLang's HiCache, a Mooncake store) answers a repeated prefix from the first tier that still holds
it, and pays for the copy back into HBM; a prefix found nowhere is prefilled again. This module
says how often each tier answers and what an answer costs.

The workload: `n` distinct shared prefixes (documents, system prompts) of equal length, requested
independently with Zipf popularity p_i ∝ 1 / i^s (the independent reference model). Each tier is an
LRU cache of whole prefixes. Two idealised policies:

- "write-through": every tier keeps every prefix it sees (LMCache and HiCache write what the GPU
  computes down to the host and storage tiers); tier t holds the C_t most recently used prefixes,
  so a request is answered by tier t with probability H(C_t) - max over faster tiers of H(C_j).
- "evict-down": a tier holds only what fell out of the tier above (a victim cache); a hit moves the
  prefix back to the GPU. The tiers together are then one LRU list of C_1 + ... + C_T prefixes,
  tier t holding positions C_1 + ... + C_(t-1) + 1 to C_1 + ... + C_t.

H(C), the hit ratio of an LRU cache of C items, comes from the Che approximation (Che, Tung and
Wang, IEEE JSAC 2002): an item stays in the cache for a characteristic time T(C) after its last
request, with sum_i (1 - exp(-p_i T)) = C, so H(C) = sum_i p_i (1 - exp(-p_i T)). Cheap (a few
numpy passes) and good for Zipf popularity; `sampled_trace` replays the same LRU tiers request by
request, from the stationary order, to check it.

What a hit costs: the prefix's KV bytes over the slowest link on the way back into HBM, plus a
latency. What a miss costs: prefilling the prefix again, its FLOPs (kvlab.memory.serving's
prefill_flops) over the GPU's dense BF16 peak times an efficiency.

>>> p = zipf_popularity(1000, 0.8)
>>> round(float(p.sum()), 12), bool(p[0] > p[1])
(1.0, True)
>>> round(lru_hit_rate(p, 100), 3)
0.378
"""

from __future__ import annotations

import json
from collections import OrderedDict
from functools import cache

import numpy as np

from kvlab.inputs import finite_number, one_of, short_repr
from kvlab.dtypes import KV_TYPES, kv_type, row_bytes
from kvlab.memory.architecture import CHUNKED, FULL, SLIDING, Architecture
from kvlab.memory.catalogue import DATA_DIR, get_gpu, get_model, gpu_memory_bytes, model_architecture
from kvlab.memory.kv_bytes import VLLM_GPU_MEMORY_UTILIZATION, kv_bytes_per_token, kv_cache_bytes, vllm_capacity
from kvlab.memory.serving import prefill_flops
from kvlab.memory.verdict import TENSOR_PARALLEL
from kvlab.memory.weights import model_weights_bytes, weight_format

POLICIES = ("write-through", "evict-down")
TIERS = ("hbm", "dram", "nvme", "remote")
MAX_CROSSOVER_TOKENS = 2**21  # the longest prefix the crossover search tries


@cache
def offload_data() -> dict:
    """kvlab/data/offload_tiers.json: host links, NVMe drives and networks, each with its source."""
    return json.loads((DATA_DIR / "offload_tiers.json").read_text(encoding="utf-8"))


def _by_id(kind: str, name: str, value: str) -> dict:
    items = offload_data()[kind]
    for item in items:
        if item["id"] == value:
            return dict(item)
    raise ValueError(f"{name} must be one of {[i['id'] for i in items]}, got {short_repr(value)}")


def link(link_id: str) -> dict:
    """A CPU-GPU link by id (pcie4, pcie5, nvlink-c2c)."""
    return _by_id("links", "link", link_id)


def nvme_drive(nvme_id: str) -> dict:
    """An NVMe drive class by id (gen4, gen5)."""
    return _by_id("nvme", "nvme", nvme_id)


def network(network_id: str) -> dict:
    """A network by id (100gbe, 400g-rdma)."""
    return _by_id("networks", "network", network_id)


def gpu_link(gpu_id: str) -> dict:
    """The host link a catalogue GPU ships with: {"link", "source", maybe "unconfirmed"}."""
    links = offload_data()["gpu_links"]
    if gpu_id not in links:
        raise ValueError(
            f"gpu {short_repr(gpu_id)} has no host link in offload_tiers.json (one of {', '.join(links)}); "
            + offload_data()["gpu_links_note"]
        )
    return dict(links[gpu_id])


# ---------------------------------------------------------------------------
# hit rates: the Che approximation, and a sampled trace to check it
# ---------------------------------------------------------------------------


def zipf_popularity(n: int, s: float) -> np.ndarray:
    """Request probabilities of `n` prefixes, p_i ∝ 1 / i^s (s = 0: all equally popular), most popular first."""
    n = finite_number("n_prefixes", n, minimum=1, integer=True)
    s = finite_number("zipf", s, minimum=0, maximum=5)
    weights = np.arange(1, n + 1, dtype=float) ** -s
    return weights / weights.sum()


def characteristic_time(p: np.ndarray, capacity: float) -> float:
    """Che's T: sum_i (1 - exp(-p_i T)) = capacity (in requests); inf when every item fits.

    The left side is increasing and concave in T and at most T, so Newton's method started at
    T = capacity approaches the root from below without overshooting.
    """
    n = len(p)
    if capacity >= n:
        return float("inf")
    if capacity <= 0:
        return 0.0
    t = float(capacity)
    for _ in range(200):
        e = np.exp(-p * t)
        f = n - e.sum() - capacity
        step = -f / float((p * e).sum())
        t += step
        if abs(step) <= 1e-10 * t:
            break
    return t


def lru_hit_rate(p: np.ndarray, capacity: float) -> float:
    """Che's approximation of an LRU cache's hit ratio: sum_i p_i (1 - exp(-p_i T(capacity)))."""
    t = characteristic_time(p, capacity)
    if t == float("inf"):
        return 1.0
    return float((p * -np.expm1(-p * t)).sum())


def tier_hit_rates(p: np.ndarray, capacities: list[int], policy: str) -> list[float]:
    """Probability that a request is answered by each tier (fastest first), from Che's H(C).

    The miss probability is 1 - the sum. `capacities` are in prefixes.
    """
    policy = one_of("policy", policy, list(POLICIES))
    rates, best = [], 0.0
    total = 0
    for c in capacities:
        total += c
        h = lru_hit_rate(p, total if policy == "evict-down" else c)
        rates.append(max(0.0, h - best))
        best = max(best, h)
    return rates


def replay(requests: list[int], capacities: list[int], policy: str, order: list[int] | None = None) -> list[int]:
    """Send `requests` (prefix ids) through LRU tiers of `capacities` prefixes; how many each tier answered.

    `order`: prefixes already cached, most recently used first (filled into the tiers as the
    policy would hold them); none by default (the tiers start empty).
    """
    policy = one_of("policy", policy, list(POLICIES))
    order = list(order or [])
    tiers: list[OrderedDict] = []  # each: least recently used first
    start = 0
    for c in capacities:
        if policy == "evict-down":
            held, start = order[start : start + c], start + c
        else:
            held = order[:c]
        tiers.append(OrderedDict((x, None) for x in reversed(held)))
    answered = [0] * len(capacities)
    for x in requests:
        hit = None
        for t, tier in enumerate(tiers):
            if x in tier:
                hit = t
                answered[t] += 1
                break
        if policy == "evict-down":
            if hit is not None:
                del tiers[hit][x]
            tiers[0][x] = None
            for t, tier in enumerate(tiers):
                while len(tier) > capacities[t]:
                    y = tier.popitem(last=False)[0]
                    if t + 1 < len(tiers):
                        tiers[t + 1][y] = None
        else:
            for t, tier in enumerate(tiers):
                if x in tier:
                    tier.move_to_end(x)
                elif capacities[t] > 0:
                    tier[x] = None
                    if len(tier) > capacities[t]:
                        tier.popitem(last=False)
    return answered


def sampled_trace(p: np.ndarray, capacities: list[int], policy: str, n_requests: int = 20_000, seed: int = 0) -> dict:
    """Replay `n_requests` requests drawn from `p` through LRU tiers; the share each tier answers.

    The tiers start in the stationary LRU order (sort the items by an Exp(p_i) time since their last
    request: under independent requests that is the order an LRU list settles into), so no warm-up
    is needed and cold misses do not bias the count.
    """
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.exponential(size=len(p)) / p).tolist()  # most recently used first
    requests = rng.choice(len(p), size=n_requests, p=p).tolist()
    answered = replay(requests, capacities, policy, order)
    return {
        "n_requests": n_requests,
        "seed": seed,
        "rates": [a / n_requests for a in answered],
        "miss": 1 - sum(answered) / n_requests,
    }


# ---------------------------------------------------------------------------
# what a hit and a miss cost
# ---------------------------------------------------------------------------


def prefix_bytes(arch: Architecture, tokens: int, kv: str = "f16") -> int:
    """KV bytes of one prefix of `tokens` tokens (sliding layers hold at most their window)."""
    return int(kv_cache_bytes(arch, tokens, kv, state_type="bf16")["total_bytes"])


def prefix_bytes_function(arch: Architecture, kv: str = "f16"):
    """prefix_bytes as a function of the length, worked out once: full layers grow with every token,
    sliding and chunked layers up to their window, recurrent state not at all (as kv_cache_bytes
    counts them). Takes an int or an array of lengths."""
    kv = kv_type(kv)
    full = kv_bytes_per_token(arch, kv)["by_kind"][FULL]["bytes_per_token"]
    capped = [
        (
            row_bytes(kv, layer.k_values, layer.kv_heads)
            + (row_bytes(kv, layer.v_values, layer.kv_heads) if layer.v_values else 0),
            layer.window,
        )
        for layer in arch.layers
        if layer.kind in (SLIDING, CHUNKED)
    ]
    state = sum(layer.state_values for layer in arch.state_layers) * KV_TYPES["bf16"][1]

    def nbytes(tokens):
        n = np.asarray(tokens, dtype=np.int64)
        total = full * n + state
        for per, window in capped:
            total = total + per * np.minimum(n, window)
        return total

    return nbytes


def recompute_seconds(arch: Architecture, tokens: int, card: dict, efficiency: float = 1.0) -> float:
    """Prefilling `tokens` tokens again: prefill FLOPs / (dense BF16 peak x efficiency)."""
    peak = card.get("bf16_dense_tflops")
    if not peak:
        raise ValueError(f"gpu {card.get('id')!r} has no peak compute in the catalogue: cannot time a prefill")
    return prefill_flops(arch, tokens) / (peak * 1e12 * efficiency)


def load_seconds(nbytes: float, gb_s: float, latency_us: float) -> float:
    """Copying `nbytes` back into HBM at `gb_s` GB/s, after `latency_us` microseconds."""
    return nbytes / (gb_s * 1e9) + latency_us * 1e-6


def crossover_tokens(
    arch: Architecture, card: dict, gb_s: float, latency_us: float, efficiency: float = 1.0, kv: str = "f16"
) -> int | None:
    """The shortest prefix (tokens) from which loading over `gb_s` beats prefilling again; None if
    none up to MAX_CROSSOVER_TOKENS.

    recompute - load is convex in the length (attention grows faster than the bytes) and negative
    at 0 (the latency), so it changes sign at most once: a doubling search, then bisection.
    """

    nbytes = prefix_bytes_function(arch, kv)

    def wins(n: int) -> bool:
        return load_seconds(int(nbytes(n)), gb_s, latency_us) < recompute_seconds(arch, n, card, efficiency)

    hi = 1
    while not wins(hi):
        if hi >= MAX_CROSSOVER_TOKENS:
            return None
        hi *= 2
    lo = hi // 2  # loses (or 0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if wins(mid):
            hi = mid
        else:
            lo = mid
    return hi


# ---------------------------------------------------------------------------
# the whole picture for one workload
# ---------------------------------------------------------------------------

GIB = 2**30
TIB = 2**40
CURVE_TOKENS = [2**k for k in range(8, 21)]  # 256 ... 1,048,576 tokens


def _tier_paths(card_link: dict, nvme: dict, drives: int, net: dict) -> dict:
    """Each offload tier's way back into HBM: the slowest link on it, and its latency."""
    nvme_gb_s = nvme["read_gb_s"] * drives
    return {
        "dram": {"gb_s": card_link["gb_s"], "latency_us": card_link["latency_us"], "via": card_link["name"]},
        "nvme": {
            "gb_s": min(nvme_gb_s, card_link["gb_s"]),
            "latency_us": nvme["latency_us"],
            "via": f"{drives} x {nvme['name']} ({nvme_gb_s:g} GB/s) then {card_link['name']}",
        },
        "remote": {
            "gb_s": min(net["gb_s"], card_link["gb_s"]),
            "latency_us": net["latency_us"],
            "via": f"{net['name']} then {card_link['name']}",
        },
    }


def offload_estimate(
    model,
    gpu: str,
    prefix_tokens: int,
    n_prefixes: int,
    zipf: float,
    requests_per_second: float,
    hbm_share: float,
    dram_gib: float,
    nvme_tib: float,
    remote_tib: float,
    link_id: str | None = None,
    nvme_id: str = "gen4",
    nvme_drives: int = 1,
    network_id: str = "100gbe",
    policy: str = "write-through",
    prefill_efficiency: float = 1.0,
    trace_requests: int = 0,
    seed: int = 0,
) -> dict:
    """Hit rates per tier and what each hit saves, for `n_prefixes` shared prefixes of `prefix_tokens`.

    The model runs on the fewest `gpu`s (1, 2, 4 or 8, tensor parallel) whose memory holds its weights
    (in the catalogue's format) and leaves room for a KV cache; each GPU holds its share of every
    prefix and loads it over its own host link, so the group prefills and loads n times as fast.
    HBM's tier is `hbm_share` of what vLLM leaves for the KV cache after the weights (the rest holds
    the running requests); the others are the sizes given (0: no such tier). The link back into HBM
    is the GPU's own unless `link_id` names another. `trace_requests` > 0 also replays that many
    requests through the tiers (`sampled_trace`) to check the closed form.
    """
    arch = model_architecture(model)
    card = get_gpu(gpu)
    prefix_tokens = finite_number("prefix_tokens", prefix_tokens, minimum=1, maximum=MAX_CROSSOVER_TOKENS, integer=True)
    rate = finite_number("requests_per_second", requests_per_second, minimum=0)
    hbm_share = finite_number("hbm_share", hbm_share, minimum=0, maximum=1)
    sizes = {
        "dram": finite_number("dram_gib", dram_gib, minimum=0) * GIB,
        "nvme": finite_number("nvme_tib", nvme_tib, minimum=0) * TIB,
        "remote": finite_number("remote_tib", remote_tib, minimum=0) * TIB,
    }
    efficiency = finite_number("prefill_efficiency", prefill_efficiency, minimum=0.01, maximum=1)
    nvme_drives = finite_number("nvme_drives", nvme_drives, minimum=1, maximum=64, integer=True)
    own = gpu_link(card["id"])
    one_link = link(link_id or own["link"])
    p = zipf_popularity(n_prefixes, zipf)

    fmt = weight_format(get_model(model)["weights_dtype"]) if isinstance(model, str) else "BF16"
    weights = model_weights_bytes(arch, fmt)["bytes"]
    for n_gpus in TENSOR_PARALLEL:
        per_gpu = vllm_capacity(arch, gpu_memory_bytes(card), weights // n_gpus, prefix_tokens)["kv_available_bytes"]
        if per_gpu > 0:
            break
    else:
        raise ValueError(
            f"gpu {card['id']!r} has no room for a KV cache: {arch.name}'s {fmt} weights "
            f"({weights / GIB:,.1f} GiB) fill vLLM's {VLLM_GPU_MEMORY_UTILIZATION:g} of even "
            f"{TENSOR_PARALLEL[-1]} x {gpu_memory_bytes(card) / GIB:,.0f} GiB; pick a larger GPU or a smaller model"
        )
    kv_space = n_gpus * per_gpu
    group = {**card, "bf16_dense_tflops": card["bf16_dense_tflops"] * n_gpus}  # prefill split n ways
    host = {**one_link, "gb_s": one_link["gb_s"] * n_gpus}  # each GPU loads its share over its own link
    if n_gpus > 1:
        host["name"] = f"{n_gpus} x {one_link['name']}"
    paths = _tier_paths(host, nvme_drive(nvme_id), nvme_drives, network(network_id))
    sizes = {"hbm": hbm_share * kv_space, **sizes}
    one = prefix_bytes(arch, prefix_tokens)
    capacities = [int(sizes[t] // one) for t in TIERS]
    rates = tier_hit_rates(p, capacities, policy)
    trace = sampled_trace(p, capacities, policy, trace_requests, seed) if trace_requests else None
    recompute = recompute_seconds(arch, prefix_tokens, group, efficiency)

    tiers = []
    for i, t in enumerate(TIERS):
        path = paths.get(t)
        load = 0.0 if path is None else load_seconds(one, path["gb_s"], path["latency_us"])
        cross = None if path is None else crossover_tokens(arch, group, path["gb_s"], path["latency_us"], efficiency)
        tiers.append(
            {
                "tier": t,
                "bytes": sizes[t],
                "prefixes": capacities[i],
                "hit_rate": rates[i],
                "trace_rate": None if trace is None else trace["rates"][i],
                "gb_s": None if path is None else path["gb_s"],
                "latency_us": None if path is None else path["latency_us"],
                "via": "already in HBM" if path is None else path["via"],
                "load_seconds": load,
                "crossover_tokens": cross,
                "crossover_seconds": None if cross is None else recompute_seconds(arch, cross, group, efficiency),
                "loading_wins": load < recompute,
            }
        )
    miss = max(0.0, 1.0 - sum(rates))
    hbm = tiers[0]["hit_rate"]
    with_tiers = sum(r["hit_rate"] * r["load_seconds"] for r in tiers) + miss * recompute
    best = sum(r["hit_rate"] * min(r["load_seconds"], recompute) for r in tiers) + miss * recompute
    hbm_only = (1 - lru_hit_rate(p, capacities[0])) * recompute
    offloaded = tiers[1:]
    host_bytes_per_s = rate * one * sum(r["hit_rate"] for r in offloaded)
    curve = {
        "tokens": CURVE_TOKENS,
        "recompute": [recompute_seconds(arch, n, group, efficiency) for n in CURVE_TOKENS],
        "load": {
            t: [
                load_seconds(int(b), paths[t]["gb_s"], paths[t]["latency_us"])
                for b in prefix_bytes_function(arch)(CURVE_TOKENS)
            ]
            for t in TIERS[1:]
        },
    }
    return {
        "model": arch.name,
        "gpu": card["name"],
        "n_gpus": n_gpus,
        "weights_format": fmt,
        "max_context": arch.max_position_embeddings,
        "policy": policy,
        "prefix_tokens": prefix_tokens,
        "prefix_bytes": one,
        "weights_bytes": weights,
        "kv_space_bytes": kv_space,
        "host_link": host,
        "gpu_link": own,
        "paths": paths,
        "tiers": tiers,
        "miss_rate": miss,
        "trace": trace,
        "recompute_seconds": recompute,
        "prefill_flops": prefill_flops(arch, prefix_tokens),
        "peak_tflops": group["bf16_dense_tflops"],
        "prefill_efficiency": efficiency,
        "seconds_per_request": {
            "no_cache": recompute,
            "hbm_only": hbm_only,
            "with_tiers": with_tiers,
            "best": best,
        },
        "hbm_hit_rate_alone": 1 - hbm_only / recompute if recompute else 0.0,
        "gpu_seconds_saved_per_hour": n_gpus * rate * 3600 * (hbm_only - miss * recompute),
        # GPUs kept busy prefilling the prefixes that are not loaded (all n of the group for each)
        "recompute_busy": n_gpus * rate * miss * recompute,
        "recompute_busy_hbm_only": n_gpus * rate * hbm_only,
        "recompute_busy_no_cache": n_gpus * rate * recompute,
        "recompute_busy_best": n_gpus
        * rate
        * recompute
        * (miss + sum(r["hit_rate"] for r in tiers if not r["loading_wins"])),
        "host_link_gb_s_used": host_bytes_per_s / 1e9,
        "host_link_busy": host_bytes_per_s / (host["gb_s"] * 1e9),
        "tier_busy": {t["tier"]: rate * t["hit_rate"] * one / (t["gb_s"] * 1e9) for t in offloaded},
        "hbm_hit_share": hbm,
        "curve": curve,
    }
