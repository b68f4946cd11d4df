"""The scheduler simulation's fitted step-time constants: the data file's, from the runs the split names.

bench/serving_sim_calibration.py --write fits them on bench/serving_validation.py's USED_FOR_CALIBRATION
runs and stores them in kvlab/data/serving_benchmarks.json ("simulation"). These tests check that
simulate uses exactly those, that the split is the stated rule's, and (slow: the fit simulates the runs
a few hundred times, about 3 minutes) that the script gives the stored constants back.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from kvlab.memory.scheduler import SIMULATION_KEYS, simulate, simulation_constants
from kvlab.memory.serving import BENCHMARKS_FILE, serving_benchmarks

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import serving_sim_calibration  # noqa: E402
import serving_validation  # noqa: E402

STORED = json.loads(BENCHMARKS_FILE.read_text(encoding="utf-8"))["simulation"]


def test_simulate_uses_the_constants_the_data_file_holds():
    assert {k: simulation_constants()[k] for k in SIMULATION_KEYS} == STORED["constants"]
    e = simulate("llama-3.1-8b", "h100-sxm", num_prompts=4, n_gpus=2)["efficiency"]
    c = STORED["constants"]
    assert (e["bandwidth_used"], e["compute_used"]) == (c["bandwidth_efficiency"], c["compute_efficiency"])
    assert e["step_overhead_ms"] == pytest.approx(c["step_overhead_ms"])
    assert e["request_overhead_us"] == pytest.approx(c["request_overhead_us"])
    assert e["allreduce_latency_us"] == pytest.approx(c["allreduce_latency_us"])
    assert e["calibrated"] and f"fitted on {len(STORED['runs'])} published" in e["how"]


def test_the_constants_came_from_the_calibration_runs_of_the_stated_split():
    used, held_out = serving_validation.calibration_split()
    assert used == serving_validation.USED_FOR_CALIBRATION
    assert set(STORED["runs"]) == used and not used & held_out
    assert len(held_out) >= 6
    runs = {r["id"]: r for r in serving_validation.load_runs()}
    assert all(runs[i]["engine"] == "vllm" for i in used | held_out)
    assert STORED["fitted_by"] == "bench/serving_sim_calibration.py --write"


def test_every_fitted_constant_has_a_fit_run_that_exercises_it():
    assert serving_validation.unexercised_constants() == []
    runs = {r["id"]: r for r in serving_validation.load_runs()}
    triton = "weight_only_fp4_triton_compute_efficiency"
    exercise = {
        i
        for i in serving_validation.USED_FOR_CALIBRATION
        if triton in serving_validation.exercised_constants(serving_validation.settings_of(runs[i])[0])
    }
    assert exercise == {"gpustack-h100-gptoss120b-vllm-sharegpt", "gpustack-h100-gptoss20b-vllm-random4k"}
    # the alternation alone (the rule's first step) leaves the Triton constant without a fit run: the second step
    # is what moved the first, the third step the second
    assert serving_validation.unexercised_constants(serving_validation.USED_FOR_CALIBRATION - exercise) == [triton]


def test_a_kernel_paths_constant_gets_a_second_fit_run_chosen_by_prediction_alone():
    """Step 3 of the split: one Triton-path run left its constant undetermined (output and TPOT trade); the second is
    the run whose predicted output moves most with the constant, and no measured figure enters that choice."""
    runs = {r["id"]: r for r in serving_validation.load_runs()}
    triton = "weight_only_fp4_triton_compute_efficiency"
    first, chosen = runs["gpustack-h100-gptoss120b-vllm-sharegpt"], runs["gpustack-h100-gptoss20b-vllm-random4k"]
    sensitivity = serving_validation.output_sensitivity
    # (2.3x since session 24 put moe_half_rows in FIT_START at 32 rows; 3x and more before)
    assert sensitivity(chosen, triton) > 2 * sensitivity(first, triton)
    # every other candidate moves less, but for the 4-token runs, which are never chosen (the API server times them)
    short = serving_validation.short_answer_runs()
    assert short >= {"gpustack-h100-gptoss120b-vllm-tp1-random128", "gpustack-a100-gptoss20b-vllm-random128"}
    assert not short & {"gpustack-h100-gptoss120b-vllm-sharegpt", chosen["id"]}
    _, held = serving_validation.calibration_split()
    for i in held:
        args = serving_validation.settings_of(runs[i])[0]
        if triton in serving_validation.exercised_constants(args) and i not in short:
            assert sensitivity(runs[i], triton) <= sensitivity(chosen, triton), i
    blind = [dict(r, measured={}) for r in serving_validation.load_runs()]  # measurements removed: the same split
    assert serving_validation.calibration_split(blind)[0] == serving_validation.USED_FOR_CALIBRATION


def test_the_fitted_frontend_time_is_one_the_fit_runs_median_ttft_allows():
    # simulate's API server takes requests sent all at once in together: all n reach the engine after n x (frontend_ms
    # + chat_template_ms), so every TTFT is at least that. gpustack-h200-dsr1-vllm-sharegpt (1,000 chat requests on
    # vLLM 0.11.0, median TTFT 17,698 ms, DeepSeek-R1-0528's template parsed per request) allows 17.698 ms less the
    # measured parse at most, and the fit is bounded by it
    bound, run = serving_sim_calibration.frontend_ms_bound()
    parse = serving_benchmarks()["chat_template"]["templates"]["deepseek-r1-0528"]["parse_ms"]
    assert run == "gpustack-h200-dsr1-vllm-sharegpt"
    runs = {r["id"]: r for r in serving_validation.load_runs()}
    measured = runs[run]["measured"]["ttft_ms_median"]
    assert measured == 17698.39
    assert bound == pytest.approx(measured / 1000 - parse)
    assert serving_sim_calibration.fit_bounds()["frontend_ms"][1] == bound
    assert STORED["constants"]["frontend_ms"] <= bound
    # the bound is the simulation's own: with an engine as fast as the inputs allow, frontend_ms above it still puts
    # that run's simulated median TTFT above the measured one; below it, every first token still waits for the
    # intake of all 1,000 (this run's engine adds about 4 s even at the roofline, so the bound is not tight here)
    args, _ = serving_validation.settings_of(runs[run])
    fast = {
        "bandwidth_efficiency": 1.0,
        "compute_efficiency": 1.0,
        "weight_only_fp4_compute_efficiency": 1.0,
        "weight_only_fp4_triton_compute_efficiency": 1.0,
        "step_overhead_ms": 0.0,
        "request_overhead_us": 0.0,
        "allreduce_latency_us": 0.0,
    }
    assert args["chat_template_ms"] == parse
    above = simulate(**args, **fast, frontend_ms=bound * 1.02)["ttft_ms"]["median"]
    below = simulate(**args, **fast, frontend_ms=bound * 0.5, max_timeline_rows=1000)["timeline"]
    assert measured < above
    assert min(below["first_token_s"]) * 1e3 >= 1000 * (bound * 0.5 + parse) - 1e-6


def test_the_stored_loss_is_the_loss_of_the_stored_constants():
    loss = serving_sim_calibration.loss(STORED["constants"], set(STORED["runs"]))
    assert loss == pytest.approx(STORED["loss"], abs=1e-5)


# a fixed fit that simulates the 8 runs a few hundred times: 4-5 minutes on a quiet 2-core machine, over 10 at a load
# of 13 (it timed out at the default 600 s in a fresh-clone run beside two CPU burners and other work)
@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_the_calibration_script_reproduces_the_stored_constants():
    fitted = serving_sim_calibration.fit()
    assert fitted["runs"] == STORED["runs"]
    for k in SIMULATION_KEYS:
        assert fitted["constants"][k] == pytest.approx(STORED["constants"][k], rel=0.011), k


def test_a_run_served_with_async_scheduling_is_simulated_with_it():
    runs = {r["id"]: r for r in serving_validation.load_runs()}
    args, _ = serving_validation.settings_of(runs["gpustack-h100-gptoss120b-vllm-tp2-async-sharegpt"])
    assert args["async_scheduling"] is True
    args, _ = serving_validation.settings_of(runs["gpustack-h100-gptoss20b-vllm-sharegpt"])
    assert "async_scheduling" not in args


def test_a_run_launched_with_an_option_the_simulation_does_not_model_is_skipped_and_named():
    runs = {r["id"]: r for r in serving_validation.load_runs()}
    args, why = serving_validation.settings_of(runs["gpustack-h100-qwen35-9b-vllm-mtp1-rate8"])
    assert args is None and "--speculative-config" in why
    args, why = serving_validation.settings_of(runs["gpustack-h200-dsr1-sglang-tp8-dpattn-random4k"])
    assert args is None and "--enable-dp-attention" in why
    # vLLM's default mode and options the simulation takes are not a reason to skip
    balanced = {**runs["gpustack-h100-qwen35-9b-vllm-rate8"]}
    balanced["settings"] = {**balanced["settings"], "other": "--performance-mode balanced --max-num-seqs=256"}
    args, _ = serving_validation.settings_of(balanced)
    assert args is not None


def test_vllm_performance_mode_throughput_doubles_the_defaults_the_command_leaves():
    # vLLM 0.17's --performance-mode throughput: max_num_batched_tokens and max_num_seqs at twice the card's defaults,
    # each only where the command does not set it; interactivity changes CUDA graph sizes only (simulated as balanced)
    runs = {r["id"]: r for r in serving_validation.load_runs()}
    plain, _ = serving_validation.settings_of(runs["gpustack-h100-qwen35-9b-vllm-sharegpt"])
    both, _ = serving_validation.settings_of(runs["gpustack-h100-qwen35-9b-vllm-perfmode-sharegpt"])
    assert "max_num_seqs" not in plain and "max_num_batched_tokens" not in plain
    assert (both["max_num_batched_tokens"], both["max_num_seqs"]) == (2 * 8192, 2 * 1024)  # an H100's 8,192 / 1,024
    set_one, _ = serving_validation.settings_of(runs["gpustack-h100-qwen35-9b-vllm-perfmode-mnbt24k-sharegpt"])
    assert (set_one["max_num_batched_tokens"], set_one["max_num_seqs"]) == (24576, 2048)
    for mode, expect in (("balanced", None), ("interactivity", None), ("throughput", 2048)):
        run = {**runs["gpustack-h100-qwen35-9b-vllm-rate8"]}
        run["settings"] = {**run["settings"], "other": f"vllm serve Qwen/Qwen3.5-9B --performance-mode {mode}"}
        args, _ = serving_validation.settings_of(run)
        assert args.get("max_num_seqs") == expect, mode
    run["settings"] = {**run["settings"], "other": "vllm serve Qwen/Qwen3.5-9B --performance-mode fastest"}
    args, why = serving_validation.settings_of(run)
    assert args is None and "fastest" in why


def test_the_stored_accuracy_is_what_the_simulation_gives_now():
    # serving_benchmarks.json "validation" (the page's and the widget's accuracy sentence) may not go stale: a change
    # to the constants, the runs or the simulation must rewrite it (bench/serving_validation.py --write)
    assert json.loads(BENCHMARKS_FILE.read_text(encoding="utf-8"))["validation"] == serving_validation.accuracy()


def test_each_kind_of_run_says_which_way_kvlab_leans_on_it():
    """The held-out runs by kind (card, dense or MoE, one GPU or several) cover every held-out run once, each kind's
    median ratio is its runs' own, and the sentence says the direction the ratio gives (above 1: more answer tokens
    than measured, a shorter TPOT below 1); a kind with under KIND_MIN_RUNS runs gets none."""
    import statistics

    from kvlab.memory.serving import KIND_MIN_RUNS, accuracy_of_kind

    rows, _ = serving_validation.table()
    held = serving_validation.calibration_split()[1]
    held_rows = [r for r in rows if r["id"] in held and "error" not in r]
    kinds = serving_validation.by_kind(held_rows)
    assert sum(k["runs"] for k in kinds) == len(held_rows) and len(kinds) >= 4
    for k in kinds:
        mine = [
            r for r in held_rows if (r["gpu"], r["moe"], r["n_gpus"] > 1) == (k["gpu"], k["moe"], k["several_gpus"])
        ]
        assert k["output_ratio"] == round(statistics.median(r["out"] for r in mine), 6)
        model = next(r["model"] for r in mine)
        said = accuracy_of_kind(k["gpu"], model, 2 if k["several_gpus"] else 1)
        if k["runs"] < KIND_MIN_RUNS:
            assert said is None
            continue
        assert f"On the {k['runs']} published vLLM runs of this kind" in said["sentence"]
        assert ("more answer tokens" if k["output_ratio"] > 1 else "fewer answer tokens") in said["sentence"]
        if k["tpot_ratio"] is not None and k["tpot_runs"] >= KIND_MIN_RUNS:
            assert ("shorter" if k["tpot_ratio"] < 1 else "longer") in said["sentence"]
    assert accuracy_of_kind("l4", "llama-3.1-8b", 1) is None  # no published L4 run


def test_a_run_whose_printed_launch_cannot_start_is_skipped_as_not_stated():
    # GPUStack's Qwen3-32B H100 page prints `vllm serve Qwen/Qwen3-32B` (40,960 tokens): one such sequence's KV cache
    # and the BF16 weights leave under 1 GiB of 0.9 x the card for vLLM's own reserve, so that is not what ran
    from kvlab.memory.catalogue import get_gpu, model_architecture
    from kvlab.memory.engines import driver_memory
    from kvlab.memory.kv_bytes import kv_cache_bytes
    from kvlab.memory.weights import weights_bytes

    runs = {r["id"]: r for r in serving_validation.load_runs()}
    printed = [i for i in runs if i.startswith("gpustack-h100-qwen3-32b-vllm")]
    assert len(printed) == 5
    for i in printed:
        args, why = serving_validation.settings_of(runs[i])
        assert args is None and why.startswith(
            "launch settings not stated: the page prints `vllm serve Qwen/Qwen3-32B`"
        )
    arch = model_architecture("qwen3-32b")
    gib = 2**30
    budget = 0.9 * driver_memory(get_gpu("h100-sxm"))["bytes"]  # as the CUDA driver reports the card (79.2 GiB)
    weights = weights_bytes(arch.params, "BF16")["bytes"]
    kv = kv_cache_bytes(arch, 40960, "f16")["total_bytes"]
    assert kv == 10 * gib
    assert 0 < budget - weights - kv < 0.5 * gib
    # the field is what skips it: without it the run is simulated (and the printed command refused)
    run = {**runs[printed[0]], "settings": {k: v for k, v in runs[printed[0]]["settings"].items() if k != "not_stated"}}
    args, _ = serving_validation.settings_of(run)
    assert args is not None


def test_a_runs_kv_cache_dtype_reaches_the_simulation():
    runs = {r["id"]: r for r in serving_validation.load_runs()}
    run = {**runs["gpustack-h100-qwen35-9b-vllm-rate8"]}
    args, _ = serving_validation.settings_of(run)
    assert "kv" not in args
    run["settings"] = {**run["settings"], "kv_cache_dtype": "fp8"}
    args, _ = serving_validation.settings_of(run)
    assert args["kv"] == "fp8"
    model, gpu = args.pop("model"), args.pop("gpu")
    fp8, f16 = simulate(model, gpu, **args), simulate(model, gpu, **{**args, "kv": "f16"})
    assert fp8["kv_pool"]["tokens"] > f16["kv_pool"]["tokens"]


def test_the_async_share_comes_from_controlled_pairs_and_the_script_reproduces_it():
    """vLLM's --async-scheduling share is fitted on the runs with the flag whose page runs the same workload, card and
    launch without it (bench/serving_async_calibration.py): those runs are neither held out nor in the main fit,
    their twins stay held out, and refitting gives the stored share."""
    import serving_async_calibration

    from kvlab.memory.scheduler import async_scheduling_fit

    runs = {r["id"]: r for r in serving_validation.load_runs()}
    fit_ids, held = serving_validation.calibration_split()
    for run_id in serving_validation.ASYNC_FIT_RUNS:
        run = runs[run_id]
        assert run_id not in held and run_id not in fit_ids
        assert "--async-scheduling" in run["settings"]["other"]
        workload = ("dataset", "num_prompts", "request_rate", "max_concurrency", "input_len", "output_len")
        twins = [
            r
            for r in runs.values()
            if r["url"] == run["url"]
            and r["engine"] == "vllm"
            and r["tp"] == run["tp"]
            and all(r["workload"][k] == run["workload"][k] for k in workload)
            and {k: v for k, v in r["settings"].items() if k != "other"}
            == {k: v for k, v in run["settings"].items() if k != "other"}
            and "--async-scheduling" not in (r["settings"]["other"] or "")
        ]
        assert twins and all(t["id"] in held for t in twins), run_id
    stored = async_scheduling_fit()
    assert sorted(serving_validation.ASYNC_FIT_RUNS) == stored["runs"]
    again = serving_async_calibration.fit()
    assert again["hidden_share"] == stored["hidden_share"]
    assert again["loss"] == pytest.approx(stored["loss"], abs=1e-6)
    assert stored["loss"] < stored["loss_hiding_all"]


def test_the_paired_bootstrap_tells_a_real_difference_from_none():
    # the same ratios: a difference of 0 with an interval of 0; every run's error 10 points larger: +10, and the
    # interval excludes 0; runs only one side has are left out
    rng = np.random.default_rng(1)
    base = {f"r{i}": [float(x), float(y), None] for i, (x, y) in enumerate(rng.uniform(0.6, 1.6, size=(60, 2)))}
    same = serving_validation.paired_median_difference(base, base, resamples=500)
    assert same["out"] == {"runs": 60, "difference": 0.0, "low": 0.0, "high": 0.0}
    assert same["ttft"]["runs"] == 0
    worse = {i: [1 + (abs(v[0] - 1) + 0.1) * (1 if v[0] >= 1 else -1), v[1], None] for i, v in base.items()}
    worse["only-here"] = [5.0, 5.0, None]
    d = serving_validation.paired_median_difference(worse, base, resamples=500)
    assert d["out"]["runs"] == 60
    assert d["out"]["difference"] == pytest.approx(10.0)
    assert d["out"]["low"] == pytest.approx(10.0) and d["out"]["high"] == pytest.approx(10.0)
    assert d["tpot"]["difference"] == 0.0
    # a shift of one run out of 60 is within the noise: the interval holds 0
    one = dict(base, r0=[3.0, base["r0"][1], None])
    d = serving_validation.paired_median_difference(one, base, resamples=500)
    assert d["out"]["low"] <= 0 <= d["out"]["high"]


def test_ratios_are_the_held_out_rows_that_simulate():
    rows = [
        {"id": "a", "out": 1.1, "tpot": 0.9, "ttft": 2.0},
        {"id": "b", "error": "does not fit"},
        {"id": "c", "out": 1.0, "tpot": None, "ttft": 1.0},
    ]
    assert serving_validation.ratios(rows, {"a", "b"}) == {"a": [1.1, 0.9, 2.0]}


def test_restarts_stop_once_a_restart_no_longer_lowers_the_loss():
    # a bowl: the restarts reach its bottom and stop at the first that gains under 0.1 %, before the fifth
    calls = []

    def bowl(x):
        calls.append(1)
        return 1.0 + float(np.sum((x - np.array([0.3, -0.2])) ** 2))

    x, fx, trail = serving_sim_calibration.restarts_until_flat(bowl, np.array([2.0, 2.0]))
    assert fx == pytest.approx(1.0, abs=1e-6) and x == pytest.approx([0.3, -0.2], abs=1e-3)
    assert 2 <= len(trail) < len(serving_sim_calibration.CONVERGE_STEPS)
    assert (trail[-2] - trail[-1]) / trail[-2] < serving_sim_calibration.CONVERGE_TOLERANCE
    assert all(b <= a for a, b in zip(trail, trail[1:]))


def test_crossings_name_the_runs_that_moved_a_median():
    # a run that comes inside 15 %, one that leaves it, one that leaves 2x; a run only one side has is left out
    base = {"a": [1.20, 1.0, None], "b": [1.10, 1.0, None], "c": [1.90, 0.5, None], "d": [1.0, None, None]}
    cand = {"a": [1.14, 1.0, None], "b": [1.16, 1.0, None], "c": [2.10, 0.5, None], "e": [1.0, 1.0, None]}
    c = serving_validation.crossings(cand, base)
    assert c["out"]["runs"] == 3
    assert c["out"]["baseline"] == {"within_line": 1, "within_2x": 3}
    assert c["out"]["candidate"] == {"within_line": 1, "within_2x": 2}
    assert c["out"]["came_in"] == [("a", 1.20, 1.14)] and c["out"]["went_out"] == [("b", 1.10, 1.16)]
    assert c["tpot"]["came_in"] == c["tpot"]["went_out"] == [] and c["tpot"]["baseline"]["within_2x"] == 3
    assert c["ttft"]["runs"] == 0
