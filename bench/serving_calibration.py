#!/usr/bin/env python3
"""kvlab's decode speed against published benchmarks, before and after the efficiency calibration.

    .venv/bin/python bench/serving_calibration.py           # print the table
    .venv/bin/python bench/serving_calibration.py --write   # also refit the efficiency table in
                                                            # kvlab/data/serving_benchmarks.json

Data: pycode/kvlab/data/serving_benchmarks.json (each point's URL, date, engine and version, model,
GPU, concurrency, prompt and answer lengths, and the measured time per output token). For each point
kvlab predicts one decode step at the batch the engine would run (the concurrency, capped by vLLM's
max_num_seqs and by the chats that fit in memory), first at the roofline (efficiency 1.0, what kvlab
said before) and then with the calibrated efficiency. Ratio = measured / predicted: above 1 kvlab is
optimistic, below 1 pessimistic.

The fit: each point's achieved efficiency (roofline step / measured TPOT) at its batch; the regime
table (batch 1, medium at 16, saturated at 64; log-linear in log-batch between, flat outside) is the
least-squares fit of log(efficiency) (kvlab.memory.serving.fit_efficiency). --write stores it with
the points each anchor came from.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "pycode"))

from kvlab.memory import serving  # noqa: E402

DATA = ROOT / "pycode" / "kvlab" / "data" / "serving_benchmarks.json"


def refit() -> dict:
    samples = []
    for point in serving.serving_benchmarks()["points"]:
        roof = serving.benchmark_prediction(point, calibrated=False)
        samples.append((roof["batch"], roof["achieved_efficiency"], point["id"]))
    return serving.fit_efficiency(samples)


def table() -> list[dict]:
    rows = []
    for point in serving.serving_benchmarks()["points"]:
        before = serving.benchmark_prediction(point, calibrated=False)
        after = serving.benchmark_prediction(point, calibrated=True)
        rows.append({"point": point, "before": before, "after": after})
    return rows


def spread(ratios: list[float]) -> str:
    logs = [abs(math.log(r)) for r in ratios]
    return f"median |log ratio| = x{math.exp(statistics.median(logs)):.2f}, worst x{math.exp(max(logs)):.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="refit and store the efficiency table")
    args = parser.parse_args(argv)
    if args.write:
        data = json.loads(DATA.read_text(encoding="utf-8"))
        data["fit"] = refit()
        DATA.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        serving.serving_benchmarks.cache_clear()
        print(f"wrote the fitted efficiency table to {DATA.relative_to(ROOT)}")
    for a in serving.efficiency_table():
        print(
            f"  {a['regime']:<10} batch {a['batch']:>3}: efficiency {a['efficiency']:.3f}  ({len(a['points'])} points)"
        )
    print()
    print(
        "| point | engine | model | GPU | conc. | in/out | batch run | measured TPOT ms | "
        "before: roofline ms | ratio | after: eff. | predicted ms | ratio |"
    )
    print("|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
    rows = table()
    for r in rows:
        p, b, a = r["point"], r["before"], r["after"]
        print(
            f"| {p['id']} | {p['engine']} {p['engine_version']} | {p['model']} | {p['gpu']} | {p['concurrency']} | "
            f"{p['input_tokens']}/{p['output_tokens']} | {a['batch']} | {a['measured_ms']:.2f} | "
            f"{b['predicted_ms']:.2f} | {b['ratio']:.2f}x | {a['efficiency']:.2f} | {a['predicted_ms']:.2f} | "
            f"{a['ratio']:.2f}x |"
        )
    print()
    print(f"before (roofline): {spread([r['before']['ratio'] for r in rows])}")
    print(f"after (calibrated): {spread([r['after']['ratio'] for r in rows])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
