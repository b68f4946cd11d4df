"""Four engines, one model (the memory page): what vLLM, SGLang, TensorRT-LLM and llama.cpp each set
aside for the KV cache of the same model on the same GPUs, and the rule that makes them differ.

Every figure is kvlab.memory.compare.engines_side_by_side (each engine's own budget rule, with the
engine version it models); this module only turns it into the page's words and bars.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlab.inputs import Param, Spec, takes
from kvlab.memory.catalogue import get_gpu, model_architecture
from kvlab.memory.compare import ENGINE_NAMES, engines_side_by_side
from kvlab.memory.verdict import TENSOR_PARALLEL
from kvlab.memory.weights import weight_format
from kvlab.widgets.pickers import gpu_options, model_groups, model_info, weight_options
from kvlab.widgets.views import computed_status, with_view
from kvlab.wording import human_bytes, plural

if TYPE_CHECKING:
    from kvlab.widgets.engines_types import EnginesFigureResult, EnginesView

INPUTS = Spec(context=Param(256, 262_144), n_gpus=Param(1, 8, choices=TENSOR_PARALLEL))
ENGINES = ("vllm", "sglang", "trtllm", "llamacpp")


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# ---------------------------------------------------------------------------- the view: the words the widget shows


def _sequences_text(x: dict) -> str:
    if x["fits"]:
        return plural(x["max_sequences_at_context"], "chat")
    return "probably none (a close call)" if x["confidence"] == "low" else "none at this context"


def engines_view(data: dict) -> EnginesView:
    """The engines widget's words: each row's figures, the headline (who sets aside the most and the
    least, and who holds how many chats of the context), the sentence on why, and the status line."""
    rows, p = data["rows"], data["params"]
    pooled = [x for x in rows if x["engine"] != "llamacpp" and x["kv_budget_bytes"] > 0]
    where = f"{p['n_gpus']} x {data['gpu_name']}" if p["n_gpus"] > 1 else f"one {data['gpu_name']}"
    if pooled:
        hi = max(pooled, key=lambda x: x["kv_budget_bytes"])
        lo = min(pooled, key=lambda x: x["kv_budget_bytes"])
        headline = (
            f"{data['model_name']} on {where}: {hi['name']} sets aside the most for the cache, "
            f"{human_bytes(hi['kv_budget_bytes'])} per GPU ({plural(hi['max_tokens'], 'token')})"
            + (f", {lo['name']} the least, {human_bytes(lo['kv_budget_bytes'])}." if lo is not hi else ".")
        )
    else:
        headline = f"{data['model_name']} on {where}: the weights leave no engine room for a pooled cache."
    held = [x for x in rows if x["fits"]]
    refused = [x["name"] for x in rows if not x["fits"] and x["confidence"] != "low"]
    unsure = [x["name"] for x in rows if not x["fits"] and x["confidence"] == "low"]
    parts = []
    if refused:
        parts.append(f"{_names(refused)} cannot hold one")
    if unsure:
        parts.append(f"{_names(unsure)} probably cannot hold one (a close call, within kvlab's error)")
    if held:
        parts.append("; ".join(f"{x['name']} holds {x['max_sequences_at_context']:,}" for x in held))
    headline += f" Chats of {plural(p['context'], 'token')} at once: " + "; ".join(parts) + "."
    return {
        "status": computed_status("engines_figure", f"{p['context']:,} tokens, {plural(p['n_gpus'], 'GPU')}"),
        "headline": headline,
        "rows": [
            {
                "name": x["name"],
                "percent": x["percent"],
                "budget_text": human_bytes(x["kv_budget_bytes"]) if x["kv_budget_bytes"] else "none",
                "tokens_text": f"{x['max_tokens']:,}",
                "sequences_text": _sequences_text(x),
                "longest_text": f"{x['longest_context']:,}" if x["longest_context"] else "—",
            }
            for x in rows
        ],
        "why": (
            "They differ in what they subtract before the cache: vLLM measures its activations with a profiling "
            "pass, SGLang keeps a fixed fraction of the card that depends on the card and its settings, "
            "TensorRT-LLM takes a share of what is still free after its own estimation pass, and llama.cpp "
            "allocates only what it is told to."
        ),
    }


@takes(INPUTS)
@with_view(engines_view)
def engines_figure(
    model: str = "qwen3-32b", gpu: str = "h100-sxm", context: int = 32768, n_gpus: int = 1, weights: str = "BF16"
) -> EnginesFigureResult:
    """The engines widget: one row per engine (its KV cache per GPU, the tokens it holds, the chats of
    `context` tokens at once, the longest single context, its rule in words and what kvlab is unsure of),
    a bar per engine on one scale, and a sentence on why they differ."""
    clamped: dict = {}
    p = INPUTS.check({"context": context, "n_gpus": n_gpus}, clamped)
    weights = weight_format(weights)
    info = model_info(model)
    card = get_gpu(gpu)
    arch = model_architecture(info["id"])
    r = engines_side_by_side(arch, card["id"], p["context"], n_gpus=p["n_gpus"], weights=weights, engines=ENGINES)
    rows = r["rows"]
    largest = max([x["kv_budget_bytes"] for x in rows] + [1])
    out_rows = [
        {
            "engine": x["engine"],
            "name": x["engine_name"],
            "version": x["version_modelled"],
            "fits": x["fits"],
            "confidence": x.get("confidence", ""),  # "low": a close call; "" where none is stated
            "kv_budget_bytes": x["kv_budget_bytes"],
            "max_tokens": x["max_tokens"],
            "max_sequences_at_context": x["max_sequences_at_context"],
            "longest_context": x["longest_context"],
            "percent": round(100 * x["kv_budget_bytes"] / largest, 2),
            "rule": x["rule"],  # a phrase after the engine's name (the template writes "<name> <rule>.")
            "refusal": x["refusal"] or "",
            "unsure": x["unsure"],
        }
        for x in rows
    ]
    return {
        "params": {"model": info["id"], "gpu": card["id"], "weights": weights, **p},
        "clamped": clamped,
        "model_name": info["hf_id"],
        "gpu_name": card["name"],
        "options": {
            "models": model_groups(),
            "gpus": gpu_options(),
            "weights": weight_options(),
            "limits": INPUTS.limits(),
        },
        "rows": out_rows,
        "engines": [ENGINE_NAMES[e] for e in ENGINES],
    }
