"""The "Why decoding is quadratic" page (quadratic-wall.md): the race, reprocessing and
quadratic-wall widgets.

Each function validates its inputs (a ValueError names the bad parameter), clamps
numbers into the ranges declared beside it (a kvlab.inputs.Spec), and echoes what it used under
"params" (and what it had to clamp under "clamped"), so the page can show exactly
what was computed. The *_figure functions add what the page states in words
(landmarks, a summary of the last step).
"""

from __future__ import annotations

from itertools import accumulate
from typing import TYPE_CHECKING

import numpy as np

from kvlab.core.decoding import DecoderConfig, decoding_costs, decoding_steps, step_cost, times_processed
from kvlab.inputs import Param, Spec, takes
from kvlab.widgets.views import computed_status, si_number, times, with_view

if TYPE_CHECKING:
    from kvlab.widgets.wall_types import (
        AddTokenCounters,
        OdometerFrame,
        OdometerSide,
        QuadraticWallFigureResult,
        RaceFigureResult,
        RaceOdometers,
        RaceResult,
        RaceView,
        ReprocessingResult,
        ReprocessingView,
        WallView,
    )


# ---------------------------------------------------------------------------- views: the words this module's widgets show


def big_number(x: float) -> str:
    """A count of multiply-adds in words: 1.2 billion, 3.4 million, 812.

    >>> big_number(1_234_567_890), big_number(2.5e12), big_number(812.7)
    ('1.2 billion', '2.5 trillion', '812')
    """
    for v, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if x >= v:
            return f"{x / v:.1f} {word}"
    return f"{int(x)}"


def wall_view(data: dict) -> WallView:
    p = data["params"]

    def work(step: dict) -> dict[str, dict[str, str]]:
        return {
            side: {k: big_number(step[side][k]) for k in ("weight_macs", "attention_macs", "cumulative_macs")}
            for side in ("cache", "no_cache")
        }

    return {
        "hover": {
            f"{key}_{part}": [
                f"step {t:,}: {si_number(y)} multiply-adds" for t, y in zip(data["tokens"], data[key][f"{part}_macs"])
            ]
            for key in ("no_cache", "cache")
            for part in ("weight", "attention")
        },
        "status": computed_status(
            "quadratic_wall_figure",
            f"n = {data['params']['n']}, {data['params']['n_layers']} layers, d_model {data['params']['d_model']}",
        ),
        "n": f"{p['n']:,}",
        "shape": (
            f"{p['n_layers']} layers, d_model {p['d_model']}, {p['n_heads']} heads "
            f"({p['n_kv_heads']} KV heads), d_ff {p['d_ff']}"
        ),
        "growth": {side: {k: times(v) for k, v in g.items()} for side, g in data["growth"].items()},
        "share": f"{100 * data['last_attention_share']['cache']:.1f}",
        "first": work(data["first"]),
        "last": work(data["last"]),
    }


def race_view(data: dict) -> RaceView:
    od = data["odometers"]
    n = od["n"]

    def side(f: dict) -> OdometerSide:
        return {"units": f"{f['units']:,}", "tokens": f["tokens"], "done": f["tokens"] == n}

    def frame(f: dict) -> OdometerFrame:
        return {"n": n, "no_cache": side(f["no_cache"]), "cache": side(f["cache"])}

    frames = [frame(f) for f in od["frames"]]
    key = next(i for i, f in enumerate(od["frames"]) if f["units"] == od["cache_done"]["units"])
    t = data["totals"]
    n_now = data["params"]["n"]
    whole = t["ratio"] > 1 and float(t["ratio"]).is_integer()
    return {
        "hover": {
            **{key: [f"{y:,} token-computations" for y in data[key]["cumulative"]] for key in ("no_cache", "cache")},
            "ratio": [f"{y:.2f}× more" for y in data["ratio"]],
        },
        "status": computed_status("race_figure", f"n = {data['params']['n']}"),
        "n": f"{n_now:,}",
        "totals": {"no_cache": f"{t['no_cache']:,}", "cache": f"{t['cache']:,}", "ratio": times(t["ratio"])},
        # the first bullet: the slider's n (at the page's n = 19, the landmark: exactly 10x cheaper)
        "headline": {
            "tokens": f"{n_now:,} token{'' if n_now == 1 else 's'}",
            "exactly": "exactly " if whole else "",
            "cheaper": f"{times(t['ratio'])}× cheaper" if t["ratio"] > 1 else "no cheaper yet",
            "no_cache": f"{t['no_cache']:,} token-computation{'' if t['no_cache'] == 1 else 's'}",
            "cache": f"{t['cache']:,}",
        },
        "rows": [
            {
                "tokens": f"{x:,}",
                "no_cache": f"{data['no_cache']['cumulative'][i]:,}",
                "cache": f"{data['cache']['cumulative'][i]:,}",
                "ratio": f"{times(data['ratio'][i])}×",
            }
            for i, x in enumerate(data["tokens"])
        ],
        "readout": (
            f"When the cached model has written all {n} tokens ({od['cache_done']['units']:,} units), the other has "
            f"written {od['cache_done']['no_cache_tokens']}; it needs {od['no_cache_done']['units']:,} units to finish."
        ),
        "frames": frames,
        "key_frame": frames[key],
    }


def reprocessing_view(data: dict) -> ReprocessingView:
    k = min(10, data["params"]["n"])  # the token the sentence names next to token 1
    c = data["counters"]
    kth = data["no_cache"][k - 1]
    return {
        "hover": {
            key: [f"token {x} · times processed: {y}" for x, y in zip(data["tokens"], data[key])]
            for key in ("no_cache", "cache")
        },
        "status": computed_status("reprocessing_figure", f"n = {data['params']['n']}"),
        "k": k,
        "kth": kth,
        "first_unit": "time" if data["no_cache"][0] == 1 else "times",
        "kth_unit": "time" if kth == 1 else "times",
        "other": k > 1,  # at n = 1 there is no other token to name ("token 1 … and token 1 1 time")
        "counters": {
            "token": f"{c['token']:,}",
            "reprocessed": f"{c['reprocessed']['no_cache']:,}",
            "total_no_cache": f"{c['total']['no_cache']:,}",
            "total_cache": f"{c['total']['cache']:,}",
        },
        "rows": [
            {"token": t, "no_cache": data["no_cache"][i], "cache": data["cache"][i]}
            for i, t in enumerate(data["tokens"])
        ],
    }


# What the functions accept: whole numbers (a fraction is refused), clamped into these ranges.
# `control`: the range the page's slider offers, where narrower.
TOKENS = Param(1, 4096, fractions="refuse")  # a count of tokens (also the landmarks and the plotted points)
RACE_INPUTS = Spec(n=Param(1, 4096, fractions="refuse", control=(1, 1000)))
RACE_FIGURE_INPUTS = Spec(RACE_INPUTS, reply=TOKENS, target_ratio=TOKENS)
REPROCESSING_INPUTS = Spec(n=Param(1, 4096, fractions="refuse", control=(1, 100)))
WALL_INPUTS = Spec(
    n=Param(1, 4096, step=16, fractions="refuse", control=(16, 4096)),
    n_layers=Param(1, 128, fractions="refuse"),
    d_model=Param(8, 16384, fractions="refuse"),
    n_heads=Param(1, 256, fractions="refuse"),
    n_kv_heads=Param(1, 256, fractions="refuse"),
    d_ff=Param(8, 65536, fractions="refuse"),
)
WALL_FIGURE_INPUTS = Spec(WALL_INPUTS, max_points=TOKENS)


# ----------------------------------------------------------------------------
# Without vs with a cache


@takes(RACE_INPUTS)
def race(n: int = 19) -> RaceResult:
    """Token-computations of both models while generating n tokens (one-token prompt).

    Step t pushes t tokens through the model without a cache and 1 with one.
    Shape: {"params": {"n": 19}, "clamped": {}, "tokens": [1, ..., 19],
    "no_cache": {"per_step": [1, 2, ...], "cumulative": [1, 3, ...]},
    "cache": {"per_step": [1, 1, ...], "cumulative": [1, 2, ...]},
    "ratio": [1.0, 1.5, ...], "totals": {"no_cache": 190, "cache": 19, "ratio": 10.0}}

    >>> race(19)["totals"]
    {'no_cache': 190, 'cache': 19, 'ratio': 10.0}
    """
    clamped: dict = {}
    n = RACE_INPUTS["n"].check("n", n, clamped)
    config = DecoderConfig()  # token counts do not depend on the model's size
    sides = {}
    for key, use_cache in (("no_cache", False), ("cache", True)):
        # only the token counts: decoding_costs' full accounting per step is far slower in Pyodide
        per_step = [step_cost(config, b, k, use_cache).tokens_processed for b, k in decoding_steps(1, n)]
        sides[key] = {"per_step": per_step, "cumulative": list(accumulate(per_step))}
    ratio = [a / b for a, b in zip(sides["no_cache"]["cumulative"], sides["cache"]["cumulative"])]
    total_nc, total_c = sides["no_cache"]["cumulative"][-1], sides["cache"]["cumulative"][-1]
    return {
        "params": {"n": n},
        "clamped": clamped,
        "tokens": list(range(1, n + 1)),
        **sides,
        "ratio": ratio,
        "totals": {"no_cache": total_nc, "cache": total_c, "ratio": total_nc / total_c},
    }


@takes(REPROCESSING_INPUTS)
@with_view(reprocessing_view)
def reprocessing_figure(n: int = 50) -> ReprocessingResult:
    """How many times each token was pushed through the model by the time there are n tokens.

    Shape: {"params": {"n": 50}, "clamped": {}, "tokens": [1, ..., 50],
    "no_cache": [50, 49, ..., 1], "cache": [1, 1, ..., 1]}
    """
    clamped: dict = {}
    n = REPROCESSING_INPUTS["n"].check("n", n, clamped)
    return {
        "params": {"n": n},
        "clamped": clamped,
        "tokens": list(range(1, n + 1)),
        "no_cache": times_processed(n, use_cache=False),
        "cache": times_processed(n, use_cache=True),
        "counters": add_token_counters(n),
    }


def add_token_counters(n: int) -> AddTokenCounters:
    """The "Add token" readout once the n-th token is in: what this step did and the running totals.

    Step n without a cache pushes all n tokens through the model (n - 1 of them
    again); with a cache only the new one. Totals are token-computations so far.

    >>> add_token_counters(3)
    {'token': 3, 'reprocessed': {'no_cache': 2, 'cache': 0}, 'this_step': {'no_cache': 3, 'cache': 1}, 'total': {'no_cache': 6, 'cache': 3}, 'saved': 3, 'ratio': 2.0}
    """
    config = DecoderConfig()
    nc = decoding_costs(config, prompt_len=1, n_steps=n, use_cache=False)[-1]
    c = decoding_costs(config, prompt_len=1, n_steps=n, use_cache=True)[-1]
    step_nc, step_c = nc["step_cost"]["tokens_processed"], c["step_cost"]["tokens_processed"]
    total_nc, total_c = nc["cumulative"]["tokens_processed"], c["cumulative"]["tokens_processed"]
    return {
        "token": n,
        "reprocessed": {"no_cache": step_nc - 1, "cache": step_c - 1},
        "this_step": {"no_cache": step_nc, "cache": step_c},
        "total": {"no_cache": total_nc, "cache": total_c},
        "saved": total_nc - total_c,
        "ratio": total_nc / total_c,
    }


ODOMETER_FRAMES = 200


def race_odometers(
    cumulative_no_cache: list[int], cumulative_cache: list[int], frames: int = ODOMETER_FRAMES
) -> RaceOdometers:
    """Two odometers burning the same units per second: the frames of the race.

    A unit is one token-computation; both models spend one unit per tick. At
    `units` spent, a model has output every token whose cumulative cost is paid.
    Frames sample the units from 0 to the slower model's total (every unit when
    there are few), always including the moment the cached model finishes;
    "t" is the frame's time as a fraction of the whole race.

    >>> o = race_odometers([1, 3, 6], [1, 2, 3], frames=10)
    >>> [(f["units"], f["no_cache"]["tokens"], f["cache"]["tokens"]) for f in o["frames"]]
    [(0, 0, 0), (1, 1, 1), (2, 1, 2), (3, 2, 3), (4, 2, 3), (5, 2, 3), (6, 3, 3)]
    >>> o["cache_done"]
    {'units': 3, 'no_cache_tokens': 2}
    """
    total_nc, total_c = cumulative_no_cache[-1], cumulative_cache[-1]
    if total_nc <= frames:
        units = list(range(total_nc + 1))
    else:
        units = sorted({int(round(u)) for u in np.linspace(0, total_nc, frames + 1)} | {total_c})
    done = lambda cum, u: int(np.searchsorted(cum, u, side="right"))  # noqa: E731  tokens whose cost is paid
    out = []
    for u in units:
        out.append(
            {
                "units": u,
                "t": u / total_nc,
                "no_cache": {"units": min(u, total_nc), "tokens": done(cumulative_no_cache, u)},
                "cache": {"units": min(u, total_c), "tokens": done(cumulative_cache, u), "done": u >= total_c},
            }
        )
    return {
        "frames": out,
        "n": len(cumulative_cache),
        "cache_done": {"units": total_c, "no_cache_tokens": done(cumulative_no_cache, total_c)},
        "no_cache_done": {"units": total_nc},
    }


# The quadratic-wall widget's "Model shape" choices. GPT-2 small from its config.json
# (https://huggingface.co/openai-community/gpt2/blob/main/config.json: n_layer 12, n_embd 768,
# n_head 12, n_inner null, i.e. 4 x 768 = 3,072); the 7B class is GPT-2's layout scaled to the
# width and depth of Llama-2-7B (https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json:
# 32 layers, hidden 4,096, 32 heads) with GPT's 4x MLP, an illustration, not one model.
WALL_SHAPES = {
    "gpt2-small": {
        "label": "GPT-2 small",
        "shape": {"n_layers": 12, "d_model": 768, "n_heads": 12, "n_kv_heads": 12, "d_ff": 3072},
    },
    "gpt-7b": {
        "label": "7B-class GPT",
        "shape": {"n_layers": 32, "d_model": 4096, "n_heads": 32, "n_kv_heads": 32, "d_ff": 4 * 4096},
    },
}


@takes(WALL_INPUTS)
def quadratic_wall(
    n: int = 1024,
    n_layers: int = 12,
    d_model: int = 768,
    n_heads: int = 12,
    n_kv_heads: int = 12,
    d_ff: int = 3072,
) -> dict:
    """Multiply-adds per generated token, split into weights (projections + MLP) and attention.

    Defaults are GPT-2 small's shapes (vocabulary 50,257). Without a cache the
    weight work per step grows ∝ t and attention ∝ t²; with a cache, weights
    stay flat and attention grows ∝ t. MAC counts are floats (they pass 2**53
    for big models, beyond what JavaScript numbers hold exactly).
    Shape: {"params": {...}, "clamped": {}, "tokens": [1, ..., n],
    "no_cache": {"weight_macs": [...], "attention_macs": [...], "total_macs": [...], "cumulative_macs": [...]},
    "cache": {same keys}, "ratio_cumulative": [...], "attention_share": {"no_cache": [...], "cache": [...]}}
    """
    clamped: dict = {}
    p = WALL_INPUTS.check(
        {"n": n, "n_layers": n_layers, "d_model": d_model, "n_heads": n_heads, "n_kv_heads": n_kv_heads, "d_ff": d_ff},
        clamped,
    )
    n, n_layers, d_model, n_heads, n_kv_heads, d_ff = p.values()
    if d_model % n_heads:
        raise ValueError(f"n_heads ({n_heads}) must divide d_model ({d_model})")
    if n_heads % n_kv_heads:
        raise ValueError(f"n_kv_heads ({n_kv_heads}) must divide n_heads ({n_heads})")
    config = DecoderConfig(
        n_layers=n_layers,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=d_model // n_heads,
        d_model=d_model,
        d_ff=d_ff,
        vocab_size=50257,
    )
    sides = {}
    for key, use_cache in (("no_cache", False), ("cache", True)):
        # step_cost per step, summed in ints (as decoding_costs does, without its dicts:
        # they were most of a long wall's time in Pyodide: bench/results/2026-12-02-runtime.md)
        cost = [step_cost(config, b, k, use_cache) for b, k in decoding_steps(1, n)]
        weight_int = [c.projection_macs + c.mlp_macs + c.lm_head_macs for c in cost]
        weight = [float(w) for w in weight_int]
        attention = [float(c.attention_macs) for c in cost]
        sides[key] = {
            "weight_macs": weight,
            "attention_macs": attention,
            "total_macs": [w + a for w, a in zip(weight, attention)],
            "cumulative_macs": [float(t) for t in accumulate(w + c.attention_macs for w, c in zip(weight_int, cost))],
        }
    return {
        "params": {
            "n": n,
            "n_layers": n_layers,
            "d_model": d_model,
            "n_heads": n_heads,
            "n_kv_heads": n_kv_heads,
            "d_ff": d_ff,
        },
        "clamped": clamped,
        "tokens": list(range(1, n + 1)),
        **sides,
        "ratio_cumulative": [
            a / b for a, b in zip(sides["no_cache"]["cumulative_macs"], sides["cache"]["cumulative_macs"])
        ],
        "attention_share": {k: [a / t for a, t in zip(s["attention_macs"], s["total_macs"])] for k, s in sides.items()},
    }


# The page's landmark sentences: "exactly 10× at ... tokens", "a 1,000-token reply".
RACE_TARGET_RATIO = 10
RACE_REPLY_TOKENS = 1000


@takes(RACE_FIGURE_INPUTS)
@with_view(race_view)
def race_figure(n: int = 19, reply: int = RACE_REPLY_TOKENS, target_ratio: int = RACE_TARGET_RATIO) -> RaceFigureResult:
    """kvlab.race(n) plus two landmarks: where the saving first reaches `target_ratio`, and a `reply`-token reply.

    landmarks.target: the smallest n whose total (no cache / cache) ratio is >= target_ratio,
    with both totals there and whether the ratio is exact. landmarks.reply: the totals for `reply` tokens.

    >>> f = race_figure(19)
    >>> f["totals"], f["landmarks"]["target"]["n"], f["landmarks"]["target"]["exact"]
    ({'no_cache': 190, 'cache': 19, 'ratio': 10.0}, 19, True)
    >>> f["landmarks"]["reply"]
    {'n': 1000, 'no_cache': 500500, 'cache': 1000, 'ratio': 500.5}
    """
    clamped: dict = {}
    reply, target_ratio = RACE_FIGURE_INPUTS.check({"reply": reply, "target_ratio": target_ratio}, clamped).values()
    data = race(n)
    longest = race(max(reply, data["params"]["n"]))
    cum_nc, cum_c = longest["no_cache"]["cumulative"], longest["cache"]["cumulative"]
    hit = next((i for i, r in enumerate(longest["ratio"]) if r >= target_ratio), None)
    target = None
    if hit is not None:
        target = {
            "ratio": target_ratio,
            "n": hit + 1,
            "no_cache": cum_nc[hit],
            "cache": cum_c[hit],
            "exact": cum_nc[hit] == target_ratio * cum_c[hit],
        }
    r = reply - 1
    data["landmarks"] = {
        "target": target,
        "reply": {"n": reply, "no_cache": cum_nc[r], "cache": cum_c[r], "ratio": cum_nc[r] / cum_c[r]},
    }
    data["clamped"] = {**data["clamped"], **clamped}
    data["odometers"] = race_odometers(data["no_cache"]["cumulative"], data["cache"]["cumulative"])
    return data


def _sample_steps(n: int, max_points: int) -> list[int]:
    """0-based step indices to plot: all of them when few, else evenly spread, first and last kept.

    >>> _sample_steps(5, 10)
    [0, 1, 2, 3, 4]
    >>> _sample_steps(100, 5)
    [0, 25, 50, 74, 99]
    """
    if n <= max_points:
        return list(range(n))
    return sorted({int(round(x)) for x in np.linspace(0, n - 1, max_points)})


@takes(WALL_FIGURE_INPUTS)
@with_view(wall_view)
def quadratic_wall_figure(
    n: int = 1024,
    n_layers: int = 12,
    d_model: int = 768,
    n_heads: int = 12,
    n_kv_heads: int = 12,
    d_ff: int = 3072,
    max_points: int = 128,
) -> QuadraticWallFigureResult:
    """kvlab.quadratic_wall, thinned to at most `max_points` plotted steps, plus the first and last step in full.

    "tokens" are the sampled step numbers (1-based) and every per-step list is
    sampled at them. "first" and "last" hold the step-1 and step-n values of
    each side (weight, attention, total MACs, cumulative MACs), and "growth"
    how many times step n costs more than step 1 (weights / attention, each side).
    Shape: {"params", "clamped", "tokens", "no_cache": {...}, "cache": {...},
    "attention_share": {...}, "first": {...}, "last": {...}, "growth": {...}, "ratio_cumulative_last": float}
    """
    clamped: dict = {}
    max_points = WALL_FIGURE_INPUTS["max_points"].check("max_points", max_points, clamped)
    full = quadratic_wall(n=n, n_layers=n_layers, d_model=d_model, n_heads=n_heads, n_kv_heads=n_kv_heads, d_ff=d_ff)
    idx = _sample_steps(len(full["tokens"]), max(max_points, 2))
    keys = ("weight_macs", "attention_macs", "total_macs", "cumulative_macs")

    def pick(side: dict, i: int) -> dict:
        return {k: side[k][i] for k in keys}

    sides = ("no_cache", "cache")
    return {
        "params": {**full["params"], "max_points": max_points},
        "clamped": {**full["clamped"], **clamped},
        "tokens": [full["tokens"][i] for i in idx],
        **{s: {k: [full[s][k][i] for i in idx] for k in keys} for s in sides},
        "attention_share": {s: [full["attention_share"][s][i] for i in idx] for s in sides},
        "first": {s: pick(full[s], 0) for s in sides},
        "last": {s: pick(full[s], -1) for s in sides},
        "last_attention_share": {s: full["attention_share"][s][-1] for s in sides},
        "growth": {
            s: {
                "weight": full[s]["weight_macs"][-1] / full[s]["weight_macs"][0],
                "attention": full[s]["attention_macs"][-1] / full[s]["attention_macs"][0],
            }
            for s in sides
        },
        "ratio_cumulative_last": full["ratio_cumulative"][-1],
    }
