"""Figure data for the memory and serving pages: kv-memory, gpu-fit, serving.

One function per widget. Each takes the reader's inputs, calls the tested
calculators (memory.py, serving.py, catalogue.py) and returns plain JSON-able
data, including the strings the page shows (`human_bytes`), so the static
figure, the live widget and the tests all print the very same text.

>>> human_bytes(524288), human_bytes(64 * 2**30), human_bytes(156893184)
('512 KiB', '64 GiB', '149.62 MiB')
>>> exact_bytes(524288)
'524,288 B'
"""
from __future__ import annotations

from kvlab.catalogue import get_gpu, get_model, gpu_memory_bytes, list_gpus, list_models, model_architecture
from kvlab.memory import bits_per_value, fit_report, kv_type, memory_fit, memory_report, vllm_kv_cache
from kvlab.serving import _weights_read, serving_estimate
from kvlab.weights import list_weight_formats, weight_format, weights_bytes

KIB, MIB, GIB, TIB = 2**10, 2**20, 2**30, 2**40

# Context steps for the log-scale sliders and the curves: 1k, 1.5k, 2k, 3k ... 1M tokens.
# Each is a multiple of 256, so llama.cpp's padding does not move it.
CONTEXT_STEPS = sorted({k * 2**e for e in range(10, 21) for k in (1, 3 / 2) if k * 2**e <= 2**20})
CONTEXT_STEPS = [int(c) for c in CONTEXT_STEPS]
CONTEXT_LIMITS = (1, 2**20)
CONTEXT_TICKS = {"values": [2**10, 2**12, 2**14, 2**16, 2**18, 2**20], "labels": ["1k", "4k", "16k", "64k", "256k", "1M"]}
N_SEQ_LIMITS = (1, 256)
BATCH_LIMITS = (1, 1024)

# How a model's cache is built, for grouping the model picker and the comparison table.
CACHE_KINDS = {
    "mha": "MHA: one KV head per query head",
    "gqa": "GQA: groups of query heads share a KV head",
    "mqa": "MQA: one KV head for all query heads",
    "mla": "MLA: one compressed latent per layer",
    "interleaved": "Sliding-window layers + full layers",
    "sliding": "Sliding window on every layer",
    "hybrid": "Hybrid: linear-attention layers + full layers",
}
# One model per kind for the comparison table (ids in the catalogue).
KIND_EXAMPLES = ("llama-2-7b", "llama-3.1-8b", "deepseek-v2-lite", "gemma-2-9b", "qwen3-next-80b-a3b")
REFERENCE_MODELS = ("llama-2-7b", "llama-3.1-8b", "gemma-2-9b")

# Cache types a reader can pick, and the engines that accept them.
KV_CHOICES = (
    ("f16", ("llamacpp", "vllm", "exact")),
    ("bf16", ("llamacpp", "vllm", "exact")),
    ("q8_0", ("llamacpp", "exact")),
    ("q4_0", ("llamacpp", "exact")),
    ("fp8", ("vllm", "exact")),
)
MODE_LABELS = {
    "llamacpp": "llama.cpp (what it allocates and logs)",
    "vllm": "vLLM (PagedAttention blocks)",
    "exact": "exact (what the model needs, no padding)",
}
WEIGHT_CHOICES = ("BF16", "FP8", "Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q3_K_M", "IQ2_XS", "MXFP4", "INT4")
SEGMENT_LABELS = {
    "weights": "weights",
    "kv_cache": "KV cache",
    "compute_buffer": "compute buffer",
    "runtime_reserve": "runtime reserve",
    "activation_reserve": "activations + CUDA graphs",
}


# ---------------------------------------------------------------------------
# Formatting: one place, so the page, the widget and the tests agree
# ---------------------------------------------------------------------------

def human_bytes(n: float) -> str:
    """Binary units, at most two decimals, trailing zeros dropped (as llama.cpp's MiB, rounded)."""
    n = float(n)
    for unit, size in (("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= size:
            return f"{_trim(n / size)} {unit}"
    return f"{int(n):,} B"


def exact_bytes(n: float) -> str:
    return f"{int(n):,} B"


def _trim(x: float) -> str:
    text = f"{x:,.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def _amount(n: float) -> dict:
    """A byte count in the three forms a page needs."""
    return {"bytes": int(n), "human": human_bytes(n), "exact": exact_bytes(n), "gib": n / GIB}


def tokens(n: int) -> str:
    return f"{int(n):,}"


def _params(p: float | None) -> str:
    if not p:
        return "?"
    return f"{p / 1e9:.3g}B"


def _clamp(name: str, value, lo, hi, kind=int):
    try:
        v = kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    return min(hi, max(lo, v))


# ---------------------------------------------------------------------------
# Pickers (rendered at build time into <option>s)
# ---------------------------------------------------------------------------

def cache_kind(row: dict) -> str:
    """'mha' | 'gqa' | 'mqa' | 'mla' | 'interleaved' | 'sliding' | 'hybrid' for a list_models row."""
    layers = row["layers_by_kind"]
    if layers["linear"]:
        return "hybrid"
    if layers["sliding"]:
        return "interleaved" if layers["full"] else "sliding"
    return row["attention"]


def model_groups() -> list[dict]:
    """Catalogue models grouped by how their cache is built (empty groups left out)."""
    rows = list_models()
    groups = []
    for kind, label in CACHE_KINDS.items():
        models = [{"id": r["id"], "label": f"{r['hf_id']} · {_params(r['params'])}"
                   + ("" if r["confirmed"] else " (unconfirmed)")}
                  for r in rows if cache_kind(r) == kind]
        if models:
            groups.append({"kind": kind, "label": label, "models": models})
    return groups


def gpu_options() -> list[dict]:
    return [{"id": g["id"], "label": f"{g['name']} · {_trim(g.get('gpu_usable_gib') or g['memory_gib'])} GiB"}
            for g in list_gpus()]


def kv_options() -> list[dict]:
    return [{"id": t, "label": f"{t} ({_trim(bits_per_value(t))} bits per value)", "modes": list(modes)}
            for t, modes in KV_CHOICES]


def weight_options() -> list[dict]:
    known = {w["format"]: w for w in list_weight_formats()}
    return [{"id": f, "label": f"{f} ({_trim(known[f]['bits_per_weight'])} bits per weight)"}
            for f in WEIGHT_CHOICES]


def _check_kv_mode(kv: str, mode: str) -> str:
    if mode not in MODE_LABELS:
        raise ValueError(f"mode must be one of {', '.join(MODE_LABELS)}, got {mode!r}")
    kv = kv_type(kv)
    for t, modes in KV_CHOICES:
        if t == kv and mode not in modes:
            engines = " or ".join(MODE_LABELS[m].split(" (")[0] for m in modes)
            raise ValueError(f"kv type {kv} is not a {MODE_LABELS[mode].split(' (')[0]} cache type; "
                             f"use it with {engines}")
    return kv


def _model_info(model_id: str | None) -> dict | None:
    if model_id is None:
        return None
    entry = get_model(model_id)
    return {"id": entry["id"], "hf_id": entry["hf_id"], "source": entry["source"],
            "confirmed": entry["confirmed"], "note": entry["note"],
            "unconfirmed_fields": entry.get("unconfirmed_fields", []),
            "params": entry["params"], "params_human": _params(entry["params"])}


# ---------------------------------------------------------------------------
# kv-memory
# ---------------------------------------------------------------------------

def _report(model, context: int, kv: str, mode: str, n_seq: int) -> dict:
    return memory_report(model, context, kv=kv, mode=mode, n_seq=n_seq)


def _kind_rows(report: dict) -> list[dict]:
    """Per layer kind: how many layers, what each token adds, what they hold in total."""
    arch = report["architecture"]
    per = report["per_token"]["by_kind"]
    total = report["by_layer_kind_bytes"]
    rows = []
    if per["full"]["layers"]:
        rows.append({"kind": "full", "label": "full attention", "layers": per["full"]["layers"],
                     "holds": "every token",
                     "per_token": _amount(per["full"]["bytes_per_token"]), "total": _amount(total["full"])})
    if per["sliding"]["layers"]:
        windows = ", ".join(tokens(w) for w in arch["sliding_windows"])
        rows.append({"kind": "sliding", "label": "sliding window", "layers": per["sliding"]["layers"],
                     "holds": f"the last {windows} tokens",
                     "per_token": _amount(per["sliding"]["bytes_per_token"]), "total": _amount(total["sliding"])})
    if per["linear"]["layers"]:
        rows.append({"kind": "linear", "label": "linear attention", "layers": per["linear"]["layers"],
                     "holds": "a fixed state per sequence (f32)",
                     "per_token": _amount(0), "total": _amount(total["linear"])})
    return rows


def _summary(report: dict) -> dict:
    per = report["per_token"]
    out = {
        "model": report["model"],
        "attention": report["architecture"]["attention"],
        "layers_by_kind": report["architecture"]["layers_by_kind"],
        "kv_heads": report["architecture"]["kv_heads"],
        "head_dim": report["architecture"]["head_dim"],
        "max_position_embeddings": report["architecture"]["max_position_embeddings"],
        "notes": report["architecture"]["notes"],
        "formula": per["formula"],
        "per_token": _amount(per["bytes_per_token"]),
        "per_token_beyond_windows": _amount(per["bytes_per_token_beyond_windows"]),
        "total": _amount(report["total_bytes"]),
        "kinds": _kind_rows(report),
        "log_lines": report["detail"].get("log_lines", []),
        "engine_notes": report["detail"].get("notes", []) + report["detail"].get("assumptions", []),
    }
    out["mla_expanded_per_token"] = (_amount(per["mla_expanded_bytes_per_token"])
                                     if "mla_expanded_bytes_per_token" in per else None)
    return out


def context_step(context: int) -> int:
    """Index of the slider step nearest to `context` (on a log scale).

    >>> CONTEXT_STEPS[context_step(131072)], CONTEXT_STEPS[context_step(40000)]
    (131072, 32768)
    """
    import math

    return min(range(len(CONTEXT_STEPS)), key=lambda i: abs(math.log(CONTEXT_STEPS[i] / context)))


def _curve_contexts(limit: int | None = None) -> list[int]:
    return [c for c in CONTEXT_STEPS if limit is None or c <= limit]


def seed_claim() -> dict:
    """The seed explainer's claim, recomputed: Llama-2-7B (MHA) vs GQA models of the same size, f16, 131,072 tokens."""
    context = 131072
    rows = []
    for model_id in ("llama-2-7b", "mistral-7b-v0.3", "llama-3.1-8b"):
        r = memory_report(model_id, context, kv="f16", mode="exact")
        entry = get_model(model_id)
        w = weights_bytes(entry["params"], "F16")["bytes"]
        rows.append({"id": model_id, "model": r["model"], "attention": r["architecture"]["attention"],
                     "formula": r["formula"], "per_token": _amount(r["bytes_per_token"]),
                     "per_token_mb": f"{r['bytes_per_token'] / 1e6:.2f} MB",
                     "total": _amount(r["total_bytes"]), "total_gb": f"{r['total_bytes'] / 1e9:.1f} GB",
                     "weights_f16": _amount(w), "weights_f16_gb": f"{w / 1e9:.1f} GB"})
    base = rows[0]["per_token"]["bytes"]
    for row in rows:
        row["times_smaller"] = _trim(base / row["per_token"]["bytes"])
    return {"context": context, "context_human": tokens(context), "rows": rows}


def kv_memory_figure(model: str = "llama-2-7b", context: int = 131072, kv: str = "f16", mode: str = "llamacpp",
                     n_seq: int = 1, config: str = "", references: str = ",".join(REFERENCE_MODELS)) -> dict:
    """The kv-memory widget: bytes per token with its formula, the split by layer kind, the total,
    KV GiB against context for the model and reference models, and every attention kind side by side.

    `config`: the text of a Hugging Face config.json; when given it replaces `model` (a missing
    field is a ValueError that names it).
    """
    context = _clamp("context", context, *CONTEXT_LIMITS)
    n_seq = _clamp("n_seq", n_seq, *N_SEQ_LIMITS)
    kv = _check_kv_mode(kv, mode)
    config = (config or "").strip()
    if config:
        if not config.startswith("{"):
            raise ValueError("config: paste the text of a config.json (a JSON object, starting with '{')")
        arch = model_architecture(config)  # the ValueError names the missing or bad field
        source, info, chosen = "config", None, arch
    else:
        info = _model_info(model)
        source, chosen = "catalogue", info["id"]
    report = _report(chosen, context, kv, mode, n_seq)
    summary = _summary(report)
    if source == "config":
        summary["model"] = f"your config.json ({report['model']})"

    ref_ids = [r.strip() for r in str(references).split(",") if r.strip()]
    series = [{"id": info["id"] if info else "config", "name": summary["model"], "chosen": True, "arch": chosen}]
    series += [{"id": r, "name": get_model(r)["hf_id"], "chosen": False, "arch": r}
               for r in ref_ids if not info or r != info["id"]]
    contexts = _curve_contexts()
    curves = []
    for s in series:
        totals = [_report(s["arch"], c, kv, mode, n_seq)["total_bytes"] for c in contexts]
        curves.append({"id": s["id"], "name": s["name"], "chosen": s["chosen"],
                       "bytes": totals, "gib": [t / GIB for t in totals], "human": [human_bytes(t) for t in totals]})

    kinds = []
    for example in KIND_EXAMPLES:
        r = _report(example, context, kv, mode, n_seq)
        row = next(x for x in list_models() if x["id"] == example)
        kinds.append({"id": example, "model": r["model"], "kind": cache_kind(row), "kind_label": CACHE_KINDS[cache_kind(row)],
                      "formula": r["formula"], "per_token": _amount(r["bytes_per_token"]),
                      "total": _amount(r["total_bytes"])})

    return {
        "params": {"model": info["id"] if info else None, "context": context, "kv": kv, "mode": mode,
                   "n_seq": n_seq, "source": source},
        "context_human": tokens(context),
        "context_step": context_step(context),
        "mode_label": MODE_LABELS[mode],
        "model_info": info,
        "result": summary,
        "curve": {"contexts": contexts, "series": curves},
        "kinds": kinds,
        "claim": seed_claim(),
        "options": {"models": model_groups(), "kv": kv_options(), "modes": MODE_LABELS,
                    "context_steps": CONTEXT_STEPS, "context_ticks": CONTEXT_TICKS},
    }


# ---------------------------------------------------------------------------
# gpu-fit
# ---------------------------------------------------------------------------

def _vllm_max_context(arch, memory: int, weights: str, kv: str, n_seq: int) -> int | None:
    """Largest max_model_len (a multiple of 256) whose n_seq sequences fit vLLM's KV budget."""
    def fits(ctx):
        return memory_fit(arch, ctx, memory, weights, kv, mode="vllm", n_seq=n_seq)["fits"]
    step = 256
    hi = max(1, (arch.max_position_embeddings or 2**20) // step)
    if not fits(step):
        return None
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid * step):
            lo = mid
        else:
            hi = mid - 1
    return lo * step


def _fit(arch, gpu: str, context: int, weights: str, kv: str, mode: str, n_seq: int) -> dict:
    r = fit_report(arch, context, gpu=gpu, weights=weights, kv=kv, mode=mode, n_seq=n_seq)
    if mode == "vllm":
        r["max_context_that_fits"] = _vllm_max_context(arch, r["memory_bytes"], weights, kv, n_seq)
    return r


def _max_ctx_text(max_ctx: int | None, arch) -> str:
    if max_ctx is None:
        return "none: not even 256 tokens fit"
    text = f"{tokens(max_ctx)} tokens"
    if arch.max_position_embeddings and max_ctx >= arch.max_position_embeddings:
        text += " (the model's own limit)"
    return text


def gpu_fit_figure(model: str = "qwen3.6-27b", gpu: str = "rtx-4090", weights: str = "Q4_K_M", kv: str = "q8_0",
                   context: int = 131072, mode: str = "llamacpp", n_seq: int = 1) -> dict:
    """The gpu-fit widget: weights + KV cache + compute buffer (+ reserve) against one GPU's memory,
    the verdict, the largest context that fits, and the same question for every catalogue GPU."""
    context = _clamp("context", context, *CONTEXT_LIMITS)
    n_seq = _clamp("n_seq", n_seq, *N_SEQ_LIMITS)
    if mode not in ("llamacpp", "vllm"):
        raise ValueError(f"mode must be llamacpp or vllm, got {mode!r}")
    kv = _check_kv_mode(kv, mode)
    weights = weight_format(weights)
    info = _model_info(model)
    arch = model_architecture(info["id"])
    card = get_gpu(gpu)
    r = _fit(arch, card["id"], context, weights, kv, mode, n_seq)

    memory = r["memory_bytes"]
    scale = max(r["total_bytes"], memory)
    kv_how = (f"{MODE_LABELS[mode].split(' (')[0]} accounting: {kv} K and V, {n_seq} x {tokens(context)} tokens"
              + (" (--parallel " + str(n_seq) + ")" if mode == "llamacpp" and n_seq > 1 else ""))
    segments = [{"name": c["name"], "label": SEGMENT_LABELS.get(c["name"], c["name"]),
                 "how": kv_how if c["name"] == "kv_cache" else c["how"],
                 "percent": round(100 * c["bytes"] / scale, 3), **_amount(c["bytes"])} for c in r["components"]]
    log_lines = []
    if mode == "llamacpp":
        log_lines = memory_report(arch, context, kv=kv, mode="llamacpp", n_seq=n_seq)["detail"]["log_lines"]

    table = []
    for g in list_gpus():
        other = _fit(arch, g["id"], context, weights, kv, mode, n_seq)
        table.append({"id": g["id"], "name": g["name"], "memory": _amount(other["memory_bytes"]),
                      "fits": other["fits"], "verdict": other["verdict"],
                      "headroom": _amount(other["headroom_bytes"]),
                      "max_context": _max_ctx_text(other["max_context_that_fits"], arch)})

    return {
        "params": {"model": info["id"], "gpu": card["id"], "weights": weights, "kv": kv, "context": context,
                   "mode": mode, "n_seq": n_seq},
        "context_human": tokens(context),
        "context_step": context_step(context),
        "mode_label": MODE_LABELS[mode],
        "model_info": info,
        "gpu_info": {"id": card["id"], "name": card["name"], "spec_source": card["spec_source"],
                     "note": card.get("note", ""), "unconfirmed": card.get("unconfirmed", [])},
        "memory": _amount(memory),
        "budget": _amount(r["budget_bytes"]),
        "budget_percent": round(100 * r["budget_bytes"] / scale, 3),
        "memory_percent": round(100 * memory / scale, 3),
        "segments": segments,
        "total": _amount(r["total_bytes"]),
        "headroom": _amount(r["headroom_bytes"]),
        "fits": r["fits"],
        "verdict": r["verdict"],
        "max_context": r["max_context_that_fits"],
        "max_context_text": _max_ctx_text(r["max_context_that_fits"], arch),
        "assumptions": [f"{s['label']}: {s['how']}" for s in segments]
        + [a for a in r["assumptions"] if not any(a in s["how"] for s in segments)],
        "log_lines": log_lines,
        "gpus": table,
        "options": {"models": model_groups(), "gpus": gpu_options(), "weights": weight_options(),
                    "kv": kv_options(), "modes": {m: MODE_LABELS[m] for m in ("llamacpp", "vllm")},
                    "context_steps": CONTEXT_STEPS, "context_ticks": CONTEXT_TICKS},
    }


# ---------------------------------------------------------------------------
# serving
# ---------------------------------------------------------------------------

def _ms(seconds: float) -> str:
    return _trim(seconds * 1000) + " ms"


def serving_figure(model: str = "llama-3.1-8b", gpu: str = "h100-sxm", context: int = 32768, batch: int = 16,
                   weights: str = "BF16", kv: str = "f16") -> dict:
    """The serving widget: decode speed from bytes and bandwidth, chats that fit, dollars per million tokens,
    and ms/token against context for batch 1 and the chosen batch."""
    context = _clamp("context", context, *CONTEXT_LIMITS)
    batch = _clamp("batch", batch, *BATCH_LIMITS)
    weights = weight_format(weights)
    kv = _check_kv_mode(kv, "exact")
    info = _model_info(model)
    card = get_gpu(gpu)
    arch = model_architecture(info["id"])
    est = serving_estimate(arch, card["id"], context, batch, weights, kv)
    w_read = _weights_read(arch, weights, batch)[0]
    one = serving_estimate(arch, card["id"], context, 1, weights, kv)

    limit = arch.max_position_embeddings or 2**20
    contexts = _curve_contexts(limit)
    curve = {"contexts": contexts, "batch": batch, "ms_batch1": [], "ms_batch": [], "fits_batch": []}
    for c in contexts:
        a = serving_estimate(arch, card["id"], c, 1, weights, kv)
        b = serving_estimate(arch, card["id"], c, batch, weights, kv)
        curve["ms_batch1"].append(a["seconds_per_token"] * 1000)
        curve["ms_batch"].append(b["seconds_per_token"] * 1000)
        curve["fits_batch"].append(b["fits"])
    curve["ms_batch1_text"] = [_ms(ms / 1000) for ms in curve["ms_batch1"]]
    curve["ms_batch_text"] = [_ms(ms / 1000) for ms in curve["ms_batch"]]

    weight_read = est["kv_share_of_reads"]
    price = est["price_per_hour"]
    cost = est["usd_per_million_tokens"]
    return {
        "params": {"model": info["id"], "gpu": card["id"], "context": context, "batch": batch,
                   "weights": weights, "kv": kv},
        "context_human": tokens(context),
        "context_step": context_step(context),
        "model_info": info,
        "gpu_info": {"id": card["id"], "name": card["name"], "bandwidth_gb_s": card["bandwidth_gb_s"],
                     "spec_source": card["spec_source"], "memory": _amount(gpu_memory_bytes(card)),
                     "price_per_hour": price, "price_provider": card.get("price_provider"),
                     "price_source": card.get("price_source"), "price_date": card.get("price_date"),
                     "note": card.get("note", ""), "unconfirmed": card.get("unconfirmed", [])},
        "weights_bytes": _amount(est["weights_bytes"]),
        "kv_per_chat": _amount(est["kv_bytes_per_chat"]),
        "kv_per_step": _amount(est["kv_bytes_per_chat"] * batch),
        "weights_read_per_step": _amount(w_read),
        "bytes_per_step": _amount(w_read + batch * est["kv_bytes_per_chat"]),
        "working": (f"({human_bytes(w_read)} of weights + {batch} x {human_bytes(est['kv_bytes_per_chat'])} of KV) "
                    f"/ {card['bandwidth_gb_s']:,} GB/s = {_ms(est['seconds_per_token'])} per step"),
        "ms_per_token": est["seconds_per_token"] * 1000,
        "ms_per_token_text": _ms(est["seconds_per_token"]),
        "ms_per_token_batch1_text": _ms(one["seconds_per_token"]),
        "tokens_per_second_per_chat": est["tokens_per_second_per_chat"],
        "tokens_per_second_per_chat_text": _trim(est["tokens_per_second_per_chat"]),
        "total_tokens_per_second": est["total_tokens_per_second"],
        "total_tokens_per_second_text": _trim(est["total_tokens_per_second"]),
        "kv_share_of_reads": weight_read,
        "kv_share_text": f"{100 * weight_read:.1f}%",
        "kv_share_batch1_text": f"{100 * one['kv_share_of_reads']:.1f}%",
        "chats_that_fit": est["chats_that_fit_in_memory"],
        "chats_that_fit_text": tokens(est["chats_that_fit_in_memory"] or 0),
        "fits": est["fits"],
        "memory_used": _amount(est["memory_used_bytes"]),
        "usd_per_million_tokens": cost,
        "cost_text": f"${cost:.2f}" if cost is not None else "no hourly price in the catalogue for this GPU",
        "cost_batch1_text": (f"${one['usd_per_million_tokens']:.2f}" if one["usd_per_million_tokens"] is not None
                             else "—"),
        "assumptions": est["assumptions"],
        "curve": curve,
        "options": {"models": model_groups(), "gpus": gpu_options(), "weights": weight_options(),
                    "kv": [k for k in kv_options() if "exact" in k["modes"]], "context_steps": CONTEXT_STEPS, "context_ticks": CONTEXT_TICKS},
    }
