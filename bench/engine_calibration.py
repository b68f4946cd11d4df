#!/usr/bin/env python3
"""How faithful kvlab is to real engine start-ups, and the calibration that makes it so.

    .venv/bin/python bench/engine_calibration.py           # print the tables
    .venv/bin/python bench/engine_calibration.py --write   # also rewrite the fitted keys of kvlab/data/engines.json

Data: tests/python/data/engine_logs/calibration.json (each log's URL, GPU, command, and the
figures read off it). Three tables:

1. Reading: `explain-log` on every log whose model kvlab can resolve; the share of the
   logged KV figures (bytes, blocks, tokens, concurrency) it rebuilds within 2 %. Then every
   SGLang and TensorRT-LLM log (with its model where the entry names one in the catalogue, else
   read alone): the lines read, the figures rebuilt, and what kvlab does not model yet.
2. Prediction: for every vLLM log whose GPU, settings and KV budget are known, the KV memory
   kvlab predicts from the model and the card alone (no log), before (nominal memory, the
   old fixed reserve, 2048 batched tokens everywhere) and after (the engine model of
   kvlab.memory.engines), and whether the verdict (starts / refuses) matches.
3. Fit: the reserve each log implies (util x driver memory - weights - available KV) against
   the model's estimate; --write stores the fitted constant and the error band.
4. CUDA graphs (vLLM 0.21+): the estimate each log prints ("Estimated CUDA graph memory"), or implies
   (|util - the util it is equivalent to| x driver memory); a constant fitted on the logs that print it
   under 0.21's default (subtracted), checked on the others; --write stores it under versions["0.21+"].
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

from kvlab.memory import engines  # noqa: E402
from kvlab.memory.calibration import (  # noqa: E402
    ENGINES_JSON,
    TOLERANCE,
    derive,
    prediction_table,
    reading_table,
)
from kvlab.memory.catalogue import get_gpu  # noqa: E402
from kvlab.memory.calibration import calibration, gpu_of, log_text, model_of  # noqa: E402
from kvlab.memory.engine_logs import explain_engine_log, parse_engine_log  # noqa: E402

OTHER_ENGINES = ("sglang", "tensorrt-llm")


def fit(write: bool) -> None:
    derived = derive()
    print("\n## Driver memory (total_gpu_memory in the logs)\n")
    print("| card | nominal GiB | driver GiB | ratio |\n|---|---|---|---|")
    for gid, d in derived["driver_memory"].items():
        nominal = get_gpu(gid)["memory_gib"]
        print(f"| {gid} | {nominal} | {d['gib']:.2f} | {d['gib'] / nominal:.4f} |")
    print("\n## Weights as loaded where the loader takes 2 % more than the formula (GiB)\n")
    print("| model | format | logged | source |\n|---|---|---|---|")
    for w in derived["loaded_weights"]:
        print(f"| {w['model']} | {w['format']} | {w['gib']:.2f} | {w['source']} |")
    print("\n## Reserve each log implies (util x driver memory - weights - available KV), GiB\n")
    print("| log | engine | implied | sampler | activations | fixed term it implies |\n|---|---|---|---|---|---|")
    for r in derived["general"]:
        f = r["features"]
        rest = r["implied"] - f["sampler"] - f["activations"]
        print(
            f"| {r['case']['entry']['file']} | {r['case']['era']} | {r['implied']:.2f} | {f['sampler']:.2f} | "
            f"{f['activations']:.2f} | {rest:.2f} |"
        )
    fitted = derived["reserve_fit"]
    print(
        f"\nfixed term {fitted['coefficients']['fixed']:.2f} GiB (median), band ±{fitted['band_gib']:.2f} GiB "
        f"on {fitted['n_logs']} logs; measured per model: "
        + ", ".join(f"{m['model']} {m['format']} {m['gib']:.2f} GiB" for m in derived["measured_reserve"])
    )
    if write:
        data = json.loads(ENGINES_JSON.read_text(encoding="utf-8"))
        for key in ("driver_memory", "driver_ratio", "reserve_fit", "measured_reserve", "loaded_weights"):
            data["vllm"][key] = derived[key]
        ENGINES_JSON.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        engines.engine_data.cache_clear()
        print(f"wrote {ENGINES_JSON.relative_to(ROOT)}")


def cuda_graph_rows() -> list[dict]:
    """Every calibration log with vLLM's CUDA graph estimate, printed or implied by its utilization lines.

    Read with explain-log's own readers (engine_logs.parse_engine_log). The fit set is the logs that print
    the estimate in GiB under 0.21's default (the estimate subtracted); the rest are held out."""
    rows = []
    for entry in calibration():
        if entry["engine"] != "vllm":
            continue
        v = parse_engine_log(log_text(entry))["vllm"]
        cg, eq = v.get("cuda_graph_gib"), v.get("equivalent_util")
        if not cg and not eq:
            continue
        card = gpu_of(entry)
        if cg:
            gib, how = cg["value"], f"printed (line {cg['line']})"
        elif card:
            total = engines.driver_memory(card)["bytes"] / engines.GIB
            diff = abs(float(eq["util"]) - float(eq["without"] if eq["subtracted"] else eq["with"]))
            gib, how = diff * total, f"abs({eq['util']} - {eq['without']}) x {total:.2f} GiB ({card['id']})"
        else:
            continue
        rows.append(
            {
                "file": entry["file"],
                "source": entry["source"],
                "gib": gib,
                "how": how,
                "subtracted": bool(eq["subtracted"]) if eq else True,
                "in_fit": bool(cg) and (not eq or eq["subtracted"]),
                "tp": entry.get("args", {}).get("tensor_parallel_size") or entry.get("n_gpus") or 1,
                "model": entry.get("model_id") or "not named",
                "version": entry.get("engine_version") or "not printed",
            }
        )
    return rows


def cuda_graph_fit(write: bool) -> dict:
    rows = cuda_graph_rows()
    fit_rows = [r for r in rows if r["in_fit"]]
    value = statistics.median(r["gib"] for r in fit_rows)
    band = math.ceil(max(max(abs(r["gib"] - value) for r in fit_rows), 0.05) * 20) / 20  # up to 0.05 GiB
    print("\n## 4. CUDA graph estimate (vLLM 0.21+ subtracts it from the KV budget), GiB per GPU\n")
    print("| log | vLLM | model | TP | estimate | how | subtracted | role | kvlab | error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        r["error"] = value - r["gib"]
        print(
            f"| {r['file']} | {r['version']} | {r['model']} | {r['tp']} | {r['gib']:.2f} | {r['how']} | "
            f"{'yes' if r['subtracted'] else 'no (before 0.19, opt-in)'} | {'fit' if r['in_fit'] else 'held out'} | "
            f"{value:.3f} | {r['error']:+.2f} |"
        )
    held = [r for r in rows if not r["in_fit"]]
    print(
        f"\nconstant {value:.3f} GiB (median of {len(fit_rows)}), fit error up to {band:.2f} GiB; held out: "
        + ", ".join(f"{r['file'].split('/')[-1]} {r['error']:+.2f}" for r in held)
        + ". It depends on the captured batch sizes (max_num_seqs x (1 + speculative tokens), at most 512), the "
        "number of sizes per graph mode, the layers per GPU and the tensor-parallel split; these logs cannot "
        "separate them (two name no model), so the model is this constant and its band."
    )
    fitted = {
        "gib": round(value, 3),
        "band_gib": band,
        "fitted_on": [{"file": r["file"], "gib": r["gib"], "source": r["source"]} for r in fit_rows],
        "held_out": [
            {"file": r["file"], "gib": round(r["gib"], 3), "error_gib": round(r["error"], 3), "source": r["source"]}
            for r in held
        ],
    }
    if write:
        data = json.loads(ENGINES_JSON.read_text(encoding="utf-8"))
        data["vllm"]["versions"]["0.21+"]["cuda_graphs"].update(fitted)
        ENGINES_JSON.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        engines.engine_data.cache_clear()
        print(f"wrote the CUDA graph fit to {ENGINES_JSON.relative_to(ROOT)}")
    return fitted


def other_engines_table() -> list[dict]:
    """SGLang and TensorRT-LLM logs: what explain-log reads and rebuilds (their budget rules are not modelled)."""
    rows = []
    for entry in calibration():
        if entry["engine"] not in OTHER_ENGINES:
            continue
        model, _ = model_of(entry)
        tp = entry.get("args", {}).get("tp_size") or 1
        r = explain_engine_log(log_text(entry), model, **({"tensor_parallel_size": tp} if model and tp > 1 else {}))
        compared = [c for c in r["checks"] if c["status"] in ("exact", "consistent", "differs")]
        rows.append(
            {
                "file": entry["file"],
                "engine": r["engine"] or "not recognised",
                "model": model if isinstance(model, str) else ("config" if model else "none"),
                "lines": r["lines_read"],
                "figures": len(compared),
                "rebuilt": sum(c["status"] in ("exact", "consistent") for c in compared),
                "read": "; ".join(c["figure"] for c in r["checks"])
                or "; ".join(n for n in r["notes"] if not n.startswith("not modelled"))[:90],
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite the fitted keys of kvlab/data/engines.json")
    args = ap.parse_args()
    fit(args.write)
    cuda_graph_fit(args.write)

    rows, ok, total = reading_table()
    print("\n## 1. Reading: explain-log rebuilds the logged KV figures\n")
    print("| log | figures | rebuilt | not rebuilt |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['file']} | {r['figures']} | {r['rebuilt']} | {r['note']} |")
    print(f"\n{ok} of {total} figures rebuilt within 2 % ({ok / max(total, 1):.0%}) on {len(rows)} logs")
    other = other_engines_table()
    print("\n### SGLang and TensorRT-LLM: read and rebuilt (their budget rules are named, not modelled)\n")
    print(
        "| log | engine as read | model | lines read | figures | rebuilt | what was read |\n|---|---|---|---|---|---|---|"
    )
    for r in other:
        print(
            f"| {r['file']} | {r['engine']} | {r['model']} | {r['lines']} | {r['figures']} | {r['rebuilt']} | "
            f"{r['read']} |"
        )
    read = sum(r["lines"] > 0 for r in other)
    print(
        f"\n{read} of {len(other)} logs read; {sum(r['rebuilt'] for r in other)} of "
        f"{sum(r['figures'] for r in other)} figures rebuilt"
    )

    rows = prediction_table()
    print("\n## 2. Prediction: available KV memory from the model and card alone (GiB)\n")
    print("| log | engine | logged | before | after | error before | error after | starts (log / before / after) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        yn = lambda b: "yes" if b else "no"  # noqa: E731
        print(
            f"| {r['file']}{' (in the fit)' if r['in_sample'] else ''} | {r['era']} | {r['logged']:.2f} | {r['before']:.2f} | {r['after']:.2f} | {r['err_before']:+.1%} | "
            f"{r['err_after']:+.1%} | {yn(r['starts_logged'])} / {yn(r['starts_before'])} / {yn(r['starts_after'])}"
            f"{' (close call)' if r['confidence'] == 'low' else ''} |"
        )
    n = len(rows)
    within = lambda key: sum(abs(r[key]) <= TOLERANCE for r in rows)  # noqa: E731
    verdict = lambda key: sum(r[key] == r["starts_logged"] for r in rows)  # noqa: E731
    print(
        f"\nwithin 2 %: before {within('err_before')}/{n}, after {within('err_after')}/{n}; "
        f"start/refuse matches: before {verdict('starts_before')}/{n}, after {verdict('starts_after')}/{n}"
    )


if __name__ == "__main__":
    main()
