"""KV-cache-aware routing (kvlab.reuse.routing, kvlab.kv_routing_figure): the fast per-replica cache against
kvlab's reference BlockPrefixCache block for block, the ceiling's closed form against a simulation that
reaches it, each policy's defining property, and bad input refused with the field's name."""

from __future__ import annotations

import json
import typing

import numpy as np
import pytest
from typeguard import CollectionCheckStrategy, check_type

import kvlab
from kvlab.bridge import call_json
from kvlab.reuse.prefix_cache import BlockPrefixCache
from kvlab.reuse.routing import BlockLRU, group_weights, request_trace, simulate_routing
from kvlab.widgets import disagg_types

SGLANG = {"cache_threshold": 0.3, "balance_abs_threshold": 64, "balance_rel_threshold": 1.5}


@pytest.mark.parametrize(
    ("capacity", "prefix_blocks", "own_blocks", "groups"), [(40, 8, 2, 5), (12, 4, 1, 3), (64, 16, 4, 9)]
)
def test_block_lru_hits_what_vllm_style_block_prefix_cache_hits(capacity, prefix_blocks, own_blocks, groups):
    bs = 4
    rng = np.random.default_rng(7)
    ref = BlockPrefixCache(block_size=bs, capacity_blocks=capacity)
    fast = BlockLRU(capacity, prefix_blocks)
    next_token, next_own = 10**6, -1
    for _ in range(400):
        g = int(rng.integers(groups))
        prefix = [1000 * g + t for t in range(prefix_blocks * bs)]
        own = list(range(next_token, next_token + own_blocks * bs))
        next_token += own_blocks * bs
        want = ref.process(prefix + own)
        ids = list(range(next_own, next_own - own_blocks, -1))
        next_own -= own_blocks
        got = fast.process(g, ids)
        assert got == want["blocks_hit"]
        assert len(fast.blocks) == len(ref.blocks)
        for h in range(groups):  # the tracked run is what a scan of the cache finds
            run = next((j for j in range(prefix_blocks) if h * prefix_blocks + j not in fast.blocks), prefix_blocks)
            assert fast.match(h) == run


def test_one_replica_with_room_for_everything_reaches_the_closed_form_ceiling():
    r = simulate_routing(n_requests=500, replicas=1, groups=6, skew=0.5, cache_blocks=4096, seed=3)
    for p in r["policies"]:
        assert p["hit_rate"] == pytest.approx(r["ceiling"]["hit_rate"], rel=1e-12)
        assert p["tokens_reused"] == r["ceiling"]["tokens_reused"]


def test_ceiling_counts_one_miss_per_group_seen():
    r = simulate_routing(n_requests=300, replicas=3, groups=50, skew=0.0, seed=1)
    seen = sum(1 for n in r["trace_groups"] if n)
    assert r["groups_seen"] == seen
    assert r["ceiling"]["tokens_reused"] == (300 - seen) * 512
    assert all(p["hit_rate"] <= r["ceiling"]["hit_rate"] + 1e-12 for p in r["policies"])


def test_round_robin_splits_evenly_and_prefix_aware_hits_more():
    r = simulate_routing()
    by = {p["policy"]: p for p in r["policies"]}
    assert by["round_robin"]["requests_per_replica"] == [500] * 4
    assert by["prefix_aware"]["hit_rate"] > by["round_robin"]["hit_rate"] + 0.1
    assert by["least_loaded"]["peak_in_flight"] < by["round_robin"]["peak_in_flight"]
    assert by["prefix_aware"]["busiest_share"] > by["least_loaded"]["busiest_share"]
    total = r["total_tokens"]
    for p in r["policies"]:
        assert p["tokens_reused"] + p["tokens_computed"] == total
        assert sum(p["tokens_computed_per_replica"]) == p["tokens_computed"]


def test_balance_guard_at_zero_makes_prefix_aware_least_loaded():
    always = {"cache_threshold": 0.3, "balance_abs_threshold": -1, "balance_rel_threshold": 0.0}
    r = simulate_routing(n_requests=600, rule=always, seed=5)
    by = {p["policy"]: p for p in r["policies"]}
    assert by["prefix_aware"]["requests_per_replica"] == by["least_loaded"]["requests_per_replica"]


def test_a_threshold_above_every_match_makes_prefix_aware_least_loaded():
    never = dict(SGLANG, cache_threshold=1.01)
    r = simulate_routing(n_requests=600, rule=never, seed=5)
    by = {p["policy"]: p for p in r["policies"]}
    assert by["prefix_aware"]["requests_per_replica"] == by["least_loaded"]["requests_per_replica"]


def test_trace_is_seeded_and_zipf_weighted():
    a, ha = request_trace(1000, 8, 1.0, 4, seed=11)
    b, hb = request_trace(1000, 8, 1.0, 4, seed=11)
    c, _ = request_trace(1000, 8, 1.0, 4, seed=12)
    assert (a == b).all() and (ha == hb).all() and not (a == c).all()
    w = group_weights(8, 1.0)
    assert w.sum() == pytest.approx(1.0) and w[0] / w[1] == pytest.approx(2.0)
    counts = np.bincount(a, minlength=8) / 1000
    assert abs(counts[0] - w[0]) < 0.05
    assert group_weights(4, 0.0).tolist() == [0.25] * 4


def test_figure_says_what_the_simulation_says():
    d = kvlab.kv_routing_figure()
    sim = simulate_routing(rule=SGLANG)
    assert [p["hit_rate"] for p in d["policies"]] == [p["hit_rate"] for p in sim["policies"]]
    v = d["view"]
    assert v["policies"][2]["hit_rate"] in v["headline"] and v["ceiling"]["hit_rate"] in v["headline"]
    assert [row["counts"][0] for row in v["replica_rows"]] == ["500"] * 4
    assert v["ceiling_label"] == "ceiling " + v["ceiling"]["hit_rate"]


def test_token_counts_round_to_blocks_and_the_cache_holds_a_request():
    d = kvlab.kv_routing_figure(own_tokens=20, prefix_tokens=1000, cache_blocks=1, replicas=99)
    assert d["params"]["own_tokens"] == 16 and d["params"]["prefix_tokens"] == 992
    assert d["params"]["cache_blocks"] == (992 + 16) // 16 and d["params"]["replicas"] == 16
    assert d["clamped"]["own_tokens"] == {"requested": 20, "used": 16}
    assert set(d["clamped"]) == {"own_tokens", "prefix_tokens", "cache_blocks", "replicas"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"replicas": "many"}, "replicas"),
        ({"skew": float("nan")}, "skew"),
        ({"seed": None}, "seed"),
        ({"cache_blocks": [1]}, "cache_blocks"),
        ({"requests": float("inf")}, "requests"),
    ],
)
def test_bad_input_names_the_field(kwargs, field):
    reply = json.loads(call_json("kv_routing_figure", json.dumps(kwargs, allow_nan=True)))
    assert reply["error"].startswith(f"ValueError: {field} ")


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"replicas": 1, "groups": 1, "prefix_tokens": 0}, {"replicas": 16, "groups": 64, "skew": 3, "requests": 100}],
)
def test_result_matches_its_typed_dict(kwargs):
    hint = typing.get_type_hints(kvlab.kv_routing_figure, localns=vars(disagg_types))["return"]
    assert hint is disagg_types.KvRoutingFigureResult
    check_type(kvlab.kv_routing_figure(**kwargs), hint, collection_check_strategy=CollectionCheckStrategy.ALL_ITEMS)
