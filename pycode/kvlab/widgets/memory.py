"""The "Memory" page (memory.md): the kv-memory and gpu-fit widgets.

Each takes the reader's inputs, calls the tested calculators (kvlab.memory:
kv_bytes, catalogue, verdict, serving) and returns plain JSON-able data,
including the strings the page shows (kvlab.wording.human_bytes), so the static
figure, the live widget and the tests all print the very same text. The context
steps, limits and pickers are shared with the other pages (kvlab.widgets.pickers).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kvlab.dtypes import GIB
from kvlab.inputs import short_repr, takes, text
from kvlab.memory.architecture import FULL, LINEAR, SLIDING
from kvlab.memory.catalogue import get_gpu, get_model, list_gpus, list_models, model_architecture
from kvlab.memory.checkpoint import checkpoint_weights_bytes, hub_plan
from kvlab.memory.deployment import default_gpu_memory_utilization, deployment
from kvlab.memory.engines import VLLM_RECENT, VLLM_VERSION_ALIASES, vllm_cuda_graph_estimate, vllm_version_id
from kvlab.memory.kv_bytes import (
    LAYER_KIND_LABELS,
    LLAMACPP_PAD,
    VLLM_BLOCK_SIZE,
    VLLM_GPU_MEMORY_UTILIZATION,
    VLLM_MAX_NUM_BATCHED_TOKENS,
    kv_formula,
    layer_memory_map,
    memory_report,
)
from kvlab.memory.llama_server import CACHE_TYPES as LLAMACPP_CACHE_TYPES
from kvlab.memory.llama_server import llama_server_command
from kvlab.memory.verdict import verdict
from kvlab.memory.weights import weight_format, weights_bytes
from kvlab.widgets.pickers import (
    CACHE_KINDS,
    CONTEXT_STEPS,
    CONTEXT_TICKS,
    ENGINE_LABELS,
    INPUTS,
    MODE_LABELS,
    cache_kind,
    check_kv_mode,
    context_flag,
    context_step,
    curve_contexts,
    gpu_options,
    input_limits,
    kv_options,
    model_groups,
    model_info,
    weight_options,
)
from kvlab.widgets.views import with_view
from kvlab.wording import amount, human_bytes, plural, token_count, trim

if TYPE_CHECKING:
    from kvlab.widgets.memory_types import GpuFitFigureResult, GpuFitView, HubPlan, KvMemoryFigureResult, KvMemoryView


# ---------------------------------------------------------------------------- views: the words this module's widgets show


def _not_confirmed(info: dict | None) -> str:
    return f"Not confirmed: {info['note']}" if info and not info["confirmed"] else ""


def kv_memory_view(data: dict) -> KvMemoryView:
    """The kv-memory widget's words: the headline's growth, the layer map's sentence and hovers, the
    llama-server sentence, the curve's hovers and table, the messages, and the status line."""
    r, p, lm = data["result"], data["params"], data["layer_map"]
    g = r["growth"]
    head = g["growth_per_token"] if g["bounded"] else r["per_token"]
    curve = data["curve"]
    layers_text = (
        f"{plural(lm['n_layers'], 'layer')}: {lm['ideal']['human']} needed, {lm['allocated']['human']} allocated"
    )
    if lm["padding"]["bytes"]:
        layers_text += f" ({lm['padding']['human']} beyond the need, {lm['padding_share']:.1%} of it)"
    if lm["n_layers"] > len(lm["layers"]):
        layers_text += f"; the map draws the first {len(lm['layers']):,}"
    who = "your config.json" if p["source"] == "config" else data["model_info"]["hf_id"]
    return {
        "status": f"Computed in your browser by kvlab.kv_memory_figure ({who}, {plural(p['context'], 'token')}, {p['kv']}).",
        "context_text": plural(p["context"], "token"),
        "sequences_text": plural(p["n_seq"], "sequence"),
        "config_error": f"Could not read this config.json: {data['config_error']}" if data["config_error"] else None,
        "head": {
            "human": head["human"],
            "exact": head["exact"],
            "text": _growth_text(g) if g["bounded"] else "per token",
            "formula": g["growth_formula"] if g["bounded"] else r["formula"],
        },
        "layer_map_text": layers_text,
        "layer_kinds": [dict(k, layers_text=plural(k["layers"], "layer")) for k in lm["kinds"]],
        "server_text": _server_text(data["server"]),
        "weights_stored": _stored_weights_text(data["weights_stored"], p["context"]),
        "hover": {
            "layers": [
                f"layer {la['index']}, {la['label']}: needs {la['ideal']['human']} ({la['holds']}), "
                f"allocated {la['allocated']['human']}"
                for la in lm["layers"]
            ],
            "curve": [[f"{c:,} tokens: {h}" for c, h in zip(curve["contexts"], s["human"])] for s in curve["series"]],
        },
        "notes": r["notes"] + r["engine_notes"],
        "log": "\n".join(r["log_lines"]),
        "model_note": _not_confirmed(data["model_info"]),
        "curve_axis": f"KV cache, GiB ({data['params']['kv']}, {data['mode_label'].split(' (')[0]})",
        "curve_rows": [
            {
                "tokens": f"{c:,}",
                "cells": [{"human": s["human"][i], "title": f"{s['bytes'][i]:,} B"} for s in curve["series"]],
            }
            for i, c in enumerate(curve["contexts"])
        ],
        "kinds": [{**k, "title": f"{k['per_token']['exact']}; {k['formula']}"} for k in data["kinds"]],
    }


def _where(data: dict) -> str:
    """The GPUs, as the headline names them: "NVIDIA H100 SXM 80GB", "2 × ...", "4 × ... (2 pipeline stages)"."""
    p, name = data["params"], data["gpu_info"]["name"]
    gpus = p["n_gpus"] * p["pipeline_parallel"]
    where = name if gpus == 1 else f"{gpus} × {name}"
    if p["pipeline_parallel"] > 1:
        where += f" ({p['pipeline_parallel']} pipeline stages)"
    return where


def gpu_fit_view(data: dict) -> GpuFitView:
    """The gpu-fit widget's words: where it runs, the engine line, the bar's labels and titles, and the status line."""
    segments, p = data["segments"], data["params"]
    where = _where(data)
    budget_label = ("vLLM budget (" + data["budget_how"] + ")") if p["mode"] == "vllm" else "GPU memory"
    return {
        "status": f"Computed in your browser by kvlab.gpu_fit_figure ({data['model_info']['hf_id']} on {where}).",
        "where": where,
        "context_text": plural(p["context"], "token"),
        "sequences_text": plural(p["n_seq"], "sequence"),
        "engine_text": _engine_text(data),
        "budget_label": budget_label,
        "segments": [{**s, "title": f"{s['label']}: {s['human']} ({s['exact']})"} for s in segments],
        "bar_label": "".join(f"{s['label']} {s['human']}, " for s in segments)
        + f"against {data['memory']['human']} of GPU memory",
        "limit_title": f"{budget_label}: {data['budget']['human']}",
        "total_label": "total per GPU" if data["per_gpu"] else "total",
        "log": "\n".join(data["log_lines"]),
        "model_note": _not_confirmed(data["model_info"]),
    }


# One model per kind for the comparison table (ids in the catalogue).
KIND_EXAMPLES = ("llama-2-7b", "llama-3.1-8b", "deepseek-v2-lite", "gemma-2-9b", "qwen3-next-80b-a3b")
REFERENCE_MODELS = ("llama-2-7b", "llama-3.1-8b", "gemma-2-9b")

# ---------------------------------------------------------------------------
# kv-memory
# ---------------------------------------------------------------------------


def _report(model, context: int, kv: str, mode: str, n_seq: int) -> dict:
    """memory_report for n_seq sequences of `context` tokens each, in every mode.

    llama.cpp's -c is the total over its --parallel slots, so n_seq sequences of
    `context` tokens are `-c context*n_seq -np n_seq` (one stream per sequence),
    as in kvlab.memory.verdict."""
    if mode == "llamacpp":
        return memory_report(model, context * n_seq, kv=kv, mode=mode, n_seq=n_seq, kv_unified=n_seq == 1)
    return memory_report(model, context, kv=kv, mode=mode, n_seq=n_seq)


def _kind_rows(report: dict) -> list[dict]:
    """Per layer kind: how many layers, what each token adds, what they hold in total."""
    arch = report["architecture"]
    per = report["per_token"]["by_kind"]
    total = report["by_layer_kind_bytes"]
    rows = []
    if per["full"]["layers"]:
        rows.append(
            {
                "kind": "full",
                "label": "full attention",
                "layers": per["full"]["layers"],
                "holds": "every token",
                "per_token": amount(per["full"]["bytes_per_token"]),
                "total": amount(total["full"]),
            }
        )
    if per["sliding"]["layers"]:
        windows = ", ".join(token_count(w) for w in arch["sliding_windows"])
        rows.append(
            {
                "kind": "sliding",
                "label": "sliding window",
                "layers": per["sliding"]["layers"],
                "holds": f"the last {windows} tokens",
                "per_token": amount(per["sliding"]["bytes_per_token"]),
                "total": amount(total["sliding"]),
            }
        )
    if per["linear"]["layers"]:
        by_kind = arch["layers_by_kind"]
        label = "linear attention"
        if by_kind.get("full_with_state"):  # Falcon-H1: a Mamba-2 mixer beside the attention of each layer
            label = "Mamba-2 state (in the same layers as the attention)"
        elif not (by_kind["full"] or by_kind["sliding"]):  # Mamba, Mamba-2: no attention at all
            label = "recurrent state (no attention layer)"
        rows.append(
            {
                "kind": "linear",
                "label": label,
                "layers": per["linear"]["layers"],
                "holds": "a fixed state per sequence (f32)",
                "per_token": amount(0),
                "total": amount(total["linear"]),
            }
        )
    return rows


def _growth(report: dict, arch) -> dict:
    """The honest per-token numbers: what stops growing (windows, state) and what grows with every token."""
    per = report["per_token"]
    kinds = report["by_layer_kind_bytes"]
    growth = per["bytes_per_token_beyond_windows"]
    fixed = kinds[SLIDING] + kinds[LINEAR]
    windows = report["architecture"]["sliding_windows"]
    bounded = bool(per["by_kind"][SLIDING]["layers"] or per["by_kind"][LINEAR]["layers"])
    full = [layer for layer in arch.layers if layer.kind == FULL]
    out = {
        "bounded": bounded,
        "growth_per_token": amount(growth),
        "fixed": amount(fixed),
        "growth_formula": (
            kv_formula(replace(arch, layers=tuple(full)), per["k_type"], per["v_type"])
            if full
            else "no layer grows with the context"
        ),
        # what the view's sentence names: the windows, whether there is recurrent state, whether any
        # layer grows (full attention), and whether the state sits in the attention layers (Falcon-H1)
        "windows": windows if per["by_kind"][SLIDING]["layers"] else [],
        "state": bool(per["by_kind"][LINEAR]["layers"]),
        "grows": bool(full),
        "state_beside_attention": bool(report["architecture"]["layers_by_kind"].get("full_with_state")),
        "within_windows_per_token": per["bytes_per_token"],
    }
    return out


def _growth_text(g: dict) -> str:
    """The growth in words: what stops growing (windows, state) and what grows with every token."""
    if not g["bounded"]:
        return ""
    fixed = g["fixed"]["human"]
    if not g["windows"] and (not g["grows"] or g["state_beside_attention"]):
        # pure Mamba / Mamba-2 (nothing grows) and Falcon-H1 (no windows: every layer grows and keeps a state)
        return (
            f"per token: no layer has attention, so nothing grows with the context; the cache is {fixed} "
            "of recurrent state per sequence, the same at any length"
            if not g["grows"]
            else f"per token, plus {fixed} of recurrent state per sequence that does not grow "
            "(each layer runs a Mamba-2 mixer beside its attention)"
        )
    parts = []
    if g["windows"]:
        parts.append(f"sliding windows of {', '.join(token_count(w) for w in g['windows'])} tokens")
    if g["state"]:
        parts.append("recurrent state")
    where = "per token beyond the windows" if g["windows"] else "per token"
    text = f"{where}, plus {fixed} that stops growing ({' and '.join(parts)})"
    if g["windows"]:
        text += (
            f"; within the first {token_count(min(g['windows']))} tokens every attention layer grows: "
            f"{human_bytes(g['within_windows_per_token'])} per token"
        )
    return text


def _summary(report: dict, arch) -> dict:
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
        "per_token": amount(per["bytes_per_token"]),
        "per_token_beyond_windows": amount(per["bytes_per_token_beyond_windows"]),
        "growth": _growth(report, arch),
        "total": amount(report["total_bytes"]),
        "kinds": _kind_rows(report),
        "log_lines": report["detail"].get("log_lines", []),
        "engine_notes": report["detail"].get("notes", []) + report["detail"].get("assumptions", []),
    }
    out["mla_expanded_per_token"] = (
        amount(per["mla_expanded_bytes_per_token"]) if "mla_expanded_bytes_per_token" in per else None
    )
    return out


LAYER_MAP_ENGINES = {
    "llamacpp": f"llama.cpp's cells (the context padded to {LLAMACPP_PAD}; the SWA cache's window + n_ubatch padded to "
    f"{LLAMACPP_PAD})",
    "vllm": f"vLLM's whole blocks of {VLLM_BLOCK_SIZE} tokens (a sliding layer keeps window - 1 + "
    f"{VLLM_MAX_NUM_BATCHED_TOKENS:,} tokens and one block more)",
    "exact": "no engine: each layer holds exactly what it needs",
}


# The layer map draws at most this many layers (the largest model in the catalogue has 126): a pasted
# config of 10,000 layers drew 20,000 bars, a 1 s task on the page; the sums count every layer.
MAX_DRAWN_LAYERS = 256


def _layer_map(arch, context: int, kv: str, mode: str, n_seq: int) -> dict:
    """Every layer by kind, with what it needs (ideal) and what the engine allocates, for the map
    (the first MAX_DRAWN_LAYERS drawn; the kinds and totals count them all)."""
    m = layer_memory_map(arch, context, kv, mode, n_seq)
    top = max((la["allocated_bytes"] for la in m["layers"]), default=0) or 1
    all_layers = m["layers"]
    m = {**m, "layers": all_layers[:MAX_DRAWN_LAYERS]}
    layers = [
        {
            "index": la["index"],
            "kind": la["kind"],
            "label": la["label"],
            "holds": la["holds"],
            "ideal": amount(la["ideal_bytes"]),
            "allocated": amount(la["allocated_bytes"]),
            "padding": amount(la["allocated_bytes"] - la["ideal_bytes"]),
            "ideal_pct": round(100 * la["ideal_bytes"] / top, 3),
            "allocated_pct": round(100 * la["allocated_bytes"] / top, 3),
            "need_pct": round(100 * la["ideal_bytes"] / la["allocated_bytes"], 3) if la["allocated_bytes"] else 0.0,
        }
        for la in m["layers"]
    ]
    kinds = []
    for kind in m["kinds"]:
        rows = [la for la in all_layers if la["kind"] == kind]
        ideal = sum(la["ideal_bytes"] for la in rows)
        alloc = sum(la["allocated_bytes"] for la in rows)
        kinds.append(
            {
                "kind": kind,
                "label": LAYER_KIND_LABELS[kind],
                "layers": len(rows),
                "ideal": amount(ideal),
                "allocated": amount(alloc),
                "padding": amount(alloc - ideal),
            }
        )
    share = m["padding_bytes"] / m["allocated_bytes"] if m["allocated_bytes"] else 0.0
    unit, size = ("GiB", GIB) if top >= GIB else ("MiB", 2**20)
    plot = {
        "unit": unit,
        "x": [la["index"] for la in m["layers"]],
        "kind": [la["kind"] for la in m["layers"]],
        "needed": [la["ideal_bytes"] / size for la in m["layers"]],
        "padding": [(la["allocated_bytes"] - la["ideal_bytes"]) / size for la in m["layers"]],
    }
    return {
        "layers": layers,
        "kinds": kinds,
        "plot": plot,
        "ideal": amount(m["ideal_bytes"]),
        "allocated": amount(m["allocated_bytes"]),
        "padding": amount(m["padding_bytes"]),
        "padding_share": share,
        "n_layers": len(all_layers),  # the map draws the first len(layers)
        "how": m["how"],
        "engine": LAYER_MAP_ENGINES[mode],
        "note": (
            "Every layer here keeps its own keys and values. Some models let a layer reuse another layer's "
            "cache (Gemma-3n does); none in this catalogue does."
        ),
    }


def seed_claim() -> dict:
    """The seed explainer's claim, recomputed: Llama-2-7B (MHA) vs GQA models of the same size, f16, 131,072 tokens."""
    context = 131072
    rows = []
    for model_id in ("llama-2-7b", "mistral-7b-v0.3", "llama-3.1-8b"):
        r = memory_report(model_architecture(model_id), context, kv="f16", mode="exact")
        entry = get_model(model_id)
        w = weights_bytes(entry["params"], "F16")["bytes"]
        trained = r["architecture"]["max_position_embeddings"]
        rows.append(
            {
                "id": model_id,
                "model": r["model"],
                "attention": r["architecture"]["attention"],
                "formula": r["formula"],
                "per_token": amount(r["bytes_per_token"]),
                "per_token_mb": f"{r['bytes_per_token'] / 1e6:.2f} MB",
                "total": amount(r["total_bytes"]),
                "total_gb": f"{r['total_bytes'] / 1e9:.1f} GB",
                "weights_f16": amount(w),
                "weights_f16_gb": f"{w / 1e9:.1f} GB",
                "trained": token_count(trained) if trained else "?",
                "beyond_trained": bool(trained and context > trained),
            }
        )
    base = rows[0]["per_token"]["bytes"]
    for row in rows:
        row["times_smaller"] = trim(base / row["per_token"]["bytes"])
    return {"context": context, "context_human": token_count(context), "rows": rows}


def _server(model, context: int, kv: str, n_seq: int) -> dict:
    """The llama-server command for the widget's model, context, cache type and sequences (one slot
    of `context` tokens per sequence: `--ctx-size context*n_seq --parallel n_seq`, as _report counts
    llama.cpp). A cache type llama.cpp does not have (vLLM's fp8) gets no command, and says why."""
    if kv not in LLAMACPP_CACHE_TYPES:
        return {
            "command": None,
            "flags": [],
            "cache_type": kv,
            "kv_bytes": None,
            "holds": "",
            "n_ctx_seq": 0,
            "note": "",
        }
    c = llama_server_command(ctx_size=context * n_seq, cache_type_k=kv, parallel=n_seq, model=model)
    return {
        "command": c["command"],
        "flags": c["flags"],
        "cache_type": kv,
        "kv_bytes": c["kv"]["total_bytes"],
        "holds": c["kv"]["holds"],
        "n_ctx_seq": c["kv"]["n_ctx_seq"],
        "note": c["notes"][0],
    }


def _server_text(sv: dict) -> str:
    if sv["command"] is None:
        return (
            f"llama.cpp has no {sv['cache_type']} cache type (it is vLLM's); pick f16, bf16, q8_0 or q4_0 to see "
            "the llama-server command."
        )
    return (
        f"The same model, context and cache type on llama.cpp's server: it allocates "
        f"{human_bytes(sv['kv_bytes'])} of {sv['holds']}, {plural(sv['n_ctx_seq'], 'token')} per slot "
        "(after -m goes your own GGUF file). " + sv["note"] + "."
    )


# The vLLM versions gpu-fit offers (kvlab.memory.engines.VLLM_VERSIONS has them all), as its picker names them and as
# the engine line says what the verdict models. "0.20+" is what readers install today; "v1" is 0.8-0.19. Not offered:
# "v0" and "v0-pre-mla", whose verdicts would start models those releases never ran (Qwen3.5/3.6, gpt-oss) without a word.
VLLM_VERSION_CHOICES = {VLLM_RECENT: "0.20 and later (current)", "v1": "0.8-0.19 (V1 engine)"}
VLLM_VERSION_MODELLED = {
    VLLM_RECENT: "vLLM 0.20 and later (V1 engine, an estimate of its CUDA-graph memory taken off the KV budget)",
    "v1": "vLLM 0.8-0.19 (V1 engine)",
}


def _engine_text(data: dict) -> str:
    """Which engine version the verdict models, how sure it is, and any close call, in one line."""
    sure = "a firm answer" if data["confidence"] == "high" else "a close call"
    text = f"Modelled on {data['engine_version']}: {sure}."
    for warning in data["warnings"]:
        if warning.startswith("close call: "):
            warning = warning.removeprefix("close call: ")
        # a sentence opens with a capital, but a name keeps its own case ("llama.cpp's --fit ...")
        sentence = warning if warning.startswith(("llama.cpp", "vLLM")) else warning[0].upper() + warning[1:]
        text += " " + sentence + ("" if sentence.endswith(".") else ".")  # vLLM's own refusal ends with its full stop
    if data.get("mxfp4_kernel_how"):
        text += " " + data["mxfp4_kernel_how"] + "."
    return text


@takes(INPUTS)
@with_view(kv_memory_view)
def kv_memory_figure(
    model: str = "llama-2-7b",
    context: int = 4096,
    kv: str = "f16",
    mode: str = "llamacpp",
    n_seq: int = 1,
    config: str = "",
    references: str = ",".join(REFERENCE_MODELS),
    index: str = "",
    hub: str = "",
    hub_status: str = "",
) -> KvMemoryFigureResult:
    """The kv-memory widget: bytes per token with its formula (and, for windowed and hybrid models, the
    fixed part and the growth per token), the split by layer kind, the total, KV GiB against context for the
    model and reference models, and every attention kind side by side.

    `config`: the text of a Hugging Face config.json; when given it replaces `model`. A config that cannot
    be read is not an exception: the figure is the catalogue model's, and `config_error` names the field.
    `index`: the text of the checkpoint's model.safetensors.index.json, for the weights as stored. `hub` and
    `hub_status` say where the page fetched them (a Hub model id, and "ok", "no-index", "gated", "missing",
    "unreachable" or "too-big"); `hub_message` says what that means for the reader.
    """
    clamped: dict = {}
    p = INPUTS.check({"context": context, "n_seq": n_seq}, clamped)
    context, n_seq = p["context"], p["n_seq"]
    kv = check_kv_mode(kv, mode)
    config = text("config", config or "").strip()
    config_error = None
    arch = None
    if config:
        try:
            if not config.startswith("{"):
                raise ValueError("paste the text of a config.json (a JSON object, starting with '{')")
            arch = model_architecture(config)  # the ValueError names the missing or bad field
        except ValueError as exc:
            config_error = str(exc)  # view.config_error says it in a sentence
            arch = None
    if arch is not None:
        source, info, chosen = "config", None, arch
    else:
        info = model_info(model)
        arch = model_architecture(info["id"])
        source, chosen = "catalogue", arch
    report = _report(chosen, context, kv, mode, n_seq)
    summary = _summary(report, arch)
    if source == "config":
        summary["model"] = f"{text('hub', hub).strip() or 'your config.json'} ({report['model']})"
    stored = _stored_weights(index, chosen if source == "config" else None, report["total_bytes"], context)

    ref_ids = [r.strip() for r in str(references).split(",") if r.strip()]
    series = [{"id": info["id"] if info else "config", "name": summary["model"], "chosen": True, "arch": chosen}]
    series += [
        {"id": r, "name": get_model(r)["hf_id"], "chosen": False, "arch": model_architecture(r)}
        for r in ref_ids
        if not info or r != info["id"]
    ]
    contexts = curve_contexts()
    curves = []
    for s in series:
        totals = [_report(s["arch"], c, kv, mode, n_seq)["total_bytes"] for c in contexts]
        trained = s["arch"].max_position_embeddings
        curves.append(
            {
                "id": s["id"],
                "name": s["name"],
                "chosen": s["chosen"],
                "trained": trained,
                "bytes": totals,
                "gib": [t / GIB for t in totals],
                "human": [human_bytes(t) for t in totals],
                "beyond_trained": [bool(trained and c > trained) for c in contexts],
            }
        )

    kinds = []
    for example in KIND_EXAMPLES:
        r = _report(model_architecture(example), context, kv, mode, n_seq)
        row = next(x for x in list_models() if x["id"] == example)
        kinds.append(
            {
                "id": example,
                "model": r["model"],
                "kind": cache_kind(row),
                "kind_label": CACHE_KINDS[cache_kind(row)],
                "formula": r["formula"],
                "per_token": amount(r["bytes_per_token"]),
                "total": amount(r["total_bytes"]),
            }
        )

    return {
        "params": {
            "model": info["id"] if info else None,
            "context": context,
            "kv": kv,
            "mode": mode,
            "n_seq": n_seq,
            "source": source,
        },
        "clamped": clamped,
        "config_error": config_error,
        "hub_message": _hub_message(text("hub", hub).strip(), text("hub_status", hub_status)),
        "weights_stored": stored,
        "context_human": token_count(context),
        "context_step": context_step(context),
        "mode_label": MODE_LABELS[mode],
        "model_info": info,
        "result": summary,
        "context_flag": context_flag(arch, context, mode),
        "curve": {"contexts": contexts, "series": curves},
        "kinds": kinds,
        "layer_map": _layer_map(arch, context, kv, mode, n_seq),
        "server": _server(arch if source == "config" else info["id"], context, kv, n_seq),
        "claim": seed_claim(),
        "options": {
            "models": model_groups(),
            "kv": kv_options(),
            "modes": MODE_LABELS,
            "context_steps": CONTEXT_STEPS,
            "context_ticks": CONTEXT_TICKS,
            "limits": input_limits(),
        },
    }


HUB_MESSAGES = {
    "ok": "",
    "no-index": "{hub} has no model.safetensors.index.json (a one-file model): its KV cache is counted from the "
    "config; its weights are not read here (python -m kvlab checkpoint {hub} reads its header).",
    "gated": "The Hub answers {hub} only to a signed-in user who accepted its licence (a gated or private "
    "repository): download its config.json there and paste it below.",
    "missing": "The Hub has no config.json for {hub}: check the id's spelling (org/name, as on its Hub page).",
    "unreachable": "The Hub could not be reached (offline, or blocked by the network): paste the model's "
    "config.json below instead.",
    "too-big": "{hub}'s index is larger than this page reads: its KV cache is counted from the config; "
    "python -m kvlab checkpoint {hub} reads the weights' size.",
}


def kv_memory_hub(repo: str = "Qwen/Qwen3-8B") -> HubPlan:
    """The kv-memory widget's Hub fetch: the two files the page asks the Hub for, for a model id (org/name).

    The page fetches them (the hosted site's CSP allows https://huggingface.co and nothing else; the offline zip
    allows no other origin, and its readers paste instead) and hands the texts to kv_memory_figure.
    """
    return hub_plan(text("repo", repo))


def _hub_message(hub: str, status: str) -> str:
    """What the page's fetch from the Hub came to, for the reader ("" when nothing was fetched or all went well)."""
    if not status:
        return ""
    if status not in HUB_MESSAGES:
        raise ValueError(f"hub_status must be one of {', '.join(HUB_MESSAGES)}, got {short_repr(status)}")
    return HUB_MESSAGES[status].format(hub=hub or "this model")


def _stored_weights(index: str, arch, kv_bytes: int, context: int) -> dict | None:
    """The weights as the pasted or fetched index says the checkpoint stores them, and with the KV cache."""
    index = text("index", index or "").strip()
    if not index or arch is None:
        return None
    try:
        w = checkpoint_weights_bytes(index=index, num_hidden_layers=arch.n_layers)
    except ValueError as exc:
        return {"bytes": None, "error": str(exc), "with_kv": None}
    return {"bytes": w["bytes"], "error": None, "with_kv": amount(w["bytes"] + kv_bytes)}


def _stored_weights_text(stored: dict | None, context: int) -> str | None:
    if stored is None:
        return None
    if stored["error"] is not None:
        return f"The checkpoint's index could not be read: {stored['error']}"
    return (
        f"Weights as the checkpoint stores them: {human_bytes(stored['bytes'])} (the index's total_size); "
        f"with the KV cache at {plural(context, 'token')}, {stored['with_kv']['human']} before the engine's own buffers."
    )


# ---------------------------------------------------------------------------
# gpu-fit
# ---------------------------------------------------------------------------


def _verdict_row(v: dict) -> dict:
    return {
        "fits": v["fits"],
        "verdict": v["verdict"],
        "binding": v["binding"],
        "headroom": amount(v["headroom_bytes"]),
        "max_context": v["max_context_text"],
        "max_sequences": v["max_sequences_text"],
    }


@takes(INPUTS)
@with_view(gpu_fit_view)
def gpu_fit_figure(
    model: str = "qwen3.6-27b",
    gpu: str = "rtx-4090",
    weights: str = "Q4_K_M",
    kv: str = "q8_0",
    context: int = 131072,
    mode: str = "llamacpp",
    n_seq: int = 1,
    n_gpus: int = 1,
    gpu_memory_utilization: float | None = None,
    block_size: int = VLLM_BLOCK_SIZE,
    pipeline_parallel: int = 1,
    engine_version: str = VLLM_RECENT,
) -> GpuFitFigureResult:
    """The gpu-fit widget: kvlab.memory.verdict.verdict of one deployment on one GPU (weights + KV cache +
    compute buffer or activation reserve against its memory), what binds, the largest context and the most
    sequences that fit, and the same verdict for every catalogue GPU.

    `engine_version` is the vLLM release range modelled: "0.20+" (0.20 and later: a default
    `--gpu-memory-utilization` of 0.92, and the CUDA-graph estimate off the KV budget; "0.21+", its former name, is
    taken as it) or "v1" (0.8-0.19: 0.9, no such term). `gpu_memory_utilization` and `block_size` are vLLM's (`--gpu-memory-utilization`, `--block-size`;
    None: that version's default share); llama.cpp ignores them, and vLLM's `pipeline_parallel` stages (each of
    `n_gpus` GPUs). Out-of-range values are clamped and say so; a block size vLLM does not take (after clamping into
    its range), or a version not offered, is a ValueError naming the field."""
    if isinstance(engine_version, str):
        engine_version = vllm_version_id(engine_version)  # an old link's "0.21+" is "0.20+"
    if not isinstance(engine_version, str) or engine_version not in VLLM_VERSION_CHOICES:
        raise ValueError(
            f"engine_version must be one of {', '.join(VLLM_VERSION_CHOICES)}, got {short_repr(engine_version)}"
        )
    if gpu_memory_utilization is None:  # the version's own default: 0.92 from 0.20, 0.9 before
        gpu_memory_utilization = default_gpu_memory_utilization("vllm", engine_version)
    clamped: dict = {}
    p = INPUTS.check(
        {
            "context": context,
            "n_seq": n_seq,
            "n_gpus": n_gpus,
            "gpu_memory_utilization": gpu_memory_utilization,
            "block_size": block_size,
            "pipeline_parallel": pipeline_parallel,
        },
        clamped,
    )
    context, n_seq, n_gpus, pp = p["context"], p["n_seq"], p["n_gpus"], p["pipeline_parallel"]
    utilization, block_size = p["gpu_memory_utilization"], p["block_size"]
    if mode not in ENGINE_LABELS:
        raise ValueError(f"mode must be llamacpp or vllm, got {short_repr(mode)}")
    kv = check_kv_mode(kv, mode)
    weights = weight_format(weights)
    info = model_info(model)
    arch = model_architecture(info["id"])
    card = get_gpu(gpu)
    settings = {"weights": weights, "kv": kv, "engine": mode}
    if mode == "vllm":
        settings.update(gpu_memory_utilization=utilization, block_size=block_size, version=engine_version)
    single = bool(card.get("unified_memory"))  # one chip: no tensor or pipeline parallel
    stages = pp if mode == "vllm" and not single else 1
    v = verdict(deployment(arch, gpu=card["id"], tp=1 if single else n_gpus, pp=stages, **settings), context, n_seq)

    memory = v["memory_bytes"]
    scale = max(v["total_bytes"], memory)
    segments = [
        {"name": name, "label": label, "how": how, "percent": round(100 * size / scale, 3), **amount(size)}
        for name, label, how, size in _parts(v)
    ]
    log_lines = []
    if mode == "llamacpp":
        log_lines = _report(arch, context, kv, "llamacpp", n_seq)["detail"]["log_lines"]

    table = []
    for g in list_gpus():
        other = verdict(deployment(arch, gpu=g["id"], **settings), context, n_seq)
        table.append({"id": g["id"], "name": g["name"], "memory": amount(other["memory_bytes"]), **_verdict_row(other)})

    gpus = v["n_gpus"] * v["pipeline_parallel"]
    return {
        "params": {
            "model": info["id"],
            "gpu": card["id"],
            "weights": weights,
            "kv": kv,
            "context": context,
            "mode": mode,
            "n_seq": n_seq,
            "n_gpus": v["n_gpus"],
            "pipeline_parallel": v["pipeline_parallel"],
            "gpu_memory_utilization": utilization,
            "block_size": block_size,
            "engine_version": engine_version,
        },
        "clamped": clamped,
        "context_human": token_count(context),
        "context_step": context_step(context),
        "mode_label": MODE_LABELS[mode],
        "model_info": info,
        "gpu_info": {
            "id": card["id"],
            "name": card["name"],
            "spec_source": card["spec_source"],
            "note": card.get("note", ""),
            "unconfirmed": card.get("unconfirmed", []),
        },
        "flags": v["flags"],
        "memory": amount(memory),
        "budget": amount(v["budget_bytes"]),
        "budget_how": v["budget_how"],
        "budget_percent": round(100 * v["budget_bytes"] / scale, 3),
        "memory_percent": round(100 * memory / scale, 3),
        "segments": segments,
        "total": amount(v["total_bytes"]),
        "headroom": amount(v["headroom_bytes"]),
        "over": amount(v["over_bytes"]),
        "fits": v["fits"],
        "verdict": v["verdict"],
        "binding": v["binding"],
        "headline": v["headline"],
        "engine_version": VLLM_VERSION_MODELLED[engine_version] if mode == "vllm" else v["engine_model"]["version"],
        "mxfp4_kernel_how": v["engine_model"].get("mxfp4_kernel_how"),
        "confidence": v["confidence"],  # "high": a firm answer; otherwise a close call
        "warnings": v["warnings"],
        "context_flag": context_flag(arch, context, mode),
        "max_context": v["max_context"],
        "max_context_text": v["max_context_text"],
        "max_sequences": v["max_sequences"],
        "max_sequences_text": v["max_sequences_text"],
        "stages": [s["text"] for s in v["stages"]],
        "per_gpu": gpus > 1,
        "assumptions": v["assumptions"],
        "log_lines": log_lines,
        "gpus": table,
        "options": {
            "models": model_groups(),
            "gpus": gpu_options(),
            "weights": weight_options(),
            "kv": kv_options(),
            "modes": ENGINE_LABELS,
            "vllm_defaults": {
                "gpu_memory_utilization": default_gpu_memory_utilization("vllm", engine_version),
                "block_size": VLLM_BLOCK_SIZE,
            },
            # each version's default share: the page's field follows the version picked until the reader sets it
            "vllm_versions": [
                {
                    "id": k,
                    "label": label,
                    "gpu_memory_utilization": default_gpu_memory_utilization("vllm", k),
                    "aliases": [old for old, new in VLLM_VERSION_ALIASES.items() if new == k],
                }
                for k, label in VLLM_VERSION_CHOICES.items()
            ],
            "vllm_share_default_text": (
                f"{default_gpu_memory_utilization('vllm', VLLM_RECENT):g} from vLLM 0.20, "
                f"{VLLM_GPU_MEMORY_UTILIZATION:g} before"
            ),
            "context_steps": CONTEXT_STEPS,
            "context_ticks": CONTEXT_TICKS,
            "limits": input_limits(),
        },
    }


def _parts(v: dict) -> list[tuple[str, str, str, int]]:
    """The verdict's components as the bar draws them: (name, label, how, bytes). vLLM 0.20+ subtracts its CUDA-graph
    estimate from the KV budget, and the verdict counts it in the activation reserve (engine_model.cuda_graphs_bytes,
    on every GPU): drawn as a segment of its own, so the reader sees the term the version adds."""
    graphs = v["engine_model"].get("cuda_graphs_bytes") or 0
    parts = []
    for c in v["components"]:
        if graphs and c["name"] == "activation_reserve":
            estimate = vllm_cuda_graph_estimate()
            parts.append(
                (
                    "activation_reserve",
                    "activation reserve",
                    c["how"].removesuffix("; " + estimate["how"]),
                    c["bytes"] - graphs,
                )
            )
            parts.append(("cuda_graphs", "CUDA graphs (estimate)", estimate["how"].removeprefix("+ "), graphs))
        else:
            parts.append((c["name"], c["label"], c["how"], c["bytes"]))
    return parts
