"""The "Eviction" page (eviction.md): the eviction, context-shift and model-eviction widgets.

eviction_view and context_shift_view follow the same contract as every widget
module (inputs validated and clamped by kvlab.inputs, "params", "clamped", "text");
eviction_recall_demo runs the tiny model (kvlab.core.tiny) with a cache that keeps
the first tokens and a window.
"""
from __future__ import annotations

import numpy as np

from kvlab.core import tiny
from kvlab.reuse.context import effective_n_keep, run_out_of_context, spans
from kvlab.reuse.eviction import make_policy, simulate
from kvlab.wording import span_text
from kvlab.inputs import clamp_int, clamp_view_int, one_of, view_limits


# ----------------------------------------------------------------------------
# Forgetting: eviction and context shift


def eviction_timeline(
    policy: str = "sinks",
    n: int = 32,
    window: int = 8,
    n_sink: int = 4,
    budget: int = 12,
    recent: int = 4,
    seed: int = 0,
) -> dict:
    """Which positions a policy keeps at each step, over n tokens with seeded toy attention.

    policy: "full", "window" (last `window`), "sinks" (first `n_sink` + last
    `window`), "h2o" (last `recent` + heavy hitters up to `budget`).
    Shape: {"params": {...}, "clamped": {}, "policy": {"policy": "sinks", "budget": 12, ...},
    "steps": [{"step": 0, "position": 0, "cache_len_before": 0, "cache_len_after": 1,
    "cached": [0], "evicted": [], "attention_kept": 1.0}, ...], "mean_attention_kept": 0.9}
    """
    clamped: dict = {}
    policy = one_of("policy", policy, ["full", "window", "sinks", "h2o"])
    n = clamp_int("n", n, clamped, "eviction_n")
    window = clamp_int("window", window, clamped)
    n_sink = clamp_int("n_sink", n_sink, clamped)
    budget = clamp_int("budget", budget, clamped)
    recent = clamp_int("recent", recent, clamped)
    seed = clamp_int("seed", seed, clamped)
    if policy == "h2o" and budget < recent:
        raise ValueError(f"budget ({budget}) must be >= recent ({recent})")
    p = make_policy(policy, window=window, n_sink=n_sink, budget=budget, recent=recent)
    timeline = simulate(p, n, seed=seed)
    return {
        "params": {"policy": policy, "n": n, "window": window, "n_sink": n_sink, "budget": budget, "recent": recent, "seed": seed},
        "clamped": clamped,
        "policy": p.describe(),
        "steps": timeline,
        "mean_attention_kept": round(sum(s["attention_kept"] for s in timeline) / n, 6),
    }


def context_shift_timeline(
    prompt_len: int = 8, n_generate: int = 40, n_ctx: int = 32, n_keep: int = 4, mode: str = "shift"
) -> dict:
    """llama.cpp running out of context: what the model still sees at each step.

    Shape: {"params": {...}, "clamped": {}, "prompt_len": 8, "n_ctx": 32, "n_keep": 4, "mode": "shift",
    "steps": [{"step": 0, "phase": "prefill", "token": null, "n_past_before": 0, "n_past_after": 8,
    "n_discarded": 0, "visible": [[0, 8]]}, ...], "shifts": [{"step": 24, "n_past_before": 31,
    "n_left": 27, "n_discard": 13, "discarded": [[4, 17]]}], "stopped_at": null,
    "tokens_fed": 40, "total_discarded": 13}
    """
    clamped: dict = {}
    mode = one_of("mode", mode, ["shift", "stop"])
    n_ctx = clamp_int("n_ctx", n_ctx, clamped)
    prompt_len = clamp_int("prompt_len", prompt_len, clamped, "context_prompt_len")
    n_generate = clamp_int("n_generate", n_generate, clamped)
    n_keep = clamp_int("n_keep", n_keep, clamped)
    if prompt_len >= n_ctx:
        raise ValueError(f"prompt_len ({prompt_len}) must be smaller than n_ctx ({n_ctx})")
    data = run_out_of_context(prompt_len, n_generate, n_ctx, n_keep, mode)
    return {"params": {"prompt_len": prompt_len, "n_generate": n_generate, "n_ctx": n_ctx, "n_keep": n_keep, "mode": mode}, "clamped": clamped, **data}



# ---------------------------------------------------------------------------- eviction_view, context_shift_view

POLICY_NAMES = {
    "full": "Full cache",
    "window": "Sliding window",
    "sinks": "Attention sinks + window (StreamingLLM)",
    "h2o": "Heavy hitters + recent (H2O)",
}
NOT_YET, EVICTED, CACHED, NEW = 0, 1, 2, 3


def eviction_view(
    policy: str = "sinks",
    n: int = 32,
    window: int = 8,
    n_sink: int = 4,
    budget: int = 12,
    recent: int = 4,
    seed: int = 0,
) -> dict:
    """`eviction_timeline` as a step × position raster, plus every policy's attention kept for comparison.

    grid[step][position]: 0 not seen yet, 1 evicted, 2 cached, 3 the token added
    at this step (and still cached). recent is clamped to budget (H2O needs
    budget >= recent). "compare" runs all four policies with the same settings.
    Shape: {"params", "clamped", "limits", "policy", "steps": [... + "cached_text", "evicted_text",
    "n_evicted_total"], "mean_attention_kept", "grid": [[...]], "compare": {"full": {"name",
    "attention_kept": [...], "mean_attention_kept", "cache_len": [...]}, ...}, "text": {...}}
    """
    clamped: dict = {}
    policy = one_of("policy", policy, list(POLICY_NAMES))
    budget = clamp_int("budget", budget, clamped)
    recent = clamp_int("recent", recent, clamped)
    if recent > budget:
        clamped["recent"] = {"requested": recent, "used": budget}
        recent = budget
    n = clamp_view_int("n", n, clamped, "eviction_n")
    kw = {"n": n, "window": window, "n_sink": n_sink, "budget": budget, "recent": recent, "seed": seed}
    base = eviction_timeline(policy, **kw)
    clamped.update(base["clamped"])
    n = base["params"]["n"]
    grid, seen_evicted = [], 0
    for s in base["steps"]:
        row = [NOT_YET] * n
        for p in range(s["position"] + 1):
            row[p] = EVICTED
        for p in s["cached"]:
            row[p] = CACHED
        if s["position"] in s["cached"]:
            row[s["position"]] = NEW
        grid.append(row)
        seen_evicted += len(s["evicted"])
        s["cached_text"] = span_text(spans(s["cached"]))
        s["evicted_text"] = span_text(spans(sorted(s["evicted"])))
        s["n_evicted_total"] = seen_evicted
        s["attention_kept_text"] = f"{100 * s['attention_kept']:.1f}%"
    compare = {}
    for name, label in POLICY_NAMES.items():
        run = base if name == policy else eviction_timeline(name, **kw)
        compare[name] = {
            "name": label,
            "attention_kept": [s["attention_kept"] for s in run["steps"]],
            "cache_len": [s["cache_len_after"] for s in run["steps"]],
            "mean_attention_kept": run["mean_attention_kept"],
            "mean_text": f"{100 * run['mean_attention_kept']:.1f}%",
        }
    last = base["steps"][-1]
    return {
        **base,
        "clamped": clamped,
        "limits": view_limits("n", "window", "n_sink", "budget", "recent", key={"n": "eviction_n"}),
        "policy_name": POLICY_NAMES[policy],
        "grid": grid,
        "compare": compare,
        "text": {
            "mean_attention_kept": f"{100 * base['mean_attention_kept']:.1f}%",
            "final_cache_len": f"{last['cache_len_after']:,}",
            "n_evicted_total": f"{last['n_evicted_total']:,}",
        },
    }


KEPT, VISIBLE, DISCARDED = 3, 2, 1


def context_shift_view(
    prompt_len: int = 8, n_generate: int = 40, n_ctx: int = 32, n_keep: int = 4, mode: str = "shift"
) -> dict:
    """`context_shift_timeline` as a step × text-token raster, with the shifts spelled out.

    prompt_len is clamped to n_ctx - 1 and, for a shift, n_keep to n_ctx - 3
    (what llama.cpp can work with), both reported under "clamped".
    grid[step][token]: 0 not fed yet, 1 discarded, 2 seen by the model, 3 seen and
    protected (one of the first n_keep tokens).
    Shape: {... context_shift_timeline ..., "limits", "n_text": 48, "grid": [[...]],
    "n_past": [8, 9, ...], "shifts": [... + "text"], "text": {...}}
    """
    clamped: dict = {}
    mode = one_of("mode", mode, ["shift", "stop"])
    n_ctx = clamp_view_int("n_ctx", n_ctx, clamped)
    prompt_len = clamp_view_int("prompt_len", prompt_len, clamped, "context_prompt_len")
    n_generate = clamp_view_int("n_generate", n_generate, clamped)
    n_keep = clamp_view_int("n_keep", n_keep, clamped)
    if prompt_len > n_ctx - 1:
        clamped["prompt_len"] = {"requested": clamped.get("prompt_len", {}).get("requested", prompt_len), "used": n_ctx - 1}
        prompt_len = n_ctx - 1
    if mode == "shift" and effective_n_keep(n_keep, prompt_len) > n_ctx - 3:
        clamped["n_keep"] = {"requested": clamped.get("n_keep", {}).get("requested", n_keep), "used": n_ctx - 3}
        n_keep = n_ctx - 3
    data = context_shift_timeline(prompt_len=prompt_len, n_generate=n_generate, n_ctx=n_ctx, n_keep=n_keep, mode=mode)
    data["clamped"] = {**data["clamped"], **clamped}
    keep = data["n_keep"]
    n_text = prompt_len + data["tokens_fed"]
    grid = []
    fed = 0
    for s in data["steps"]:
        fed = prompt_len if s["step"] == 0 else s["token"] + 1
        row = [DISCARDED] * fed + [0] * (n_text - fed)
        for a, b in s["visible"]:
            for t in range(a, b):
                row[t] = KEPT if t < keep else VISIBLE
        grid.append(row)
        s["visible_text"] = span_text(s["visible"])
    for sh in data["shifts"]:
        sh["text"] = (
            f"step {sh['step']}: {sh['n_past_before']} + 1 ≥ n_ctx = {n_ctx}; kept the first {keep}, "
            f"discarded {sh['n_discard']} (tokens {span_text(sh['discarded'])}), half of the {sh['n_left']} after them"
        )
    if data["stopped_at"] is not None:
        outcome = (f"Stopped at step {data['stopped_at']}: the cache was full after "
                   f"{data['tokens_fed']} of {n_generate} generated tokens.")
    elif data["shifts"]:
        outcome = (f"Generated all {data['tokens_fed']} tokens with {len(data['shifts'])} context shift"
                   f"{'' if len(data['shifts']) == 1 else 's'}; {data['total_discarded']} tokens discarded in all.")
    else:
        outcome = f"Generated all {data['tokens_fed']} tokens without running out of context."
    final = data["steps"][-1]
    return {
        **data,
        "params": {**data["params"], "n_keep": n_keep},
        "limits": view_limits("n_ctx", "prompt_len", "n_generate", "n_keep", key={"prompt_len": "context_prompt_len"}),
        "n_text": n_text,
        "grid": grid,
        "n_past": [s["n_past_after"] for s in data["steps"]],
        "text": {
            "outcome": outcome,
            "final_visible": span_text(final["visible"]),
            "final_n_past": f"{final['n_past_after']:,}",
            "n_text": f"{n_text:,}",
            "n_keep": f"{keep:,}",
        },
    }


# ---------------------------------------------------------------------------- eviction, on the real model



EVICTION_LIMITS = {"window": (8, 512), "sinks": (0, 32), "episode": (0, 3)}


def eviction_recall_demo(episode: int = 0, window: int = 64, sinks: int = 4, n_new: int = 8) -> dict:
    """The door-code question after a long chat, answered by the tiny model with
    the full cache, a sliding window, and attention sinks + the same window.

    For each policy: the answer it generates, whether the code is right, whether
    the code's tokens were still in the cache, and how surprised the model was by
    each token of the chat (its loss) as it read it.
    """
    lo, hi = EVICTION_LIMITS["episode"]
    episode = int(min(max(int(episode), lo), min(hi, len(tiny.demo_episodes()) - 1)))
    window = int(min(max(int(window), EVICTION_LIMITS["window"][0]), EVICTION_LIMITS["window"][1]))
    sinks = int(min(max(int(sinks), 0), EVICTION_LIMITS["sinks"][1]))
    n_new = int(min(max(int(n_new), 1), 16))
    _, tok = tiny._model_and_tokenizer()
    episodes = [tiny.episode_facts(e) for e in tiny.demo_episodes()]
    ep = episodes[episode]
    ids, code_positions = ep["ids"], ep["code_positions"]
    policies = {}
    for name, (s, w) in {"full": (None, None), "window": (0, window), "sinks": (sinks, window)}.items():
        run = tiny.streaming_run(ids, s, w, n_new)
        answer = tok.decode(run["tokens"])
        digits = "".join(ch for ch in answer if ch.isdigit())[:4]
        policies[name] = {
            "sinks": s, "window": w,
            "answer": answer,
            "digits": digits,
            "correct": digits == ep["code"],
            "digits_right": sum(a == b for a, b in zip(digits, ep["code"])),
            "code_in_cache": all(p in run["cached"] for p in code_positions),
            "cache_len": len(run["cached"]),
            "prompt_nll": [round(x, 4) for x in run["prompt_nll"]],
            "mean_nll_last_100": round(float(np.mean(run["prompt_nll"][-100:])), 4),
        }
    return {
        "episode": episode,
        "episodes": [{k: e[k] for k in ("prompt", "code", "code_positions", "n_tokens")} for e in episodes],
        "prompt": ep["prompt"],
        "code": ep["code"],
        "n_tokens": len(ids),
        "code_positions": code_positions,
        "window": window,
        "sinks": sinks,
        "policies": policies,
        "limits": EVICTION_LIMITS,
        "measured": tiny.measured_recall(),
    }
