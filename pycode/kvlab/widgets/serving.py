"""The "Serving" page (serving.md): the serving widget (fit verdict for a batch, time per
step from both roofline bounds, chats that fit, dollars per million tokens).

It reuses the pickers, context steps and limits the pages share (kvlab.widgets.pickers).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kvlab.inputs import Param, Spec, one_of, short_repr, takes
from kvlab.memory.catalogue import get_gpu, gpu_memory_bytes, list_gpus, model_architecture
from kvlab.memory.deployment import TENSOR_PARALLEL, Refused, default_gpu_memory_utilization
from kvlab.memory.engines import VLLM_RECENT
from kvlab.memory.kv_bytes import VLLM_BLOCK_SIZE
from kvlab.memory.scheduler import NOT_MODELLED, SGLANG_NOT_MODELLED, simulate
from kvlab.memory.serving import NO_KIND_SENTENCE, accuracy_of_kind, serving_accuracy, serving_estimate, weights_read
from kvlab.memory.weights import weight_format
from kvlab.widgets.pickers import (
    CONTEXT_STEPS,
    CONTEXT_TICKS,
    ENGINE_LABELS,
    INPUTS,
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
from kvlab.widgets.views import computed_status, raster_runs, with_view
from kvlab.wording import amount, human_bytes, plural, token_count, trim

if TYPE_CHECKING:
    from kvlab.widgets.serving_types import (
        ServingFigureResult,
        ServingSimFigureResult,
        ServingSimView,
        ServingView,
        UsersView,
    )


# ---------------------------------------------------------------------------
# serving
# ---------------------------------------------------------------------------


def _ms(seconds: float | None) -> str:
    return "—" if seconds is None else trim(seconds * 1000) + " ms"


def _price_label(g: dict) -> str:
    if g["price_per_hour"] is None:
        return "No hourly price in the catalogue for this GPU."
    return f"Price: ${g['price_per_hour']:.2f}/hour, {g['price_kind']} ({g['price_provider']}, {g['price_date']})."


USERS_GRID_CELLS = 512  # at most this many cells in the users grid; past it, one cell holds several chats


def users_per_gpu(chats: int, most: int, shortest: int, context: int, card: dict) -> dict:
    """The users grid (the seed's "watch users vanish from the grid while the price climbs"): one cell
    per chat that fits at the shortest context, filled for the chats that fit at this one, and the
    GPU's hourly price shared among them (users_view says it in words).

    >>> g = users_per_gpu(13, 435, 1024, 32768, {"name": "H100", "price_per_hour_usd": 3.78})
    >>> sum(c["state"] == "on" for c in g["cells"]), len(g["cells"]), users_view(g, "H100")["price_text"]
    (13, 435, '$0.29 per chat-hour')
    """
    per_cell = max(1, -(-most // USERS_GRID_CELLS))
    cells = -(-most // per_cell) if most else 0
    filled = chats // per_cell
    price = card.get("price_per_hour_usd")
    return {
        "cells": [{"state": "on" if i < filled else "off"} for i in range(cells)],
        "per_cell": per_cell,
        "chats": chats,
        "most": most,
        "shortest": shortest,
        "context": context,
        "price_per_hour": price,
        "price_per_chat_hour": price / chats if price is not None and chats else None,
    }


# ---------------------------------------------------------------------------- the view: the words the widget shows


def users_view(u: dict, gpu_name: str) -> UsersView:
    """The users grid in words: how many chats fit, what each pays an hour, and what a square is."""
    chats, context, price, per_chat = u["chats"], u["context"], u["price_per_hour"], u["price_per_chat_hour"]
    unit = "1 chat" if u["per_cell"] == 1 else f"{u['per_cell']:,} chats"
    if chats:
        text = (
            f"{plural(chats, 'chat')} of {plural(context, 'token')} fit on one {gpu_name} "
            f"({u['most']:,} would at {plural(u['shortest'], 'token')} each)"
        )
    else:
        text = f"not one chat of {plural(context, 'token')} fits on one {gpu_name}"
    return {
        "text": text,
        "price_text": f"${per_chat:.2f} per chat-hour" if per_chat is not None else "",
        "price_how": (
            f"the GPU's ${price:.2f}/hour shared by {plural(chats, 'chat')}"
            if per_chat is not None
            else ("no hourly price in the catalogue" if price is None else "")
        ),
        "label": f"Users per GPU: {text}; one square is {unit}.",
        "legend": f"one square = {unit}; filled: fits at this context",
    }


def _curve_text(ms: float | None, fits: bool) -> str:
    return _ms(None if ms is None else ms / 1000) if fits else "does not fit"


def serving_view(data: dict) -> ServingView:
    """The serving widget's words: the working of the roofline, every figure of the table, the users
    grid, the GPUs priced the same way, the curve's hovers and table, and the status line."""
    p, g, e, one, c = data["params"], data["gpu_info"], data["estimate"], data["batch1"], data["curve"]
    fits, batch, cost = data["fits"], p["batch"], data["usd_per_million_tokens"]
    if fits:
        working = (
            f"bandwidth bound: ({data['weights_read_per_step']['human']} of weights + {plural(batch, 'chat')} x "
            f"{data['kv_per_chat']['human']} of KV) / {g['bandwidth_gb_s']:,} GB/s = "
            f"{_ms(e['memory_seconds'])}; compute bound: {e['flops_per_step'] / 1e12:,.3g} TFLOP / "
            f"{g['tflops']:,} TFLOPS = {_ms(e['compute_seconds'])}; the step takes the longer: "
            f"{_ms(e['roofline_seconds_per_token'])} at the roofline ({data['bound']}-bound); engines reach "
            f"{data['efficiency']:.2f} of it at this batch: {_ms(e['seconds_per_token'])}"
        )
    else:
        working = f"Not timed: {data['headline']}."
    return {
        "status": f"Computed in your browser by kvlab.serving_figure ({data['model_info']['hf_id']} on {g['name']}, "
        f"{plural(batch, 'chat')}).",
        "context_text": plural(p["context"], "token"),
        "batch_text": plural(batch, "chat"),
        "bandwidth_text": f"{g['bandwidth_gb_s']:,}",
        "price_label": _price_label(g),
        "users": users_view(data["users"], g["name"]),
        "working": working,
        "ms_per_token_text": _ms(e["seconds_per_token"]) if fits else "does not fit",
        "ms_per_token_batch1_text": _ms(one["seconds_per_token"]) if one["fits"] else "does not fit",
        "bound_text": f"{data['bound']}-bound" if fits else "—",
        "efficiency_text": (
            f"efficiency {data['efficiency']:.2f} ({e['efficiency_regime']}, calibrated on published benchmarks); "
            f"roofline {_ms(e['roofline_seconds_per_token'])}"
            if fits
            else "—"
        ),
        "cost_roofline_text": (
            f"${e['usd_per_million_tokens_roofline']:.2f}"
            if fits and e["usd_per_million_tokens_roofline"] is not None
            else "—"
        ),
        "tokens_per_second_per_chat_text": trim(data["tokens_per_second_per_chat"]) if fits else "—",
        "total_tokens_per_second_text": trim(data["total_tokens_per_second"]) if fits else "—",
        "prefill_text": (
            f"{_ms(e['prefill_seconds_per_chat'])} per {plural(e['prompt_tokens'], 'token')} prompt" if fits else "—"
        ),
        "mix_text": (
            f"{plural(e['prompt_tokens'], 'token')} of prompt + {plural(e['answer_tokens'], 'token')} of answer per chat"
        ),
        "kv_share_text": f"{100 * data['kv_share_of_reads']:.1f}%",
        "kv_share_batch1_text": f"{100 * one['kv_share_of_reads']:.1f}%",
        "cost_text": (f"${cost:.2f}" if cost is not None else "no hourly price in the catalogue")
        if fits
        else "not priced: the batch does not fit",
        "cost_batch1_text": (
            f"${one['usd_per_million_tokens']:.2f}" if one["usd_per_million_tokens"] is not None else "—"
        ),
        "same_kind": [
            {
                "name": x["name"],
                "price": f"${x['price_per_hour']:.2f}/h ({x['price_provider']}, {x['price_date']})",
                "cost_text": f"${x['usd_per_million_tokens']:.2f}" if x["fits"] else "does not fit",
            }
            for x in data["same_kind"]
        ],
        "legend": {"ms_batch1": "batch 1", "ms_batch": f"batch {c['batch']}"},
        "hover": {
            key: [None if y is None else f"{x:,} tokens: {y:.2f} ms/token" for x, y in zip(c["contexts"], c[key])]
            for key in ("ms_batch1", "ms_batch")
        },
        "curve_rows": [
            {
                "tokens": f"{x:,}",
                "ms_batch1": _curve_text(c["ms_batch1"][i], c["fits_batch1"][i]),
                "ms_batch": _curve_text(c["ms_batch"][i], c["fits_batch"][i]),
            }
            for i, x in enumerate(c["contexts"])
        ],
    }


# the vLLM the serving widget models: the gpu-fit widget's default (what readers install), with its own default share
SERVING_VLLM_VERSION = VLLM_RECENT
SERVING_VLLM_SHARE = default_gpu_memory_utilization("vllm", SERVING_VLLM_VERSION)


@takes(INPUTS)
@with_view(serving_view)
def serving_figure(
    model: str = "llama-3.1-8b",
    gpu: str = "h100-sxm",
    context: int = 32768,
    batch: int = 8,
    weights: str = "BF16",
    kv: str = "f16",
    engine: str = "vllm",
    answer: int = 512,
    gpu_memory_utilization: float = SERVING_VLLM_SHARE,
    block_size: int = VLLM_BLOCK_SIZE,
) -> ServingFigureResult:
    """The serving widget: the fit verdict for the batch, then (only if it fits) time per step from both
    roofline bounds with the binding one named, chats that fit, dollars per million tokens with prefill, the
    same cost on GPUs priced the same way, and ms/token against context for batch 1 and the chosen batch.

    Under vLLM the verdict is the gpu-fit widget's default, vLLM 0.20 and later (SERVING_VLLM_VERSION: 0.92 of the
    card, the CUDA-graph estimate, FlashInfer's sampler warm-up).
    `gpu_memory_utilization` and `block_size` are vLLM's (`--gpu-memory-utilization`, `--block-size`), checked
    as the gpu-fit widget checks them; llama.cpp ignores them. Out-of-range values are clamped and say so; a
    block size vLLM does not take (after clamping into its range) is a ValueError naming the field."""
    clamped: dict = {}
    p = INPUTS.check(
        {
            "context": context,
            "batch": batch,
            "answer": answer,
            "gpu_memory_utilization": gpu_memory_utilization,
            "block_size": block_size,
        },
        clamped,
    )
    context, batch, answer = p["context"], p["batch"], p["answer"]
    utilization, block_size = p["gpu_memory_utilization"], p["block_size"]
    if engine not in ENGINE_LABELS:
        raise ValueError(f"engine must be llamacpp or vllm, got {short_repr(engine)}")
    weights = weight_format(weights)
    kv = check_kv_mode(kv, engine)
    info = model_info(model)
    card = get_gpu(gpu)
    arch = model_architecture(info["id"])
    settings = {"weights_format": weights, "kv": kv, "engine": engine, "answer_tokens": answer}
    if engine == "vllm":
        settings.update(gpu_memory_utilization=utilization, block_size=block_size, version=SERVING_VLLM_VERSION)
    est = serving_estimate(arch, card["id"], context, batch, **settings)
    one = serving_estimate(arch, card["id"], context, 1, **settings)
    v = est["verdict"]
    w_read = weights_read(arch, weights, batch, engine)[0]
    shortest = CONTEXT_STEPS[0]
    widest = serving_estimate(arch, card["id"], min(shortest, context), 1, **settings)
    users = users_per_gpu(
        est["chats_that_fit_in_memory"],
        max(widest["chats_that_fit_in_memory"], est["chats_that_fit_in_memory"]),
        min(shortest, context),
        context,
        card,
    )

    contexts = curve_contexts()
    curve = {"contexts": contexts, "batch": batch, "ms_batch1": [], "ms_batch": [], "fits_batch1": [], "fits_batch": []}
    for c in contexts:
        for key, b in (("1", 1), ("", batch)):
            e = serving_estimate(arch, card["id"], c, b, **settings, solve=False)
            ms = None if e["seconds_per_token"] is None else e["seconds_per_token"] * 1000
            curve["ms_batch" + key].append(ms)
            curve["fits_batch" + key].append(e["fits"])

    same_kind = []
    if card.get("price_kind"):
        for g in list_gpus():
            if g.get("price_kind") != card["price_kind"]:
                continue
            e = serving_estimate(arch, g["id"], context, batch, **settings, solve=False)
            same_kind.append(
                {
                    "id": g["id"],
                    "name": g["name"],
                    "chosen": g["id"] == card["id"],
                    "price_per_hour": g["price_per_hour_usd"],
                    "price_provider": g["price_provider"],
                    "price_date": g["price_date"],
                    "fits": e["fits"],
                    "usd_per_million_tokens": e["usd_per_million_tokens"],
                }
            )

    fits = est["fits"]
    return {
        "params": {
            "model": info["id"],
            "gpu": card["id"],
            "context": context,
            "batch": batch,
            "weights": weights,
            "kv": kv,
            "engine": engine,
            "answer": answer,
            "gpu_memory_utilization": utilization,
            "block_size": block_size,
        },
        "clamped": clamped,
        "context_human": token_count(context),
        "context_step": context_step(context),
        "model_info": info,
        "gpu_info": {
            "id": card["id"],
            "name": card["name"],
            "bandwidth_gb_s": card["bandwidth_gb_s"],
            "tflops": card.get("bf16_dense_tflops"),
            "spec_source": card["spec_source"],
            "memory": amount(gpu_memory_bytes(card)),
            "price_per_hour": card.get("price_per_hour_usd"),
            "price_kind": card.get("price_kind"),
            "price_provider": card.get("price_provider"),
            "price_source": card.get("price_source"),
            "price_date": card.get("price_date"),
            "note": card.get("note", ""),
            "unconfirmed": card.get("unconfirmed", []),
        },
        "fits": fits,
        "verdict": v["verdict"],
        "headline": v["headline"],
        "binding": v["binding"],
        "context_flag": context_flag(arch, context, engine),
        "flags": v["flags"],
        "bound": est["bound"],
        "weights_bytes": amount(est["weights_bytes"]),
        "kv_per_chat": amount(est["kv_bytes_per_chat"]),
        "kv_per_step": amount(est["kv_bytes_per_chat"] * batch),
        "weights_read_per_step": amount(w_read),
        "bytes_per_step": amount(w_read + batch * est["kv_bytes_per_chat"]),
        # the step's figures (None where the batch does not fit), for the working and the table
        "estimate": {
            k: est[k]
            for k in (
                "seconds_per_token",
                "memory_seconds",
                "compute_seconds",
                "roofline_seconds_per_token",
                "flops_per_step",
                "efficiency_regime",
                "usd_per_million_tokens_roofline",
                "prefill_seconds_per_chat",
                "prompt_tokens",
                "answer_tokens",
            )
        },
        "batch1": {k: one[k] for k in ("fits", "seconds_per_token", "kv_share_of_reads", "usd_per_million_tokens")},
        "ms_per_token": None if not fits else est["seconds_per_token"] * 1000,
        "efficiency": est["efficiency"],
        "bounds_text": est["bounds_text"],
        "notes": est["notes"],
        "tokens_per_second_per_chat": est["tokens_per_second_per_chat"],
        "total_tokens_per_second": est["total_tokens_per_second"],
        "kv_share_of_reads": est["kv_share_of_reads"],
        "chats_that_fit": est["chats_that_fit_in_memory"],
        "chats_that_fit_text": v["max_sequences_text"],
        "users": users,
        "memory_used": amount(est["memory_used_bytes"]),
        "budget": amount(v["budget_bytes"]),
        "usd_per_million_tokens": est["usd_per_million_tokens"],
        "same_kind": same_kind,
        "assumptions": est["assumptions"],
        "curve": curve,
        "options": {
            "models": model_groups(),
            "gpus": gpu_options(),
            "weights": weight_options(),
            "kv": kv_options(),
            "modes": ENGINE_LABELS,
            "vllm_defaults": {"gpu_memory_utilization": SERVING_VLLM_SHARE, "block_size": VLLM_BLOCK_SIZE},
            "context_steps": CONTEXT_STEPS,
            "context_ticks": CONTEXT_TICKS,
            "limits": input_limits(),
        },
    }


# ---------------------------------------------------------------------------
# serving-sim: the scheduler, played
# ---------------------------------------------------------------------------

SIM_INPUTS = Spec(
    users=Param(1, 256),
    input_len=Param(16, 32768, step=16, control=(128, 32768)),
    # the controls stop where a run stays quick to simulate in the browser while a slider moves (a thrashing
    # pool costs ~0.1 ms a preemption): 128 chats of 32k + 1k tokens, ~0.4 s in CPython
    output_len=Param(1, 4096, control=(16, 1024)),
    num_prompts=Param(1, 256, control=(8, 128)),
    # GPUs under tensor parallelism (vllm serve --tensor-parallel-size, SGLang's --tp): what a large MoE needs to start
    n_gpus=Param(1, 8, choices=TENSOR_PARALLEL),
)
SIM_ENGINES = [
    {"id": "vllm", "label": "vLLM (V1)"},
    {"id": "sglang", "label": "SGLang"},
]
# how each engine's steps treat a new chat's prompt (kvlab.memory.scheduler's docstring, "What a step is" and "SGLang")
SIM_ENGINE_NOTES = {
    "vllm": "vLLM puts new chats' prompt chunks into the same steps as the running chats' next tokens: while a prompt "
    "is read, every running chat keeps writing, a little slower.",
    "sglang": "SGLang reads new chats' prompts in steps of their own, before any running chat's next token: while a "
    "prompt is read, every running chat waits (the gaps in its decode row).",
}
SIM_ROWS = 48  # requests drawn as rows (evenly picked from all of them)
SIM_COLS = 120  # time bins across the run
# a request's state in a time bin (the raster's values; 0: not sent yet or done), in its cells' tooltips
SIM_STATES = {
    1: "waiting in the engine's queue",
    2: "prefill (its prompt's K and V computed)",
    3: "decode",
    4: "decode, after being preempted and prefilled again",
}


def _launch(engine: str, hf_id: str, flags: str) -> str:
    """The server command a reader would type for this run."""
    if engine == "sglang":
        return f"python -m sglang.launch_server --model-path {hf_id} {flags}"
    return f"vllm serve {hf_id} {flags}"


def _time_text(ms: float | None) -> str:
    """A duration a reader takes in at a glance: 82 ms, 9.8 s, 9.1 min."""
    if ms is None:
        return "—"
    if ms < 1000:
        return f"{ms:,.0f} ms" if ms >= 10 else f"{ms:.1f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:,.1f} min"


def _sim_grid(tl: dict, duration: float, rows: list[int]) -> list[list[int]]:
    """Each drawn request's state per time bin: from its send to its first step waiting, then prefill up to its
    first token, then decode until it finishes (kvlab.memory.scheduler's per-request times)."""
    bins = (np.arange(SIM_COLS) + 0.5) * duration / SIM_COLS
    grid = []
    for i in rows:
        a, s, f, e = tl["arrival_s"][i], tl["first_scheduled_s"][i], tl["first_token_s"][i], tl["finish_s"][i]
        state = np.zeros(SIM_COLS, dtype=np.int64)
        state[(bins >= a) & (bins < s)] = 1
        state[(bins >= s) & (bins < f)] = 2
        state[(bins >= f) & (bins < e)] = 4 if tl["preempted"][i] else 3
        grid.append(state.tolist())
    return grid


def _sparkline(t: list[float], y: list[float], duration: float) -> str:
    """SVG polyline points in a 0..100 x 0..20 box (y: 0..1, drawn upward)."""
    if not t or not duration:
        return ""
    return " ".join(f"{100 * a / duration:.2f},{20 - 20 * min(1.0, max(0.0, b)):.2f}" for a, b in zip(t, y))


def _gpus_text(n: int, name: str) -> str:
    """'one NVIDIA H100 SXM 80GB' or '8 x NVIDIA H100 SXM 80GB'."""
    return f"one {name}" if n == 1 else f"{n} x {name}"


def serving_sim_view(data: dict) -> ServingSimView:
    """The scheduler widget's words: the headline, what the KV pool did, the closed form beside the run,
    the benchmark's figures as vllm bench serve prints them, and the status line."""
    p, r = data["params"], data["run"]
    on = f" on {p['n_gpus']} GPUs" if p["n_gpus"] > 1 else ""  # one GPU is the default; more is named
    status = computed_status("serving_sim_figure", f"{p['num_prompts']} chats, {p['users']} at a time{on}")
    chats = data["rows"]  # the request drawn in each row
    raster = raster_runs(data["grid"], lambda y, a, b, v: f"chat {chats[y] + 1}: {SIM_STATES[v]}")
    accuracy = serving_accuracy()["sentence"]
    kind = accuracy_of_kind(p["gpu"], p["model"], p["n_gpus"])
    kind_accuracy = kind["sentence"] if kind else NO_KIND_SENTENCE
    if r is None:
        return {
            "status": status,
            "raster": raster,
            "headline": f"{data['model_info']['hf_id']} in {p['weights']} on {_gpus_text(p['n_gpus'], data['gpu_info']['name'])}: "
            f"{data['refused']}.",
            "pool": "No chat is served: pick a smaller model or weights format, more GPUs, or a GPU with more memory.",
            "engine_note": SIM_ENGINE_NOTES[p["engine"]],
            "compare": "",
            "duration_text": "—",
            "peak_kv_text": "—",
            "price_text": "no price: nothing is served",
            "stats": [],
            "accuracy": accuracy,
            "kind_accuracy": "",
        }
    ttft, tpot, users, context = (
        r["ttft_ms"]["median"],
        r["tpot_ms"]["median"],
        p["users"],
        p["input_len"] + p["output_len"],
    )
    pool_tokens, peak_kv, price = plural(r["kv_pool_tokens"], "token"), r["peak_kv"], r["usd_per_million_output_tokens"]
    headline = (
        f"{plural(p['num_prompts'], 'chat')}, {users:,} at a time"
        + (f" on {_gpus_text(p['n_gpus'], data['gpu_info']['name'])}" if p["n_gpus"] > 1 else "")
        + f": {r['output_tok_s']:,.0f} answer tokens a second; "
        f"a chat waits {_time_text(ttft)} for its first token (median), then gets one every {_time_text(tpot)}."
    )
    who = "The one chat fits" if users == 1 else f"All {users:,} chats fit"
    sglang = r["engine"] == "sglang"
    if r["preemptions"]:
        pool = (
            f"The KV pool ran out: {plural(r['preemptions'], 'retraction' if sglang else 'preemption')} "
            f"({plural(r['requests_preempted'], 'chat')} thrown out and prefilled again); at most "
            f"{r['max_running']:,} chats ran at once."
        )
    elif r["max_running"] < users and sglang:
        pool = (
            f"Only {r['max_running']:,} of the {users:,} chats ran at once: SGLang admits a chat only while the cache "
            f"has room for its prompt and its whole answer, beside most of what the running chats have still to "
            f"write ({pool_tokens} in all); the others waited in the queue (up to {r['most_waiting']:,})."
        )
    elif r["max_running"] < users:
        pool = (
            f"Only {r['max_running']:,} of the {users:,} chats fit in the KV pool at once "
            f"({pool_tokens} of cache); the others waited in the queue (up to {r['most_waiting']:,})."
        )
    else:
        pool = f"{who} in the KV pool at once: at most {peak_kv:.0%} of its {pool_tokens} was in use."
    if r["close_call"]:
        pool = (
            "kvlab is not sure vLLM starts this at all: the weights and its reserve leave less room than one chat "
            "needs by kvlab's estimate, but within that estimate's error. This run assumes it starts, with "
            f"{human_bytes(r['kv_available_bytes'])} of KV cache. " + pool
        )
    closed_total = r["closed_form_tok_s"]
    if closed_total:
        compare = (
            f"The closed form, with all {users:,} chats decoding together at {plural(context, 'token')}, says "
            f"{closed_total:,.0f} tokens a second; the simulation gets {r['output_tok_s'] / closed_total:.0%} of that, "
            "because prompts must be prefilled first, new chats wait for room in the cache, and every chat is shorter "
            "than its full context most of the time."
        )
    else:
        compare = (
            f"The closed form says {users:,} chats of {plural(context, 'token')} each do not fit at once; a real "
            "engine still serves them: it admits what fits and queues the rest, as the rows show."
        )
    return {
        "status": status,
        "raster": raster,
        "headline": headline,
        "pool": pool,
        "engine_note": SIM_ENGINE_NOTES[r["engine"]],
        "compare": compare,
        "duration_text": _time_text(r["duration_s"] * 1000),
        "peak_kv_text": f"{peak_kv:.0%}",
        "price_text": "no price for this GPU" if price is None else f"${price:,.2f} per million answer tokens",
        "stats": [
            {"name": "Output token throughput", "value": f"{r['output_tok_s']:,.0f} tok/s"},
            {"name": "Total token throughput", "value": f"{r['total_tok_s']:,.0f} tok/s"},
            {"name": "Request throughput", "value": f"{r['request_throughput']:,.2f} req/s"},
            {"name": "TTFT median / p99", "value": f"{_time_text(ttft)} / {_time_text(r['ttft_ms']['p99'])}"},
            {"name": "TPOT median / p99", "value": f"{_time_text(tpot)} / {_time_text(r['tpot_ms']['p99'])}"},
            {"name": "Retractions" if sglang else "Preemptions", "value": f"{r['preemptions']:,}"},
            {"name": "Most chats running at once", "value": f"{r['max_running']:,}"},
            {"name": "Peak KV pool use", "value": f"{peak_kv:.0%} of {pool_tokens}"},
        ],
        "accuracy": accuracy,
        "kind_accuracy": kind_accuracy,
    }


@takes(SIM_INPUTS)
@with_view(serving_sim_view)
def serving_sim_figure(
    model: str = "llama-3.1-8b",
    gpu: str = "h100-sxm",
    users: int = 32,
    input_len: int = 8192,
    output_len: int = 256,
    num_prompts: int = 96,
    weights: str = "BF16",
    engine: str = "vllm",
    n_gpus: int = 1,
) -> ServingSimFigureResult:
    """The scheduler, played: `num_prompts` chats sent `users` at a time (vllm bench serve --max-concurrency)
    to vLLM (or SGLang: `engine`) on `n_gpus` of `gpu` (tensor parallel), each `input_len` prompt tokens and `output_len` answer tokens, simulated by
    kvlab.memory.scheduler.simulate. Rows: chats (up to 48 of them), columns: time; each cell what that chat
    is doing (waiting, prefill, decode). With it: the KV pool's use over time, the benchmark's figures in
    words, and where the closed form (serving_figure, every chat decoding at once) parts from it."""
    clamped: dict = {}
    p = SIM_INPUTS.check(
        {
            "users": users,
            "input_len": input_len,
            "output_len": output_len,
            "num_prompts": num_prompts,
            "n_gpus": n_gpus,
        },
        clamped,
    )
    weights = weight_format(weights)
    engine = one_of("engine", engine, [e["id"] for e in SIM_ENGINES])
    info = model_info(model)
    card = get_gpu(gpu)
    arch = model_architecture(info["id"])
    context = p["input_len"] + p["output_len"]
    trained = arch.max_position_embeddings or context
    if context > trained:
        raise ValueError(
            f"input_len + output_len is {context:,} tokens, more than {info['hf_id']}'s context of {trained:,}"
        )
    base = {
        "params": {"model": info["id"], "gpu": card["id"], "weights": weights, "engine": engine, **p},
        "clamped": clamped,
        "options": {
            "models": model_groups(),
            "gpus": gpu_options(),
            "weights": weight_options(),
            "engines": SIM_ENGINES,
            "limits": SIM_INPUTS.limits(),
        },
        "model_info": info,
        "gpu_info": {"name": card["name"]},
    }
    try:
        r = simulate(
            arch,
            card["id"],
            weights_format=weights,
            engine=engine,
            n_gpus=p["n_gpus"],
            max_model_len=context,  # vllm serve --max-model-len (SGLang's --context-length): the longest chat
            max_concurrency=p["users"],
            num_prompts=p["num_prompts"],
            input_len=p["input_len"],
            output_len=p["output_len"],
            dataset="fixed",
            max_timeline_rows=p["num_prompts"],
        )
    except Refused as refused:
        # the engine would not start: nothing to play, and the reader is told why (not an error)
        return {
            **base,
            "refused": refused.reason,
            "run": None,
            "grid": [[0] * SIM_COLS],
            "rows": [],
            "rows_of": p["num_prompts"],
            "kv_points": "",
            "command": _launch(
                engine,
                info["hf_id"],
                (f"--max-model-len {context}" if engine == "vllm" else f"--context-length {context}")
                + (
                    ""
                    if p["n_gpus"] == 1
                    else f" --tensor-parallel-size {p['n_gpus']}"
                    if engine == "vllm"
                    else f" --tp {p['n_gpus']}"
                ),
            ),
            "bench_command": "",
            "assumptions": [],
            # what the engine's simulation leaves out does not depend on the run: listed even when nothing is played
            "not_modelled": SGLANG_NOT_MODELLED if engine == "sglang" else NOT_MODELLED,
        }
    tl = r["timeline"]
    n = len(tl["request"])
    rows = sorted({round(k * (n - 1) / max(1, SIM_ROWS - 1)) for k in range(min(n, SIM_ROWS))})
    duration = r["duration_s"]
    grid = _sim_grid(tl, duration, rows)
    s = r["series"]
    peak_kv = max(s["kv_utilisation"]) if s["kv_utilisation"] else 0.0
    most_waiting = max(s["waiting"]) if s["waiting"] else 0
    # the closed form at the same batch: every chat decoding at the full context, nothing queued
    closed = serving_estimate(
        arch, card["id"], context, p["users"], weights_format=weights, answer_tokens=p["output_len"], n_gpus=p["n_gpus"]
    )
    return {
        **base,
        "refused": None,
        "run": {
            "duration_s": duration,
            "output_tok_s": r["output_tok_s"],
            "total_tok_s": r["total_tok_s"],
            "request_throughput": r["request_throughput"],
            "ttft_ms": {"median": r["ttft_ms"]["median"], "p99": r["ttft_ms"]["p99"]},
            "tpot_ms": {"median": r["tpot_ms"]["median"], "p99": r["tpot_ms"]["p99"]},
            "preemptions": r["preemptions"],
            "requests_preempted": r["requests_preempted"],
            "max_running": r["max_running"],
            "most_waiting": most_waiting,
            "peak_kv": peak_kv,
            "kv_pool_tokens": r["kv_pool"]["tokens"],
            "engine": engine,
            "close_call": bool(r["kv_pool"]["close_call"]),
            "kv_available_bytes": r["kv_pool"]["available_bytes"],
            # the closed form at the same batch (every chat decoding at the full context), None where it does not fit
            "closed_form_tok_s": closed["total_tokens_per_second"] if closed["fits"] else None,
            "usd_per_million_output_tokens": r["usd_per_million_output_tokens"],
        },
        "grid": grid,
        "rows": [tl["request"][i] for i in rows],
        "rows_of": r["timeline"]["rows_of"],
        "kv_points": _sparkline(s["t_s"], s["kv_utilisation"], duration),
        "command": _launch(engine, info["hf_id"], r["flags"].strip()),
        "bench_command": (
            f"vllm bench serve --dataset-name random --random-input-len {p['input_len']} --random-output-len "
            f"{p['output_len']} --random-range-ratio 0 --num-prompts {p['num_prompts']} --max-concurrency {p['users']}"
        ),
        "assumptions": r["assumptions"],
        "not_modelled": r["engine_rules"]["not_modelled"],
    }
