"""The "Wrap-up" page (wrap-up.md): the trade-off map and the prefill/decode sequence diagram.

tradeoff_map_figure answers "which technique helps here?" for three coarse settings
(conversation length, prefix repetition, memory left for the cache) by running
kvlab's own calculators on one reference model: the decode cost with and without
the KV cache, a prefix cache over repeated requests, the cache's size in f16,
q8_0 and q4_0, and how many tokens a window could keep when nothing fits.
prefill_decode_figure gives the messages of a sequence diagram (prefill, then
decode steps) with the cache lengths of kvlab.cache_phases.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlab.inputs import short_repr, text
from kvlab.memory.catalogue import get_model, model_architecture
from kvlab.memory.kv_bytes import kv_cache_bytes
from kvlab.memory.llama_server import llama_server_command
from kvlab.reuse.prefix_cache import run_requests, shared_prompt_requests
from kvlab.widgets.kv_cache import cache_phases
from kvlab.widgets.views import computed_status, with_view

if TYPE_CHECKING:
    from kvlab.widgets.wrapup_types import PrefillDecodeSequenceResult, SequenceView, TradeoffMapResult, TradeoffView


# ---------------------------------------------------------------------------- views: the words this module's widgets show


SEQUENCE_COLUMNS = {"input": 1, "model": 2, "cache": 3}  # the diagram's lifelines, left to right


def sequence_view(data: dict) -> SequenceView:
    col = SEQUENCE_COLUMNS
    return {
        "status": f"Computed in your browser by kvlab.prefill_decode_figure: {len(data['steps'])} steps.",
        "participants": [{**p, "col": col[p["key"]]} for p in data["participants"]],
        "steps": [
            {
                "phase": s["phase"],
                "note": s["note"],
                "messages": [
                    {
                        "text": m["text"],
                        "from_col": col[m["from"]],
                        "to_col": col[m["to"]],
                        "reply": m["reply"],
                        "sr": f"{m['from']} to {m['to']}",
                    }
                    for m in s["messages"]
                ],
            }
            for s in data["steps"]
        ],
    }


def tradeoff_view(data: dict) -> TradeoffView:
    p, names, cell = data["params"], data["techniques"], data["cell"]
    lengths = data["options"]["length"]
    return {
        "status": computed_status(
            "tradeoff_map_figure",
            f"{data['params']['length']} conversation, {data['params']['repetition']} repetition, {data['params']['memory']} memory",
        ),
        "memory": next(o["label"] for o in data["options"]["memory"] if o["key"] == p["memory"]),
        "where": f"{cell['tokens']:,} tokens, {100 * cell['repeated_share']:.0f}% of each prompt repeated, "
        f"{cell['memory_bytes'] / GIB:,.0f} GiB for the cache:",
        "rows": [
            {
                "label": lengths[i]["label"],
                "cells": [
                    {
                        "main": c["main"],
                        "name": names[c["main"]],
                        "length": c["length"],
                        "repetition": c["repetition"],
                        "current": c["length"] == p["length"] and c["repetition"] == p["repetition"],
                        "label": f"{lengths[i]['label']}, repeats {c['repetition']}: "
                        + ", ".join(names[h] for h in c["helps"]),
                    }
                    for c in row
                ],
            }
            for i, row in enumerate(data["grid"])
        ],
        "why": [
            {
                "helps": key in cell["helps"],
                "head": f"{label} helps." if key in cell["helps"] else f"{label}: not needed.",
                "text": cell["why"][key],
            }
            for key, label in names.items()
        ],
    }


GIB = 2**30
LENGTHS = {"short": 1024, "medium": 8192, "long": 65536}  # tokens in the conversation
REPETITION = {"low": 0.0, "medium": 0.5, "high": 0.9}  # share of each prompt that earlier requests already sent
MEMORY = {"low": 1 * GIB, "medium": 4 * GIB, "high": 16 * GIB}  # memory left for the KV cache, after the weights
REFERENCE_MODEL = "llama-3.1-8b"
REQUESTS = 10  # requests sharing the repeated part, for the prefix cache
KV_FORMATS = ["f16", "q8_0", "q4_0"]

TECHNIQUES = {
    "kv_cache": "KV cache",
    "prefix_cache": "Prefix cache",
    "kv_quant": "KV quantisation",
    "eviction": "Eviction / context shift",
}


def _cell(length: str, repetition: str, memory: str) -> dict:
    n = LENGTHS[length]
    share = REPETITION[repetition]
    budget = MEMORY[memory]
    arch = model_architecture(REFERENCE_MODEL)
    # KV cache: token-computations to write n tokens, without (1 + 2 + ... + n) and with (n) the cache
    no_cache, cache = n * (n + 1) // 2, n
    # Prefix cache: REQUESTS prompts of 1,000 tokens whose first share is the same (the saving is a share)
    prefix = int(round(1000 * share))
    reqs = shared_prompt_requests(REQUESTS, prefix, 1000 - prefix)
    run = run_requests(reqs, mode="radix")
    saved_share = run["tokens_reused"] / sum(len(r) for r in reqs)
    # Memory: the cache of one n-token conversation in each format, against the budget
    sizes = {f: kv_cache_bytes(arch, n, f)["total_bytes"] for f in KV_FORMATS}
    fits = [f for f in KV_FORMATS if sizes[f] <= budget]
    per_token_q8 = kv_cache_bytes(arch, 1, "q8_0")["total_bytes"]
    window = min(n, budget // per_token_q8)
    helps = ["kv_cache"]
    why = {
        "kv_cache": f"{n:,} tokens cost {no_cache:,} token-computations without it, {cache:,} with it ({no_cache / cache:,.0f}× less).",
    }
    if saved_share > 0:
        helps.append("prefix_cache")
        why["prefix_cache"] = (
            f"{REQUESTS} requests repeating {100 * share:.0f}% of their prompt: "
            f"{100 * saved_share:.0f}% of all prefill is reused."
        )
    else:
        why["prefix_cache"] = "Nothing repeats at the start of the prompts, so there is nothing to reuse."
    if fits and fits[0] == "f16":
        why["kv_quant"] = f"The f16 cache ({sizes['f16'] / GIB:,.2f} GiB) already fits in {budget / GIB:,.0f} GiB."
    elif fits:
        helps.append("kv_quant")
        why["kv_quant"] = (
            f"f16 needs {sizes['f16'] / GIB:,.2f} GiB of {budget / GIB:,.0f}; "
            f"{fits[0]} needs {sizes[fits[0]] / GIB:,.2f} GiB and fits."
        )
    else:
        helps.append("kv_quant")
        why["kv_quant"] = (
            f"Even q4_0 needs {sizes['q4_0'] / GIB:,.2f} GiB of {budget / GIB:,.0f}: quantising helps, but not enough."
        )
    if not fits:
        helps.append("eviction")
        why["eviction"] = (
            f"The whole conversation cannot stay cached: a window keeps the last {window:,} tokens "
            f"(q8_0) and the rest is forgotten."
        )
    else:
        why["eviction"] = "Everything fits: nothing has to be forgotten."
    # the llama-server line for this setting: the context, the cache format that fits
    # (q8_0 with a window when nothing does), prefix reuse when prompts repeat
    evicting = not fits
    server = llama_server_command(
        ctx_size=int(window) if evicting else n,
        cache_type_k="q8_0" if evicting else fits[0],
        cache_reuse=256 if saved_share > 0 else 0,
        context_shift=evicting,
        keep=0,
        model=REFERENCE_MODEL,
    )
    return {
        "length": length,
        "repetition": repetition,
        "memory": memory,
        "server": {"command": server["command"], "flags": server["flags"]},
        "tokens": n,
        "repeated_share": share,
        "memory_bytes": budget,
        "helps": helps,
        "main": helps[-1],
        "why": why,
        "numbers": {
            "token_computations": {"no_cache": no_cache, "cache": cache},
            "prefill_reused_share": saved_share,
            "kv_bytes": sizes,
            "fits": fits,
            "window_tokens": window,
        },
    }


@with_view(tradeoff_view)
def tradeoff_map_figure(
    length: str = "medium", repetition: str = "medium", memory: str = "medium"
) -> TradeoffMapResult:
    """Which technique helps at a conversation length × prefix repetition × memory setting, computed.

    "cell": the chosen setting (techniques that help, why, in numbers); "grid": every
    length × repetition cell at the chosen memory, for the map. Reference model:
    REFERENCE_MODEL's KV layout; one conversation's cache against the memory left.
    """
    for name, value, options in (
        ("length", length, LENGTHS),
        ("repetition", repetition, REPETITION),
        ("memory", memory, MEMORY),
    ):
        if value not in options:
            raise ValueError(f"{name} must be one of {list(options)}, got {short_repr(value)}")
    grid = [[_cell(ln, rp, memory) for rp in REPETITION] for ln in LENGTHS]
    cell = grid[list(LENGTHS).index(length)][list(REPETITION).index(repetition)]
    return {
        "params": {"length": length, "repetition": repetition, "memory": memory},
        "options": {
            "length": [{"key": k, "label": f"{k} ({v:,} tokens)"} for k, v in LENGTHS.items()],
            "repetition": [{"key": k, "label": f"{k} ({100 * v:.0f}% repeats)"} for k, v in REPETITION.items()],
            "memory": [{"key": k, "label": f"{k} ({v / GIB:,.0f} GiB)"} for k, v in MEMORY.items()],
        },
        "techniques": TECHNIQUES,
        "model": get_model(REFERENCE_MODEL)["hf_id"],
        "cell": cell,
        "grid": grid,
        "rows": list(LENGTHS),
        "cols": list(REPETITION),
    }


@with_view(sequence_view)
def prefill_decode_figure(prompt: str = "The cat sat", replies: str = "on the") -> PrefillDecodeSequenceResult:
    """The messages of a sequence diagram: one prefill step, then one decode step per reply word.

    Words stand for tokens here. Cache lengths before and after each step come
    from kvlab.cache_phases, so the diagram says what the step-through widget says.
    """
    words, new = text("prompt", prompt).split(), text("replies", replies).split()
    if not words or not new:
        raise ValueError("prompt and replies need at least one word each")
    phases = cache_phases(prompt_len=len(words), steps=len(new) - 1)["steps"]
    steps = []
    seq = list(words)
    for s, word in zip(phases, new):
        fed = seq if s["phase"] == "prefill" else seq[-1:]
        n = len(fed)
        span = f"[1–{s['cache_len_before']}]" if s["cache_len_before"] > 1 else "[1]"
        messages = [
            {
                "from": "input",
                "to": "model",
                "text": f"“{' '.join(fed)}” ({n} token{'s' if n != 1 else ''})",
                "reply": False,
            }
        ]
        if s["cache_len_before"]:
            messages.append({"from": "model", "to": "cache", "text": f"read K, V of tokens {span}", "reply": False})
        first = s["cache_len_before"] + 1
        where = f"[{first}]" if n == 1 else f"[{first}–{s['cache_len_after']}]"
        messages.append(
            {
                "from": "model",
                "to": "cache",
                "text": f"{'save' if s['phase'] == 'prefill' else 'append'} K, V of token{'s' if n != 1 else ''} {where}",
                "reply": False,
            }
        )
        messages.append(
            {"from": "model", "to": "input", "text": f"“{word}” (token {s['cache_len_after'] + 1})", "reply": True}
        )
        steps.append(
            {
                "step": s["step"],
                "phase": s["phase"],
                "note": (
                    f"Step {s['step']}: {s['phase'].upper()} · cache {s['cache_len_before']} → {s['cache_len_after']}"
                ),
                "messages": messages,
            }
        )
        seq.append(word)
    return {
        "participants": [
            {"key": "input", "label": "Input"},
            {"key": "model", "label": "Model"},
            {"key": "cache", "label": "KV cache"},
        ],
        "steps": steps,
    }
