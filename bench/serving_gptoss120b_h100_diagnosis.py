"""gpt-oss-120b on one H100 (the GPUStack vLLM 0.10.2 family): what the simulation does, and what the runs imply.

    PYTHONPATH=pycode .venv/bin/python bench/serving_gptoss120b_h100_diagnosis.py [--sweep]

A diagnosis, not a fit: nothing here sets a constant (bench/results/2026-12-05-serving-simulation-session9.md).
For each run of the family (serving_runs.json, simulated with bench/serving_validation.py's settings_of):

1. the simulation step by step: the KV pool (blocks, tokens), requests running per step, steps with a prefill
   chunk, preemptions, a sample of the trace (simulate(trace=True));
2. a decode step's time split into weights, KV read, compute and CPU, for the batch the simulation runs and for
   the batch the run's own figures imply (the same formulas as simulate's step_time);
3. the run's own figures: requests decoding at once = output tok/s x mean TPOT (each decoding request emits one
   token per TPOT), and the KV blocks those requests hold (ceil(context / 16) full-attention blocks + the
   sliding window's ~9), i.e. the pool vLLM must have had;
4. with --sweep, the same runs with the pool forced to other sizes (a monkeypatch of vllm_blocks): how TPOT
   moves with the pool. Held-out runs are in this table: it is read, never fitted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))
sys.path.insert(0, str(ROOT / "bench"))

import kvlab.memory.scheduler as sched  # noqa: E402
from kvlab.memory.calibration import serving_pool  # noqa: E402
from kvlab.memory.catalogue import model_architecture  # noqa: E402
from kvlab.memory.kv_bytes import kv_cache_bytes  # noqa: E402
from kvlab.memory.serving import attention_flops  # noqa: E402
from kvlab.memory.weights import model_weights_bytes, weights_bytes  # noqa: E402
from serving_validation import load_runs, settings_of, totals  # noqa: E402

GIB = 2**30
RUNS = [
    "gpustack-h100-gptoss120b-vllm-sharegpt",  # fit
    "gpustack-h100-gptoss120b-vllm-tp1-random2k",
    "gpustack-h100-gptoss120b-vllm-tp1-random4k",
    "gpustack-h100-gptoss120b-vllm-tp1-random32k",
    "gpustack-h100-gptoss120b-vllm-tp1-random128",
    "gpustack-h100-gptoss120b-vllm-tp1-sharegpt-c4",
]


def decode_split(n: int, context: int) -> dict:
    """One decode step of n requests at `context` tokens, in ms, by simulate's formulas (H100 SXM, MXFP4 Triton)."""
    c = sched.simulation_constants()
    arch = model_architecture("gpt-oss-120b")
    total = float(model_weights_bytes(arch, "MXFP4")["bytes"])
    rest = arch.params - arch.expert_params
    shared = float(weights_bytes(rest, "BF16")["bytes"])
    s = sched._routed_share(arch)
    bw = 3350e9 * c["bandwidth_efficiency"]
    peak = 989.5e12
    weights = (shared + (total - shared) * (1 - (1 - s) ** n)) / bw
    kv = n * kv_cache_bytes(arch, context, "bf16")["total_bytes"] / bw
    flops_experts = 2 * (arch.active_params - rest) * n
    flops_dense = 2 * rest * n + n * attention_flops(arch, context)
    compute = (
        flops_experts / peak / c["weight_only_fp4_triton_compute_efficiency"]
        + flops_dense / peak / c["compute_efficiency"]
    )
    cpu = c["step_overhead_ms"] / 1e3 + n * c["request_overhead_us"] / 1e6
    return {
        "weights": weights * 1e3,
        "kv": kv * 1e3,
        "compute": compute * 1e3,
        "cpu": cpu * 1e3,
        "step": (max(weights + kv, compute) + cpu) * 1e3,
    }


def implied(run: dict) -> dict:
    """What the run's own figures say: requests decoding at once, and the blocks they hold
    (kvlab.memory.calibration.serving_pool, which the Triton path's reserve is read from for the fit run)."""
    m, w = run["measured"], run["workload"]
    n_in, n_out = totals(run["verbatim"])
    answer = n_out / m["completed"]
    pool = serving_pool(run)
    return {
        "prompt": n_in / m["completed"],
        "answer": answer,
        "decoding": pool["decoding"],
        "little": m["request_throughput"] * m["tpot_ms_mean"] / 1e3 * (answer - 1),
        "blocks_each": pool["blocks_each"],
        "blocks": pool["blocks"],
        "gib": pool["gib"],
        "concurrency_cap": w.get("max_concurrency"),
    }


def simulate_run(run: dict, pool_gib: float | None = None) -> dict:
    args, _ = settings_of(run)
    args = dict(args)
    model, gpu = args.pop("model"), args.pop("gpu")
    original = sched.vllm_blocks
    if pool_gib is not None:
        sched.vllm_blocks = lambda layout, available: original(layout, pool_gib * GIB)
    try:
        return sched.simulate(model, gpu, **args, trace=True)
    finally:
        sched.vllm_blocks = original


def mean_running(res: dict) -> float:
    """Requests running at once, averaged over the simulation's steps (its trace)."""
    steps = np.array([x["steps"] for x in res["trace"]])
    running = np.array([x["running"] for x in res["trace"]])
    return float((steps * running).sum() / steps.sum())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sweep", action="store_true", help="also force the pool to 2, 2.5, 3, 4, 5 GiB (read only)")
    args = ap.parse_args()
    runs = {r["id"]: r for r in load_runs()}
    print("## The simulation, run by run\n")
    for rid in RUNS:
        run, res = runs[rid], simulate_run(runs[rid])
        m, pool, tr = run["measured"], res["kv_pool"], res["trace"]
        prefill = np.array([x["prefill_tokens"] for x in tr])
        print(f"### {rid}\n")
        print(f"- flags: `{res['flags']}`")
        print(
            f"- pool: {pool['blocks']:,} blocks of 16 tokens x 18 layers ({pool['available_bytes'] / GIB:.2f} GiB; "
            f"'GPU KV cache size' {pool['tokens']:,} tokens){' (close call: the optimistic edge)' if pool.get('close_call') else ''}"
        )
        print(
            f"- {res['steps']:,} steps; running per step mean {mean_running(res):.1f}, max "
            f"{res['max_running']}; {int((prefill > 0).sum())} steps with a prefill chunk; preemptions {res['preemptions']}"
        )
        print(
            f"- predicted / measured: output {res['output_tok_s']:,.0f} / {m['output_tok_s']:,.0f} tok/s, TTFT p50 "
            f"{res['ttft_ms']['median']:,.0f} / {m['ttft_ms_median']:,.0f} ms, TPOT p50 {res['tpot_ms']['median']:.2f} / "
            f"{m['tpot_ms_median']:.2f} ms, ITL p50 {res['itl_ms']['median']:.2f} / {m['itl_ms_median']:.2f} ms, "
            f"duration {res['duration_s']:.1f} / {m['duration_s']:.1f} s"
        )
        print(
            "\n| t (s) | steps | running | tokens | prefill tokens | free blocks | preempted |\n|---|---|---|---|---|---|---|"
        )
        for k in list(range(min(8, len(tr)))) + list(range(len(tr) // 2, min(len(tr), len(tr) // 2 + 4))):
            x = tr[k]
            print(
                f"| {x['t']:.2f} | {x['steps']} | {x['running']} | {x['tokens_per_step']} | {x['prefill_tokens']} | "
                f"{x['free_blocks']} | {x['preempted']} |"
            )
        print()
    print("## What the runs' own figures imply (output tok/s x mean TPOT = requests decoding at once)\n")
    print(
        "| run | prompt / answer (mean) | decoding at once (out x TPOT) | Little (req/s x TPOT x (answer - 1)) | "
        "blocks each | blocks held | GiB | simulation: running mean, pool blocks |\n|---|---|---|---|---|---|---|---|"
    )
    for rid in RUNS:
        run = runs[rid]
        imp = implied(run)
        res = simulate_run(run)
        print(
            f"| {rid} | {imp['prompt']:,.0f} / {imp['answer']:,.0f} | {imp['decoding']:.1f} | {imp['little']:.1f} | "
            f"{imp['blocks_each']} | {imp['blocks']:,.0f} | {imp['gib']:.2f} | "
            f"{mean_running(res):.1f}, {res['kv_pool']['blocks']:,} |"
        )
    print("\n## A decode step, split (ms; simulate's formulas, stored constants)\n")
    print("| batch x context | weights | KV read | compute | CPU | step |\n|---|---|---|---|---|---|")
    for n, ctx in (
        (1, 32050),
        (2, 32050),
        (4, 330),
        (9, 4070),
        (15, 4070),
        (18, 2050),
        (28, 2050),
        (60, 400),
        (157, 400),
    ):
        s = decode_split(n, ctx)
        print(
            f"| {n} x {ctx:,} | {s['weights']:.2f} | {s['kv']:.2f} | {s['compute']:.2f} | {s['cpu']:.2f} | {s['step']:.2f} |"
        )
    if args.sweep:
        print("\n## The pool forced (diagnosis only: held-out runs, never fitted)\n")
        print("| run | pool GiB | blocks | output | TTFT p50 | TPOT p50 | ITL p50 ms | running mean | preemptions |")
        print("|---|---|---|---|---|---|---|---|---|")
        for rid in RUNS[:5]:
            run, m = runs[rid], runs[rid]["measured"]
            for gib in (None, 2.0, 2.5, 3.0, 4.0, 5.0):
                res = simulate_run(run, gib)
                print(
                    f"| {rid} | {'stored' if gib is None else gib} | {res['kv_pool']['blocks']:,} | "
                    f"{res['output_tok_s'] / m['output_tok_s']:.2f} | {res['ttft_ms']['median'] / m['ttft_ms_median']:.2f} | "
                    f"{res['tpot_ms']['median'] / m['tpot_ms_median']:.2f} | {res['itl_ms']['median']:.1f} | "
                    f"{mean_running(res):.1f} | {res['preemptions']} |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
