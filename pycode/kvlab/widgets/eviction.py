"""The "Eviction" page (eviction.md): the eviction, context-shift and model-eviction widgets.

eviction_figure and context_shift_figure follow the same contract as every widget
module (inputs validated and clamped by kvlab.inputs, "params", "clamped", and a view
above each function that writes every sentence from the result's numbers);
model_eviction_figure runs the tiny model (kvlab.core.tiny) with a cache that keeps
the first tokens and a window.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

from kvlab.core import tiny
from kvlab.inputs import SEED, Param, Spec, finite_number, one_of, short_repr, takes
from kvlab.memory.llama_server import llama_server_command
from kvlab.reuse.context import effective_n_keep, run_out_of_context, spans
from kvlab.reuse.eviction import make_policy, simulate
from kvlab.widgets.views import computed_status, raster_display, raster_runs, raster_ticks, span_words, with_view
from kvlab.wording import percent, plural, span_text

if TYPE_CHECKING:
    from kvlab.widgets.eviction_types import (
        ContextShiftDisplay,
        ContextShiftViewResult,
        DoorCodeChatResult,
        DoorCodeChatView,
        DoorCodeScoreResult,
        DoorCodeView,
        EvictionDisplay,
        EvictionRecallDemoResult,
        EvictionViewResult,
        ModelEvictionView,
    )


# ---------------------------------------------------------------------------- views: the words this module's widgets show


# a raster cell's meaning, by its value: the runs' tooltips
CONTEXT_SHIFT_CELLS = ["not written yet", "discarded", "seen by the model", "seen, protected by n_keep"]


def context_shift_display(data: dict) -> ContextShiftDisplay:
    grid = data["grid"]
    keep, n_ctx = data["n_keep"], data["n_ctx"]
    n_generate, shifts = data["params"]["n_generate"], data["shifts"]
    if data["stopped_at"] is not None:
        outcome = (
            f"Stopped at step {data['stopped_at']}: the cache was full after "
            f"{data['tokens_fed']} of {n_generate} generated tokens."
        )
    elif shifts:
        outcome = (
            f"Generated all {data['tokens_fed']} tokens with {len(shifts)} context shift"
            f"{'' if len(shifts) == 1 else 's'}; {data['total_discarded']} tokens discarded in all."
        )
    else:
        outcome = f"Generated all {data['tokens_fed']} tokens without running out of context."
    final = data["steps"][-1]
    return {
        **raster_display(grid),
        "raster": raster_runs(
            grid,
            lambda y, a, b, v: f"step {y}, {span_words(a, b, 'text token', 'text tokens')}: {CONTEXT_SHIFT_CELLS[v]}",
        ),
        "ticks": raster_ticks(len(grid), len(grid[0]) if grid else 0),
        "outcome": outcome,
        "final_visible": span_text(final["visible"]),
        "final_n_past": f"{final['n_past_after']:,}",
        "n_text": f"{data['n_text']:,}",
        "n_keep": f"{keep:,}",
        "shifts": [
            f"step {sh['step']}: {sh['n_past_before']} + 1 ≥ n_ctx = {n_ctx}; kept the first {keep}, "
            f"discarded {sh['n_discard']} (tokens {span_text(sh['discarded'])}), half of the {sh['n_left']} after them"
            for sh in shifts
        ],
        "steps": [
            {
                "step": s["step"],
                "n_past_after": s["n_past_after"],
                "n_discarded": s["n_discarded"],
                "visible": span_text(s["visible"]),
            }
            for s in data["steps"]
        ],
        "status": computed_status("context_shift_figure", f"n_ctx = {n_ctx}, {data['mode']}"),
    }


# a raster cell's meaning, by its value: the runs' tooltips
EVICTION_CELLS = ["not written yet", "evicted", "cached", "added at this step"]


def eviction_display(data: dict) -> EvictionDisplay:
    steps = [
        {
            "step": s["step"],
            "position": s["position"],
            "cache_len_after": s["cache_len_after"],
            "cache_len_text": plural(s["cache_len_after"], "position"),
            "n_evicted_total": s["n_evicted_total"],
            "cached": span_text(spans(s["cached"])),
            "evicted": span_text(spans(sorted(s["evicted"]))),
            "attention_kept": percent(s["attention_kept"]),
        }
        for s in data["steps"]
    ]
    last = data["steps"][-1]
    return {
        "hover": {
            key: [f"step {s['step']}: {percent(y)} kept" for s, y in zip(data["steps"], p["attention_kept"])]
            for key, p in data["compare"].items()
        },
        **raster_display(data["grid"]),
        "raster": raster_runs(
            data["grid"],
            lambda y, a, b, v: f"step {y}, {span_words(a, b, 'position', 'positions')}: {EVICTION_CELLS[v]}",
        ),
        "steps": steps,
        "step": steps[-1],  # the step read out at first: the last
        "means": {key: percent(p["mean_attention_kept"]) for key, p in data["compare"].items()},
        "mean_attention_kept": percent(data["mean_attention_kept"]),
        "final_cache_len": f"{last['cache_len_after']:,}",
        "n_evicted_total": f"{last['n_evicted_total']:,}",
        "status": computed_status("eviction_figure", f"{data['policy_name']}, n = {data['params']['n']}"),
    }


def door_code_view(data: dict) -> DoorCodeView:
    policies = data["policies"]
    n_digits = len(data["code"] or "")

    def row(key: str, p: dict) -> dict:
        sizes = "" if p["window"] is None else f"({p['sinks']} + {p['window']})" if p["sinks"] else f"({p['window']})"
        return {
            "key": key,
            "label": p["label"],
            "sizes": sizes,
            "kept": p["cache_len"],
            "in_cache": "yes" if p["code_in_cache"] else "no",
            "answer": p["answer"],
            "right": f"{p['digits_right']} of {n_digits}",
            "loss": "–" if p["mean_nll_last"] is None else f"{p['mean_nll_last']:.3f}",
        }

    lines = []
    for name in ("window", "sinks"):
        if name in policies and "full" in policies:
            p, f = policies[name], policies["full"]
            verdict = "names the code" if p["correct"] else f"gets {p['digits_right']} of {n_digits} digits"
            kept = "still cached" if p["code_in_cache"] else "evicted"
            lines.append(
                f"{p['label']} ({kept}): {verdict}; loss over the last {data['loss_tail']} tokens "
                f"{p['mean_nll_last']:.2f} against {f['mean_nll_last']:.2f} with the full cache."
            )
    return {
        "rows": [row(key, p) for key, p in policies.items()],
        "lines": lines,
        "hover": {
            name: [
                f"{policies[name]['label']}: token {x}, {_signed(y)} nats vs the full cache"
                for x, y in zip(c["x"], c["extra"])
            ]
            for name, c in data["chart"].items()
        },
    }


def _signed(x: float) -> str:
    """x with its sign and 3 decimals, as the chart's hover showed it (d3's "+.3f"; no "-0.000").

    >>> _signed(0.01234), _signed(-0.5), _signed(-0.0001)
    ('+0.012', '-0.500', '+0.000')
    """
    s = f"{x:+.3f}"
    return "+0.000" if s == "-0.000" else s


def _chat_words(code: str | None, positions: list[int], n_tokens: int) -> ModelEvictionView:
    """Where a chat states its door code, in words: "tokens 13–16 of 120" and its parts."""
    return {
        "code": code or "",
        "n_tokens": f"{n_tokens:,}",
        "code_at": f"tokens {positions[0] + 1}–{positions[-1] + 1} of {n_tokens:,}" if positions else "",
        "code_span": f"{positions[0] + 1}–{positions[-1] + 1}" if positions else "–",
    }


def door_code_chat_view(data: dict) -> DoorCodeChatView:
    if data["code"] is None:
        note = "Your chat never states a door code: write one in, as “the door has code 1234.”"
    elif not data["fits"]:
        note = (
            f"Your chat is {data['n_tokens']:,} tokens; with the answer the model can read {data['block_size']:,}, "
            f"so it sees only the end of it."
        )
    else:
        note = ""
    return {**_chat_words(data["code"], data["code_positions"], data["n_tokens"]), "note": note}


def model_eviction_view(data: dict) -> ModelEvictionView:
    return _chat_words(data["code"], data["code_positions"], data["n_tokens"])


# ----------------------------------------------------------------------------
# Forgetting: eviction and context shift

# What the functions accept: whole numbers (a fraction is refused), clamped into these ranges.
TIMELINE_INPUTS = Spec(
    n=Param(1, 512, fractions="refuse"),  # the timeline lists every cached position at every step
    window=Param(1, 512, fractions="refuse"),
    n_sink=Param(0, 64, fractions="refuse"),
    budget=Param(1, 1024, fractions="refuse"),
    recent=Param(1, 512, fractions="refuse"),
    seed=Param(*SEED, fractions="refuse"),
)
CONTEXT_SHIFT_INPUTS = Spec(
    n_ctx=Param(4, 8192, fractions="refuse"),
    prompt_len=Param(1, 8191, fractions="refuse"),
    n_generate=Param(0, 8192, fractions="refuse"),
    n_keep=Param(-1, 8192, fractions="refuse"),
)
# The views are rasters of every position at every step, which grow with the square of the
# inputs: tighter ranges, so the page stays quick. `control`: what the page's slider offers.
EVICTION_VIEW_INPUTS = Spec(
    TIMELINE_INPUTS,
    n=Param(1, 256, fractions="refuse"),
    window=Param(1, 512, fractions="refuse", control=(1, 64)),
    n_sink=Param(0, 64, fractions="refuse", control=(0, 16)),
    budget=Param(1, 1024, fractions="refuse", control=(1, 128)),
    recent=Param(1, 512, fractions="refuse", control=(1, 64)),
)
CONTEXT_SHIFT_VIEW_INPUTS = Spec(
    n_ctx=Param(4, 256, fractions="refuse"),
    prompt_len=Param(1, 255, fractions="refuse"),
    n_generate=Param(0, 256, fractions="refuse"),
    n_keep=Param(-1, 253, fractions="refuse"),
)


@takes(TIMELINE_INPUTS)
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
    checked = TIMELINE_INPUTS.check(
        {"n": n, "window": window, "n_sink": n_sink, "budget": budget, "recent": recent, "seed": seed}, clamped
    )
    n, window, n_sink, budget, recent, seed = checked.values()
    if policy == "h2o" and budget < recent:
        raise ValueError(f"budget ({budget}) must be >= recent ({recent})")
    p = make_policy(policy, window=window, n_sink=n_sink, budget=budget, recent=recent)
    timeline = simulate(p, n, seed=seed)
    return {
        "params": {
            "policy": policy,
            "n": n,
            "window": window,
            "n_sink": n_sink,
            "budget": budget,
            "recent": recent,
            "seed": seed,
        },
        "clamped": clamped,
        "policy": p.describe(),
        "steps": timeline,
        "mean_attention_kept": round(sum(s["attention_kept"] for s in timeline) / n, 6),
    }


@takes(CONTEXT_SHIFT_INPUTS)
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
    p = CONTEXT_SHIFT_INPUTS.check(
        {"n_ctx": n_ctx, "prompt_len": prompt_len, "n_generate": n_generate, "n_keep": n_keep}, clamped
    )
    n_ctx, prompt_len, n_generate, n_keep = p.values()
    if prompt_len >= n_ctx:  # name the values as given, not as clamped
        given = {name: short_repr(c["requested"]) for name, c in clamped.items()}
        raise ValueError(
            f"prompt_len ({given.get('prompt_len', prompt_len)}) must be smaller than n_ctx "
            f"({given.get('n_ctx', n_ctx)}; n_ctx is {CONTEXT_SHIFT_INPUTS['n_ctx'].lo} to "
            f"{CONTEXT_SHIFT_INPUTS['n_ctx'].hi:,})"
        )
    data = run_out_of_context(prompt_len, n_generate, n_ctx, n_keep, mode)
    return {
        "params": {"prompt_len": prompt_len, "n_generate": n_generate, "n_ctx": n_ctx, "n_keep": n_keep, "mode": mode},
        "clamped": clamped,
        **data,
    }


# ---------------------------------------------------------------------------- eviction_figure, context_shift_figure

POLICY_NAMES = {
    "full": "Full cache",
    "window": "Sliding window",
    "sinks": "Attention sinks + window (StreamingLLM)",
    "h2o": "Heavy hitters + recent (H2O)",
}
NOT_YET, EVICTED, CACHED, NEW = 0, 1, 2, 3


@takes(EVICTION_VIEW_INPUTS)
@with_view(eviction_display)
def eviction_figure(
    policy: str = "sinks",
    n: int = 32,
    window: int = 8,
    n_sink: int = 4,
    budget: int = 12,
    recent: int = 4,
    seed: int = 0,
) -> EvictionViewResult:
    """`eviction_timeline` as a step × position raster, plus every policy's attention kept for comparison.

    grid[step][position]: 0 not seen yet, 1 evicted, 2 cached, 3 the token added
    at this step (and still cached). recent is clamped to budget (H2O needs
    budget >= recent). "compare" runs all four policies with the same settings.
    Shape: {"params", "clamped", "limits", "policy", "steps": [... + "n_evicted_total"],
    "mean_attention_kept", "grid": [[...]], "compare": {"full": {"name", "attention_kept": [...],
    "mean_attention_kept", "cache_len": [...]}, ...}, "view": {...}}
    """
    clamped: dict = {}
    policy = one_of("policy", policy, list(POLICY_NAMES))
    budget, recent = EVICTION_VIEW_INPUTS.check({"budget": budget, "recent": recent}, clamped).values()
    if recent > budget:
        clamped["recent"] = {"requested": recent, "used": budget}
        recent = budget
    n = EVICTION_VIEW_INPUTS["n"].check("n", n, clamped)
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
        s["n_evicted_total"] = seen_evicted
    compare = {}
    for name, label in POLICY_NAMES.items():
        run = base if name == policy else eviction_timeline(name, **kw)
        compare[name] = {
            "name": label,
            "attention_kept": [s["attention_kept"] for s in run["steps"]],
            "cache_len": [s["cache_len_after"] for s in run["steps"]],
            "mean_attention_kept": run["mean_attention_kept"],
        }
    return {
        **base,
        "clamped": clamped,
        "limits": EVICTION_VIEW_INPUTS.ranges("n", "window", "n_sink", "budget", "recent"),
        "policy_name": POLICY_NAMES[policy],
        "grid": grid,
        "compare": compare,
    }


KEPT, VISIBLE, DISCARDED = 3, 2, 1


@takes(CONTEXT_SHIFT_VIEW_INPUTS)
@with_view(context_shift_display)
def context_shift_figure(
    prompt_len: int = 8, n_generate: int = 40, n_ctx: int = 32, n_keep: int = 4, mode: str = "shift"
) -> ContextShiftViewResult:
    """`context_shift_timeline` as a step × text-token raster, with the shifts spelled out.

    prompt_len is clamped to n_ctx - 1 and, for a shift, n_keep to n_ctx - 3
    (what llama.cpp can work with), both reported under "clamped".
    grid[step][token]: 0 not fed yet, 1 discarded, 2 seen by the model, 3 seen and
    protected (one of the first n_keep tokens).
    Shape: {... context_shift_timeline ..., "limits", "n_text": 48, "grid": [[...]],
    "n_past": [8, 9, ...], "view": {...}}
    """
    clamped: dict = {}
    mode = one_of("mode", mode, ["shift", "stop"])
    p = CONTEXT_SHIFT_VIEW_INPUTS.check(
        {"n_ctx": n_ctx, "prompt_len": prompt_len, "n_generate": n_generate, "n_keep": n_keep}, clamped
    )
    n_ctx, prompt_len, n_generate, n_keep = p.values()
    if prompt_len > n_ctx - 1:
        clamped["prompt_len"] = {
            "requested": clamped.get("prompt_len", {}).get("requested", prompt_len),
            "used": n_ctx - 1,
        }
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
    # the command that runs llama.cpp's server this way (its context per slot, shift or stop, n_keep)
    server = llama_server_command(ctx_size=n_ctx, context_shift=mode == "shift", keep=n_keep if mode == "shift" else 0)
    return {
        **data,
        "server": {"command": server["command"], "flags": server["flags"]},
        "params": {**data["params"], "n_keep": n_keep},
        "limits": CONTEXT_SHIFT_VIEW_INPUTS.ranges(),
        "n_text": n_text,
        "grid": grid,
        "n_past": [s["n_past_after"] for s in data["steps"]],
    }


# ---------------------------------------------------------------------------- eviction, on the real model


# Rounded to whole numbers and clamped with no notice: the widget shows the values it used.
RECALL_INPUTS = Spec(
    window=Param(8, 512, step=8),
    sinks=Param(0, 32),
    episode=Param(0, 3),  # and at most the last of the demo episodes
    n_new=Param(1, 16),  # tokens generated after the door question
)
LOSS_TAIL = 100  # the table's loss is the mean over the chat's last LOSS_TAIL tokens
LOSS_SMOOTH = 25  # the chart's running mean
DOOR_QUESTION = "user: i forgot how to open the door. can you help?\nbot:"
DOOR_CODE = re.compile(r"code (\d{4})")
CHAT_MAX_CHARS = 4000


def _split_question(prompt: str) -> str:
    """The chat without its closing question (the episodes end with one)."""
    head, sep, _ = prompt.rpartition("\nuser: ")
    return head + "\n" if sep else prompt


def _code_positions(tok, ids: list[int], text: str, code: str) -> list[int]:
    """Token positions of `code`'s first occurrence in `text` (ids = tok.encode(text)), by byte offsets."""
    ends = np.cumsum([len(tok.vocab[i]) for i in ids])
    start = text.encode("utf-8").index(code.encode("utf-8"))
    return [i for i, e in enumerate(ends) if start < e <= start + len(code)]


@with_view(door_code_chat_view)
def door_code_chat(chat: str | None = None, n_new: int = 8, block_size: int | None = None) -> DoorCodeChatResult:
    """A door-code chat the reader wrote (or edited), ready to be read and asked.

    Finds the first "code NNNN" in the chat, appends the question, tokenizes
    it and says where the code's digits sit (token positions), so the widget
    can tell whether an eviction policy kept them. "fits": whether the chat and
    the answer fit the model's context of `block_size` tokens (the model card's
    when not given; the model keeps the end of a longer chat). Needs only the
    tokenizer, so it runs in the browser too.
    """
    if chat is None:
        chat = _split_question(tiny.demo_episodes()[0]["prompt"])
    if not isinstance(chat, str):
        raise ValueError("chat must be text")
    if len(chat) > CHAT_MAX_CHARS:
        raise ValueError(f"the chat is {len(chat):,} characters; at most {CHAT_MAX_CHARS:,} fit here")
    if not chat.strip():
        raise ValueError("the chat is empty: write a few lines, one of them with a door code")
    n_new = RECALL_INPUTS["n_new"].check("n_new", n_new, None)
    block = (
        finite_number("block_size", block_size, minimum=1, integer=True)
        if block_size is not None
        else int(tiny.tiny_card()["config"]["block_size"])
    )
    tok = tiny.tiny_tokenizer()
    prompt = chat.rstrip("\n") + "\n" + DOOR_QUESTION
    m = DOOR_CODE.search(chat)
    code = m.group(1) if m else None
    ids = tok.encode(prompt)
    positions = _code_positions(tok, ids, prompt, code) if code else []
    fits = len(ids) + n_new - 1 <= block
    return {
        "chat": chat,
        "question": DOOR_QUESTION,
        "prompt": prompt,
        "code": code,
        "code_positions": positions,
        "n_tokens": len(ids),
        "block_size": block,
        "fits": fits,
    }


POLICY_LABELS = {"full": "Full cache", "window": "Sliding window", "sinks": "Sinks + window"}


@with_view(door_code_view)
def door_code_score(
    code: str | None = "3457",
    code_positions: list[int] | None = None,
    runs: dict | None = None,
    window: int = 64,
    sinks: int = 4,
) -> DoorCodeScoreResult:
    """Score the three caches' runs on a door-code chat: the model's raw outputs in, every derived number out.

    runs: {"full"|"window"|"sinks": {"answer": text, "cached": [positions held after
    the chat] or None (full cache), "prompt_nll": [-ln p of each next chat token]}}.
    Per policy: digits named, digits right, whether the code's tokens were still
    cached, entries kept, mean loss over the last LOSS_TAIL tokens, and for the
    chart the running mean (LOSS_SMOOTH) of the loss minus the full cache's loss
    (how much more surprised the evicted model is, token by token) plus its sum.
    "code_gone_at": the chat position at which the window lost the code's first token.
    """
    runs = runs or {}
    if not isinstance(runs, dict) or not all(isinstance(r, dict) for r in runs.values()):
        raise ValueError('runs must be {"full"|"window"|"sinks": {"answer": ..., "cached": ..., "prompt_nll": ...}}')
    code_positions = [int(p) for p in (code_positions or [])]
    window, sinks = RECALL_INPUTS.check({"window": window, "sinks": sinks}).values()
    full_nll = np.asarray(runs.get("full", {}).get("prompt_nll", []), dtype=np.float64)
    policies, chart = {}, {}
    for name in ("full", "window", "sinks"):
        if name not in runs:
            continue
        r = runs[name]
        answer = str(r.get("answer", ""))
        digits = "".join(ch for ch in answer if ch.isdigit())[:4]
        cached = r.get("cached")
        nll = np.asarray(r.get("prompt_nll", []), dtype=np.float64)
        in_cache = True if cached is None else all(p in set(cached) for p in code_positions)
        policies[name] = {
            "label": POLICY_LABELS[name],
            "sinks": None if name == "full" else (0 if name == "window" else sinks),
            "window": None if name == "full" else window,
            "answer": answer,
            "digits": digits,
            "correct": bool(code) and digits == code,
            "digits_right": sum(a == b for a, b in zip(digits, code or "")),
            "code_in_cache": bool(code_positions) and in_cache,
            "cache_len": len(cached) if cached is not None else int(r.get("kept", len(nll) + 1)),
            "mean_nll_last": round(float(nll[-LOSS_TAIL:].mean()), 4) if len(nll) else None,
        }
        if name != "full" and len(nll) and len(nll) == len(full_nll):
            extra = nll - full_nll
            smooth = np.convolve(extra, np.ones(LOSS_SMOOTH), "full")[: len(extra)] / np.minimum(
                np.arange(1, len(extra) + 1), LOSS_SMOOTH
            )
            chart[name] = {
                "x": list(range(2, len(extra) + 2)),
                "extra": [round(float(v), 4) for v in smooth],
                "extra_total": round(float(extra.sum()), 3),
            }
    gone = {}
    for name, s in (("window", 0), ("sinks", sinks)):
        first = next((p for p in code_positions if p >= s), None)
        gone[name] = None if first is None else first + window + (s if name == "sinks" else 0) + 1
    return {
        "code": code,
        "code_positions": code_positions,
        "window": window,
        "sinks": sinks,
        "loss_tail": LOSS_TAIL,
        "loss_smooth": LOSS_SMOOTH,
        "policies": policies,
        "chart": chart,
        "code_gone_at": gone,
    }


@takes(RECALL_INPUTS)
@with_view(model_eviction_view)
def model_eviction_figure(
    episode: int = 0, window: int = 64, sinks: int = 4, n_new: int = 8
) -> EvictionRecallDemoResult:
    """The door-code question after a long chat, answered by the tiny model with
    the full cache, a sliding window, and attention sinks + the same window.

    For each policy: the answer it generates, whether the code is right, whether
    the code's tokens were still in the cache, and how surprised the model was by
    each token of the chat (its loss) as it read it (scored by door_code_score,
    as the browser's runs are).
    """
    p = RECALL_INPUTS.check({"episode": episode, "window": window, "sinks": sinks, "n_new": n_new})
    episode, window, sinks, n_new = p.values()
    episode = min(episode, len(tiny.demo_episodes()) - 1)
    _, tok = tiny.model_and_tokenizer()
    episodes = [tiny.episode_facts(e) for e in tiny.demo_episodes()]
    ep = episodes[episode]
    ids, code_positions = ep["ids"], ep["code_positions"]
    runs = {}
    for name, (s, w) in {"full": (None, None), "window": (0, window), "sinks": (sinks, window)}.items():
        run = tiny.streaming_run(ids, s, w, n_new)
        runs[name] = {
            "answer": tok.decode(run["tokens"]),
            "cached": None if w is None else run["cached"],
            "prompt_nll": [round(x, 4) for x in run["prompt_nll"]],
            "kept": len(run["cached"]),
        }
    score = door_code_score(ep["code"], code_positions, runs, window, sinks)
    policies = {}
    for name, r in runs.items():
        sc = score["policies"][name]
        policies[name] = {**sc, "cache_len": r["kept"], "prompt_nll": r["prompt_nll"]}
    return {
        "episode": episode,
        "episodes": [
            {k: e[k] for k in ("prompt", "code", "code_positions", "n_tokens")} | {"chat": _split_question(e["prompt"])}
            for e in episodes
        ],
        "prompt": ep["prompt"],
        "chat": _split_question(ep["prompt"]),
        "question": DOOR_QUESTION,
        "code": ep["code"],
        "n_tokens": len(ids),
        "code_positions": code_positions,
        "window": window,
        "sinks": sinks,
        "policies": policies,
        "score": score,
        "limits": RECALL_INPUTS.ranges("window", "sinks", "episode"),
        "measured": tiny.measured_recall(),
    }
