#!/usr/bin/env python3
"""Fit the share of the per-request time that vLLM's --async-scheduling hides, on runs made with and without it.

    .venv/bin/python bench/serving_async_calibration.py           # fit and print (nothing written)
    .venv/bin/python bench/serving_async_calibration.py --write   # also store it in
                                                                  # kvlab/data/serving_benchmarks.json, "async_scheduling"

kvlab.memory.scheduler.simulate times a step as the GPU's part plus the CPU's (step_overhead_ms + requests x
request_overhead_us, both fitted by bench/serving_sim_calibration.py on runs without --async-scheduling). With
the flag, vLLM schedules step n + 1 while the GPU runs step n; the per-step time hides, and `hidden_share` of the
per-request time: the rest of it is GPU work, or CPU work the overlap does not cover, and stays in the step.
Hiding all of it predicted gains the engine does not show: GPUStack's A100 pages run one ShareGPT workload with and
without the flag (vLLM 0.11.0, gpt-oss-20b: 4,620 -> 5,180 output tok/s, +12 %; vLLM 0.10.2, gpt-oss-120b: 2,276 ->
2,372, +4 %), where hiding all of it predicted +46 % and +22 % (bench/results/2026-12-06-serving-session18.md).

The runs (ASYNC_FIT_RUNS): the runs with --async-scheduling of the pages that state the same workload, card and
launch with and without it and nothing else changed (those two pages, section 2 against section 1). Their
twins without the flag, and every other run with it, stay held out. The other constants are the stored ones (no
run of their fit uses the flag, so they do not depend on this share). The loss: the sum over those runs of
log(predicted / measured)^2 of output tok/s and median TPOT, minimised over the share by a grid of 0.05 and then
of 0.01 around its best (the same steps on every machine); --write stores the share to 2 decimals.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import serving_validation  # noqa: E402
from kvlab.memory.scheduler import simulate  # noqa: E402
from kvlab.memory.serving import BENCHMARKS_FILE  # noqa: E402

ASYNC_FIT_RUNS = serving_validation.ASYNC_FIT_RUNS


@functools.cache
def fit_runs() -> tuple[tuple[dict, dict], ...]:
    """(simulate's arguments, measured figures) of each run in ASYNC_FIT_RUNS, read once: the fit runs ~30 losses."""
    out = []
    for run in serving_validation.load_runs():
        if run["id"] in ASYNC_FIT_RUNS:
            out.append((serving_validation.settings_of(run)[0], run["measured"]))
    return tuple(out)


def loss(share: float) -> float:
    total = 0.0
    for settings, m in fit_runs():
        args = dict(settings)
        model, gpu = args.pop("model"), args.pop("gpu")
        r = simulate(model, gpu, **args, async_hidden_share=share)
        total += math.log(r["output_tok_s"] / m["output_tok_s"]) ** 2
        if m.get("tpot_ms_median"):
            total += math.log(r["tpot_ms"]["median"] / m["tpot_ms_median"]) ** 2
    return total


def fit() -> dict:
    """The fitted share (2 decimals), the runs and the loss, as --write stores them."""
    coarse = min((round(0.05 * i, 2) for i in range(21)), key=loss)
    fine = [round(coarse + 0.01 * i, 2) for i in range(-4, 5) if 0 <= coarse + 0.01 * i <= 1]
    share = min(fine, key=loss)
    return {
        "about": "The share of the per-request time (request_overhead_us x requests in the step) that vLLM's "
        "--async-scheduling hides under the GPU's time in kvlab.memory.scheduler.simulate (the per-step time hides "
        "whole); fitted by bench/serving_async_calibration.py on the runs with the flag of GPUStack's A100 gpt-oss "
        "pages, which run the same ShareGPT workload with and without it (sections 1 and 2), the other constants "
        "as stored. Loss: sum of log(predicted / measured)^2 of output tok/s and median TPOT; a grid of 0.05, then "
        "0.01 around its best.",
        "hidden_share": share,
        "runs": sorted(ASYNC_FIT_RUNS),
        "loss": round(loss(share), 6),
        "loss_hiding_all": round(loss(1.0), 6),
        "fitted_by": "bench/serving_async_calibration.py --write",
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="store the share in serving_benchmarks.json")
    args = ap.parse_args()
    result = fit()
    print(json.dumps(result, indent=1))
    if args.write:
        serving_validation.store("async_scheduling", result)
        print(f"wrote {BENCHMARKS_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
