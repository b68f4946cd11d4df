"""The "Generate" page (generate.md): the generate widget (greedy generation with the
KV cache, step by step, by the tiny model's numpy reference) and the model-race
widget (what kvlab's cost accounting predicts for cached vs uncached decoding;
race_theory needs no weights, so it also runs in Pyodide).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kvlab.core import tiny
from kvlab.core.decoding import DecoderConfig, decoding_costs
from kvlab.core.sampling import top_k_probs
from kvlab.inputs import SEED, Param, Spec, finite_number, takes, text
from kvlab.widgets.views import token_text, with_view

if TYPE_CHECKING:
    from kvlab.widgets.generate_types import (
        GenerateStepView,
        GenerateView,
        GenerationDemoResult,
        ModelRaceView,
        RaceDemoResult,
        RaceMeasuredResult,
        RaceTheoryResult,
    )


# ---------------------------------------------------------------------------- views: the words this module's widgets show


def generate_view(data: dict, at: int | None = None, use_cache: bool = True, built: bool = True) -> GenerateView:
    """The generate widget's run shown at step `at` (None: its last). `data`: generate_figure's
    result, or a run in the browser in its shape (steps may carry `position` and `ms`);
    `built`: the run the page was built with."""
    steps, n_layer = data["steps"], data["n_layer"]
    at = len(steps) - 1 if at is None else at
    if built:
        shown = (
            "The run below was computed when the page was built (the same weights, in numpy): "
            f"{data['prompt_len']} prompt tokens, then {len(steps)} new ones."
        )
    else:
        shown = "Your run: the text so far, the cache and the top guesses of each step, as the model computes them."

    def chosen_p(s: dict) -> str:
        p = next((t["p"] for t in s["top"] if t["token"] == s["token"]), None)
        return "–" if p is None else f"{p:.3f}"

    def step_view(s: dict) -> GenerateStepView:
        total = s.get("position", s["cache_len_after"])
        before, after = s["cache_len_before"], s["cache_len_after"]
        if not use_cache:
            phase = (
                f"No cache · step {s['step']} · all {s['tokens_in']} tokens computed again, nothing kept after the step"
            )
        elif s["phase"] == "prefill":
            phase = f"Prefill · step 0 · cache empty before, {after} entries after the step"
        else:
            phase = f"Decode · step {s['step']} · {before} entries read from the cache, {after} after the step"
        return {
            "phase": phase,
            "which": f"new token {s['step'] + 1}",
            "top": [
                {
                    "text": token_text(t["text"]),
                    "p": f"{t['p']:.3f}",
                    "mark": "chosen" if t["token"] == s["token"] else None,
                }
                for t in s["top"]
            ],
            "cells": ["new" if i >= before else "read" for i in range(total)],
            "grid_label": (
                f"{n_layer} layers × {total} tokens; this step computed {s['tokens_in']} and read {before} from the cache"
            ),
        }

    empty: GenerateStepView = {
        "phase": "Press Generate.",
        "which": "the next token",
        "top": [],
        "cells": [],
        "grid_label": f"{n_layer} layers, no tokens yet",
    }
    return {
        "shown": shown,
        "shown_more": " Step back through it, or press Generate for your own." if built else "",
        "prompt": data["prompt"],
        "tokens": [
            {"text": s["text"], "at": "now" if i == at else "later" if i > at else None} for i, s in enumerate(steps)
        ],
        "rows": [
            {
                "step": s["step"],
                "phase": s["phase"],
                "tokens_in": s["tokens_in"],
                "before": s["cache_len_before"],
                "after": s["cache_len_after"],
                "text": token_text(s["text"]),
                "p": chosen_p(s),
                "ms": None if s.get("ms") is None else f"{s['ms']:.1f}",
                "current": "step" if i == at else None,
            }
            for i, s in enumerate(steps)
        ],
        "step": step_view(steps[at]) if steps else empty,
        "scrub": f"step {steps[at]['step']} of {steps[-1]['step']}" if steps else "no steps yet",
    }


def race_measured_view(r: dict) -> ModelRaceView:
    """The model-race widget after a race: race_measured's numbers as the template's lines."""
    m, t, run = r["compared"], r["theory"], r["run"]
    if m == 0:
        identical = "Stopped before both runs had a token to compare."
    elif r["first_difference"] is None:
        identical = f"✓ identical tokens: both runs wrote the same {'' if m == r['n_new'] else 'first '}{m} tokens."
    else:
        identical = f"✗ the tokens differ: first at new token {r['first_difference']} (of {m} compared)."
    speedup, d = r["speedup_decode"], r["decode_ms"]
    cut = run["prompt_cut"]
    return {
        "identical": identical,
        "verdict": "bad" if r["first_difference"] is not None else "ok" if m > 0 else None,
        "same": r["identical"],
        "measured": "–" if speedup is None else f"{speedup:,.1f}×",
        "measured_value": speedup,
        "measured_note": "Stopped too early to compare decode steps."
        if speedup is None
        else f"Sum of the {m - 1} decode steps: {d['no_cache']:,.2f} ms without the cache ÷ {d['cache']:,.2f} ms "
        f"with it (prefill left out: {r['prefill_ms']:,.2f} ms, the same work in both runs).",
        "theory": f"{t['speedup_decode']:,.1f}×" if t else "–",
        "theory_value": t["speedup_decode"] if t else None,
        "theory_note": f"Multiply-adds of the same {t['n_new'] - 1} decode steps (prompt {t['prompt_len']} tokens): "
        f"without the cache ÷ with it. Over the whole run, prefill included: {t['speedup_total']:,.1f}×. It leaves "
        "out the fixed cost of each step."
        if t
        else "Nothing to compare yet: run the race to the end.",
        "prompt": f"Prompt: {r['prompt_len']} tokens"
        + (f" (the first {cut} cut off to fit the context)" if cut else "")
        + ". The model wrote: ",
        "wrote": run["text"],
        "hover": {
            side: [
                f"{name}<br>new token at position {r['prompt_len'] + k}<br>{ms:.2f} ms"
                for k, ms in enumerate(r["step_ms"][side][1:], start=1)
            ]
            for side, name in (("cache", "with the cache"), ("no_cache", "without the cache"))
            if side in r["step_ms"]
        },
        "status": f"Stopped: compared the {m} steps both runs finished."
        if r["stopped"]
        else f"Measured in your browser: {r['n_new']} tokens with the cache and {r['n_new']} without, on the tiny model "
        "(onnxruntime-web, 1 thread).",
    }


def model_race_view(data: dict) -> ModelRaceView:
    """The model-race widget before a race: model_race_figure's theory (race_measured_view writes a race's lines)."""
    return {
        "identical": "",
        "verdict": None,
        "same": None,
        "measured": "–",
        "measured_value": None,
        "measured_note": "Press Run to race on your machine.",
        "theory": f"{data['speedup_decode']:,.1f}×",
        "theory_value": data["speedup_decode"],
        "theory_note": (
            f"Multiply-adds of the {data['n_new'] - 1} decode steps for the prompt above ({data['prompt_len']} tokens) "
            f"and n = {data['n_new']}, computed when this page was built: without the cache ÷ with it. Over the whole "
            f"run, prefill included: {data['speedup_total']:,.1f}×. A race computes it again in your browser, for its "
            "own prompt length and n."
        ),
        "prompt": "",
        "wrote": "",
    }


# What generate_figure accepts, clamped with no notice (the widget shows the steps it ran).
GENERATE_INPUTS = Spec(
    max_new_tokens=Param(1, 200, fractions="cut"),
    top_k=Param(1, 20, fractions="cut"),
    # the page's sampling controls: model.js samples in the browser (temperature 0 is greedy); no Python takes them
    temperature=Param(0.0, 2.0, step=0.1),
    seed=Param(*SEED),
)
# What the race functions accept: out of range is refused (a ValueError), never clamped.
RACE_INPUTS = Spec(
    prompt_len=Param(1, 511),
    # the page's slider: the default prompt plus n must fit the tiny model's 512-token context; 16 so the timings mean something
    n_new=Param(1, 511, control=(16, 448)),
    n_layer=Param(1, 128),
    n_head=Param(1, 256),
    n_embd=Param(1, 16384),  # and at least n_head
)


@takes(GENERATE_INPUTS)
def generate_figure(
    prompt: str = tiny.DEFAULT_PROMPT, max_new_tokens: int = 24, top_k: int = 5
) -> GenerationDemoResult:
    """Greedy generation with the KV cache, step by step (numpy reference).

    Per step: phase, the token chosen, the top-k next-token probabilities
    (softmax at temperature 1) and the cache length before and after the step.
    """
    max_new_tokens, top_k = GENERATE_INPUTS.check({"max_new_tokens": max_new_tokens, "top_k": top_k}).values()
    if not text("prompt", prompt).strip():
        raise ValueError("prompt is empty")
    model, tok = tiny.model_and_tokenizer()
    ids = tok.encode(prompt)
    prompt_len = len(ids)
    if prompt_len > model.config.block_size:  # the model's context; a longer prompt would only cost memory
        raise ValueError(f"prompt is {prompt_len:,} tokens; the tiny model reads at most {model.config.block_size:,}")
    steps, cache, feed = [], None, ids
    for step in range(max_new_tokens):
        logits, cache = model.forward(np.array([feed]), cache)
        top = top_k_probs(logits[0, -1], top_k)
        token = top[0][0]
        steps.append(
            {
                "step": step,
                "phase": "prefill" if step == 0 else "decode",
                "token": token,
                "text": tok.token_str(token),
                "top": [{"token": i, "text": tok.token_str(i), "p": round(p, 6)} for i, p in top],
                "tokens_in": prompt_len if step == 0 else 1,
                "cache_len_before": 0 if step == 0 else prompt_len + step - 1,
                "cache_len_after": prompt_len + step,
            }
        )
        feed = [token]
    return {
        "prompt": prompt,
        "prompt_tokens": [tok.token_str(i) for i in ids],
        "prompt_len": prompt_len,
        "steps": steps,
        "text": tok.decode([s["token"] for s in steps]),
        "n_layer": model.config.n_layer,
        "block_size": model.config.block_size,
        "limits": GENERATE_INPUTS.ranges("max_new_tokens", "top_k"),
        "card": tiny.card_facts(),
    }


@takes(RACE_INPUTS)
def model_race_figure(n_new: int = 128) -> RaceDemoResult:
    """race_theory for the default prompt (its length counted by the tokenizer),
    with the prompt itself: the static figure of the model-race widget."""
    prompt_len = len(tiny.tiny_tokenizer().encode(tiny.DEFAULT_PROMPT))
    return {**race_theory(prompt_len=prompt_len, n_new=n_new), "prompt": tiny.DEFAULT_PROMPT}


def race_theory(
    prompt_len: int = 8,
    n_new: int = 128,
    n_layer: int = 4,
    n_head: int = 4,
    n_embd: int = 128,
    vocab_size: int | None = None,
) -> RaceTheoryResult:
    """What kvlab's accounting predicts for the race on the tiny model.

    Multiply-adds per step with and without the cache (projections, MLP,
    attention, LM head), cumulative, and the predicted speed-up
    (uncached total / cached total). Runs in Pyodide: no weights needed.
    `vocab_size` None: the tiny model's, from its tokenizer (packed in the kvlab zip).
    """
    if vocab_size is None:
        vocab_size = tiny.tiny_tokenizer().vocab_size
    p = RACE_INPUTS.require({"prompt_len": prompt_len, "n_new": n_new, "n_layer": n_layer, "n_head": n_head})
    prompt_len, n_new, n_layer, n_head = p.values()
    n_embd = RACE_INPUTS["n_embd"].require("n_embd", n_embd, lo=n_head)
    if prompt_len + n_new > 512:
        raise ValueError(f"prompt_len + n_new must fit the 512-token context, got {prompt_len + n_new}")
    config = DecoderConfig(
        n_layers=n_layer,
        n_heads=n_head,
        n_kv_heads=n_head,
        head_dim=n_embd // n_head,
        d_model=n_embd,
        d_ff=4 * n_embd,
        vocab_size=vocab_size,
        max_positions=512,
        bytes_per_value=4,
    )
    runs = {
        mode: decoding_costs(config, prompt_len, n_new, use_cache=(mode == "cache")) for mode in ("cache", "no_cache")
    }

    def macs(c: dict) -> float:
        return float(c["total_macs"])

    per_step = {m: [macs(s["step_cost"]) for s in r] for m, r in runs.items()}
    total = {m: macs(r[-1]["cumulative"]) for m, r in runs.items()}
    decode = {m: sum(v[1:]) for m, v in per_step.items()}
    return {
        "prompt_len": int(prompt_len),
        "n_new": int(n_new),
        "positions": [prompt_len + k for k in range(n_new)],
        "macs_per_step": per_step,
        "total_macs": total,
        "speedup_total": total["no_cache"] / total["cache"],
        "speedup_decode": (decode["no_cache"] / decode["cache"]) if n_new > 1 else 1.0,
        "assumption": "time ∝ multiply-adds; the browser adds a fixed overhead per step, which the theory leaves out",
    }


def _race_run(name: str, run) -> dict:
    """One run as the browser sends it: {"tokens": [id, ...], "ms": [ms, ...]}, step 0 the prefill."""
    if not isinstance(run, dict):
        raise ValueError(f"{name} must be an object with tokens and ms, got {type(run).__name__}")
    tokens, ms = run.get("tokens"), run.get("ms")
    if not isinstance(tokens, list) or not isinstance(ms, list) or len(tokens) != len(ms):
        raise ValueError(f"{name} needs lists tokens and ms of one length")
    if len(ms) > RACE_INPUTS["n_new"].hi:
        raise ValueError(f"{name} has {len(ms)} steps, more than {RACE_INPUTS['n_new'].hi}")
    return {
        "tokens": [finite_number(f"{name}.tokens", t, 0, integer=True) for t in tokens],
        "ms": [finite_number(f"{name}.ms", x, 0) for x in ms],
    }


@with_view(race_measured_view)
def race_measured(
    cached: dict | None = None,
    uncached: dict | None = None,
    n_new: int = 128,
    prompt_len: int = 8,
    prompt_cut: int = 0,
    text_written: str = "",
) -> RaceMeasuredResult:
    """The model-race's numbers, from the two runs' raw measurements in the reader's browser.

    cached / uncached: {"tokens": [...], "ms": [...]}, one entry per step, step 0 the prefill
    (`uncached` None: that run never started). Only the steps both runs finished are compared
    (`compared`); a run that stopped early is a race of those steps, and the theory
    (race_theory) is for the same steps. The measured speed-up sums the decode steps only:
    the prefill is the same work in both runs.

    Defaults: an illustration, not a measurement: both runs' step times proportional to
    race_theory's multiply-adds (1 ms per 10 M), so measured and theory agree. `prompt_cut` (prompt tokens
    cut off to fit the context) and `text_written` (the cached run's text) are for the sentences: `view`
    (race_measured_view) writes every line the widget shows, its status line (`view.status`) included.
    """
    n_new, prompt_len = RACE_INPUTS.require({"n_new": n_new, "prompt_len": prompt_len}).values()
    if cached is None:
        theory = race_theory(prompt_len=prompt_len, n_new=n_new)
        cached, uncached = (
            {"tokens": [0] * n_new, "ms": [m / 1e7 for m in theory["macs_per_step"][side]]}
            for side in ("cache", "no_cache")
        )
    runs = {"cache": _race_run("cached", cached)}
    if uncached is not None:
        runs["no_cache"] = _race_run("uncached", uncached)
    a = runs["cache"]["tokens"]
    b = runs["no_cache"]["tokens"] if "no_cache" in runs else []
    compared = min(len(a), len(b))
    first_difference = next((i + 1 for i in range(compared) if a[i] != b[i]), None)
    stopped = compared < n_new
    decode_ms = None
    speedup = None
    if compared >= 2:
        decode_ms = {side: float(sum(r["ms"][1:compared])) for side, r in runs.items()}
        speedup = decode_ms["no_cache"] / decode_ms["cache"] if decode_ms["cache"] > 0 else None
    n_theory = compared if stopped else n_new
    return {
        "n_new": n_new,
        "compared": compared,
        "stopped": stopped,
        "identical": compared > 0 and first_difference is None and len(a) == len(b),
        "first_difference": first_difference,
        "prefill_ms": runs["cache"]["ms"][0] if runs["cache"]["ms"] else None,
        "decode_ms": decode_ms,
        "speedup_decode": speedup,
        "theory": race_theory(prompt_len=prompt_len, n_new=n_theory) if n_theory >= 2 else None,
        "prompt_len": prompt_len,
        "step_ms": {side: r["ms"] for side, r in runs.items()},  # each run's steps as timed (step 0 the prefill)
        "run": {
            "prompt_cut": finite_number("prompt_cut", prompt_cut, 0, integer=True),
            "text": text("text_written", text_written),
        },
    }
