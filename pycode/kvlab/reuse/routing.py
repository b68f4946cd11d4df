"""KV-cache-aware routing across engine replicas, simulated on a small seeded trace.

R replicas each keep a prefix cache of C blocks (vLLM's automatic prefix caching:
chained block hashes, LRU eviction, a finished request's blocks freed tail first;
`kvlab.reuse.prefix_cache.BlockPrefixCache` is the reference, and the tests check
this faster version against it block for block). Requests come from a few prefix
groups (a system prompt, a shared document, one chat session's history): each is
its group's prefix plus tokens of its own. A router sends each request to a replica:

- `round_robin`: replica i mod R, blind to load and caches.
- `least_loaded`: the replica with the fewest requests waiting or running.
- `prefix_aware`: the SGLang router's cache_aware rule (the Dynamo KV router and
  llm-d's prefix-cache scorer do the same in spirit): the replica holding the
  longest cached prefix of the request, when that covers at least
  `cache_threshold` of it, else the least loaded; and the least loaded whenever the
  busiest replica is more than `balance_abs` requests and `balance_rel` times above
  the idlest. The router here sees each cache exactly (as KV events give Dynamo
  and llm-d's precise mode); SGLang's own router keeps an approximate tree.

Load: requests arrive one per time unit and each stays on its replica for its
decode, which no cache hit shortens: a time drawn from an exponential distribution
with mean IN_FLIGHT x R units (answers differ in length), so that on average
IN_FLIGHT requests run on each replica. A replica's load is the number of requests
it holds, as the SGLang router counts it.

A real cluster sees millions of requests and caches of 10^5 blocks per GPU; this is
a sampled trace of a few thousand with the caches scaled down with it, small enough
to run in the reader's browser in a blink. The ceiling (every group's prefix cached
after its first request, anywhere) is a closed form.

>>> r = simulate_routing(n_requests=200, replicas=2, groups=4, seed=1)
>>> [p["policy"] for p in r["policies"]]
['round_robin', 'least_loaded', 'prefix_aware']
>>> all(0 <= p["hit_rate"] <= r["ceiling"]["hit_rate"] for p in r["policies"])
True
"""

from __future__ import annotations

from collections import OrderedDict
from heapq import heappop, heappush

import numpy as np

POLICIES = ("round_robin", "least_loaded", "prefix_aware")
POLICY_LABELS = {
    "round_robin": "round-robin",
    "least_loaded": "least loaded",
    "prefix_aware": "prefix-aware (longest match)",
}
IN_FLIGHT = 8  # requests running on each replica on average (an assumption of the simulation)
CURVE_POINTS = 40  # points of the cumulative hit-rate curve


def group_weights(groups: int, skew: float) -> np.ndarray:
    """Zipf weights of the prefix groups: group k (from 0) is picked with probability ~ 1 / (k + 1)^skew.

    >>> group_weights(3, 0.0).tolist()
    [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]
    >>> group_weights(3, 1.0).round(3).tolist()
    [0.545, 0.273, 0.182]
    """
    w = 1.0 / np.arange(1, groups + 1, dtype=float) ** skew
    return w / w.sum()


def request_trace(n_requests: int, groups: int, skew: float, replicas: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The trace, from a seeded generator: each request's prefix group (drawn with `group_weights`) and how
    long it stays on its replica (exponential, mean IN_FLIGHT x replicas arrival gaps)."""
    rng = np.random.default_rng(seed)
    # the generator gives int64; bincount wants the platform's integer (int32 in Pyodide)
    group = rng.choice(groups, size=n_requests, p=group_weights(groups, skew)).astype(np.intp)
    hold = rng.exponential(IN_FLIGHT * replicas, size=n_requests)
    return group, hold


class BlockLRU:
    """One replica's prefix cache: `capacity` blocks, LRU, as vLLM frees them (tail first).

    Keys are block ids: a group's prefix block j is `group * prefix_blocks + j` (equal ids mean equal
    prefixes, as chained hashes do); a request's own blocks get fresh negative ids (they never match).
    Needs capacity >= the blocks of one request, so a request's own blocks are never evicted under it.
    """

    def __init__(self, capacity: int, prefix_blocks: int):
        self.capacity = capacity
        self.prefix_blocks = prefix_blocks
        self.blocks: OrderedDict[int, None] = OrderedDict()  # first = least recently used
        # per group, its prefix blocks cached: always a leading run (the head is freed last, so the tail
        # goes first), so evicting block j of a group cuts its run to j
        self.cached: dict[int, int] = {}

    def match(self, group: int) -> int:
        """Leading prefix blocks of `group` cached."""
        return self.cached.get(group, 0)

    def process(self, group: int, own_ids: list[int]) -> int:
        """Prefill one request (its group's prefix, then its own blocks); returns the prefix blocks hit.

        As vLLM does it: the hit blocks are in use (never evicted under the request), misses take the least
        recently used blocks' places, and the finished request's blocks are freed tail first, so they end
        up most recently used in the order: own blocks (last first), then the prefix, its head last.
        """
        blocks, n, cached = self.blocks, self.prefix_blocks, self.cached
        base = group * n
        hit = self.match(group)
        for key in range(base, base + hit):  # in use: out of the eviction's way (put back below)
            del blocks[key]
        for _ in range(len(blocks) + n + len(own_ids) - self.capacity):
            victim = blocks.popitem(last=False)[0]
            if victim >= 0:  # a prefix block: its group's run now ends before it
                g, j = divmod(victim, n)
                cached[g] = min(cached[g], j)
        blocks.update(dict.fromkeys(own_ids[::-1] + list(range(base + n - 1, base - 1, -1))))
        if n:
            cached[group] = n
        return hit


def _route(policy, i, loads, caches, group, request_blocks, rule):
    """The replica `policy` picks for request `i` of `group`, and the prefix blocks it would hit there."""
    if policy == "round_robin":
        r = i % len(loads)
        return r
    least = min(range(len(loads)), key=lambda k: loads[k])
    if policy == "least_loaded":
        return least
    hi, lo = max(loads), loads[least]
    if hi - lo > rule["balance_abs_threshold"] and hi > rule["balance_rel_threshold"] * lo:
        return least
    matches = [c.match(group) for c in caches]
    best = max(matches)
    if best / request_blocks < rule["cache_threshold"]:
        return least
    return min((r for r in range(len(loads)) if matches[r] == best), key=lambda k: loads[k])


def run_policy(
    policy: str,
    trace: np.ndarray,
    holds: np.ndarray,
    replicas: int,
    cache_blocks: int,
    prefix_blocks: int,
    own_blocks: int,
    block_size: int,
    rule: dict,
) -> dict:
    """Route every request of `trace` with `policy`; hits, work and queues per replica."""
    caches = [BlockLRU(cache_blocks, prefix_blocks) for _ in range(replicas)]
    running: list[list[float]] = [[] for _ in range(replicas)]  # finish times of the requests each replica holds
    request_blocks = prefix_blocks + own_blocks
    requests = [0] * replicas
    computed = [0] * replicas
    hits = np.zeros(len(trace), dtype=np.int64)
    peak = 0
    next_own = -1
    for i, (g, h) in enumerate(zip(trace.tolist(), holds.tolist())):
        for q in running:
            while q and q[0] <= i:
                heappop(q)
        loads = [len(q) for q in running]
        r = _route(policy, i, loads, caches, g, request_blocks, rule)
        own = list(range(next_own, next_own - own_blocks, -1))
        next_own -= own_blocks
        hit = caches[r].process(g, own)
        hits[i] = hit
        work = request_blocks - hit
        heappush(running[r], i + h)
        peak = max(peak, len(running[r]))
        requests[r] += 1
        computed[r] += work * block_size
    n = len(trace)
    total = n * request_blocks * block_size
    reused = int(hits.sum()) * block_size
    cumulative = np.cumsum(hits) / (np.arange(1, n + 1) * request_blocks)
    mean_requests = n / replicas
    return {
        "policy": policy,
        "label": POLICY_LABELS[policy],
        "hit_rate": reused / total,
        "tokens_reused": reused,
        "tokens_computed": total - reused,
        "requests_per_replica": requests,
        "tokens_computed_per_replica": computed,
        "busiest_share": max(requests) / mean_requests,
        "busiest_work_share": max(computed) / (sum(computed) / replicas) if sum(computed) else 1.0,
        "peak_in_flight": peak,
        "cumulative_hit_rate": cumulative,
    }


def simulate_routing(
    n_requests: int = 2000,
    replicas: int = 4,
    groups: int = 8,
    skew: float = 1.0,
    cache_blocks: int = 256,
    prefix_tokens: int = 512,
    own_tokens: int = 128,
    block_size: int = 16,
    seed: int = 0,
    rule: dict | None = None,
) -> dict:
    """Every policy on one seeded trace, plus the ceiling. Tokens are whole blocks (the caller rounds).

    `rule` holds the prefix-aware router's thresholds (cache_threshold, balance_abs_threshold,
    balance_rel_threshold); the SGLang router's defaults when None.
    """
    if prefix_tokens % block_size or own_tokens % block_size:
        raise ValueError(f"prefix_tokens and own_tokens must be multiples of block_size ({block_size})")
    prefix_blocks, own_blocks = prefix_tokens // block_size, own_tokens // block_size
    if own_blocks < 1:
        raise ValueError("own_tokens must be at least one block: a prompt's last token is always computed")
    if cache_blocks < prefix_blocks + own_blocks:
        raise ValueError(
            f"cache_blocks must hold one request ({prefix_blocks + own_blocks} blocks), got {cache_blocks}"
        )
    rule = rule or {"cache_threshold": 0.3, "balance_abs_threshold": 64, "balance_rel_threshold": 1.5}
    trace, holds = request_trace(n_requests, groups, skew, replicas, seed)
    results = [
        run_policy(p, trace, holds, replicas, cache_blocks, prefix_blocks, own_blocks, block_size, rule)
        for p in POLICIES
    ]
    # the ceiling, in closed form: each group's first request misses, every later one reuses the whole prefix
    seen = len(np.unique(trace))
    ceiling_reused = (n_requests - seen) * prefix_tokens
    total = n_requests * (prefix_tokens + own_tokens)
    picks = np.unique(np.linspace(0, n_requests - 1, min(CURVE_POINTS, n_requests)).round().astype(int))
    return {
        "trace_groups": np.bincount(trace, minlength=groups).tolist(),
        "groups_seen": seen,
        "total_tokens": total,
        "ceiling": {"hit_rate": ceiling_reused / total, "tokens_reused": ceiling_reused},
        "policies": [{**r, "cumulative_hit_rate": r["cumulative_hit_rate"][picks].tolist()} for r in results],
        "curve_requests": (picks + 1).tolist(),
    }
