"""Figure data: plain JSON, the ledger's numbers, input validation and clamping, the CLI."""

import json

import pytest

import kvlab
from kvlab.__main__ import main

FIGURES = [
    (kvlab.race, {}),
    (kvlab.reprocessing_figure, {}),
    (kvlab.quadratic_wall, {"n": 64}),
    (kvlab.step_through, {}),
    (kvlab.cache_equivalence, {}),
    (kvlab.cache_phases, {}),
    (kvlab.eviction_timeline, {"policy": "h2o"}),
    (kvlab.eviction_timeline, {"policy": "full", "n": 10}),
    (kvlab.context_shift_timeline, {}),
    (kvlab.prefix_cache_demo, {"n_requests": 20}),
]


def assert_plain(x, path="data"):
    """Only dict/list/str/int/float/bool/None, exactly: no numpy scalars, arrays or tuples."""
    if isinstance(x, dict):
        for k, v in x.items():
            assert type(k) is str, f"{path}: key {k!r}"
            assert_plain(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            assert_plain(v, f"{path}[{i}]")
    else:
        assert x is None or type(x) in (str, int, float, bool), f"{path}: {type(x).__name__}"


@pytest.mark.parametrize("func,kwargs", FIGURES, ids=lambda v: getattr(v, "__name__", str(v)))
def test_figure_data_is_plain_json(func, kwargs):
    data = func(**kwargs)
    assert_plain(data)
    assert json.loads(json.dumps(data)) == data
    assert data["clamped"] == {}


def test_race_reproduces_the_ledger_numbers():
    r19 = kvlab.race(19)
    assert r19["totals"] == {"no_cache": 190, "cache": 19, "ratio": 10.0}
    r1000 = kvlab.race(1000)["totals"]
    assert (r1000["no_cache"], r1000["cache"], r1000["ratio"]) == (500_500, 1000, 500.5)


def test_race_series_are_running_sums_of_the_per_step_counts():
    r = kvlab.race(30)
    for side in ("no_cache", "cache"):
        running = 0
        for per_step, cumulative in zip(r[side]["per_step"], r[side]["cumulative"]):
            running += per_step
            assert cumulative == running
    assert r["no_cache"]["per_step"] == r["tokens"]
    assert r["ratio"] == [(t + 1) / 2 for t in r["tokens"]]


def test_reprocessing_counts_token_1_fifty_times_and_token_10_forty_one_times():
    r = kvlab.reprocessing_figure(50)
    assert r["no_cache"][0] == 50 and r["no_cache"][9] == 41
    assert sum(r["no_cache"]) == sum(range(1, 51))
    assert set(r["cache"]) == {1}


def test_quadratic_wall_attention_grows_with_t_squared_without_cache_and_t_with_cache():
    w = kvlab.quadratic_wall(n=40, n_layers=2, d_model=64, n_heads=4, n_kv_heads=2, d_ff=128)
    nc, c = w["no_cache"]["attention_macs"], w["cache"]["attention_macs"]
    for t, (a, b) in enumerate(zip(nc, c), start=1):
        assert a == b * (t + 1) / 2  # t(t+1)/2 causal pairs vs t
        assert b == c[0] * t
    weights = w["no_cache"]["weight_macs"]
    steps = [b - a for a, b in zip(weights, weights[1:])]
    assert len(set(steps)) == 1 and steps[0] > 0  # linear in t
    assert len(set(w["cache"]["weight_macs"])) == 1  # flat


def test_step_through_reads_the_past_and_computes_the_new_cells_in_every_layer():
    p, steps, layers = 3, 5, 4
    d = kvlab.step_through(prompt_len=p, steps=steps, layers=layers)
    assert len(d["steps"]) == steps + 1
    for k, s in enumerate(d["steps"]):
        before, after = (0, p) if k == 0 else (p + k - 1, p + k)  # docs/claims.md: cache length before/after
        assert (s["phase"], s["cache_len_before"], s["cache_len_after"]) == (
            "prefill" if k == 0 else "decode",
            before,
            after,
        )
        assert len(s["layers"]) == layers
        for lay in s["layers"]:
            assert lay["read"] == list(range(before))
            assert lay["computed"] == list(range(before, after))
        assert s["without_cache_recomputed"] == list(range(after))
    assert len(d["tokens"]) == p + steps + 1


def test_cache_equivalence_reports_identical_generations():
    d = kvlab.cache_equivalence(prompt_len=5, steps=10, seed=3)
    assert d["same_tokens"] and d["tokens_cache"] == d["tokens_no_cache"]
    assert d["max_abs_logit_diff"] < 1e-9
    assert d["totals"]["cache"]["total_macs"] < d["totals"]["no_cache"]["total_macs"]


def test_prefix_cache_demo_saves_99900_and_shows_block_granularity():
    d = kvlab.prefix_cache_demo()
    assert d["token_granular"]["tokens_reused"] == 99_900
    assert d["token_granular"]["flops_saved"] == 99_900 * d["params"]["flops_per_token"]
    assert d["blocks"]["tokens_reused"] == 999 * (100 // 16) * 16
    for g in d["granularity"]:
        assert g["tokens_reused_per_request"] == (100 // g["block_size"]) * g["block_size"]
        assert g["partial_block_tokens"] == 100 % g["block_size"]
    held = d["token_granular"]["memory_bytes_held"]
    assert held[-1] == (100 + 1000 * 20) * d["params"]["bytes_per_token"]


def test_context_shift_timeline_discards_half_of_what_follows_n_keep():
    d = kvlab.context_shift_timeline(prompt_len=8, n_generate=60, n_ctx=32, n_keep=4)
    assert d["shifts"]
    for s in d["shifts"]:
        assert s["n_discard"] == (s["n_past_before"] - 4) // 2


def test_eviction_timeline_reports_each_step():
    d = kvlab.eviction_timeline("window", n=12, window=3)
    assert [s["cached"] for s in d["steps"]][-1] == [9, 10, 11]
    assert d["policy"]["budget"] == 3


@pytest.mark.parametrize(
    "func,kwargs,name",
    [
        (kvlab.race, {"n": 10**7}, "n"),
        (kvlab.race, {"n": 0}, "n"),
        (kvlab.step_through, {"layers": 99}, "layers"),
        (kvlab.eviction_timeline, {"n": 10**6}, "n"),
        (kvlab.prefix_cache_demo, {"n_requests": 5000, "prefix_len": 10, "suffix_len": 1}, "n_requests"),
    ],
)
def test_out_of_range_inputs_are_clamped_and_reported(func, kwargs, name):
    d = func(**kwargs)
    c = d["clamped"][name]
    assert c["requested"] == kwargs[name]
    assert d["params"][name] == c["used"] != c["requested"]


@pytest.mark.parametrize(
    "func,kwargs,name",
    [
        (kvlab.race, {"n": "many"}, "n"),
        (kvlab.race, {"n": 2.5}, "n"),
        (kvlab.race, {"n": True}, "n"),
        (kvlab.race, {"n": float("nan")}, "n"),
        (kvlab.eviction_timeline, {"policy": "lru"}, "policy"),
        (kvlab.eviction_timeline, {"policy": "h2o", "budget": 2, "recent": 5}, "budget"),
        (kvlab.quadratic_wall, {"d_model": 100, "n_heads": 12}, "n_heads"),
        (kvlab.quadratic_wall, {"n_heads": 12, "n_kv_heads": 5}, "n_kv_heads"),
        (kvlab.context_shift_timeline, {"mode": "truncate"}, "mode"),
        (kvlab.context_shift_timeline, {"prompt_len": 40, "n_ctx": 32}, "prompt_len"),
        (kvlab.prefix_cache_demo, {"flops_per_token": "lots"}, "flops_per_token"),
    ],
)
def test_invalid_inputs_raise_a_value_error_naming_the_parameter(func, kwargs, name):
    with pytest.raises(ValueError, match=name):
        func(**kwargs)


def test_whole_number_floats_and_numeric_strings_are_accepted():
    assert kvlab.race(19.0)["totals"] == kvlab.race("19")["totals"] == kvlab.race(19)["totals"]


@pytest.mark.parametrize(
    "argv",
    [
        ["race"],
        ["wall", "--n", "32"],
        ["steps"],
        ["evict", "--policy", "h2o"],
        ["context"],
        ["prefix", "--requests", "10"],
    ],
)
def test_cli_prints_a_table_and_json_that_matches_the_figure(argv, capsys):
    assert main(argv) == 0
    table = capsys.readouterr().out
    assert "---" in table
    assert main(argv + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert "params" in data and "clamped" in data


def test_cli_race_json_equals_the_figure_function(capsys):
    assert main(["race", "--n", "19", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == kvlab.race(19)


def test_cli_reports_bad_input_without_a_traceback(capsys):
    assert main(["context", "--prompt-len", "40", "--n-ctx", "32"]) == 2
    assert "prompt_len" in capsys.readouterr().err
