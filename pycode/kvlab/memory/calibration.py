"""kvlab against real engine start-ups: the calibration logs, kvlab's reading of each, its verdict from the
model and card alone, and the engine model's fitted figures (kvlab/data/engines.json) derived from them.

Repository tooling, not page code: the logs live in tests/python/data/engine_logs/ (calibration.json holds each
log's URL, GPU, command and logged figures), so this module works in a checkout and is left out of the
browser's zip. bench/engine_calibration.py prints its tables; tests/python/test_engine_calibration.py checks them.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

from kvlab.memory import engines
from kvlab.memory.catalogue import get_gpu, gpu_memory_bytes, model_architecture
from kvlab.memory.deployment import deployment
from kvlab.memory.engine_logs import MXFP4_PRINTED, explain_engine_log
from kvlab.memory.kv_bytes import (
    GIB,
    VLLM_GPU_MEMORY_UTILIZATION,
    gpu_stages,
    vllm_activation_reserve,
    vllm_kv_cache,
)
from kvlab.memory.scheduler import RequestBlocks
from kvlab.memory.serving import run_totals, serving_benchmarks
from kvlab.memory.verdict import verdict
from kvlab.memory.weights import model_weights_bytes

ROOT = Path(__file__).resolve().parents[3]
LOGS = ROOT / "tests" / "python" / "data" / "engine_logs"
ENGINES_JSON = ROOT / "pycode" / "kvlab" / "data" / "engines.json"
TOLERANCE = 0.02
NOT_KV = {"compute buffers"}

# A log of a model the catalogue holds under another name with the same memory shape (the
# reason each is the same is given); used for the prediction table only.
PROXIES = {
    "meta-llama/Meta-Llama-3-8B": (
        "llama-3.1-8b",
        "same layers, heads, widths and vocabulary as Llama-3.1-8B; its own context is 8,192 tokens "
        "(max_position_embeddings, https://huggingface.co/meta-llama/Meta-Llama-3-8B/blob/main/config.json)",
    ),
}
PROXIES["Qwen/Qwen3-Coder-30B-A3B-Instruct-FP8"] = (
    "qwen3-30b-a3b",
    "same layers (48), KV heads (4) and head_dim (128) as Qwen3-30B-A3B; its own context is 262,144 tokens, "
    "which the log states (https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct/blob/main/config.json)",
)
PROXY_CONTEXT = {"meta-llama/Meta-Llama-3-8B": 8192}
# models whose reserve is kept as measured (their MXFP4 MoE kernels take ~7.5 GiB, far outside the dense fit)
MEASURED_MODELS = ("openai/gpt-oss-120b",)
QUANT = {"fp8": "FP8", "w8a8": "INT8", "awq": "INT4", "gptq": "INT4", "auto_round": "INT4", "mxfp4": "MXFP4"}


def calibration() -> list[dict]:
    return json.loads((LOGS / "calibration.json").read_text(encoding="utf-8"))["logs"]


def log_text(entry: dict) -> str:
    lines = (LOGS / entry["file"]).read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith("# "))


def _stated_releases() -> list[tuple[dict, str]]:
    """The stored vLLM logs that state a release (forks' builds left out), with it."""
    out = []
    for entry in calibration():
        release = engines.vllm_release(entry.get("engine_version")) if entry["engine"] == "vllm" else None
        if release is not None:
            out.append((entry, release))
    return out


def _tags_seen(logs: list[tuple[dict, str]]) -> dict[str, set]:
    tags: dict[str, set] = {}
    for entry, release in logs:
        for tag in engines.VLLM_LOG_TAG.findall(log_text(entry)):
            tags.setdefault(tag, set()).add(release)
    return tags


def log_tag_leave_one_out() -> list[dict]:
    """How well line tags place a log: each log that states its release, placed by the other logs' tags alone
    (`releases` None: no tag it prints is in theirs, or they disagree); `same_range`: placed on the same side of
    0.20 (the CUDA graph estimate subtracted from 0.20.0 on) as its stated release."""
    logs = _stated_releases()
    rows = []
    for i, (entry, release) in enumerate(logs):
        placed = engines.vllm_version_from_tags(log_text(entry), _tags_seen(logs[:i] + logs[i + 1 :]))
        rows.append(
            {
                "file": entry["file"],
                "stated": release,
                "releases": placed["releases"] if placed else None,
                "same_range": None
                if placed is None
                else (placed["value"] >= (0, 20)) == (engines.release_minor(release) >= (0, 20)),
            }
        )
    return rows


def log_tag_table() -> dict:
    """engines.json vllm.log_tags: every "[file.py:LINE]" tag (engines.VLLM_LOG_TAG) that a stored vLLM log stating
    its version prints, with the releases it was seen in; forks' builds are left out (their tags are not a release's)."""
    tags = _tags_seen(_stated_releases())
    key = lambda t: (t.split(":")[0], int(t.split(":")[1]))  # noqa: E731
    return {
        "about": (
            "vLLM prints each log line's source file and line ('[gpu_worker.py:508]'), and those lines move between "
            "releases: a log that prints no version is placed by the releases its tags were seen in. Each tag here "
            "is one that a stored start-up log stating its version prints (tests/python/data/engine_logs/"
            "calibration.json, each with its URL); forks' builds are left out. Written by "
            "bench/engine_calibration.py --write-tags."
        ),
        "tags": {t: sorted(tags[t]) for t in sorted(tags, key=key)},
    }


def model_of(entry: dict):
    """A catalogue id (or proxy, or the entry's own config.json) for the log's model, or None.

    An entry's config.json that comes with the checkpoint's parameter count (hf_config "params", its source in
    "params_source") is read with it, so that the weights can be counted."""
    if entry.get("hf_config"):
        hf = entry["hf_config"]
        if hf.get("params"):
            return model_architecture(hf["config"], params=hf["params"]), hf["source"]
        return hf["config"], hf["source"]
    if entry.get("model_id"):
        try:
            model_architecture(entry["model_id"])
            return entry["model_id"], None
        except ValueError:
            pass
    if entry.get("model") in PROXIES:
        return PROXIES[entry["model"]]
    return None, None


def checkpoint_of(entry: dict) -> dict | None:
    """The log's checkpoint as stored, where the entry gives its size with a source ("checkpoint": hf_id,
    total_bytes, maybe mtp_bytes, source), in the shape kvlab.memory.deployment's `checkpoint` takes; else None
    (the weights are then params x bits)."""
    ck = entry.get("checkpoint")
    if not ck:
        return None
    return {"bytes": ck["total_bytes"], "mtp_bytes": ck.get("mtp_bytes"), "source": ck["source"], "name": ck["hf_id"]}


def multimodal_of(args: dict) -> bool:
    """vLLM runs the model's vision tower: not with --language-model-only, nor with every modality at 0 in
    --limit-mm-per-prompt."""
    limits = args.get("limit_mm_per_prompt")
    off = isinstance(limits, dict) and limits and all(not n for n in limits.values())
    return not (args.get("language_model_only") or off)


def weights_format(entry: dict, arch) -> str:
    """The weights format of a log's checkpoint, as kvlab names formats: from --quantization, else the format in the
    model's name (an NVFP4 export loaded with --quantization modelopt is NVFP4, other modelopt checkpoints FP8), else
    the model's own (gpt-oss: MXFP4), else BF16."""
    q = str(entry.get("args", {}).get("quantization") or "").lower()
    name = str(entry.get("model") or "").lower()
    if "nvfp4" in name or "nvfp4" in q:
        return "NVFP4"
    if "modelopt" in q:
        return "FP8"
    if any(k in q or k in name for k in ("awq", "gptq", "auto_round", "autoround", "int4")):
        return "INT4"
    if "fp8" in q or "fp8" in name:
        return "FP8"
    if "w8a8" in name or "int8" in q:
        return "INT8"
    for key, fmt in QUANT.items():
        if key in q:
            return fmt
    if arch.family == "gpt_oss":
        return "MXFP4"
    return "BF16"


def era(entry: dict, text: str) -> str:
    """v0 for logs of the V0 engine (worker.py / model_runner.py lines, '# GPU blocks'), else v1."""
    version = entry.get("engine_version") or ""
    if version[:2] == "0." and version.split(".")[1].isdigit() and int(version.split(".")[1]) >= 11:
        return "v1"
    if "EngineCore" in text or "gpu_worker.py" in text or "gpu_model_runner.py" in text:
        return "v1"
    if any(m in text for m in ("worker.py", "model_runner.py", "GPU blocks", "CUDA blocks", "Loading model weights")):
        return "v0"
    return "v1"


def gpu_of(entry: dict) -> dict | None:
    if entry.get("gpu_id"):
        return get_gpu(entry["gpu_id"])
    text = str(entry.get("gpu") or "").lower()
    for word, gid in (
        ("h100", "h100-sxm"),
        ("rtx 3090", "rtx-3090"),
        ("a100", "a100-80gb"),
        ("h20", None),
        ("rtx a5000", "rtx-a5000"),
        ("rtx 4090 d", "rtx-4090-d"),  # the China-market 4090 (114 SMs), not the rtx-4090 entry
    ):
        if word in text:
            return get_gpu(gid) if gid else None
    return None


def speculative_of(args: dict) -> tuple[str | None, int]:
    """(method, num_speculative_tokens) from an entry's speculative_config, as calibration.json records it (vLLM's
    dict, or a note such as 'mtp, 3 tokens'); (None, 0) without one."""
    spec = args.get("speculative_config")
    if not spec:
        return None, 0
    if isinstance(spec, dict):
        return spec.get("method"), int(spec.get("num_speculative_tokens") or 0)
    tokens = re.search(r"(\d+)", str(spec))
    return ("mtp" if "mtp" in str(spec).lower() else None), int(tokens.group(1)) if tokens else 0


# ------------------------------------------------------------------------------------------ 1. reading
def reading_table() -> tuple[list[dict], int, int]:
    rows, ok, total = [], 0, 0
    for entry in calibration():
        model, _ = model_of(entry)
        if not model:
            continue
        stated = {
            k: v
            for k, v in entry.get("args", {}).items()
            if k in ("max_model_len", "kv_cache_dtype", "block_size", "max_num_batched_tokens", "n_ctx", "n_seq")
        }
        if entry["engine"] == "vllm":
            args = entry.get("args", {})
            if args.get("enable_prefix_caching") is not None:
                stated["enable_prefix_caching"] = bool(args["enable_prefix_caching"])
            method, tokens = speculative_of(args)
            if tokens:
                stated.update(num_speculative_tokens=tokens, **({"speculative_method": method} if method else {}))
        if entry["engine"] == "vllm" and (entry.get("args", {}).get("tensor_parallel_size") or 1) > 1:
            stated["tensor_parallel_size"] = entry["args"]["tensor_parallel_size"]
        if entry["engine"] == "vllm" and (entry.get("args", {}).get("pp") or 1) > 1:
            stated["pipeline_parallel_size"] = entry["args"]["pp"]
        try:
            r = explain_engine_log(log_text(entry), model, **stated)
        except ValueError as exc:
            rows.append({"file": entry["file"], "figures": 0, "rebuilt": 0, "note": f"refused: {exc}"[:80]})
            continue
        # a KV figure the log prints (not one kvlab predicts for a log that omits it, nor llama.cpp's compute
        # buffers, which are estimates and not part of the cache)
        figures = [
            c for c in r["checks"] if c["status"] not in ("not in the log", "predicted") and c["figure"] not in NOT_KV
        ]
        good = [c for c in figures if c["status"] in ("exact", "consistent")]
        ok += len(good)
        total += len(figures)
        rows.append(
            {
                "file": entry["file"],
                "figures": len(figures),
                "rebuilt": len(good),
                "note": "; ".join(c["figure"] for c in figures if c not in good)[:80],
            }
        )
    return rows, ok, total


# --------------------------------------------------------------------------------------- 2. prediction
def logged_available(entry: dict) -> float | None:
    logged = entry.get("logged", {})
    for key in ("available_kv_gib", "kv_cache_size_gib"):
        if logged.get(key) is not None:
            return logged[key]
    return None


def mxfp4_backend_of(entry: dict, text: str) -> str | None:
    """The MXFP4 kernel path a log ran on: printed in it, else as its entry states it (with the entry's reason),
    else None (the card's path is assumed)."""
    for pattern, kernel in MXFP4_PRINTED:
        if pattern.search(text):
            return kernel
    return entry.get("mxfp4_backend")


# the line vLLM prints when its sampler takes FlashInfer's path (vllm/v1/sample/ops/topk_topp_sampler.py)
FLASHINFER_SAMPLER_LINE = "Using FlashInfer for top-p & top-k sampling"


def sampler_of(entry: dict, text: str, version: str) -> str:
    """The path of a log's sampler warm-up: FlashInfer where the log says so, else its stated release's default,
    else its version label's (engines.vllm_sampler)."""
    if FLASHINFER_SAMPLER_LINE in text:
        return "flashinfer"
    return engines.vllm_sampler(version, entry.get("engine_version"))


def prediction_cases() -> list[dict]:
    cases = []
    for entry in calibration():
        if entry["engine"] != "vllm" or (entry.get("n_gpus") or 1) != 1:
            continue
        model, proxy_why = model_of(entry)
        card = gpu_of(entry)
        available = logged_available(entry)
        if not model or not card or available is None:
            continue
        args = entry.get("args", {})
        arch = model_architecture(model)
        fmt = weights_format(entry, arch)
        text = log_text(entry)
        version = era(entry, text)
        cases.append(
            {
                "entry": entry,
                "model": model,
                "proxy": proxy_why,
                "arch": arch,
                "card": card,
                "fmt": fmt,
                "kernel": engines.mxfp4_path(card, {"format": fmt}, mxfp4_backend_of(entry, text)),
                "util": args.get("gpu_memory_utilization", 0.9),
                "max_model_len": args.get("max_model_len")
                or PROXY_CONTEXT.get(entry.get("model"))
                or arch.max_position_embeddings,
                "batched": args.get("max_num_batched_tokens"),
                "available": available,
                "total": entry.get("logged", {}).get("total_gpu_memory_gib"),
                "weights": entry.get("logged", {}).get("weights_gib") or entry.get("logged", {}).get("weights_gb"),
                "refused": entry["file"].endswith("error.txt"),
                "era": version,
                "sampler": sampler_of(entry, text, version),
            }
        )
    return cases


def predict_before(c: dict) -> float:
    """kvlab before the engine model: nominal memory, 2048 batched tokens and 256 sequences everywhere."""
    w = model_weights_bytes(c["arch"], c["fmt"])["bytes"]
    reserve = vllm_activation_reserve(c["arch"], c["batched"] or 2048, 256)["bytes"]
    return (c["card"]["memory_gib"] * GIB * c["util"] - w - reserve) / GIB


def predict_after(c: dict) -> tuple[float, dict]:
    dep = deployment(
        c["arch"],
        weights=c["fmt"],
        checkpoint=checkpoint_of(c["entry"]),
        multimodal=multimodal_of(c["entry"].get("args", {})),
        kv="f16",
        gpu=c["card"]["id"],
        engine="vllm",
        version=c["era"],
        gpu_memory_utilization=c["util"],
        max_num_batched_tokens=c["batched"],
        allow_long_context=True,
        mxfp4_backend=c["kernel"],
        sampler=c["sampler"],
    )
    v = verdict(dep, c["max_model_len"], solve=False)
    parts = {p["name"]: p["bytes"] for p in v["components"]}
    return (v["budget_bytes"] - parts["weights"] - parts["activation_reserve"]) / GIB, v


def prediction_table() -> list[dict]:
    rows = []
    for c in prediction_cases():
        after, v = predict_after(c)
        before = predict_before(c)
        need = vllm_kv_cache(
            c["arch"], c["max_model_len"], max_num_batched_tokens=v["engine_model"]["max_num_batched_tokens"]
        )
        starts_after = after * GIB >= need["bytes_per_sequence"]
        starts_before = before * GIB >= vllm_kv_cache(c["arch"], c["max_model_len"])["bytes_per_sequence"]
        rows.append(
            {
                "file": c["entry"]["file"],
                "logged": c["available"],
                "before": before,
                "after": after,
                "err_before": (before - c["available"]) / max(abs(c["available"]), 1e-9),
                "err_after": (after - c["available"]) / max(abs(c["available"]), 1e-9),
                "starts_logged": not c["refused"],
                "starts_before": starts_before,
                "starts_after": starts_after,
                "confidence": v["confidence"],
                "band": v["error_band_bytes"] / GIB,
                "era": c["era"],
                "in_sample": c["entry"]["file"] in engines.vllm_data()["reserve_fit"]["fitted_on"]
                or any(
                    c["entry"]["source"] in m["sources"] and c["entry"].get("logged", {}).get("weights_gib")
                    for m in engines.vllm_data()["measured_reserve"]
                ),
            }
        )
    return rows


# -------------------------------------------------------------------------------------------- 3. fit
def implied_reserves() -> list[dict]:
    """Logs that give driver memory (or a catalogue card), util, weights and available KV: the reserve each implies
    (all but those an entry holds out with reserve_fit false)."""
    out = []
    for c in prediction_cases():
        if not c["entry"].get("reserve_fit", True):
            continue  # held out of the fit by its entry (its reserve_why says why): it scores the prediction
        weights = c["weights"]
        if weights is None and c["arch"].name in MEASURED_MODELS and c["card"]:
            # a refusal of a measured model that does not print its load: the load as vLLM logs it elsewhere
            weights = engines.vllm_loaded_weights(c["arch"], model_weights_bytes(c["arch"], c["fmt"]), c["kernel"])[
                "gib"
            ]
        if weights is None:
            continue
        total = c["total"] or engines.driver_memory(c["card"])["bytes"] / GIB
        implied = c["util"] * total - weights - c["available"]
        setup = engines.vllm_setup(
            c["card"],
            0,
            {"format": c["fmt"], "bytes": 0},
            c["arch"],
            1,
            c["batched"],
            None,
            c["era"],
            c["max_model_len"],
            mxfp4_backend=c["kernel"],
            sampler=c["sampler"],
        )
        feats = engines.reserve_features(c["arch"], setup["max_num_batched_tokens"], setup["max_num_seqs"])
        peak = engines.sampler_peak(feats, c["sampler"])[0]
        fitted = engines.vllm_reserve(
            c["arch"], setup["max_num_batched_tokens"], setup["max_num_seqs"], 1, sampler=c["sampler"]
        )["gib"]
        out.append({"case": c, "implied": implied, "features": feats, "peak": peak, "fitted": fitted})
    return out


SERVING_RUNS = ROOT / "tests" / "python" / "data" / "serving_runs.json"


def _one_gpu_runs(name: str, fmt: str, kernel: str | None):
    """Published vLLM runs of this model and format on one catalogue GPU, on this MXFP4 kernel path (the card's:
    a run does not print it)."""
    for run in json.loads(SERVING_RUNS.read_text(encoding="utf-8"))["runs"]:
        if run["engine"] != "vllm" or run.get("tp", 1) != 1 or run.get("pp", 1) != 1 or not run.get("gpu"):
            continue
        arch = model_architecture(run["model"])
        if arch.name != name or not run.get("weights", "").startswith(fmt):
            continue
        card = get_gpu(run["gpu"])
        if engines.mxfp4_path(card, {"format": fmt}) != kernel:
            continue
        yield run, arch, card


def _run_budget(run: dict, arch, card: dict) -> tuple[float, float]:
    """A published run's vLLM budget (util x driver memory) and the fitted reserve at its batch settings, GiB."""
    s = run["settings"]
    batch = engines.vllm_batch_defaults(card)
    fitted = engines.vllm_reserve(
        arch,
        s.get("max_num_batched_tokens") or batch["max_num_batched_tokens"],
        s.get("max_num_seqs") or batch["max_num_seqs"],
        1,
        sampler=engines.published_sampler(run),
    )["gib"]
    util = s.get("gpu_memory_utilization") or VLLM_GPU_MEMORY_UTILIZATION
    return util * engines.driver_memory(card)["bytes"] / GIB, fitted


def started_bounds(name: str, fmt: str, loaded_gib: float, kernel: str | None = None) -> list[dict]:
    """Published benchmark runs (tests/python/data/serving_runs.json) where vLLM started this model on one
    catalogue GPU (on this kernel path): each bounds the model's extra reserve from above, since vLLM refuses to
    start unless the KV of one max_model_len sequence fits: extra <= util x driver memory - weights as loaded - that
    KV - the fitted reserve at the run's batch settings."""
    out = []
    for run, arch, card in _one_gpu_runs(name, fmt, kernel):
        budget, fitted = _run_budget(run, arch, card)
        length = run["settings"].get("max_model_len") or arch.max_position_embeddings
        kv = vllm_kv_cache(arch, length, "auto")["bytes_per_sequence"] / GIB
        out.append(
            {
                "id": run["id"],
                "url": run["url"],
                "version": run.get("engine_version"),
                "bound": budget - loaded_gib - kv - fitted,
            }
        )
    return out


def serving_pool(run: dict) -> dict:
    """The KV pool a published `vllm bench serve` run shows vLLM held, from its own figures (Little's law): a decoding
    request emits one token per TPOT, so output tok/s x mean TPOT requests decode at once, each holding its prompt
    and on average half its answer (blocks as kvlab.memory.scheduler.RequestBlocks counts them, sliding groups
    holding their window). With every prompt sent at once and more of them than ever ran, the queue kept the pool
    full, so the blocks held are the pool (a little more: the one being prefilled, and the last partial blocks)."""
    m, s = run["measured"], run["settings"]
    arch = model_architecture(run["model"])
    card = get_gpu(run["gpu"])
    n_in, n_out = run_totals(run.get("verbatim") or "")
    n = m["completed"]
    budget = s.get("max_num_batched_tokens") or engines.vllm_batch_defaults(card)["max_num_batched_tokens"]
    length = s.get("max_model_len") or arch.max_position_embeddings
    layout = gpu_stages(vllm_kv_cache(arch, length, "auto", max_num_batched_tokens=budget))[0]["layout"]
    held = round(n_in / n + n_out / n / 2)
    each = RequestBlocks(layout, length, budget).one(held, held)
    decoding = m["output_tok_s"] * m["tpot_ms_mean"] / 1e3
    blocks = decoding * each
    return {
        "decoding": decoding,
        "blocks_each": each,
        "blocks": blocks,
        "gib": blocks * layout["memory_per_block"] / GIB,
        "how": f"{m['output_tok_s']:g} output tok/s x {m['tpot_ms_mean']:g} ms mean TPOT = {decoding:.1f} requests "
        f"decoding at once x {each} blocks each (prompt + half the answer, {held:,} tokens)",
    }


def pool_runs() -> list[str]:
    """The published runs whose pool kvlab reads (`serving_pool`): the serving simulation's fit runs
    (kvlab/data/serving_benchmarks.json, "simulation"), sent all at once with no concurrency cap, so the never-used
    runs stay never used."""
    fit = set(serving_benchmarks().get("simulation", {}).get("runs", []))
    runs = json.loads(SERVING_RUNS.read_text(encoding="utf-8"))["runs"]
    return [
        r["id"]
        for r in runs
        if r["id"] in fit
        and r["workload"].get("request_rate") in (None, "inf")
        and not r["workload"].get("max_concurrency")
    ]


def _pool_entry(name: str, fmt: str, kernel: str | None, loaded: list[dict], floor: float) -> dict | None:
    """A kernel path no log measures, measured by the pool a published run held instead: extra = util x driver
    memory - weights as loaded on that path - the pool - the fitted reserve at the run's batch settings. Its band is
    at least the fitted reserve's (`floor`): the fitted part is in it."""
    weights = next(
        (w["gib"] for w in loaded if w["model"] == name and w["format"] == fmt and w.get("kernel") == kernel), None
    )
    if weights is None:
        return None
    rows = []
    readable = set(pool_runs())
    for run, arch, card in _one_gpu_runs(name, fmt, kernel):
        if run["id"] not in readable:
            continue
        budget, fitted = _run_budget(run, arch, card)
        pool = serving_pool(run)
        extra = budget - weights - pool["gib"] - fitted
        rows.append((extra, pool, run))
    if not rows:
        return None
    extra = statistics.median(r[0] for r in rows)
    pools = ", ".join(f"{r[2]['id']}: {r[1]['how']}, {r[1]['gib']:.2f} GiB" for r in rows)
    return {
        "model": name,
        "format": fmt,
        "kernel": kernel,
        "n_gpus": 1,
        "extra_gib": round(extra, 3),
        "band_gib": round(max(floor, 0.1 * max(r[1]["gib"] for r in rows)), 3),
        "why": f"no log prints the KV memory on this path; the pool published runs held ({pools}) beside {weights:g} "
        "GiB of weights as loaded on this path; band: the fitted reserve's, or a tenth of the pool (its lengths are "
        "means) if wider",
        "sources": sorted({r[2]["url"] for r in rows}),
    }


def _measured_entry(
    name: str, fmt: str, kernel: str | None, rows: list[dict], loaded: list[dict], floor: float
) -> dict:
    """One model's measured reserve, as the GiB its kernels take beyond the fitted reserve (which scales with
    the batch settings): the median that its logs imply, and, where runs that started bound it
    lower than a log that refused implies (the engines' versions and kernel paths differ), the midpoint of
    the two with a band reaching both, so each side is a close call rather than a wrong answer."""
    implied = [r["implied"] - r["fitted"] for r in rows]
    gib = statistics.median(implied)
    band = max(floor, max(implied) - min(implied))  # at least the fitted reserve's band: the fitted part is in it
    why = (
        f"util x driver memory - weights - available KV - the fitted reserve at the log's batch settings, "
        f"on {len(rows)} log(s)"
    )
    sources = sorted({r["case"]["entry"]["source"] for r in rows})
    weights = next(
        (w["gib"] for w in loaded if w["model"] == name and w["format"] == fmt and w.get("kernel") == kernel), None
    )
    started = started_bounds(name, fmt, weights, kernel) if weights else []
    low = min((b["bound"] for b in started), default=None)
    if low is not None and low < gib:
        high = max(implied)
        gib, band = (high + low) / 2, max(floor, (high - low) / 2 + 0.25)
        versions = sorted({b["version"] for b in started if b["version"]})
        why = (
            f"the evidence disagrees: {len(rows)} refusing log(s) imply {high:.2f} GiB beyond the fitted reserve, while {len(started)} published "
            f"run(s) that started (vLLM {', '.join(versions) or 'version not stated'}) allow at most {low:.2f} GiB beside "
            f"{weights:g} GiB of weights and one max_model_len sequence; kvlab takes the midpoint with a band reaching "
            "both, so either outcome is a close call (the MoE kernel path and the version move the loaded size)"
        )
        sources = sorted(set(sources) | {b["url"] for b in started})
    return {
        "model": name,
        "format": fmt,
        **({"kernel": kernel} if kernel else {}),
        "n_gpus": 1,
        "extra_gib": round(gib, 3),
        "band_gib": round(band, 3),
        "why": why,
        "sources": sources,
    }


def derive() -> dict:
    """The keys of kvlab/data/engines.json that come from the calibration logs, derived afresh."""
    current = json.loads(ENGINES_JSON.read_text(encoding="utf-8"))["vllm"]
    # driver memory per catalogue card, from the logs that print total_gpu_memory
    seen: dict[str, list] = {}
    for entry in calibration():
        total = entry.get("logged", {}).get("total_gpu_memory_gib")
        card = gpu_of(entry)
        if total and card:
            seen.setdefault(card["id"], []).append((total, entry["source"]))
    driver = {
        gid: {"gib": statistics.median(t for t, _ in rows), "sources": sorted({s for _, s in rows})}
        for gid, rows in seen.items()
    }
    # against the size driver_memory scales for a card without a logged figure (the catalogue's usable memory:
    # nvidia-smi's where ECC takes a share, else the nominal size)
    ratios = [d["gib"] * GIB / gpu_memory_bytes(get_gpu(gid)) for gid, d in driver.items()]

    # weights as loaded, where the logs show the loader allocating 2 % more than the formula (padding, scales)
    loads: dict = {}
    for entry in calibration():
        logged = entry.get("logged", {})
        gib = logged.get("weights_gib") or logged.get("weights_gb")
        model, _ = model_of(entry)
        if entry["engine"] != "vllm" or not gib or not model or (entry.get("n_gpus") or 1) != 1:
            continue
        arch = model_architecture(model)
        fmt = weights_format(entry, arch)
        counted = model_weights_bytes(arch, fmt)
        formula = counted["bytes"] / GIB
        kernel = engines.mxfp4_path(gpu_of(entry), counted, mxfp4_backend_of(entry, log_text(entry)))
        loads.setdefault((arch.name, fmt, round(formula, 3), bool(counted.get("stored")), kernel), []).append(
            (gib, entry["source"])
        )
    loaded = [
        {
            "model": name,
            "format": fmt,
            **({"kernel": kernel} if kernel else {}),
            "gib": max(g for g, _ in rows),
            "why": f"the largest of {len(rows)} logged loads ("
            + ("the checkpoint stores" if stored else "the formula gives")
            + f" {formula:.2f} GiB; the loader pads and converts the quantized tensors for its kernels)",
            "source": ", ".join(sorted({s for _, s in rows})),
        }
        for (name, fmt, formula, stored, kernel), rows in loads.items()
        if max(g for g, _ in rows) > formula * 1.02
    ]

    # the reserve: physical terms at weight 1, a fitted constant; measured per model where its reserve is
    # far outside the fit (gpt-oss-120b's MXFP4 kernels)
    general, measured = [], {}
    for r in implied_reserves():
        c = r["case"]
        if c["arch"].name in MEASURED_MODELS:
            measured.setdefault((c["arch"].name, c["fmt"], c["kernel"]), []).append(r)
        else:
            general.append(r)
    residuals = [r["implied"] - r["peak"] for r in general]
    fixed = statistics.median(residuals)
    band = max(abs(x - fixed) for x in residuals)
    band_gib = math.ceil(max(band, 0.25) * 20) / 20  # rounded up to 0.05 GiB
    return {
        "driver_memory": driver,
        "driver_ratio": {
            "value": round(statistics.median(ratios), 4),
            "why": f"median of driver/nominal over {len(ratios)} cards seen in the calibration logs "
            f"({', '.join(driver)})",
        },
        "reserve_fit": {
            "coefficients": {"fixed": round(fixed, 3)},
            "peak_why": "the peak term is the larger of the forward's activations and the sampler warm-up on the "
            "log's path (vllm.sampler_warmup), each at weight 1: physical, not fitted",
            "tensor_parallel_extra_gib": current["reserve_fit"]["tensor_parallel_extra_gib"],
            "tensor_parallel_why": current["reserve_fit"].get("tensor_parallel_why", ""),
            "tensor_parallel_extra_pcie_gib": current["reserve_fit"]["tensor_parallel_extra_pcie_gib"],
            "tensor_parallel_pcie_why": current["reserve_fit"]["tensor_parallel_pcie_why"],
            "band_gib": band_gib,
            "n_logs": len(general),
            "fitted_on": [r["case"]["entry"]["file"] for r in general],
        },
        "measured_reserve": [
            _measured_entry(name, fmt, kernel, rows, loaded, band_gib) for (name, fmt, kernel), rows in measured.items()
        ]
        + [
            entry
            for name, fmt, kernel in sorted({(w["model"], w["format"], w.get("kernel")) for w in loaded})
            if name in MEASURED_MODELS
            and (name, fmt, kernel) not in measured
            and (entry := _pool_entry(name, fmt, kernel, loaded, band_gib))
        ],
        "loaded_weights": loaded,
        "general": general,
    }
