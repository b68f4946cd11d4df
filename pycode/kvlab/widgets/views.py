"""Display strings a widget's template binds (kvlab.kit.bind in the browser, Jinja at build time)
that its result does not already hold as text: a sentence picked by a condition, a list joined
from two, a table whose rows cross two lists, a tooltip made of several values. Python writes
them so that no widget.js formats text of its own.
"""

from __future__ import annotations

import functools
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kvlab.widgets.views_types import (
        ApiCacheView,
        AttentionDemoView,
        ContextShiftDisplay,
        DoorCodeView,
        EvictionDisplay,
        GenerateStepView,
        GenerateView,
        GpuFitView,
        KvMemoryView,
        KvQuantView,
        ModelAttentionDisplay,
        ModelRaceView,
        NextTokenView,
        OdometerFrame,
        OdometerSide,
        PrefixBlocksView,
        PrefixCacheView,
        PrefixCasesView,
        RasterTick,
        RasterTicks,
        RaceView,
        ReprocessingView,
        SequenceView,
        ServingView,
        StepThroughView,
        StepView,
        TokensView,
        TradeoffView,
        WallView,
    )


def with_view(view):
    """Adds `view` (view(result)) to a widget function's result."""

    def decorate(fn):
        @functools.wraps(fn)
        def with_display_strings(*args, **kwargs):
            out = fn(*args, **kwargs)
            out["view"] = view(out)
            return out

        return with_display_strings

    return decorate


def _not_confirmed(info: dict | None) -> str:
    return f"Not confirmed: {info['note']}" if info and not info["confirmed"] else ""


def kv_memory_view(data: dict) -> KvMemoryView:
    r = data["result"]
    g = r["growth"]
    head = g["growth_per_token"] if g["bounded"] else r["per_token"]
    curve = data["curve"]
    return {
        "head": {
            "human": head["human"],
            "exact": head["exact"],
            "text": g["text"] if g["bounded"] else "per token",
            "formula": g["growth_formula"] if g["bounded"] else r["formula"],
        },
        "notes": r["notes"] + r["engine_notes"],
        "log": "\n".join(r["log_lines"]),
        "model_note": _not_confirmed(data["model_info"]),
        "curve_axis": f"KV cache, GiB ({data['params']['kv']}, {data['mode_label'].split(' (')[0]})",
        "curve_rows": [
            {
                "tokens": f"{c:,}",
                "cells": [{"human": s["human"][i], "title": f"{s['bytes'][i]:,} B"} for s in curve["series"]],
            }
            for i, c in enumerate(curve["contexts"])
        ],
        "kinds": [{**k, "title": f"{k['per_token']['exact']}; {k['formula']}"} for k in data["kinds"]],
    }


def gpu_fit_view(data: dict) -> GpuFitView:
    segments = data["segments"]
    return {
        "segments": [{**s, "title": f"{s['label']}: {s['human']} ({s['exact']})"} for s in segments],
        "bar_label": "".join(f"{s['label']} {s['human']}, " for s in segments)
        + f"against {data['memory']['human']} of GPU memory",
        "limit_title": f"{data['budget_label']}: {data['budget']['human']}",
        "total_label": "total per GPU" if data["per_gpu"] else "total",
        "log": "\n".join(data["log_lines"]),
        "model_note": _not_confirmed(data["model_info"]),
    }


def big_number(x: float) -> str:
    """A count of multiply-adds in words: 1.2 billion, 3.4 million, 812.

    >>> big_number(1_234_567_890), big_number(2.5e12), big_number(812.7)
    ('1.2 billion', '2.5 trillion', '812')
    """
    for v, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand")):
        if x >= v:
            return f"{x / v:.1f} {word}"
    return f"{int(x)}"


def times(x: float) -> str:
    """A growth factor: up to 2 decimals, no trailing zeros, thousands with commas.

    >>> times(1.0), times(12.345), times(1536.5)
    ('1', '12.35', '1,536.5')
    """
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def wall_view(data: dict) -> WallView:
    p = data["params"]

    def work(step: dict) -> dict[str, dict[str, str]]:
        return {
            side: {k: big_number(step[side][k]) for k in ("weight_macs", "attention_macs", "cumulative_macs")}
            for side in ("cache", "no_cache")
        }

    return {
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


def _span(ps: list[int]) -> str:
    return f"token {ps[0] + 1}" if len(ps) == 1 else f"tokens {ps[0] + 1}–{ps[-1] + 1}"


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


def serving_view(data: dict) -> ServingView:
    c = data["curve"]
    return {
        "curve_rows": [
            {"tokens": f"{x:,}", "ms_batch1": c["ms_batch1_text"][i], "ms_batch": c["ms_batch_text"][i]}
            for i, x in enumerate(c["contexts"])
        ]
    }


def tokens_view(data: dict) -> TokensView:
    return {
        "tokens": [
            {**t, "title": f"token id {t['id']}, {t['bytes']} byte{'' if t['bytes'] == 1 else 's'}"}
            for t in data["tokens"]
        ],
        "bytes_per_token": f"{data['bytes_per_token']:g}",
    }


SEQUENCE_COLUMNS = {"input": 1, "model": 2, "cache": 3}  # the diagram's lifelines, left to right


def sequence_view(data: dict) -> SequenceView:
    col = SEQUENCE_COLUMNS
    return {
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
        "memory": next(o["label"] for o in data["options"]["memory"] if o["key"] == p["memory"]),
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


def prefix_blocks_view(data: dict) -> PrefixBlocksView:
    prefix_len = data["params"]["prefix_len"]
    return {
        "requests": [
            {
                "label": f"Request {i}",
                "aria": f"Request {i}: {r['n_tokens']} tokens in {len(r['blocks'])} blocks",
                "prefix": f"{100 * prefix_len / r['n_tokens']:.4f}",
                "blocks": [
                    {
                        "status": b["status"],
                        "grow": b["end"] - b["start"],
                        "what": f"tokens {b['start']}–{b['end'] - 1}: {b['status']}",
                    }
                    for b in r["blocks"]
                ],
            }
            for i, r in enumerate(data["requests"], start=1)
        ]
    }


def prefix_cases_view(data: dict) -> PrefixCasesView:
    return {
        "case": next(c["label"] for c in data["cases"] if c["key"] == data["params"]["case"]).lower(),
        "requests": [
            {
                "label": f"Request {i} · {r['n_tokens']} tokens · reused: {r['radix_reused']} token-granular, "
                f"{r['blocks_reused']} in blocks",
                "aria": f"Request {i}: its parts",
                "segments": [
                    {
                        "label": sg["label"],
                        "kind": sg["kind"],
                        "reuse": sg["reuse"],
                        "tokens": sg["tokens"],
                        "count": f"{sg['reused']}/{sg['tokens']}",
                        "title": f"{sg['label']}: {sg['reused']} of {sg['tokens']} tokens reused",
                    }
                    for sg in r["segments"]
                ],
                "blocks": [{"status": b["status"], "tokens": b["tokens"]} for b in r["blocks"]],
            }
            for i, r in enumerate(data["requests"], start=1)
        ],
    }


def prefix_cache_view(data: dict) -> PrefixCacheView:
    block_size = data["params"]["block_size"]
    return {
        "blocks_name": f"{block_size}-token blocks (vLLM)",
        "granularity": [
            {
                "block_size": g["block_size"],
                "row": "current" if g["block_size"] == block_size else None,
                "reused_per_request": f"{g['tokens_reused_per_request']:,}",
                "recomputed_of_prefix": f"{g['tokens_recomputed_of_prefix']:,}",
                "reused": f"{g['tokens_reused']:,}",
            }
            for g in data["granularity"]
        ],
    }


CONTEXT_SHIFT_CELLS = ["not written yet", "discarded", "seen by the model", "seen, protected by n_keep"]


def raster_display(grid: list, cells: list[str]) -> dict:
    """What a step-by-position raster's readout needs: its last step and token, and each cell state in words."""
    return {"last_step": len(grid) - 1, "last_token": len(grid[0]) - 1 if grid else 0, "cells": cells}


def _tick_step(last: int, most: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … that puts at most `most` ticks on 0..last.

    >>> _tick_step(8, 6), _tick_step(40, 6), _tick_step(47, 8), _tick_step(4000, 6)
    (2, 10, 10, 1000)
    """
    step = 1
    while last // step + 1 > most:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2  # 1 → 2 → 5 → 10 → 20 → 50 → …
    return step


def raster_ticks(rows: int, cols: int, most: int = 6) -> RasterTicks:
    """Axis ticks for a rows x cols raster drawn cell by cell (kvlab.kit.raster: a cell's
    rect is 0.9 wide from its index): labels at whole steps, placed at the cell's middle
    in percent of the drawing, for ticks laid over the SVG.

    >>> raster_ticks(3, 4, most=2)["x"]
    [{'label': '0', 'at': 11.25}, {'label': '2', 'at': 61.25}]
    """

    def axis(count: int) -> list[RasterTick]:
        if count <= 0:
            return []
        step = _tick_step(count - 1, most)
        return [{"label": f"{i:,}", "at": round(100 * (i + 0.45) / count, 3)} for i in range(0, count, step)]

    return {"x": axis(cols), "y": axis(rows)}


def context_shift_display(data: dict) -> ContextShiftDisplay:
    grid = data["grid"]
    return {**raster_display(grid, CONTEXT_SHIFT_CELLS), "ticks": raster_ticks(len(grid), len(grid[0]) if grid else 0)}


def api_cache_view(data: dict) -> ApiCacheView:
    m, c = data["model_info"], data["curve"]
    return {
        "model": f"{m['vendor_name']} · {m['name']}",
        "curve_heads": [f"{s['name']}, {kind}" for s in c["series"] for kind in ("cached", "not cached")],
        "curve_rows": [
            {
                "rate": rate,
                "cells": [text for s in c["series"] for text in (s["cached_text"][i], s["uncached_text"][i])],
            }
            for i, rate in enumerate(c["rate_labels"])
        ],
        "compare": [
            {
                "name": f"{o['vendor_name']} · {o['name']}",
                "row": "chosen" if o["chosen"] else None,
                "cells": [
                    o[k] for k in ("uncached_per_day", "cached_per_day", "saving", "hit_rate", "break_even", "status")
                ],
            }
            for o in data["compare"]
        ],
    }


EVICTION_CELLS = ["not written yet", "evicted", "cached", "added at this step"]


def eviction_display(data: dict) -> EvictionDisplay:
    # the step read out at first: the last
    return {**raster_display(data["grid"], EVICTION_CELLS), "step": data["steps"][-1]}


def attention_view(data: dict) -> AttentionDemoView:
    tokens, weights = data["tokens"], data["weights"]

    def readout(q: int) -> dict:
        row = weights[q]
        return {
            "token": tokens[q],
            "d": data["d"],
            "top": tokens[row.index(max(row))],
            "outputs": [f"{x:.3f}" for x in data["outputs"][q]],
        }

    return {
        "temperature": f"{data['temperature']}",
        "mask": ", causal" if data["causal"] else ", no mask",
        "rows": [{"token": tokens[i], "cells": [f"{w:.3f}" for w in row]} for i, row in enumerate(weights)],
        "readouts": [readout(q) for q in range(len(tokens))],
        "readout": readout(len(tokens) - 1),
    }


# where a kv-quant table was measured (kv_quant_measure's source, or the browser's), in the caption's words
KV_QUANT_MEASURED = {
    "numpy reference (kvlab.core.gpt)": "when the page was built, on kvlab's numpy reference of the tiny model",
    "your browser (onnxruntime-web)": "in your browser just now (onnxruntime-web)",
}


def kv_quant_view(data: dict) -> KvQuantView:
    measured = KV_QUANT_MEASURED.get(data["source"], f"by {data['source']}")
    return {
        "caption": (
            f"Measured {measured}: {data['n_steps']} tokens after a {data['prompt_len']}-token prompt, "
            "then the door-code chats below."
        ),
        "rows": [
            {
                "format": r["format"],
                "bytes": f"{r['bytes_per_token']:,}",
                "share": f"({100 * r['vs_fp32']:.1f}%)",
                "dlogit": f"{r['max_abs_dlogit']:.3g}",
                "top1": f"{100 * r['top1_agreement']:.1f}%",
                "diverge": f"never ({data['n_steps']} steps)"
                if r["first_divergence"] is None
                else f"token {r['first_divergence']}",
                "recall": [{"said": s["said"] or "–", "correct": s["correct"]} for s in r["recall"]],
            }
            for r in data["rows"]
        ],
    }


def door_code_view(data: dict) -> DoorCodeView:
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

    return {"rows": [row(key, p) for key, p in data["policies"].items()]}


# ---- the model widgets (next-token, generate, model-attention, model-race)
# Their live numbers come from the tiny model in the browser (onnxruntime-web), not from
# Pyodide, so each has a JS twin of its view beside it (site_src/widgets/<name>/widget.js,
# `view`), formatting numbers with kvlab.kit.fixed as these f-strings do. The template calls
# the Python view for the build-time page; tests/browser/test_model_js_parity.py holds the
# two equal for the same numbers.


def token_text(text: str) -> str:
    """A token as a table cell shows it: quotes, backslashes and control characters escaped
    (JSON.stringify's escapes, without the quotes around it).

    >>> token_text(' a'), token_text('\\n'), token_text('"')
    (' a', '\\\\n', '\\\\"')
    """
    return json.dumps(text, ensure_ascii=False)[1:-1]


def next_token_view(data: dict) -> NextTokenView:
    return {"n_tokens": data["n_tokens"], "top": [{"text": t["text"], "p": f"{t['p']:.3f}"} for t in data["top"]]}


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


MODEL_ATTENTION_SOURCES = {
    "built": "the numpy reference of the model (kvlab.model_attention_figure), computed when this page was built",
    "live": "the tiny model running in your browser (onnxruntime-web)",
}


def model_attention_display(
    data: dict, layer: int, head: int | str, query: int, source: str = "built"
) -> ModelAttentionDisplay:
    """What the model-attention widget shows of `data` (model_attention_figure's result, or the
    browser's kvlab.attention in its shape): layer, head (or "mean") and query token."""
    # a token that is only whitespace would be an empty box (and a button with no name): ↵ / ␣
    tokens = [t.replace("\n", "↵") if t.strip() or "\n" in t else "␣" for t in data["tokens"]]
    m = data["mean_over_heads"][layer] if head == "mean" else data["weights"][layer][head]
    row = m[query]
    which = f"average of the {data['n_head']} heads" if head == "mean" else f"head {head + 1}"
    order = sorted(range(query + 1), key=lambda j: (-row[j], j))
    parts = ", ".join(f"“{tokens[j]}” {row[j]:.2f}" for j in order[:3])
    return {
        "readout": f"“{tokens[query]}” reads: {parts}{', …' if len(order) > 3 else ''}",
        "where": f"Layer {layer + 1}, {which}; numbers from {MODEL_ATTENTION_SOURCES[source]}.",
        "table_where": f"layer {layer + 1}, {which}",
        "tokens": [
            {
                "text": t,
                "weight": row[j] if j <= query else None,
                "w": f"{row[j]:.3f}" if j <= query else None,
                "small": f"{row[j]:.2f}" if j <= query else "\u00a0",
                "state": "query" if j == query else "future" if j > query else None,
                "ink": "strong" if j <= query and row[j] >= 0.5 else None,
                "pressed": j == query,
            }
            for j, t in enumerate(tokens)
        ],
        "rows": [
            {"token": tokens[i], "cells": [{"w": f"{w:.3f}" if j <= i else None} for j, w in enumerate(r)]}
            for i, r in enumerate(m)
        ],
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
