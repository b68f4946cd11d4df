#!/usr/bin/env python3
"""Fit the scheduler simulation's step-time constants on published vllm bench serve runs.

    .venv/bin/python bench/serving_sim_calibration.py           # fit and print (nothing written)
    .venv/bin/python bench/serving_sim_calibration.py --write   # also store them in
                                                                # kvlab/data/serving_benchmarks.json, "simulation"
    .venv/bin/python bench/serving_sim_calibration.py --identify    # which stored constants the fit runs pin
    .venv/bin/python bench/serving_sim_calibration.py --converged   # does the stored fit sit at its minimum? (writes
                                                                    # nothing; about 10 minutes)

The constants (kvlab.memory.scheduler, module docstring "Time of a step"): bandwidth_efficiency
(decode: weights and KV cache over HBM bandwidth), compute_efficiency (prefill chunks: FLOPs over
the BF16 dense peak), step_overhead_ms (vLLM's CPU time per step: scheduling, input preparation,
launches), request_overhead_us (per request in the step: sampling, output processing,
detokenization), allreduce_latency_us (per tensor-parallel all-reduce, 2 per layer; their bytes
go over the card's interconnect), frontend_ms (the API server's time per request), and the prefill
efficiencies of MXFP4 weights on cards without FP4 tensor cores, one per vLLM kernel path:
weight_only_fp4_compute_efficiency (Marlin, below SM90) and weight_only_fp4_triton_compute_efficiency
(Triton matmul_ogs, SM90; kvlab.memory.engines.mxfp4_kernel); weight_only_compute_efficiency, FP8 and INT4 weights
through Marlin (every linear layer dequantized; session 25); moe_compute_efficiency, an MoE's routed experts on vLLM's
fused-MoE path, beside compute_efficiency for the rest (session 26); and moe_half_rows (an MoE's expert GEMMs at few
rows).

The runs: bench/serving_validation.py's USED_FOR_CALIBRATION (the rule that picks them is stated
there; the other vLLM runs are held out and never enter the fit). Each is simulated as
serving_validation simulates it. The loss: the sum over those runs of log(predicted / measured)^2
of output tokens per second and, where the run states them, of median TPOT and median inter-token latency (ITL: a
typical step's time, which TPOT mixes with the prefill steps between decodes; session 27's candidate I, which took the
held-out output and TPOT medians from 15.4 % and 19.3 % to 11.7 % and 14.8 %). Minimised over the
logarithms of the constants (SIMULATION_KEYS) by a fixed Nelder-Mead, restarted once from its end with a
half-size simplex (same start, same steps, so the same result on every machine up to float rounding), then each constant is rounded to 3 significant
figures: what --write stores, with the runs, the loss and the script. Each constant stays within BOUNDS, and
frontend_ms also under what the fit runs' own median TTFTs allow (`frontend_ms_bound`).
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))
sys.path.insert(0, str(ROOT / "bench"))

import serving_validation  # noqa: E402
from kvlab.memory import serving  # noqa: E402
from kvlab.memory.scheduler import SIMULATION_KEYS  # noqa: E402

DATA = serving.BENCHMARKS_FILE
START = serving_validation.FIT_START
BOUNDS = {  # what is physical: an efficiency in (0, 1], overheads from 1 us to 100 ms
    "bandwidth_efficiency": (0.05, 1.0),
    "compute_efficiency": (0.05, 1.0),
    "step_overhead_ms": (0.001, 100.0),
    "request_overhead_us": (0.001, 1000.0),
    "allreduce_latency_us": (0.001, 1000.0),
    "frontend_ms": (0.001, 100.0),
    "weight_only_fp4_compute_efficiency": (0.05, 1.0),
    "weight_only_fp4_triton_compute_efficiency": (0.05, 1.0),
    "moe_half_rows": (0.01, 4096.0),
    "weight_only_compute_efficiency": (0.05, 1.0),
    "moe_compute_efficiency": (0.05, 1.0),
}
ITERATIONS = 160


def frontend_ms_bound(runs: set[str] | None = None) -> tuple[float, str | None]:
    """The largest frontend_ms the fit runs allow under the simulation's own API-server rule, and the run that sets it.

    simulate takes the requests of a run that sends all n at once (request rate inf, no --max-concurrency) in
    together: all n enter the engine at n x (frontend_ms + chat_template_ms), and every first token comes after that
    (scheduler module docstring, frontend_ms). So every TTFT, and the median TTFT, exceeds n x (frontend_ms +
    chat_template_ms): frontend_ms <= median TTFT / n - chat_template_ms for each such fit run. A larger value
    contradicts the run's own measured median TTFT whatever the other constants are (gpustack-h200-dsr1-vllm-sharegpt
    sets it: 1,000 requests, median TTFT 17.70 s, less DeepSeek-R1's stored 17.48 ms parse, so at most 0.218 ms). Until
    session 22 the rule let requests enter one after another, and the bound was median TTFT / ((n - 1) / 2).
    """
    runs = set(serving_validation.USED_FOR_CALIBRATION) if runs is None else runs
    best, which = BOUNDS["frontend_ms"][1], None
    for run in serving_validation.load_runs():
        if run["id"] not in runs:
            continue
        args, _ = serving_validation.settings_of(run)
        ttft = run["measured"].get("ttft_ms_median")
        if args is None or not ttft or args.get("max_concurrency") or args["request_rate"] != math.inf:
            continue
        n = args["num_prompts"]
        bound = ttft / n - args.get("chat_template_ms", 0.0)
        if bound < best:
            best, which = bound, run["id"]
    return best, which


def fit_bounds(runs: set[str] | None = None) -> dict:
    """BOUNDS with frontend_ms capped by `frontend_ms_bound` of the fit runs."""
    return {**BOUNDS, "frontend_ms": (BOUNDS["frontend_ms"][0], frontend_ms_bound(runs)[0])}


def constants_of(x: np.ndarray, bounds: dict | None = None) -> dict:
    bounds = BOUNDS if bounds is None else bounds
    return {k: float(min(max(math.exp(v), bounds[k][0]), bounds[k][1])) for k, v in zip(SIMULATION_KEYS, x)}


@functools.cache
def short_answer_runs() -> frozenset[str]:
    """serving_validation.short_answer_runs, read once: the loss runs hundreds of times in a fit."""
    return frozenset(serving_validation.short_answer_runs())


def loss(constants: dict, runs: set[str]) -> float:
    rows, _ = serving_validation.table(constants, only=runs)
    short = short_answer_runs()
    total = 0.0
    for r in rows:
        if "error" in r:
            continue
        for key in ("out",) if r["id"] in short else ("out", "tpot", "itl"):
            if r.get(key):
                total += math.log(r[key]) ** 2
    return total


def nelder_mead(f, x0: np.ndarray, iterations: int = ITERATIONS, step: float = 0.5) -> tuple[np.ndarray, float]:
    """Plain Nelder-Mead (reflection 1, expansion 2, contraction 0.5, shrink 0.5), a fixed number of steps."""
    n = len(x0)
    simplex = [x0.copy()] + [x0 + step * np.eye(n)[i] for i in range(n)]
    values = [f(x) for x in simplex]
    for _ in range(iterations):
        order = np.argsort(values, kind="stable")
        simplex = [simplex[i] for i in order]
        values = [values[i] for i in order]
        centroid = np.mean(simplex[:-1], axis=0)
        worst = simplex[-1]
        xr = centroid + (centroid - worst)
        fr = f(xr)
        if fr < values[0]:
            xe = centroid + 2 * (centroid - worst)
            fe = f(xe)
            simplex[-1], values[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = xr, fr
        else:
            xc = centroid + 0.5 * (worst - centroid)
            fc = f(xc)
            if fc < values[-1]:
                simplex[-1], values[-1] = xc, fc
            else:
                best = simplex[0]
                simplex = [best] + [best + 0.5 * (x - best) for x in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    i = int(np.argmin(values))
    return simplex[i], values[i]


def round3(v: float) -> float:
    return float(f"{v:.3g}")


def round3_within(v: float, upper: float) -> float:
    """v to 3 significant figures, rounded down instead when rounding would take it above `upper`."""
    r = round3(v)
    if r <= upper:
        return r
    unit = 10 ** (math.floor(math.log10(upper)) - 2)
    return round3(math.floor(upper / unit) * unit)


def objective() -> tuple:
    """(the fit runs, their bounds, the loss as a function of the log-constants): what the fit and its continuations
    minimise."""
    runs = set(serving_validation.USED_FOR_CALIBRATION)
    bounds = fit_bounds(runs)
    return runs, bounds, lambda x: loss(constants_of(x, bounds), runs)


def fit(start: dict | None = None) -> dict:
    """The fitted constants (rounded), the runs they came from and the loss, as --write stores them (from FIT_START, or
    from `start`'s constants where it gives them)."""
    runs, bounds, f = objective()
    x, _ = nelder_mead(f, np.log([{**START, **(start or {})}[k] for k in SIMULATION_KEYS]))
    # restarted once from where it stopped, with a smaller simplex: a fixed number of steps in 8 dimensions stops
    # short of the minimum, and a fresh simplex escapes where the first has collapsed (session 10: the first pass
    # alone ended above the loss of the constants it replaced)
    x, _ = nelder_mead(f, x, step=0.25)
    # rounded to 3 significant figures, down where rounding would cross a bound (frontend_ms's is not round)
    constants = {k: round3_within(v, bounds[k][1]) for k, v in constants_of(x, bounds).items()}
    return {
        "about": "Step-time constants of kvlab.memory.scheduler.simulate, fitted by bench/serving_sim_calibration.py "
        "on the vLLM runs of tests/python/data/serving_runs.json listed in 'runs' (bench/serving_validation.py "
        "USED_FOR_CALIBRATION: the vLLM runs with a catalogue model and GPU, sorted by id, 1st, 3rd, 5th, ...; then, "
        "for each constant no fit run exercises, the first run by id that exercises it; then, for each weight-only "
        "kernel path's constant only one fit run exercises, the other run whose predicted output moves most with it); "
        "the other vLLM runs are held out. Loss: sum of log(predicted / measured)^2 of output tok/s, median "
        "TPOT and median inter-token latency (the last two not for answers under 16 tokens, whose TPOT and ITL are the "
        "API server's streaming); Nelder-Mead in the logarithms, restarted once from its end with a half-size simplex, each constant rounded to 3 significant figures. frontend_ms is "
        "bounded by the fit runs' own median TTFT (frontend_ms_bound: with all n requests sent at once, every "
        "TTFT is at least n x (frontend_ms + chat_template_ms)).",
        "constants": constants,
        "runs": sorted(runs),
        "loss": round(loss(constants, runs), 6),
        "fitted_by": "bench/serving_sim_calibration.py --write",
    }


IDENTIFIED = 0.01  # a constant is determined when halving or doubling it raises the fit loss by more than 1 %


def identifiability(constants: dict | None = None) -> list[dict]:
    """For each stored constant: the fit loss with it halved and doubled (the others as stored, bounds kept), and
    whether the fit runs determine it (either moves the loss by more than IDENTIFIED)."""
    runs = set(serving_validation.USED_FOR_CALIBRATION)
    bounds = fit_bounds(runs)
    constants = constants or serving.serving_benchmarks()["simulation"]["constants"]
    base = loss(constants, runs)
    rows = []
    for k in SIMULATION_KEYS:
        lo, hi = bounds[k]
        moved = {f: loss(dict(constants, **{k: min(max(constants[k] * f, lo), hi)}), runs) for f in (0.5, 2.0)}
        rows.append(
            {
                "constant": k,
                "value": constants[k],
                "loss": base,
                "half": moved[0.5],
                "double": moved[2.0],
                "determined": max(moved.values()) > base * (1 + IDENTIFIED),
            }
        )
    return rows


CONVERGE_STEPS = (0.25, 0.1, 0.1, 0.1, 0.1)  # the simplex of each restart
CONVERGE_TOLERANCE = 0.001  # stop when a restart lowers the loss by less than this share


def restarts_until_flat(f, x: np.ndarray, steps=CONVERGE_STEPS, tolerance=CONVERGE_TOLERANCE) -> tuple:
    """Nelder-Mead restarted from its own best point, one restart per step in `steps`, until a restart lowers f by
    less than `tolerance` of it: (x, f(x), the value after each restart)."""
    fx = f(x)
    trail = []
    for step in steps:
        x, new = nelder_mead(f, x, step=step)
        trail.append(new)
        flat = (fx - new) / fx < tolerance
        fx = new
        if flat:
            break
    return x, fx, trail


def continued(constants: dict | None = None) -> dict:
    """The fit continued from `constants` (default: the stored ones; two more restarts, simplex steps 0.25 and 0.1): whether the stored
    fit had reached its minimum, and what the constants it reaches give on the held-out runs. Writes nothing.

    Session 21 ran it: the stored fit (loss 0.3182) went on to 0.3111, and the held-out vLLM medians from output 12.5 %
    and TPOT 13.7 % to 14.6 % and 15.3 %: the held-out figures move by about 2 points with the optimizer alone
    (bench/results/2026-12-07-serving-session21.md)."""
    runs, bounds, f = objective()
    stored = constants or serving.serving_benchmarks()["simulation"]["constants"]
    stored = {k: stored[k] for k in SIMULATION_KEYS}
    x = np.log([stored[k] for k in SIMULATION_KEYS])
    start = f(x)
    x, _, _ = restarts_until_flat(f, x, steps=(0.25, 0.1), tolerance=0.0)  # both restarts, whatever they gain
    reached = {k: round3_within(v, bounds[k][1]) for k, v in constants_of(x, bounds).items()}
    rows, _ = serving_validation.table(stored)
    then, _ = serving_validation.table(reached)
    held = serving_validation.calibration_split()[1]
    return {
        "stored_loss": start,
        "reached": reached,
        "reached_loss": loss(reached, runs),
        "held_out_stored": serving_validation.accuracy(rows, held)["vllm_held_out"],
        "held_out_reached": serving_validation.accuracy(then, held)["vllm_held_out"],
    }


def fit_and_converge(start: dict | None = None) -> dict:
    """The comparison sessions 21-23 judged changes by: `fit()` (what --write stores), then continued from it until a
    restart lowers the loss by less than 0.1 % (`restarts_until_flat`), so two models are compared at their minima
    and not at wherever the stored procedure's fixed number of steps leaves each. `start`: `fit()`'s start (session
    24 fitted a model from two starts: its fit from FIT_START ended in a basin above the loss it can reach)."""
    fitted = fit(start)
    runs, bounds, f = objective()
    x, _, trail = restarts_until_flat(f, np.log([fitted["constants"][k] for k in SIMULATION_KEYS]))
    converged = {k: round3_within(v, bounds[k][1]) for k, v in constants_of(x, bounds).items()}
    return {
        "fit": fitted,
        "converged": {"constants": converged, "loss": loss(converged, runs), "restarts": trail},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="store the fitted constants in serving_benchmarks.json")
    parser.add_argument(
        "--identify",
        action="store_true",
        help="only print, for each stored constant, the fit loss with it halved and doubled (does a fit run pin it?)",
    )
    parser.add_argument(
        "--converged",
        action="store_true",
        help="only continue the fit from the stored constants and print the loss and held-out medians it reaches",
    )
    parser.add_argument(
        "--fit-and-converge",
        type=Path,
        metavar="DIR",
        help="fit, continue to convergence, and write DIR/fit.json and DIR/converged.json (a model change's "
        "comparison: bench/serving_validation.py --constants DIR/converged.json --rows/--compare); writes nothing else",
    )
    parser.add_argument(
        "--start",
        type=Path,
        metavar="JSON",
        help="with --fit-and-converge: start the fit from this file's simulation.constants (FIT_START for any it lacks)",
    )
    args = parser.parse_args(argv)
    if args.fit_and_converge:
        start = json.loads(args.start.read_text(encoding="utf-8"))["simulation"]["constants"] if args.start else None
        r = fit_and_converge(start)
        args.fit_and_converge.mkdir(parents=True, exist_ok=True)
        for name in ("fit", "converged"):
            (args.fit_and_converge / f"{name}.json").write_text(
                json.dumps({"simulation": r[name]}, indent=1) + "\n", encoding="utf-8"
            )
            print(
                f"{name}: loss {r[name]['loss']:.4f}; "
                + ", ".join(f"{k} {v:g}" for k, v in r[name]["constants"].items())
            )
        return 0
    if args.converged:
        r = continued()
        print(f"loss: stored {r['stored_loss']:.4f}, continued {r['reached_loss']:.4f}")
        print("constants reached: " + ", ".join(f"{k} {v:g}" for k, v in r["reached"].items()))
        for name, group in (("stored", r["held_out_stored"]), ("continued", r["held_out_reached"])):
            print(f"vLLM held out, {name} constants: " + json.dumps(group))
        return 0
    if args.identify:
        print("| constant | stored | loss | x 0.5 | x 2 | determined by the fit runs |\n|---|---|---|---|---|---|")
        for r in identifiability():
            print(
                f"| {r['constant']} | {r['value']:g} | {r['loss']:.4f} | {r['half']:.4f} | {r['double']:.4f} | "
                f"{'yes' if r['determined'] else 'no: within 1 %'} |"
            )
        return 0
    result = fit()
    for k in SIMULATION_KEYS:
        print(f"  {k:<22} {result['constants'][k]:g}")
    print(f"  loss {result['loss']:.4f} over {len(result['runs'])} runs: {', '.join(result['runs'])}")
    if args.write:
        serving_validation.store("simulation", result)
        print(f"wrote the fitted constants to {DATA.relative_to(ROOT)} (key 'simulation')")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
