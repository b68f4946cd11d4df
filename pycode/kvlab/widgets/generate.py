"""The "Generate" page (generate.md): the generate widget (greedy generation with the
KV cache, step by step, by the tiny model's numpy reference) and the model-race
widget (what kvlab's cost accounting predicts for cached vs uncached decoding;
race_theory needs no weights, so it also runs in Pyodide).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kvlab.core import tiny
from kvlab.core.sampling import top_k_probs
from kvlab.core.decoding import DecoderConfig, decoding_costs
from kvlab.inputs import SEED, Param, Spec, finite_number, takes, text
from kvlab.widgets.views import race_measured_view, with_view

if TYPE_CHECKING:
    from kvlab.widgets.generate_types import GenerationDemoResult, RaceDemoResult, RaceMeasuredResult, RaceTheoryResult

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
    (race_measured_view) writes every line the widget shows, and `status` its status line.
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
        "run": {
            "prompt_cut": finite_number("prompt_cut", prompt_cut, 0, integer=True),
            "text": text("text_written", text_written),
        },
        "status": (
            f"Stopped: compared the {compared} steps both runs finished."
            if stopped or uncached is None
            else f"Measured in your browser: {n_new} tokens with the cache and {n_new} without, on the tiny model "
            "(onnxruntime-web, 1 thread)."
        ),
    }
