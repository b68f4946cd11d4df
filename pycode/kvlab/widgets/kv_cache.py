"""The "KV cache" page (kv-cache.md): the step-through widget, and the cached-vs-uncached
check behind it.

Same contract as every widget module: plain JSON-able data, inputs validated and
clamped (kvlab.inputs), "params" echoes what was used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kvlab.core.cache import cache_lengths
from kvlab.core.decoding import DecoderConfig, ToyDecoder, positions_processed
from kvlab.inputs import SEED, Param, Spec, takes
from kvlab.widgets.views import computed_status, with_view

if TYPE_CHECKING:
    from kvlab.widgets.kv_cache_types import StepThroughFigureResult, StepThroughResult, StepThroughView, StepView


def _span(ps: list[int]) -> str:
    return f"token {ps[0] + 1}" if len(ps) == 1 else f"tokens {ps[0] + 1}–{ps[-1] + 1}"


# ---------------------------------------------------------------------------- views: the words this module's widgets show


def step_through_view(data: dict) -> StepThroughView:
    p = data["params"]
    width = data["steps"][-1]["cache_len_after"]
    cell = {"computed": "computed", "read": "read", "empty": "not yet"}

    def step(s: dict) -> StepView:
        l0 = s["layers"][0]
        if s["phase"] == "prefill":
            phase = f"Prefill · step {s['step']} · cache empty before, {s['cache_len_after']} entries after"
            describe = (
                f"Every layer computes K and V for {_span(l0['computed'])} (the whole prompt, in one pass) and "
                "writes them to its cache; nothing is read from the cache yet."
            )
        else:
            phase = f"Decode · step {s['step']} · {s['cache_len_before']} entries read, {s['cache_len_after']} after the step"
            describe = (
                f"Every layer computes K and V for {_span(l0['computed'])} only, and reads {_span(l0['read'])} from "
                f"its cache. Without a cache this step would push all {len(s['without_cache_recomputed'])} tokens "
                "through every layer."
            )
        rows = []
        for lay in s["layers"]:
            states = [
                "computed" if x in lay["computed"] else "read" if x in lay["read"] else "empty" for x in range(width)
            ]
            rows.append({"layer": lay["layer"] + 1, "cells": [{"state": st, "text": cell[st]} for st in states]})
        # the same step with the cache off: every token so far goes through every layer again
        redo = set(s["without_cache_recomputed"])
        n_redo = len(redo)
        rows_no_cache = [
            {
                "layer": lay["layer"] + 1,
                "cells": [
                    {"state": "computed", "text": cell["computed"]}
                    if x in redo
                    else {"state": "empty", "text": cell["empty"]}
                    for x in range(width)
                ],
            }
            for lay in s["layers"]
        ]
        redone_before = n_redo - s["n_new"]
        no_cache = {
            "phase": f"{s['phase'].capitalize()} · step {s['step']} · no cache: {n_redo} tokens through every layer",
            "describe": (
                f"Every layer computes K and V for {_span(l0['computed'])} (the whole prompt) and keeps none of them."
                if s["phase"] == "prefill"
                else f"Every layer computes K and V again for all {n_redo} tokens: the {redone_before} it already "
                f"computed at earlier steps, then thrown away, and the new one. {n_redo * len(s['layers'])} cells "
                f"computed where the cache computes {s['n_new'] * len(s['layers'])}."
            ),
            "rows": rows_no_cache,
        }
        return {
            "step": s["step"],
            "counter": f"step {s['step']} of {p['steps']}",
            "phase": phase,
            "describe": describe,
            "positions": list(range(1, width + 1)),
            "rows": rows,
            "no_cache": no_cache,
        }

    eq = data["equivalence"]
    # rounding noise differs between CPython and Pyodide (6.2e-15 vs 7.1e-15): below 1e-12 the page says so
    # instead of printing the noise, so the page and the browser show the same words
    mantissa, exponent = f"{eq['max_abs_logit_diff']:.1e}".split("e")
    diff = "under 1e-12" if eq["max_abs_logit_diff"] < 1e-12 else f"{mantissa}e{int(exponent)}"
    return {
        "status": computed_status(
            "step_through_figure",
            f"prompt {data['params']['prompt_len']} tokens, {data['params']['steps']} decode steps, {data['params']['layers']} layers",
        ),
        "steps": [step(s) for s in data["steps"]],
        "equivalence": {
            "steps": str(p["steps"] + 1),
            "tokens_no_cache": " ".join(str(t) for t in eq["tokens_no_cache"]),
            "tokens_cache": " ".join(str(t) for t in eq["tokens_cache"]),
            "same": "identical" if eq["same_tokens"] else "different",
            "diff": diff,
            "work_no_cache": str(eq["tokens_processed"]["no_cache"]),
            "work_cache": str(eq["tokens_processed"]["cache"]),
        },
    }


# What the functions accept: whole numbers (a fraction is refused), clamped into these ranges.
# `control`: the range the page's slider offers, where narrower.
INPUTS = Spec(
    prompt_len=Param(1, 32, fractions="refuse", control=(1, 12)),
    steps=Param(1, 32, fractions="refuse", control=(1, 12)),
    layers=Param(1, 8, fractions="refuse"),
    seed=Param(*SEED, fractions="refuse"),
)


@takes(INPUTS)
def step_through(prompt_len: int = 4, steps: int = 4, layers: int = 2, seed: int = 0) -> StepThroughResult:
    """Run the toy decoder with a cache, step by step: what each layer computes and reads.

    `steps` counts decode steps after the prefill, so the result has steps + 1
    entries (step 0 = prefill). Per step and layer, "computed" are the
    positions whose K, V were computed and written this step, "read" those read
    from the cache; "without_cache_recomputed" is what the uncached model
    would push through the layers at the same step.
    Shape: {"params": {...}, "clamped": {}, "tokens": [...], "steps": [{"step": 1, "phase": "decode",
    "n_new": 1, "cache_len_before": 4, "cache_len_after": 5, "bytes_read": ..., "bytes_written": ...,
    "layers": [{"layer": 0, "computed": [4], "read": [0, 1, 2, 3]}, ...],
    "without_cache_recomputed": [0, 1, 2, 3, 4]}, ...]}
    """
    clamped: dict = {}
    p = INPUTS.check({"prompt_len": prompt_len, "steps": steps, "layers": layers, "seed": seed}, clamped)
    prompt_len, steps, layers, seed = p.values()
    config = DecoderConfig(n_layers=layers, seed=seed)
    prompt = [int(t) for t in np.random.default_rng(seed).integers(0, config.vocab_size, prompt_len)]
    run = ToyDecoder(config).generate(prompt, steps + 1, use_cache=True)
    out = []
    for r in run.cache_readouts:
        out.append(
            {
                "step": r["step"],
                "phase": r["phase"],
                "n_new": r["n_new"],
                "cache_len_before": r["cache_len_before"],
                "cache_len_after": r["cache_len_after"],
                "bytes_read": r["bytes_read"],
                "bytes_written": r["bytes_written"],
                "layers": [
                    {
                        "layer": lay["layer"],
                        "computed": list(range(*lay["computed"])),
                        "read": list(range(*lay["read"])),
                    }
                    for lay in r["layers"]
                ],
                "without_cache_recomputed": list(positions_processed(prompt_len, r["step"], use_cache=False)),
            }
        )
    return {
        "params": {"prompt_len": prompt_len, "steps": steps, "layers": layers, "seed": seed},
        "clamped": clamped,
        "tokens": run.tokens,
        "steps": out,
    }


def cache_equivalence(prompt_len: int = 4, steps: int = 8, seed: int = 0) -> dict:
    """The toy decoder generates the same tokens with and without a cache; only the work differs.

    Shape: {"params": {...}, "clamped": {}, "tokens_no_cache": [...], "tokens_cache": [...],
    "same_tokens": true, "max_abs_logit_diff": 1e-15, "totals": {"no_cache": {cost...}, "cache": {cost...}}}
    """
    clamped: dict = {}
    prompt_len, steps, seed = INPUTS.check({"prompt_len": prompt_len, "steps": steps, "seed": seed}, clamped).values()
    model = ToyDecoder(DecoderConfig(seed=seed))
    prompt = [int(t) for t in np.random.default_rng(seed).integers(0, model.config.vocab_size, prompt_len)]
    a = model.generate(prompt, steps, use_cache=False)
    b = model.generate(prompt, steps, use_cache=True)
    return {
        "params": {"prompt_len": prompt_len, "steps": steps, "seed": seed},
        "clamped": clamped,
        "tokens_no_cache": a.tokens,
        "tokens_cache": b.tokens,
        "same_tokens": a.tokens == b.tokens,
        "max_abs_logit_diff": float(np.max(np.abs(a.logits - b.logits))),
        "totals": {"no_cache": a.steps[-1]["cumulative"], "cache": b.steps[-1]["cumulative"]},
    }


def cache_phases(prompt_len: int = 4, steps: int = 4) -> dict:
    """Phase and cache length before/after each step (no model run; formula of the cache).

    Shape: {"params": {...}, "clamped": {}, "steps": [{"step": 0, "phase": "prefill", "n_new": 4,
    "cache_len_before": 0, "cache_len_after": 4}, ...]}
    """
    clamped: dict = {}
    prompt_len, steps = INPUTS.check({"prompt_len": prompt_len, "steps": steps}, clamped).values()
    return {
        "params": {"prompt_len": prompt_len, "steps": steps},
        "clamped": clamped,
        "steps": [cache_lengths(prompt_len, k) for k in range(steps + 1)],
    }


@takes(INPUTS)
@with_view(step_through_view)
def step_through_figure(prompt_len: int = 6, steps: int = 4, layers: int = 2, seed: int = 0) -> StepThroughFigureResult:
    """kvlab.step_through plus the check that caching changes nothing but the work.

    The same toy decoder (same layers and seed, same prompt) generates the
    same steps + 1 steps with and without a cache, as kvlab.cache_equivalence
    does for the default two layers. "equivalence": {"tokens_no_cache",
    "tokens_cache", "same_tokens", "max_abs_logit_diff", "tokens_processed":
    {"no_cache", "cache"}, "total_macs": {"no_cache", "cache"}}.

    >>> f = step_through_figure(6, 4, 2)
    >>> f["steps"][0]["cache_len_after"], f["equivalence"]["same_tokens"]
    (6, True)
    """
    data = step_through(prompt_len=prompt_len, steps=steps, layers=layers, seed=seed)
    p = data["params"]
    model = ToyDecoder(DecoderConfig(n_layers=p["layers"], seed=p["seed"]))
    prompt = [int(t) for t in np.random.default_rng(p["seed"]).integers(0, model.config.vocab_size, p["prompt_len"])]
    a = model.generate(prompt, p["steps"] + 1, use_cache=False)
    b = model.generate(prompt, p["steps"] + 1, use_cache=True)
    total_a, total_b = a.steps[-1]["cumulative"], b.steps[-1]["cumulative"]
    data["equivalence"] = {
        "tokens_no_cache": a.tokens,
        "tokens_cache": b.tokens,
        "same_tokens": a.tokens == b.tokens,
        "max_abs_logit_diff": float(np.max(np.abs(a.logits - b.logits))),
        "tokens_processed": {"no_cache": total_a["tokens_processed"], "cache": total_b["tokens_processed"]},
        "total_macs": {"no_cache": total_a["total_macs"], "cache": total_b["total_macs"]},
    }
    return data
