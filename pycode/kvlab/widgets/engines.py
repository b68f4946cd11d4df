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
from kvlab.widgets.views import computed_status
from kvlab.wording import human_bytes, plural

if TYPE_CHECKING:
    from kvlab.widgets.engines_types import EnginesFigureResult

INPUTS = Spec(context=Param(256, 262_144), n_gpus=Param(1, 8, choices=TENSOR_PARALLEL))
ENGINES = ("vllm", "sglang", "trtllm", "llamacpp")


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@takes(INPUTS)
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
    out_rows = []
    for x in rows:
        out_rows.append(
            {
                "engine": x["engine"],
                "name": x["engine_name"],
                "version": x["version_modelled"],
                "fits": x["fits"],
                "budget_text": human_bytes(x["kv_budget_bytes"]) if x["kv_budget_bytes"] else "none",
                "tokens_text": f"{x['max_tokens']:,}",
                "sequences_text": plural(x["max_sequences_at_context"], "chat")
                if x["fits"]
                else "probably none (a close call)"
                if x.get("confidence") == "low"
                else "none at this context",
                "longest_text": f"{x['longest_context']:,}" if x["longest_context"] else "—",
                "percent": round(100 * x["kv_budget_bytes"] / largest, 2),
                "rule": f"{x['engine_name']} {x['rule']}.",
                "refusal": x["refusal"] or "",
                "unsure": x["unsure"],
            }
        )
    pooled = [x for x in rows if x["engine"] != "llamacpp" and x["kv_budget_bytes"] > 0]
    where = f"{p['n_gpus']} x {card['name']}" if p["n_gpus"] > 1 else f"one {card['name']}"
    if pooled:
        hi = max(pooled, key=lambda x: x["kv_budget_bytes"])
        lo = min(pooled, key=lambda x: x["kv_budget_bytes"])
        headline = (
            f"{info['hf_id']} on {where}: {hi['engine_name']} sets aside the most for the cache, "
            f"{human_bytes(hi['kv_budget_bytes'])} per GPU ({plural(hi['max_tokens'], 'token')})"
            + (f", {lo['engine_name']} the least, {human_bytes(lo['kv_budget_bytes'])}." if lo is not hi else ".")
        )
    else:
        headline = f"{info['hf_id']} on {where}: the weights leave no engine room for a pooled cache."
    held = [x for x in rows if x["fits"]]
    refused = [x["engine_name"] for x in rows if not x["fits"] and x.get("confidence") != "low"]
    unsure = [x["engine_name"] for x in rows if not x["fits"] and x.get("confidence") == "low"]
    parts = []
    if refused:
        parts.append(f"{_names(refused)} cannot hold one")
    if unsure:
        parts.append(f"{_names(unsure)} probably cannot hold one (a close call, within kvlab's error)")
    if held:
        parts.append("; ".join(f"{x['engine_name']} holds {x['max_sequences_at_context']:,}" for x in held))
    headline += f" Chats of {plural(p['context'], 'token')} at once: " + "; ".join(parts) + "."
    gpus = plural(p["n_gpus"], "GPU")
    return {
        "params": {"model": info["id"], "gpu": card["id"], "weights": weights, **p},
        "clamped": clamped,
        "status": computed_status("engines_figure", f"{p['context']:,} tokens, {gpus}"),
        "options": {
            "models": model_groups(),
            "gpus": gpu_options(),
            "weights": weight_options(),
            "limits": INPUTS.limits(),
        },
        "headline": headline,
        "rows": out_rows,
        "why": (
            "They differ in what they subtract before the cache: vLLM measures its activations with a profiling "
            "pass, SGLang keeps a fixed fraction of the card that depends on the card and its settings, "
            "TensorRT-LLM takes a share of what is still free after its own estimation pass, and llama.cpp "
            "allocates only what it is told to."
        ),
        "engines": [ENGINE_NAMES[e] for e in ENGINES],
    }
