"""The scheduler simulation against published serving benchmark runs: predicted / measured.

    .venv/bin/python bench/serving_validation.py [--markdown]

Each run of tests/python/data/serving_runs.json whose model is in kvlab's catalogue is simulated
with kvlab.memory.scheduler.simulate as the run was made: its GPU and tensor-parallel size, its
weights, its workload (num_prompts, max_concurrency or request rate, lengths; ShareGPT runs as
kvlab's "sharegpt-like" lengths with the means the run's own totals give: total input tokens /
prompts and total generated tokens / prompts, read off its printed result). Printed per run:
predicted / measured output tokens per second, median TTFT and median TPOT; then the median
|ratio - 1| and the share of runs within 2x, split into runs whose figures set one of kvlab's
efficiencies and runs never used for that (today: none of these runs set an efficiency; the
efficiencies come from pycode/kvlab/data/serving_benchmarks.json, a different set of points).

A run is skipped, with its reason, when its model or GPU is not in the catalogue or its lengths
are not known. A run the engine completed and kvlab calls "does not fit" is counted and named.
The machine's speed does not enter: every figure is simulated time.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))

from kvlab.memory.catalogue import get_gpu  # noqa: E402
from kvlab.memory.scheduler import simulate  # noqa: E402

RUNS = ROOT / "tests" / "python" / "data" / "serving_runs.json"

# a GPU the source names without its form factor: the one kvlab assumes, said in the table
ASSUMED_GPU = {
    "H100": "h100-sxm",
    "H100 80GB": "h100-sxm",
    "H100-80GB": "h100-sxm",
    "NVIDIA H100 80GB HBM3": "h100-sxm",
}

# the run's published weights, as kvlab's weights formats name them
WEIGHTS = [("MXFP4", "MXFP4"), ("FP8", "FP8"), ("AWQ", "INT4"), ("INT4", "INT4"), ("BF16", "BF16")]

# Runs whose measured figures set an efficiency of the simulation (bench/serving_calibration.py):
# none yet; the efficiencies are fitted on serving_benchmarks.json's points.
USED_FOR_CALIBRATION: set[str] = set()


def totals(verbatim: str) -> tuple[int | None, int | None]:
    def grab(label: str) -> int | None:
        m = re.search(label + r"[^\n:]*:\s*([\d,]+)", verbatim)
        return int(m.group(1).replace(",", "")) if m else None

    return grab("Total input tokens"), grab("Total generated tokens")


def settings_of(run: dict) -> tuple[dict | None, str]:
    """simulate()'s arguments for a run, or None and why not."""
    if not run.get("model"):
        return None, "model not in kvlab's catalogue"
    gpu = run.get("gpu") or ASSUMED_GPU.get((run.get("gpu_as_published") or "").strip())
    if not gpu:
        return None, f"GPU {run.get('gpu_as_published')!r} not in kvlab's catalogue"
    try:
        get_gpu(gpu)
    except ValueError:
        return None, f"GPU {gpu} not in kvlab's catalogue"
    w = run["workload"]
    n = w.get("num_prompts")
    prompts_in, prompts_out = totals(run.get("verbatim") or "")
    if n is None and (m := re.search(r"Successful requests:\s*([\d,]+)", run.get("verbatim") or "")):
        n = int(m.group(1).replace(",", ""))
    if not n:
        return None, "number of prompts not stated"
    args: dict = {"num_prompts": int(n)}
    if w.get("dataset") == "sharegpt" or w.get("input_len") is None:
        if not (prompts_in and prompts_out):
            return None, "lengths not stated (no input/output lengths, no totals)"
        args |= {
            "dataset": "sharegpt-like",
            "input_len": round(prompts_in / n),
            "output_len": round(prompts_out / n),
        }
    else:
        args |= {"dataset": "random", "input_len": int(w["input_len"]), "output_len": int(w["output_len"])}
        if w.get("random_range_ratio"):
            args["random_range_ratio"] = float(w["random_range_ratio"])
    if w.get("max_concurrency"):
        args["max_concurrency"] = int(w["max_concurrency"])
    rate = w.get("request_rate")
    args["request_rate"] = math.inf if rate in (None, "inf", math.inf) else float(rate)
    weights = next((k for key, k in WEIGHTS if key in (run.get("weights") or "").upper()), "BF16")
    s = run.get("settings") or {}
    args |= {
        "weights_format": weights,
        "n_gpus": int(run.get("tp") or 1),
        **({"max_model_len": int(s["max_model_len"])} if s.get("max_model_len") else {}),
        **({"max_num_seqs": int(s["max_num_seqs"])} if s.get("max_num_seqs") else {}),
        **({"max_num_batched_tokens": int(s["max_num_batched_tokens"])} if s.get("max_num_batched_tokens") else {}),
        **({"gpu_memory_utilization": float(s["gpu_memory_utilization"])} if s.get("gpu_memory_utilization") else {}),
    }
    note = "" if run.get("gpu") else f"GPU assumed {gpu}"
    return {"model": run["model"], "gpu": gpu, **args}, note


def ratio(pred: float | None, meas: float | None) -> float | None:
    if pred is None or meas in (None, 0):
        return None
    return pred / meas


def table() -> tuple[list[dict], list[tuple[str, str]]]:
    rows, skipped = [], []
    for run in json.loads(RUNS.read_text(encoding="utf-8"))["runs"]:
        args, note = settings_of(run)
        if args is None:
            skipped.append((run["id"], note))
            continue
        model, gpu = args.pop("model"), args.pop("gpu")
        m = run["measured"]
        try:
            r = simulate(model, gpu, **args)
        except ValueError as e:
            rows.append({"id": run["id"], "error": str(e), "note": note, "completed_by_engine": True})
            continue
        rows.append(
            {
                "id": run["id"],
                "engine": run["engine"],
                "note": note,
                "used": run["id"] in USED_FOR_CALIBRATION,
                "out": ratio(r["output_tok_s"], m.get("output_tok_s")),
                "ttft": ratio(r["ttft_ms"]["median"], m.get("ttft_ms_median")),
                "tpot": ratio(r["tpot_ms"]["median"], m.get("tpot_ms_median")),
                "pred_out": r["output_tok_s"],
                "meas_out": m.get("output_tok_s"),
                "preemptions": r["preemptions"],
            }
        )
    return rows, skipped


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def summary(rows: list[dict], key: str) -> str:
    vals = [r[key] for r in rows if r.get(key) is not None]
    if not vals:
        return "no runs"
    med = statistics.median(abs(v - 1) for v in vals)
    within = sum(0.5 <= v <= 2 for v in vals)
    return f"median |pred/meas − 1| {med:.0%}, within 2×: {within} of {len(vals)}"


def main() -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    rows, skipped = table()
    print("| run | engine | output tok/s pred / meas | ratio | TTFT p50 ratio | TPOT p50 ratio | preemptions | note |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['id']} | | **refused: {r['error']}** | | | | | {r['note']} |")
            continue
        print(
            f"| {r['id']} | {r['engine']} | {r['pred_out']:,.0f} / {r['meas_out']:,.0f} | {fmt(r['out'])} | "
            f"{fmt(r['ttft'])} | {fmt(r['tpot'])} | {r['preemptions']} | {r['note']} |"
        )
    print()
    refused = [r["id"] for r in rows if "error" in r]
    print(f"Runs the engine completed that kvlab refuses: {len(refused)} {refused if refused else ''}")
    for group, members in (
        ("never used for an efficiency", [r for r in rows if not r.get("used")]),
        ("used for an efficiency", [r for r in rows if r.get("used")]),
    ):
        ok = [r for r in members if "error" not in r]
        print(
            f"{group} ({len(ok)} runs): output tok/s {summary(ok, 'out')}; TTFT {summary(ok, 'ttft')}; "
            f"TPOT {summary(ok, 'tpot')}"
        )
    print()
    print("Skipped:")
    for run_id, why in skipped:
        print(f"- {run_id}: {why}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
