"""KV offload tiers (kvlab.reuse.offload, kvlab.kv_offload_figure): the Che closed form against seeded
sampled traces, the LRU replay against kvlab's own prefix cache, load vs recompute and the
crossover, the widget's text, bad input, and the time one call takes."""

from __future__ import annotations

import json
import time
import typing

import numpy as np
import pytest
from typeguard import CollectionCheckStrategy, check_type

import kvlab
from kvlab.bridge import call_json
from kvlab.memory.catalogue import get_gpu, gpus, model_architecture
from kvlab.memory.serving import prefill_flops
from kvlab.reuse.offload import (
    POLICIES,
    crossover_tokens,
    link,
    load_seconds,
    lru_hit_rate,
    offload_data,
    offload_estimate,
    prefix_bytes,
    prefix_bytes_function,
    recompute_seconds,
    replay,
    sampled_trace,
    tier_hit_rates,
    zipf_popularity,
)
from kvlab.reuse.prefix_cache import RadixPrefixCache
from kvlab.widgets import offload_types
from kvlab.widgets.offload import TRACE_MAX_PREFIXES, kv_offload_figure

# ---------------------------------------------------------------------------
# hit rates
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize(
    ("n", "s", "capacities"),
    [
        (2000, 0.8, [20, 100, 300, 2000]),
        (2000, 1.2, [50, 50, 200, 0]),
        (3000, 0.5, [0, 30, 10, 900]),
        (500, 0.0, [25, 100, 100, 100]),
    ],
)
def test_che_closed_form_matches_a_seeded_sampled_trace(policy, n, s, capacities):
    p = zipf_popularity(n, s)
    closed = tier_hit_rates(p, capacities, policy)
    trace = sampled_trace(p, capacities, policy, n_requests=200_000, seed=7)
    for tier, (c, t) in enumerate(zip(closed, trace["rates"])):
        assert abs(c - t) < 0.01, (tier, closed, trace["rates"])
    assert abs((1 - sum(closed)) - trace["miss"]) < 0.01


def test_uniform_popularity_gives_capacity_over_n_and_the_limits_hold():
    p = zipf_popularity(1000, 0.0)
    assert lru_hit_rate(p, 250) == pytest.approx(0.25, abs=1e-9)  # Che is exact here: 1 - e^(-T/N) = C/N
    assert lru_hit_rate(p, 0) == 0.0 and lru_hit_rate(p, 1000) == 1.0
    skewed = zipf_popularity(1000, 1.0)
    assert lru_hit_rate(skewed, 100) > lru_hit_rate(p, 100)  # popular prefixes stay cached


def test_write_through_tier_no_larger_than_a_faster_one_adds_nothing():
    p = zipf_popularity(1000, 0.8)
    through = tier_hit_rates(p, [100, 50, 400], "write-through")
    down = tier_hit_rates(p, [100, 50, 400], "evict-down")
    assert through[1] == 0.0 and down[1] > 0.0
    # evict-down: the tiers together are one LRU list as long as all of them
    assert sum(down) == pytest.approx(lru_hit_rate(p, 550), abs=1e-12)
    assert sum(through) == pytest.approx(lru_hit_rate(p, 400), abs=1e-12)


def test_one_lru_tier_answers_exactly_what_kvlabs_radix_prefix_cache_reuses():
    """kvlab.reuse.prefix_cache's RadixPrefixCache, fed disjoint 2-token prefixes, is an LRU of whole prefixes."""
    rng = np.random.default_rng(3)
    ids = rng.choice(60, size=3000, p=zipf_popularity(60, 0.9)).tolist()
    radix = RadixPrefixCache(capacity_tokens=2 * 15)
    hits = sum(radix.process([2 * i, 2 * i + 1])["tokens_reused"] > 0 for i in ids)
    assert replay(ids, [15], "write-through") == [hits]
    assert replay(ids, [15], "evict-down") == [hits]


def test_evict_down_tiers_are_one_lru_list_request_by_request():
    rng = np.random.default_rng(5)
    ids = rng.choice(200, size=5000, p=zipf_popularity(200, 0.7)).tolist()
    assert sum(replay(ids, [5, 20, 40], "evict-down")) == replay(ids, [65], "evict-down")[0]
    # write-through: the largest tier answers whatever any tier would
    assert sum(replay(ids, [5, 20, 40], "write-through")) == replay(ids, [40], "write-through")[0]


# ---------------------------------------------------------------------------
# what a hit and a miss cost
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model", ["gemma-2-9b", "qwen3-next-80b-a3b", "deepseek-v2-lite", "gpt-oss-20b", "llama-3.1-8b"]
)
def test_prefix_bytes_function_is_kv_cache_bytes_at_every_length(model):
    arch = model_architecture(model)
    nbytes = prefix_bytes_function(arch)
    lengths = [1, 100, 4095, 4096, 4097, 5000, 131072]
    assert nbytes(lengths).tolist() == [prefix_bytes(arch, n) for n in lengths]


def test_load_and_recompute_follow_bytes_over_bandwidth_and_flops_over_peak():
    arch = model_architecture("llama-3.1-8b")
    cfg = kvlab.get_model("llama-3.1-8b")["config"]
    per_token = (
        2
        * cfg["num_hidden_layers"]
        * cfg["num_key_value_heads"]
        * (cfg["hidden_size"] // cfg["num_attention_heads"])
        * 2
    )
    assert prefix_bytes(arch, 8192) == 8192 * per_token
    card = get_gpu("h100-sxm")
    assert recompute_seconds(arch, 8192, card, 0.5) == pytest.approx(
        prefill_flops(arch, 8192) / (card["bf16_dense_tflops"] * 1e12 * 0.5)
    )
    assert load_seconds(63e9, 63, 10) == pytest.approx(1 + 1e-5)


@pytest.mark.parametrize(("model", "gb_s"), [("llama-3.1-8b", 6.5), ("qwen3-0.6b", 6.5), ("llama-3.1-8b", 1.0)])
def test_crossover_is_the_first_length_where_loading_beats_prefilling(model, gb_s):
    arch = model_architecture(model)
    card = get_gpu("h100-sxm")
    n = crossover_tokens(arch, card, gb_s, 100)

    def margin(k):
        return recompute_seconds(arch, k, card) - load_seconds(prefix_bytes(arch, k), gb_s, 100)

    assert n is not None and n > 1
    assert margin(n) > 0 >= margin(n - 1)


def test_no_crossover_when_the_link_is_too_slow():
    arch = model_architecture("qwen3-0.6b")
    assert crossover_tokens(arch, get_gpu("h100-sxm"), 0.001, 100) is None


def test_faster_links_win_sooner():
    arch = model_architecture("llama-3.1-8b")
    card = get_gpu("h100-sxm")
    slow, fast = crossover_tokens(arch, card, 5, 100), crossover_tokens(arch, card, 6, 100)
    assert slow is not None and fast is not None and fast < slow


# ---------------------------------------------------------------------------
# the whole estimate and the widget
# ---------------------------------------------------------------------------


def test_estimate_adds_up():
    e = offload_estimate("llama-3.1-8b", "h100-sxm", 8192, 5000, 0.8, 5, 0.5, 256, 2, 5, trace_requests=0)
    rates = [t["hit_rate"] for t in e["tiers"]]
    assert sum(rates) + e["miss_rate"] == pytest.approx(1)
    per = e["seconds_per_request"]
    recompute = e["recompute_seconds"]
    want = sum(t["hit_rate"] * t["load_seconds"] for t in e["tiers"]) + e["miss_rate"] * recompute
    assert per["with_tiers"] == pytest.approx(want)
    assert per["best"] <= per["with_tiers"] and per["no_cache"] == recompute
    assert per["hbm_only"] == pytest.approx((1 - rates[0]) * recompute)  # write-through: HBM is its own LRU
    nvme = e["tiers"][2]
    assert nvme["gb_s"] == min(offload_data()["nvme"][0]["read_gb_s"], link("pcie5")["gb_s"])
    assert e["tiers"][1]["gb_s"] == link("pcie5")["gb_s"]  # the H100's own link
    # the HBM tier is half of what vLLM leaves for KV, in whole prefixes
    assert e["tiers"][0]["prefixes"] == int(0.5 * e["kv_space_bytes"] // e["prefix_bytes"])


def test_a_faster_host_link_makes_dram_cheaper():
    base = offload_estimate("llama-3.1-8b", "h100-sxm", 8192, 5000, 0.8, 5, 0.5, 256, 2, 5)
    c2c = offload_estimate("llama-3.1-8b", "h100-sxm", 8192, 5000, 0.8, 5, 0.5, 256, 2, 5, link_id="nvlink-c2c")
    assert c2c["tiers"][1]["load_seconds"] < base["tiers"][1]["load_seconds"] / 5


def test_the_widget_shows_the_estimate_and_says_which_tier_loses():
    d = kv_offload_figure()
    p = d["params"]
    e = offload_estimate(
        p["model"],
        p["gpu"],
        p["prefix_tokens"],
        p["n_prefixes"],
        p["zipf"],
        p["requests_per_second"],
        p["hbm_percent"] / 100,
        p["dram_gib"],
        p["nvme_tib"],
        p["remote_tib"],
        nvme_drives=p["nvme_drives"],
        trace_requests=10_000,
    )
    assert d["numbers"]["hit_rates"] == [t["hit_rate"] for t in e["tiers"]]
    assert d["numbers"]["trace_rates"] == e["trace"]["rates"]
    assert [t["hit"] for t in d["tiers"]] == [f"{100 * t['hit_rate']:.1f}%" for t in e["tiers"]]
    losers = [t for t in e["tiers"][1:] if not t["loading_wins"]]
    assert losers, "the default workload shows a tier that loses to prefilling"
    for t in losers:
        assert f"{t['crossover_tokens']:,} tokens" in d["view"]["verdict"]
    assert d["view"]["trace"].startswith("Checked against a sampled trace")


def test_a_prefix_longer_than_the_models_context_is_said():
    assert (
        "longer than the model's context of 131,072 tokens"
        in kv_offload_figure(prefix_tokens=262144)["view"]["verdict"]
    )
    assert "context" not in kv_offload_figure()["view"]["verdict"]


def test_above_the_trace_limit_the_page_says_closed_form_only():
    d = kv_offload_figure(n_prefixes=TRACE_MAX_PREFIXES + 1)
    assert not d["traced"] and d["numbers"]["trace_rates"] is None
    assert "closed form alone" in d["view"]["trace"] and {t["trace"] for t in d["tiers"]} == {"—"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"prefix_tokens": "long"}, "prefix_tokens"),
        ({"n_prefixes": float("nan")}, "n_prefixes"),
        ({"zipf": None}, "zipf"),
        ({"requests_per_second": float("inf")}, "requests_per_second"),
        ({"dram_gib": [1]}, "dram_gib"),
        ({"model": "gpt-9"}, "model"),
        ({"model": 3}, "model"),
        ({"gpu": "m4-max-128gb"}, "gpu"),
        ({"link": "pcie7"}, "link"),
        ({"nvme": "gen9"}, "nvme"),
        ({"network": "carrier-pigeon"}, "network"),
        ({"policy": "mru"}, "policy"),
    ],
)
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field} "):
        kv_offload_figure(**kwargs)
    reply = json.loads(call_json("kv_offload_figure", json.dumps(kwargs, allow_nan=True)))
    assert reply["error"].startswith(f"ValueError: {field} ")


def test_weights_that_do_not_fit_even_eight_gpus_name_the_gpu():
    with pytest.raises(ValueError, match="^gpu 'l4' has no room for a KV cache: .* FP8 weights"):
        kv_offload_figure(model="deepseek-v3", gpu="l4")


def test_a_model_too_big_for_one_gpu_runs_tensor_parallel_on_the_fewest_that_hold_it():
    one = offload_estimate("llama-3.1-70b", "h100-sxm", 8192, 1000, 0.8, 5, 0.5, 256, 2, 5)
    assert one["n_gpus"] == 2  # 131 GiB of BF16 weights: not one 80 GB card, but two
    card = get_gpu("h100-sxm")
    arch = model_architecture("llama-3.1-70b")
    assert one["recompute_seconds"] == pytest.approx(recompute_seconds(arch, 8192, card) / 2)
    assert one["tiers"][1]["gb_s"] == 2 * link("pcie5")["gb_s"]  # each GPU loads its share over its own link
    assert offload_estimate("llama-3.1-70b", "b200", 8192, 1000, 0.8, 5, 0.5, 256, 2, 5)["n_gpus"] == 1
    d = kv_offload_figure(model="llama-3.1-70b")
    assert d["gpu_name"].startswith("2 × ") and "tensor parallel" in d["view"]["capacity"]


def test_out_of_range_is_clamped_and_said():
    d = kv_offload_figure(prefix_tokens=10, n_prefixes=10**9, zipf=7, hbm_percent=150, nvme_drives=0)
    assert d["params"]["prefix_tokens"] == 256 and d["params"]["n_prefixes"] == 100_000
    assert d["params"]["zipf"] == 2.0 and d["params"]["hbm_percent"] == 100 and d["params"]["nvme_drives"] == 1
    assert set(d["clamped"]) == {"prefix_tokens", "n_prefixes", "zipf", "hbm_percent", "nvme_drives"}


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"n_prefixes": 50_000, "policy": "evict-down"}, {"gpu": "a100-80gb", "link": "nvlink-c2c", "remote_tib": 0}],
)
def test_result_matches_its_typed_dict(kwargs):
    hint = typing.get_type_hints(kvlab.kv_offload_figure, localns=vars(offload_types))["return"]
    assert hint is offload_types.OffloadFigureResult
    check_type(kv_offload_figure(**kwargs), hint, collection_check_strategy=CollectionCheckStrategy.ALL_ITEMS)


@pytest.mark.parametrize(
    "kwargs", [{}, {"n_prefixes": 100_000, "prefix_tokens": 131072, "model": "llama-3.1-70b", "gpu": "b200"}]
)
def test_one_call_stays_under_200_ms(kwargs):
    kv_offload_figure(**kwargs)  # the catalogue and the data file load once
    best = min(_timed(kwargs) for _ in range(3))
    assert best < 0.2, f"kv_offload_figure({kwargs}) took {best * 1000:.0f} ms"


def _timed(kwargs) -> float:
    """CPU seconds of one call (the machine running the tests is shared: wall time measures the others)."""
    start = time.process_time()
    kv_offload_figure(**kwargs)
    return time.process_time() - start


def test_every_figure_from_outside_has_a_source():
    d = offload_data()
    for item in d["links"] + d["nvme"] + d["networks"]:
        assert item["source"].startswith("https://") and item["note"] and item["latency_note"].startswith("assumed")
    for g in gpus():
        if g.get("unified_memory"):
            assert g["id"] not in d["gpu_links"]
        else:
            assert d["gpu_links"][g["id"]]["source"].startswith("https://"), g["id"]
            link(d["gpu_links"][g["id"]]["link"])  # names a known link
