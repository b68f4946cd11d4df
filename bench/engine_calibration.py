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
4. CUDA graphs (vLLM 0.20+): the estimate each log prints ("Estimated CUDA graph memory"), or implies
   (|util - the util it is equivalent to| x driver memory); a constant fitted on the logs that print it
   under 0.20's default (subtracted), checked on the others; --write stores it under versions["0.20+"].
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
sys.path.insert(0, str(ROOT / "bench"))

from kvlab.memory import engines  # noqa: E402
from kvlab.memory.calibration import (  # noqa: E402
    ENGINES_JSON,
    TOLERANCE,
    derive,
    prediction_table,
    reading_table,
)
from kvlab.memory.catalogue import get_gpu  # noqa: E402
from kvlab.memory.calibration import (  # noqa: E402
    calibration,
    checkpoint_of,
    era,
    multimodal_of,
    gpu_of,
    log_text,
    log_tag_leave_one_out,
    log_tag_table,
    model_of,
    mxfp4_backend_of,
    sampler_of,
    speculative_of,
    weights_format,
)
from kvlab.memory.catalogue import model_architecture  # noqa: E402
from kvlab.memory.deployment import deployment  # noqa: E402
from kvlab.memory.verdict import llamacpp_fit, verdict, vllm_layout  # noqa: E402
from kvlab.memory.drafters import known_drafter  # noqa: E402
from kvlab.memory.engine_logs import explain_engine_log, parse_engine_log  # noqa: E402
from kvlab.memory.kv_bytes import MIB, llamacpp_kv_cache, vllm_blocks  # noqa: E402
from kvlab.memory.llamacpp import (  # noqa: E402
    BUILD_FIT,
    LLAMACPP_MLA_CACHE,
    FIT_TARGET_BYTES,
    layer_split,
    server_defaults,
)

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
        print(
            f"| {w['model']} | {w['format']}{' (' + w['kernel'] + ')' if w.get('kernel') else ''} | {w['gib']:.2f} | {w['source']} |"
        )
    print("\n## Reserve each log implies (util x driver memory - weights - available KV), GiB\n")
    print(
        "| log | engine | sampler path | implied | sampler logits L | activations | peak (larger of activations and "
        "the warm-up) | fixed term it implies |\n|---|---|---|---|---|---|---|---|"
    )
    for r in derived["general"]:
        f = r["features"]
        print(
            f"| {r['case']['entry']['file']} | {r['case']['era']} | {r['case']['sampler']} | {r['implied']:.2f} | "
            f"{f['sampler']:.2f} | {f['activations']:.2f} | {r['peak']:.2f} | {r['implied'] - r['peak']:.2f} |"
        )
    fitted = derived["reserve_fit"]
    print(
        f"\nfixed term {fitted['coefficients']['fixed']:.2f} GiB (median), band ±{fitted['band_gib']:.2f} GiB "
        f"on {fitted['n_logs']} logs; measured per model: "
        + ", ".join(
            f"{m['model']} {m['format']}"
            + (f" ({m['kernel']})" if m.get("kernel") else "")
            + f" +{m['extra_gib']:.2f} GiB"
            for m in derived["measured_reserve"]
        )
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
    the estimate in GiB under 0.20's default (the estimate subtracted), except an entry marked
    cuda_graph_fit false (its cuda_graph_why says why); the rest are held out, but for a log that states a release
    before 0.20.0, reported apart (`other_stack`): the estimator is the same code, but 0.20.0 moved to torch 2.11 and
    CUDA 13.0 (requirements/cuda.txt: torch==2.10.0 at v0.19.1, 2.11.0 at v0.20.0; docker/Dockerfile ARG
    CUDA_VERSION 12.9.1 -> 13.0.2), and a captured graph's driver memory differs by stack: Qwen3-8B with the same 51
    + 35 graphs estimates 2.35 GiB on 0.19.1 and 0.52 GiB on 0.21.0 (vllm#5517: a driver update alone cut an A10G's
    graphs from 3.81 to 1.14 GiB). The 0.20+ rule models 0.20+'s stack."""
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
                "opt_out": bool(eq and eq.get("opt_out")),
                "in_fit": bool(cg) and (not eq or eq["subtracted"]) and entry.get("cuda_graph_fit", True),
                "tp": entry.get("args", {}).get("tensor_parallel_size") or entry.get("n_gpus") or 1,
                "model": entry.get("model_id") or "not named",
                "version": entry.get("engine_version") or "not printed",
                "other_stack": _before_0_20(entry),
            }
        )
    return rows


def _before_0_20(entry: dict) -> bool:
    """The entry states a vLLM release before 0.20.0 (another torch and CUDA stack than the 0.20+ rule's)."""
    minor = _stated_minor(entry)
    return minor is not None and minor < (0, 20)


def cuda_graph_fit(write: bool) -> dict:
    rows = cuda_graph_rows()
    fit_rows = [r for r in rows if r["in_fit"]]
    value = statistics.median(r["gib"] for r in fit_rows)
    band = math.ceil(max(max(abs(r["gib"] - value) for r in fit_rows), 0.05) * 20) / 20  # up to 0.05 GiB
    print("\n## 4. CUDA graph estimate (vLLM 0.20+ subtracts it from the KV budget), GiB per GPU\n")
    print("| log | vLLM | model | TP | estimate | how | subtracted | role | kvlab | error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        r["error"] = value - r["gib"]
        print(
            f"| {r['file']} | {r['version']} | {r['model']} | {r['tp']} | {r['gib']:.2f} | {r['how']} | "
            f"{'yes' if r['subtracted'] else 'no (0.20+ opt-out, =0)' if r['opt_out'] else 'no (before 0.19, opt-in)'} | "
            f"{'fit' if r['in_fit'] else 'before 0.20: another stack' if r['other_stack'] else 'held out'} | "
            f"{value:.3f} | {r['error']:+.2f} |"
        )
    held = [r for r in rows if not r["in_fit"] and not r["other_stack"]]
    apart = [r for r in rows if r["other_stack"]]
    print(
        f"\nconstant {value:.3f} GiB (median of {len(fit_rows)}), fit error up to {band:.2f} GiB; held out: "
        + ", ".join(f"{r['file'].split('/')[-1]} {r['error']:+.2f}" for r in held)
        + (
            "; before 0.20 (torch 2.10 / CUDA 12.9, not counted): "
            + ", ".join(f"{r['file'].split('/')[-1]} {r['error']:+.2f}" for r in apart)
            if apart
            else ""
        )
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
        "before_0_20": [
            {"file": r["file"], "gib": round(r["gib"], 3), "error_gib": round(r["error"], 3), "source": r["source"]}
            for r in apart
        ],
        "before_0_20_why": "the same estimator on another stack, not counted in the band: 0.20.0 moved to torch 2.11 "
        "and CUDA 13.0 (requirements/cuda.txt, docker/Dockerfile at v0.19.1 and v0.20.0), and a captured graph's "
        "driver memory differs by stack (Qwen3-8B, the same 51 + 35 graphs: 2.35 GiB on 0.19.1, 0.52 GiB on 0.21.0)",
    }
    if write:
        data = json.loads(ENGINES_JSON.read_text(encoding="utf-8"))
        data["vllm"]["versions"][engines.VLLM_RECENT]["cuda_graphs"].update(fitted)
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


# ---------------------------------------------------------------------- 2b. prediction on every log
PREDICTION_TOLERANCES = (0.05, 0.15)
SKIPPED: list[tuple[str, str]] = []  # logs with a model and card whose settings are not known
KV_DTYPES = {
    "auto": "f16",
    "fp8": "fp8",
    "fp8_e4m3": "fp8",
    "fp8_e5m2": "fp8",
    "bfloat16": "bf16",
    "float16": "f16",
    # vLLM's per-token-head types: 1 B per value + a float32 scale per token per KV head (kvlab.dtypes.HEAD_SCALE_BYTES)
    "int8_per_token_head": "int8_per_token_head",
    "fp8_per_token_head": "fp8_per_token_head",
}


def constant_sources() -> str:
    """Every file name and URL kvlab/data/engines.json cites for a fitted or measured constant: the logs a fit lists
    as held out (its "held_out" lists) or reports apart ("before_0_20") set nothing, so they are left out."""

    def fitted(node):
        if isinstance(node, dict):
            return {k: fitted(v) for k, v in node.items() if k not in ("held_out", "before_0_20")}
        return [fitted(v) for v in node] if isinstance(node, list) else node

    return json.dumps(fitted(json.loads(ENGINES_JSON.read_text(encoding="utf-8"))), ensure_ascii=False)


def set_a_constant(entry: dict, cited: str) -> bool:
    """True when the log (its file, or its thread's URL) is cited by a fitted or measured constant, or a setting of its
    entry was read off the very figures the bench predicts (`setting_from_own_figures`): either way it tests nothing."""
    if entry["file"] in cited or entry.get("setting_from_own_figures"):
        return True
    return re.search(re.escape(entry["source"]) + r"(?![\w/])", cited) is not None


def settings_known(entry: dict) -> bool:
    """The weights format can be told: a --quantization argument, a format in the model's name, or a public
    checkpoint id (owner/name, not a local path or a club-3090 profile name) whose repository gives it."""
    if entry.get("args", {}).get("quantization"):
        return True
    name = str(entry.get("model") or "").lower()
    if any(k in name for k in ("nvfp4", "fp8", "awq", "gptq", "autoround", "auto_round", "int4", "w8a8", "mxfp4")):
        return True
    return "/" in name and "local path" not in name and "profile" not in name


def _stated_minor(entry: dict) -> tuple[int, int] | None:
    """The (major, minor) of the vLLM release an entry states, None where it states none."""
    release = engines.vllm_release(entry.get("engine_version"))
    return engines.release_minor(release) if release else None


def _engine_version(entry: dict, text: str) -> str:
    minor = _stated_minor(entry)
    if (minor and minor >= (0, 20)) or "CUDA graph memory profiling is enabled" in text:
        # the log's release subtracts the estimate (the default from 0.20.0: vllm/envs.py), or it says so
        return engines.VLLM_RECENT
    tagged = engines.vllm_version_from_tags(text) if version_range(entry) == "unknown" else None
    if tagged and tagged["value"] >= (0, 20):
        return engines.VLLM_RECENT  # no version stated: its line tags are those of releases from 0.20 on (log_tags)
    return era(entry, text)


def _older_release_refuses(entry: dict, v: dict) -> bool:
    """The log states a release that the verdict names among those that refuse this start (verdict
    "older_versions_refuse": e.g. vLLM up to 0.15's whole-model check under pipeline parallel)."""
    release = engines.vllm_release(entry.get("engine_version"))
    if not release:
        return False
    minor = engines.release_minor(release)
    return any(minor <= engines.release_minor(r["through"]) for r in v.get("older_versions_refuse", []))


# vLLM's "GPU KV cache size" line became int(max_concurrency x max_model_len) with vllm#38364, first in the 0.20.1
# release (its wheel's kv_cache_utils.py); 0.20.0 and the 0.20.1rc1 nightlies print num_blocks // groups x block size
BLOCKS_FORM_BEFORE = (0, 20, 1)


def prints_blocks(entry: dict) -> bool:
    """The log's release prints the token line as blocks // groups x block size (before vllm#38364); False when
    its version is not stated (the bench then predicts the concurrency form)."""
    m = re.match(r"v?(\d+)\.(\d+)\.(\d+)(rc\d+)?", str(entry.get("engine_version") or ""))
    if not m:
        return False
    release = tuple(int(g) for g in m.groups()[:3])
    return release < BLOCKS_FORM_BEFORE or (release == BLOCKS_FORM_BEFORE and m.group(4) is not None)


def spans_nodes(text: str) -> bool:
    """The log's Ray workers run on more than one node: Ray prefixes a worker's lines with its node's address only
    when it is not on the driver's node ("(RayWorkerWrapper pid=345, ip=10.42.11.243)")."""
    return re.search(r"RayWorkerWrapper pid=\d+, ip=", text) is not None


def drafter_of(args: dict) -> str | None:
    """The separate drafter an entry's speculative_config names, where kvlab knows it (kvlab.memory.drafters)."""
    spec = args.get("speculative_config")
    known = known_drafter(spec.get("model") if isinstance(spec, dict) else None)
    return known["id"] if known else None


def vllm_prediction_rows(cited: str) -> list[dict]:
    """Every vLLM log with a known model, card and a logged KV figure or refusal, predicted by the fit verdict."""
    rows = []
    for entry in calibration():
        if entry["engine"] != "vllm":
            continue
        model, _ = model_of(entry)
        card = gpu_of(entry)
        logged = entry.get("logged", {})
        available = logged.get("available_kv_gib", logged.get("kv_cache_size_gib"))
        tokens = logged.get("kv_tokens")
        refused = entry["file"].endswith("error.txt")
        if not model or not card or (available is None and tokens is None and not refused):
            continue
        args = entry.get("args", {})
        if args.get("data_parallel_size"):
            continue
        if not settings_known(entry):
            SKIPPED.append((entry["file"], "weights format not stated (no --quantization, no format in the name)"))
            continue
        text = log_text(entry)
        arch = model_architecture(model)
        pp = args.get("pp") or 1
        tp = args.get("tensor_parallel_size") or ((entry.get("n_gpus") or 1) // pp)
        context = args.get("max_model_len") or logged.get("max_model_len_logged") or arch.max_position_embeddings
        kv = KV_DTYPES.get(str(args.get("kv_cache_dtype") or "auto").lower())
        how = []
        if kv is None:
            how.append(f"kv_cache_dtype {args['kv_cache_dtype']} is not a kvlab type: predicted as fp8 (1 B)")
            kv = "fp8"
        version = _engine_version(entry, text)
        spec = speculative_of(args)
        drafter = args.get("speculative_config")
        known = drafter_of(args)
        if known:
            how.append(f"speculative drafter {known}: its weights and KV layers (kvlab.memory.drafters)")
        elif drafter and not (spec[0] == "mtp" and arch.draft_layers):
            named = drafter.get("model") or drafter.get("method") if isinstance(drafter, dict) else drafter
            how.append(f"speculative drafter ({named}): its own weights and cache are not modelled")
        fmt = weights_format(entry, arch)
        try:
            dep = deployment(
                arch,
                weights=fmt,
                kv=kv,
                gpu=card["id"],
                tp=tp,
                pp=pp,
                engine="vllm",
                version=version,
                checkpoint=checkpoint_of(entry),
                gpu_memory_utilization=args.get("gpu_memory_utilization"),  # None: the version's default
                max_num_batched_tokens=args.get("max_num_batched_tokens"),
                max_num_seqs=args.get("max_num_seqs"),
                allow_long_context=True,
                prefix_caching=bool(args.get("enable_prefix_caching")),
                speculative_tokens=spec[1],
                mtp=spec[0] == "mtp" and bool(arch.draft_layers),
                mxfp4_backend=mxfp4_backend_of(entry, text) if fmt == "MXFP4" else None,
                multimodal=multimodal_of(args),
                drafter=known,
                # the sampler warm-up's path as the fit reads it: the log's FlashInfer line, its stated release's
                # install default, else the version label's (a setting of the log, like its version)
                sampler=sampler_of(entry, text, version),
                # a Ray worker on another node ("ip=" in its log prefix): vLLM turns custom all-reduce off for a
                # group that spans nodes (custom_all_reduce.py, v0.10.1.1: "spans across nodes")
                custom_all_reduce=not spans_nodes(text),
            )
            v = verdict(dep, context, solve=False)
            starts = bool(v["fits"]) and not _older_release_refuses(entry, v)
        except ValueError as exc:
            rows.append({"file": entry["file"], "error": str(exc)[:100], "set_constant": set_a_constant(entry, cited)})
            continue
        parts = {c["name"]: c["bytes"] for c in v["components"]}
        avail = (v["budget_bytes"] - parts["weights"] - parts.get("activation_reserve", 0)) / engines.GIB
        # per GPU, for one request of max_model_len, without the null block: vLLM 0.20.2+ prints the tokens as
        # int(blocks / blocks per request x max_model_len), the null block among the blocks
        # (one more sequence's cache: the null block, 0.20+, is in both)
        two = {c["name"]: c["bytes"] for c in verdict(dep, context, n_seq=2, solve=False)["components"]}
        per_token = (two["kv_cache"] - parts["kv_cache"]) / context
        predicted_tokens = avail * engines.GIB / per_token if per_token else None
        if prints_blocks(entry) and predicted_tokens is not None:
            # an older release: num_blocks // groups x block size (kv_bytes.vllm_blocks)
            layout = vllm_layout(dep, context)
            predicted_tokens = vllm_blocks(layout, avail * engines.GIB)["tokens"]
            how.append("tokens as the release prints them: blocks // groups x block size (before vllm#38364)")
        rows.append(
            {
                "file": entry["file"],
                "engine": f"vllm {version}",
                "model": model if isinstance(model, str) else "config",
                "card": f"{tp * pp} x {card['id']}",
                "logged_gib": available,
                "predicted_gib": avail,
                "err_gib": None if available is None else (avail - available) / abs(available),
                "logged_tokens": tokens,
                "predicted_tokens": predicted_tokens,
                "err_tokens": None if tokens is None or not per_token else (predicted_tokens - tokens) / tokens,
                "starts_logged": not refused,
                "starts_predicted": starts,
                "cause": v.get("binding_label") or v.get("headline"),
                "confidence": v["confidence"],
                "how": "; ".join(how),
                "set_constant": set_a_constant(entry, cited),
            }
        )
    return rows


def other_prediction_rows() -> list[dict]:
    """SGLang and TensorRT-LLM: bench/engine_budgets.py's 'predicted' rows (the model and card alone)."""
    import engine_budgets  # a sibling script

    rows = []
    for r in engine_budgets.rows():
        if r["kind"] != "predicted":
            continue
        engine = "sglang" if r["log"].startswith("sglang") else "tensorrt-llm"
        rows.append(
            {
                "file": "calibration/" + r["log"],
                "engine": engine,
                "model": r["how"].split(",")[0],
                "card": "",
                "logged_gib": None,
                "predicted_gib": None,
                "err_gib": None,
                "logged_tokens": r["logged"],
                "predicted_tokens": r["predicted"],
                "err_tokens": r["error"],
                "starts_logged": not r["log"].endswith("error.txt"),
                "starts_predicted": True,
                "cause": r["known"] or "",
                "confidence": "",
                "how": r["figure"],
                "set_constant": r["log"] in engine_budgets.SET_A_CONSTANT,
            }
        )
    return rows


# ------------------------------------------------------------------- 2b. prediction: llama.cpp logs
LLAMACPP_SKIPPED: list[tuple[str, str]] = []  # llama.cpp logs not predicted, each with the reason
# what a llama.cpp entry's `logged` keys hold, as kvlab names it: (kind, label); kind "kv" is MiB of KV memory,
# "ctx" cells or tokens of context, "fit" the context --fit chose; the key's own meaning is fixed in _llamacpp_figure
LLAMACPP_FIGURES = {
    "kv_mib": ("kv", "KV size line"),
    "context_mib_initial": ("kv", "memory breakdown 'context' at the initial settings"),
    "kv_buffer_mib": ("kv", "KV buffer"),
    "kv_buffer_mib_per_device": ("kv", "KV buffer per device"),
    "kv_buffer_mib_cuda0": ("kv", "KV buffer CUDA0"),
    "kv_buffer_mib_cuda1": ("kv", "KV buffer CUDA1"),
    "kv_buffer_mib_cuda2": ("kv", "KV buffer CUDA2"),
    "kv_buffer_mib_cuda3": ("kv", "KV buffer CUDA3"),
    "swa_kv_buffer_mib": ("kv", "SWA KV buffer"),
    "swa_cells": ("ctx", "SWA cache cells"),
    "cells": ("ctx", "cache cells"),
    "n_ctx_seq": ("ctx", "n_ctx_seq"),
    "n_ctx_per_seq": ("ctx", "n_ctx_per_seq"),
    "n_ctx_slot": ("ctx", "n_ctx_slot"),
    "fit_chosen_n_ctx": ("fit", "context --fit chose"),
}
# the figure that stands for a log in the error distribution (one per kind per log), in this order of preference:
# the whole cache where the log prints it, else the part it prints; the least trivial context figure (the SWA
# cache's cells depend on n_swa and -ub; the others are -c / -np arithmetic)
LLAMACPP_PRIMARY = {
    "kv": (
        "kv_mib",
        "context_mib_initial",
        "kv_buffer_mib",
        "kv_buffer_mib_per_device",
        "kv_buffer_mib_cuda0",
        "swa_kv_buffer_mib",
    ),
    "ctx": ("swa_cells", "cells", "n_ctx_seq", "n_ctx_per_seq", "n_ctx_slot"),
    "fit": ("fit_chosen_n_ctx",),
}


def _on(value, default: bool = True) -> bool:
    """A llama.cpp on/off/auto argument as calibration.json records it (auto: on, as llama.cpp picks where it can)."""
    if value is None:
        return default
    return str(value).lower() not in ("false", "off", "0", "no")


def _build(entry: dict) -> int | None:
    """The llama.cpp build number an entry states ('b7003 (596a297cb)', '7474 (f9ec8858e)'), or None."""
    m = re.match(r"b?(\d+)", str(entry.get("engine_version") or ""))
    return int(m.group(1)) if m else None


def _gguf_format(entry: dict) -> tuple[str, str]:
    """The weights format a GGUF's name states, as kvlab names formats, else kvlab's llama.cpp default (Q4_K_M)."""
    from kvlab.memory.weights import WEIGHT_FORMATS

    name = str(entry.get("model") or "").upper()
    for fmt in sorted(WEIGHT_FORMATS, key=len, reverse=True):
        if re.search(rf"(?<![A-Z0-9]){re.escape(fmt)}(?![A-Z0-9_])", name):
            return fmt, f"weights {fmt}, as the GGUF's name says"
    return "Q4_K_M", f"weights: {entry.get('model')} names no kvlab format, counted as kvlab's default Q4_K_M"


def llamacpp_settings(entry: dict, arch) -> tuple[dict, list[str]]:
    """The settings a llama.cpp log ran with, from its entry's args (never its printed KV figures): -c (not given:
    the training context, from b7407 on), -np, --kv-unified, -ctk / -ctv, -fa, -ub, --swa-full. ({}, why) when -c
    cannot be told."""
    args = entry.get("args", {})
    how = []
    n_seq = args.get("n_parallel") or 1
    unified = args.get("kv_unified")
    if unified is None:
        unified = n_seq == 1  # as the verdict: one stream per sequence when -np is given
    n_ctx = args.get("n_ctx")
    if n_ctx is None:
        build = _build(entry)
        if build is not None and build < BUILD_FIT:
            return {}, [f"-c not given and build b{build} predates -c 0's default (b{BUILD_FIT})"]
        # -c not given: 0 since b7407, the training context (kvlab.memory.llamacpp.server_defaults)
        d = server_defaults(arch.max_position_embeddings, parallel=n_seq, kv_unified=unified, build=build)
        n_ctx = d["n_ctx"]
        how.append(f"-c not given: the training context, {n_ctx:,} (-c defaults to 0 since b{BUILD_FIT}, PR 16653)")
    flash = _on(args.get("flash_attn"))
    if str(args.get("flash_attn")).lower() == "auto":
        how.append("-fa auto taken as on")
    mla_cache = args.get("mla_cache") or LLAMACPP_MLA_CACHE
    if mla_cache != LLAMACPP_MLA_CACHE and arch.attention == "mla":
        how.append(
            f"MLA cached {mla_cache} (llamacpp.LLAMACPP_MLA_CACHES), "
            + (
                "read off this log's own figures: counted with the logs that set a constant"
                if entry.get("setting_from_own_figures") == "mla_cache"
                else "as the entry states"
            )
        )
    return {
        "mla_cache": mla_cache,
        "n_ctx": n_ctx,
        "type_k": args.get("type_k") or "f16",
        "type_v": args.get("type_v") or args.get("type_k") or "f16",
        "n_seq": n_seq,
        "n_ubatch": args.get("n_ubatch") or 512,
        "kv_unified": bool(unified),
        "swa_full": _on(args.get("swa_full"), default=False),
        "flash_attn": flash,
    }, how


def llamacpp_fit_context(dep, n_seq: int = 1, target_bytes: int = FIT_TARGET_BYTES, gpu_layers_set: bool = False):
    """--fit's run with -c unset (kvlab.memory.verdict.llamacpp_fit's), with the log's own --fit-target and -ngl."""
    return llamacpp_fit(dep, n_seq=n_seq, target_bytes=target_bytes, n_gpu_layers_set=gpu_layers_set)["unset"]


def _kv_line_part(logged: dict, kv: dict) -> str:
    """Which cache a logged "kv_mib" is: an excerpt with only the SWA cache's cells prints that cache's size line;
    one with both cell counts, the non-SWA cache's (its cells printed with it); otherwise the whole cache."""
    caches = {c["cache"] for c in kv["caches"]}
    if "swa_cells" in logged and "cells" not in logged and "SWA" in caches:
        return "SWA cache"
    if "cells" in logged and "swa_cells" in logged and "non-SWA" in caches:
        return "non-SWA cache"
    return "whole cache"


def _llamacpp_figure(
    key: str,
    logged: dict,
    kv: dict,
    n_gpus: int,
    n_ctx_train: int,
    fit: dict | None,
    n_layer: int = 1,
    device: int | None = None,
):
    """kvlab's value for one logged llama.cpp figure (MiB, cells or tokens), or None where it has none."""
    caches = {c["cache"]: c for c in kv["caches"]}
    swa, base = caches.get("SWA"), caches.get("non-SWA") or caches.get("kv")
    # the verdict's split: each device's cache in proportion to its layers under llama.cpp's layer split
    layers = layer_split(n_layer, n_gpus)["layers"]
    per_gpu = kv["total_bytes"] * max(layers) / n_layer / MIB
    if key == "kv_mib":
        part = _kv_line_part(logged, kv)
        return {"SWA cache": swa, "non-SWA cache": base}.get(part, {"mib": kv["total_mib"]})["mib"]
    if key.startswith("kv_buffer_mib_cuda"):
        return kv["total_bytes"] * layers[int(key.removeprefix("kv_buffer_mib_cuda"))] / n_layer / MIB
    if key == "kv_buffer_mib_per_device" and device is not None:
        return kv["total_bytes"] * layers[device] / n_layer / MIB
    if key == "context_mib_initial" or key == "kv_buffer_mib" or key.startswith("kv_buffer_mib_"):
        return per_gpu
    if key == "swa_kv_buffer_mib":
        return swa["mib"] / n_gpus if swa else None
    if key == "swa_cells":
        return swa["cells"] if swa else None
    if key == "cells":
        return base["cells"] if base else None
    if key in ("n_ctx_seq", "n_ctx_per_seq"):
        return kv["n_ctx_seq"]
    if key == "n_ctx_slot":
        return min(kv["n_ctx_seq"], n_ctx_train)  # tools/server: n_ctx_slot = n_ctx_seq, capped at n_ctx_train
    if key == "fit_chosen_n_ctx":
        return fit["n_ctx"] if fit and fit["outcome"] in ("fits", "context_reduced") else None
    return None


def llamacpp_prediction_rows(cited: str) -> list[dict]:
    """Every llama.cpp log whose model kvlab resolves and that prints a KV figure, a context or --fit's pick,
    predicted from the model and the log's own args (the KV cache does not depend on the card; --fit's pick does,
    and is predicted from the card alone). The rest go to LLAMACPP_SKIPPED with the reason."""
    LLAMACPP_SKIPPED.clear()
    rows = []
    for entry in calibration():
        if entry["engine"] != "llama.cpp":
            continue
        logged = entry.get("logged", {})
        model, _ = model_of(entry)
        if not model:
            named = entry.get("model") or "not named"
            LLAMACPP_SKIPPED.append(
                (entry["file"], f"model not resolved ({named}; no catalogue model_id, no hf_config)")
            )
            continue
        figures = [k for k in logged if k in LLAMACPP_FIGURES]
        if not figures:
            LLAMACPP_SKIPPED.append(
                (entry["file"], "no KV size, cells or --fit context among its figures (" + ", ".join(logged) + ")")
            )
            continue
        arch = model_architecture(model)
        s, how = llamacpp_settings(entry, arch)
        if not s:
            LLAMACPP_SKIPPED.append((entry["file"], "; ".join(how)))
            continue
        args = entry.get("args", {})
        n_gpus = entry.get("n_gpus") or 1
        kv = llamacpp_kv_cache(
            arch,
            s["n_ctx"],
            s["type_k"],
            s["type_v"],
            n_seq=s["n_seq"],
            n_ubatch=s["n_ubatch"],
            kv_unified=s["kv_unified"],
            swa_full=s["swa_full"],
            flash_attn=s["flash_attn"],
            mla_cache=s["mla_cache"],
        )
        if n_gpus > 1 and any(k.startswith("kv_buffer_mib") for k in figures):
            how.append(
                f"per device: the cache in proportion to each GPU's layers under llama.cpp's layer split over {n_gpus} "
                "GPUs (llamacpp.layer_split, the verdict's rule)"
            )
        fit, dep, card, fit_how = None, None, gpu_of(entry), []
        if "fit_chosen_n_ctx" in figures:
            if not card:
                fit_how.append("--fit's context needs the card, which the entry does not name")
            else:
                fmt, fmt_how = _gguf_format(entry)
                dep = deployment(
                    arch,
                    weights=fmt,
                    kv=s["type_k"],
                    gpu=card["id"],
                    tp=n_gpus,
                    engine="llamacpp",
                    n_ubatch=s["n_ubatch"],
                )
                target = int(args.get("fit_target_mib") or FIT_TARGET_BYTES // MIB) * MIB
                fit = llamacpp_fit_context(dep, s["n_seq"], target, gpu_layers_set=args.get("n_gpu_layers") is not None)
                if args.get("n_ctx") is None:
                    fit_how.append("-c not given, so --fit may lower it from the training context")
                fit_how.append(
                    f"--fit on {card['id']} (card less kvlab's 0.5 GiB runtime reserve), --fit-target {target // MIB} MiB, {fmt_how}"
                )
                if args.get("spec_type"):
                    fit_how.append(
                        f"its draft ({args['spec_type']}) context is not modelled (llamacpp.FIT_NOT_MODELLED)"
                    )
        compared = []
        for key in figures:
            kind, label = LLAMACPP_FIGURES[key]
            value = logged[key]
            for i, one in enumerate(value if isinstance(value, list) else [value]):
                predicted = _llamacpp_figure(
                    key,
                    logged,
                    kv,
                    n_gpus,
                    arch.max_position_embeddings,
                    fit,
                    arch.n_layers,
                    i if isinstance(value, list) else None,
                )
                if predicted is None:
                    continue
                compared.append(
                    {
                        "key": key if not isinstance(value, list) else f"{key}[{i}]",
                        "kind": kind,
                        "label": label
                        + (f" {i}" if isinstance(value, list) else "")
                        + (f" ({_kv_line_part(logged, kv)})" if key == "kv_mib" else ""),
                        "logged": one,
                        "predicted": predicted,
                        "error": (predicted - one) / one,
                    }
                )
        primary = {}
        for kind, keys in LLAMACPP_PRIMARY.items():
            primary[kind] = next((c for k in keys for c in compared if c["key"] in (k, f"{k}[0]")), None)
        rows.append(
            {
                "file": entry["file"],
                "engine": "llama.cpp" + (f" b{_build(entry)}" if _build(entry) else ""),
                "model": model if isinstance(model, str) else "config",
                "gpus": n_gpus,
                "card": card["id"] if card else None,
                "logged": logged,
                "settings": s,
                "kv": kv,
                "kv_bytes_per_gpu": -(-kv["total_bytes"] // n_gpus),
                "fit": fit,
                "fit_deployment": dep,
                "fit_how": "; ".join(fit_how),
                "compared": compared,
                "primary": primary,
                "how": "; ".join(how + kv["notes"]),
                "set_constant": set_a_constant(entry, cited),
            }
        )
    return rows


def print_llamacpp_prediction(rows: list[dict]) -> None:
    pct = lambda x: "" if x is None else f"{x:+.1%}"  # noqa: E731
    yn = lambda b: "yes" if b else "no"  # noqa: E731

    def show(c: dict | None) -> str:
        if c is None:
            return ""
        f = ",.2f" if c["kind"] == "kv" else ",.0f"
        return f"{c['logged']:{f}} / {c['predicted']:{f}}"

    print("\n### llama.cpp: KV size and cells from the model and the log's own args (MiB, cells)\n")
    print(
        "| log | engine | model | GPUs | -c / -np / -ctk,-ctv | KV figure | logged / kvlab | error | context figure | "
        "logged / kvlab | error | also compared | how | log set a constant |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s, kv, c = r["settings"], r["primary"]["kv"], r["primary"]["ctx"]
        also = [x for x in r["compared"] if x is not kv and x is not c and x["kind"] != "fit"]
        print(
            f"| {r['file']} | {r['engine']} | {r['model']} | {r['gpus']} | "
            f"{s['n_ctx']} / {s['n_seq']}{' unified' if s['kv_unified'] and s['n_seq'] > 1 else ''} / "
            f"{s['type_k']},{s['type_v']} | {kv['label'] if kv else ''} | {show(kv)} | {pct(kv and kv['error'])} | "
            f"{c['label'] if c else ''} | {show(c)} | {pct(c and c['error'])} | "
            + "; ".join(f"{x['label']} {show(x)} ({pct(x['error'])})" for x in also)
            + f" | {r['how']} | {yn(r['set_constant'])} |"
        )
    fits = [r for r in rows if "fit_chosen_n_ctx" in r["logged"]]
    print("\n### llama.cpp --fit: the context it chose, from the model and the card's memory alone\n")
    print(
        "| log | model | GPUs | context --fit chose, logged / kvlab | error | outcome (log / kvlab) | how | "
        "log set a constant |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in fits:
        f = r["primary"]["fit"]
        chosen = r["logged"]["fit_chosen_n_ctx"]
        outcome = "context_reduced" if chosen < r["settings"]["n_ctx"] else "fits"
        print(
            f"| {r['file']} | {r['model']} | {r['gpus']} x {r['card'] or 'card not named'} | "
            f"{show(f) if f else 'not predicted'} | {pct(f and f['error'])} | "
            f"{outcome} / {r['fit']['outcome'] if r['fit'] else 'not predicted'} | {r['fit_how']} | "
            f"{yn(r['set_constant'])} |"
        )
    for label, kinds, group in (
        (
            "llama.cpp: KV size from the model and args (no memory budget: the figure does not depend on the card)",
            (("KV MiB", "kv"), ("cells / context", "ctx")),
            [r for r in rows if r["primary"]["kv"] or r["primary"]["ctx"]],
        ),
        ("llama.cpp --fit: context chosen from the card's memory", (("context", "fit"),), fits),
    ):
        for part, sub in (
            ("never used for a constant (held out)", [r for r in group if not r["set_constant"]]),
            ("set a constant (in the fit)", [r for r in group if r["set_constant"]]),
        ):
            print(f"\n**{label}, {part}**: {len(sub)} logs")
            for name, kind in kinds:
                errors = [r["primary"][kind]["error"] for r in sub if r["primary"][kind]]
                print(f"- {name}: {_distribution(errors)}")
    misses = [
        (r["file"], c) for r in rows for c in r["primary"].values() if c and abs(c["error"]) > PREDICTION_TOLERANCES[0]
    ]
    print(f"\nllama.cpp figures (each log's own, as in the error distributions) more than 5 % off: {len(misses)}")
    for file, c in misses:
        print(f"- {file}: {c['label']} {show(c)} ({pct(c['error'])})")
    print("\nllama.cpp logs not predicted: " + "; ".join(f"{f} ({why})" for f, why in LLAMACPP_SKIPPED))


def _distribution(errors: list[float]) -> str:
    if not errors:
        return "no figures"
    a = sorted(abs(e) for e in errors)
    p90 = a[min(len(a) - 1, math.ceil(0.9 * len(a)) - 1)]
    within = [sum(x <= t for x in a) for t in PREDICTION_TOLERANCES]
    return (
        f"n {len(a)}, median |error| {statistics.median(a):.1%}, p90 {p90:.1%}, within 5 % {within[0]}/{len(a)} "
        f"({within[0] / len(a):.0%}), within 15 % {within[1]}/{len(a)} ({within[1] / len(a):.0%})"
    )


def prediction_on_every_log() -> list[dict]:
    cited = constant_sources()
    rows = vllm_prediction_rows(cited) + other_prediction_rows()
    print("\n## 2b. Prediction on every log with a known model and card (model + card + the log's own args)\n")
    print(
        "| log | engine (as modelled) | model | GPUs | available KV logged / kvlab (GiB) | error | "
        "KV tokens logged / kvlab | error | starts (log / kvlab) | log set a constant |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    pct = lambda x: "" if x is None else f"{x:+.1%}"  # noqa: E731
    num = lambda x, f: "" if x is None else format(x, f)  # noqa: E731
    yn = lambda b: "yes" if b else "no"  # noqa: E731
    for r in rows:
        if "error" in r:
            print(f"| {r['file']} | kvlab refused the input: {r['error']} |||||||| {yn(r['set_constant'])} |")
            continue
        print(
            f"| {r['file']} | {r['engine']} | {r['model']} | {r['card']} | "
            f"{num(r['logged_gib'], '.2f')} / {num(r['predicted_gib'], '.2f')} | {pct(r['err_gib'])} | "
            f"{num(r['logged_tokens'], ',.0f')} / {num(r['predicted_tokens'], ',.0f')} | {pct(r['err_tokens'])} | "
            f"{yn(r['starts_logged'])} / {yn(r['starts_predicted'])} | {yn(r['set_constant'])} |"
        )
    ok = [r for r in rows if "error" not in r]
    for label, group in (
        ("never used for a constant (held out)", [r for r in ok if not r["set_constant"]]),
        ("set a constant (in the fit)", [r for r in ok if r["set_constant"]]),
    ):
        print(f"\n**{label}**: {len(group)} logs")
        print(f"- available KV: {_distribution([r['err_gib'] for r in group if r['err_gib'] is not None])}")
        print(f"- KV tokens: {_distribution([r['err_tokens'] for r in group if r['err_tokens'] is not None])}")
        modelled = [r for r in group if "not modelled" not in r["how"]]
        if len(modelled) < len(group):
            print(f"- of which {len(modelled)} run nothing kvlab leaves out (no separate drafter):")
            print(f"  - available KV: {_distribution([r['err_gib'] for r in modelled if r['err_gib'] is not None])}")
            print(f"  - KV tokens: {_distribution([r['err_tokens'] for r in modelled if r['err_tokens'] is not None])}")
    print("\nheld-out logs more than 5 % off (available KV, else tokens), with what kvlab knows leaves out:")
    for r in ok:
        err = r["err_gib"] if r["err_gib"] is not None else r["err_tokens"]
        if not r["set_constant"] and err is not None and abs(err) > 0.05:
            print(f"- {r['file']}: {err:+.1%}" + (f"; {r['how']}" if r["how"] else ""))
    false_fits = [r for r in ok if r["starts_predicted"] and not r["starts_logged"]]
    false_refusals = [r for r in ok if r["starts_logged"] and not r["starts_predicted"]]
    print(f"\nfalse 'fits' (kvlab: starts; the log refused): {len(false_fits)}")
    for r in false_fits:
        print(f"- {r['file']}: predicted {num(r['predicted_gib'], '.2f')} GiB of KV ({r['engine']}); {r['how']}")
    print(f"\nfalse refusals (kvlab: refuses; the log started): {len(false_refusals)}")
    for r in false_refusals:
        print(f"- {r['file']}: cause named by the verdict: {r['cause']}; {r['how']}")
    print("\nmodel and card known, settings not: " + "; ".join(f"{f} ({why})" for f, why in SKIPPED))
    llamacpp = llamacpp_prediction_rows(cited)
    print_llamacpp_prediction(llamacpp)
    print(
        f"\nnot predicted (model, card or settings not known, or no KV figure): "
        f"{len(calibration()) - len(rows) - len(llamacpp)} of {len(calibration())} logs"
    )
    loo = log_tag_leave_one_out()
    placed = [r for r in loo if r["same_range"] is not None]
    wrong = [r for r in placed if not r["same_range"]]
    print(
        f"\nline tags, leave one out (a log that prints no version is placed by them): of {len(loo)} logs that state "
        f"a release, {len(placed)} are placed by the other logs' tags alone, {len(placed) - len(wrong)} on the same "
        f"side of 0.20 as stated, {sum(r['stated'] in (r['releases'] or []) for r in placed)} at their own release"
        + "".join(f"; wrong side: {r['file']} ({r['stated']}, placed {', '.join(r['releases'])})" for r in wrong)
    )
    return rows


# ------------------------------------------------------------------------------------ inventory
INVENTORY = ROOT / "tests" / "python" / "data" / "engine_logs" / "INVENTORY.md"
FIRST_ISSUE39_ENTRY = 43  # 1-based: the logs added for issue 39 item 6 start here
VLLM_RANGES = (">=0.21", "0.11-0.20", "0.4-0.10", "unknown")


def version_range(entry: dict) -> str:
    """vLLM: the release range of the entry's stated version; other engines: known / unknown."""
    version = entry.get("engine_version")
    if entry["engine"] != "vllm":
        return "known" if version else "unknown"
    parts = str(version or "").split(".")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return "unknown"
    if int(parts[0]) > 0 or int(parts[1]) >= 21:
        return ">=0.21"
    return "0.11-0.20" if int(parts[1]) >= 11 else "0.4-0.10"


def inventory_markdown(entries: list[dict], prose: dict[str, str]) -> str:
    """INVENTORY.md from calibration.json; `prose` keeps the file's hand-written paragraphs."""
    dash = lambda x: str(x) if x not in (None, "") else "\u2014"  # noqa: E731
    engines_n: dict[str, int] = {}
    for e in entries:
        engines_n[e["engine"]] = engines_n.get(e["engine"], 0) + 1
    ranges: dict[tuple, int] = {}
    for e in entries:
        key = (e["engine"], version_range(e))
        ranges[key] = ranges.get(key, 0) + 1
    order = {r: i for i, r in enumerate(("known", "unknown") + VLLM_RANGES)}
    lines = [
        "# Engine start-up logs: inventory",
        "",
        prose["intro"],
        "",
        f"Total: **{len(entries)} logs** ({len(entries) - FIRST_ISSUE39_ENTRY + 1} added for issue 39 item 6, "
        f"from entry {FIRST_ISSUE39_ENTRY} on).",
        "",
        "## Counts by engine",
        "",
        "| engine | logs |",
        "|---|---|",
    ]
    lines += [f"| {k} | {v} |" for k, v in sorted(engines_n.items(), key=lambda kv: (-kv[1], kv[0]))]
    lines += ["", "## Counts by engine and version range", "", prose["ranges"], ""]
    lines += ["| engine | version range | logs |", "|---|---|---|"]
    lines += [
        f"| {eng} | {rng} | {n} |"
        for (eng, rng), n in sorted(ranges.items(), key=lambda kv: (kv[0][0], order[kv[0][1]]))
    ]
    lines += ["", "## Logs", "", "| file | engine | version | GPU | model | model_id | figures (`logged` keys) |"]
    lines.append("|---|---|---|---|---|---|---|")
    for e in entries:
        gpu = dash(e.get("gpu")) + (f" (n={e['n_gpus']})" if (e.get("n_gpus") or 1) > 1 else "")
        lines.append(
            f"| {e['file']} | {e['engine']} | {dash(e.get('engine_version'))} | {gpu} | {dash(e.get('model'))} | "
            f"{dash(e.get('model_id'))} | {', '.join(e.get('logged', {}))} |"
        )
    lines += ["", prose["outro"], "", ""]
    return "\n".join(lines)


def write_inventory() -> None:
    old = INVENTORY.read_text(encoding="utf-8").split("\n")
    prose = {
        "intro": next(line for line in old if line.startswith("Every log under")),
        "ranges": next(line for line in old if line.startswith("vLLM ranges")),
        "outro": next(line for line in old if line.startswith("SGLang and TensorRT-LLM logs")),
    }
    INVENTORY.write_text(inventory_markdown(calibration(), prose), encoding="utf-8")
    print(f"wrote {INVENTORY.relative_to(ROOT)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--write", action="store_true", help="rewrite the fitted keys of kvlab/data/engines.json")
    ap.add_argument("--inventory", action="store_true", help="regenerate the logs' INVENTORY.md and stop")
    ap.add_argument("--prediction", action="store_true", help="print only table 2b (prediction on every log)")
    ap.add_argument(
        "--write-tags",
        action="store_true",
        help="rewrite engines.json vllm.log_tags (the releases' line tags) and stop",
    )
    args = ap.parse_args()
    if args.inventory:
        write_inventory()
        return
    if args.write_tags:
        data = json.loads(ENGINES_JSON.read_text(encoding="utf-8"))
        data["vllm"]["log_tags"] = log_tag_table()
        ENGINES_JSON.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {len(data['vllm']['log_tags']['tags'])} line tags to {ENGINES_JSON.relative_to(ROOT)}")
        return
    if args.prediction:
        prediction_on_every_log()
        return
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

    prediction_on_every_log()


if __name__ == "__main__":
    main()
