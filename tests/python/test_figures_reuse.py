"""kvlab.widgets.prefix and eviction: the widget views agree with the functions they are built on."""

from __future__ import annotations

import json

import pytest

import kvlab
from kvlab.widgets.eviction import CACHED, EVICTED, NEW, NOT_YET


@pytest.mark.parametrize(
    "n_requests,prefix_len,suffix_len,block_size", [(1000, 100, 20, 16), (7, 33, 5, 8), (1, 0, 1, 1), (50, 64, 3, 64)]
)
def test_prefix_cache_figure_matches_prefix_cache_demo(n_requests, prefix_len, suffix_len, block_size):
    fig = kvlab.prefix_cache_figure(n_requests, prefix_len, suffix_len, block_size)
    demo = kvlab.prefix_cache_demo(n_requests, prefix_len, suffix_len, block_size)
    for key in ("token_granular", "blocks"):
        for field in ("tokens_reused", "tokens_computed", "flops_saved", "hit_rate", "tokens_computed_per_request"):
            assert fig[key][field] == demo[key][field]
        assert fig[key]["cumulative_computed"][-1] == fig[key]["tokens_computed"]
    by_size = {g["block_size"]: g["tokens_reused"] for g in demo["granularity"]}
    assert {g["block_size"]: g["tokens_reused"] for g in fig["granularity"]} == by_size
    assert fig["no_cache"]["tokens_computed"] == n_requests * (prefix_len + suffix_len)
    json.dumps(fig)


def test_seed_claim_first_request_pays():
    fig = kvlab.prefix_cache_figure(n_requests=1000, prefix_len=100, suffix_len=20)
    assert fig["token_granular"]["tokens_reused"] == 99_900
    assert fig["view"]["radix_reused"] == "99,900"
    assert fig["blocks"]["tokens_reused"] == 999 * 96  # 16-token blocks: 6 full blocks of the 100-token prompt


def test_prefix_cache_figure_clamps_and_says_so():
    fig = kvlab.prefix_cache_figure(n_requests=5000)
    assert fig["clamped"] == {"n_requests": {"requested": 5000, "used": 1000}}
    assert fig["params"]["n_requests"] == 1000


def test_prefix_blocks_partial_shared_block_is_recomputed():
    d = kvlab.prefix_blocks_figure(prefix_len=40, suffix_len=10, block_size=16)
    assert [b["status"] for b in d["requests"][1]["blocks"]] == ["hit", "hit", "miss", "partial"]
    assert d["requests"][1]["tokens_reused"] == 32
    assert d["token_granular_reused"] == 40


@pytest.mark.parametrize("policy", ["full", "window", "sinks", "h2o"])
def test_eviction_view_grid_matches_timeline(policy):
    v = kvlab.eviction_figure(policy=policy, n=24, window=5, n_sink=2, budget=8, recent=3)
    t = kvlab.eviction_timeline(policy=policy, n=24, window=5, n_sink=2, budget=8, recent=3)
    for row, s in zip(v["grid"], t["steps"]):
        cached = [p for p, code in enumerate(row) if code in (CACHED, NEW)]
        assert cached == s["cached"]
        assert all(code == NOT_YET for code in row[s["position"] + 1 :])
        assert all(code == EVICTED for p, code in enumerate(row[: s["position"] + 1]) if p not in s["cached"])
    assert v["compare"][policy]["attention_kept"] == [s["attention_kept"] for s in t["steps"]]


@pytest.mark.parametrize("policy", ["full", "window", "sinks", "h2o"])
def test_eviction_view_marks_the_token_added_at_each_step_as_new(policy):
    """Exactly one NEW cell per row, at the step's position; every other cached token is CACHED."""
    v = kvlab.eviction_figure(policy=policy, n=24, window=5, n_sink=2, budget=8, recent=3)
    assert len(v["grid"]) == len(v["steps"]) == 24
    for row, s in zip(v["grid"], v["steps"]):
        assert row[s["position"]] == NEW
        assert row.count(NEW) == 1
        assert [p for p, code in enumerate(row) if code == CACHED] == [p for p in s["cached"] if p != s["position"]]


def test_eviction_view_clamps_recent_to_budget_and_n_to_view_limit():
    v = kvlab.eviction_figure(policy="h2o", n=1000, budget=5, recent=9)
    assert v["clamped"] == {"recent": {"requested": 9, "used": 5}, "n": {"requested": 1000, "used": 256}}


def test_context_shift_view_grid_matches_visible_spans():
    v = kvlab.context_shift_figure(prompt_len=8, n_generate=40, n_ctx=32, n_keep=4)
    t = kvlab.context_shift_timeline(prompt_len=8, n_generate=40, n_ctx=32, n_keep=4)
    assert v["shifts"][0]["n_discard"] == t["shifts"][0]["n_discard"]
    for row, s in zip(v["grid"], t["steps"]):
        seen = [p for p, code in enumerate(row) if code >= 2]
        assert seen == [p for a, b in s["visible"] for p in range(a, b)]


def test_context_shift_view_clamps_prompt_to_context():
    v = kvlab.context_shift_figure(prompt_len=40, n_ctx=16, n_keep=-1, mode="shift")
    assert v["clamped"]["prompt_len"] == {"requested": 40, "used": 15}
    assert v["clamped"]["n_keep"]["used"] == 13
