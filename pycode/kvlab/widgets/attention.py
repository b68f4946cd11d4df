"""The "Attention" page (attention.md): the attention widget (softmax(QKᵀ/√d)·V on a
sentence with seeded random Q, K, V) and the model-attention widget (the tiny
model's own attention weights).

The build calls each function with its defaults to render the static figure;
the browser calls the very same function in Pyodide when the reader moves a
control. JS never computes a number of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kvlab.core import tiny
from kvlab.core.attention import scaled_dot_product_attention
from kvlab.inputs import SEED, Param, Spec, takes, text
from kvlab.widgets.views import computed_status, with_view
from kvlab.wording import plural

if TYPE_CHECKING:
    from kvlab.widgets.attention_types import (
        AttentionDemoResult,
        AttentionDemoView,
        ModelAttentionDisplay,
        ModelAttentionResult,
        PronounHead,
        QkvPictureResult,
    )


# ---------------------------------------------------------------------------- views: the words this module's widgets show


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
        "status": computed_status("attention_figure", f"d = {data['d']}, temperature = {data['temperature']}"),
        "temperature": f"{data['temperature']}",
        "mask": ", causal" if data["causal"] else ", no mask",
        "rows": [{"token": tokens[i], "cells": [f"{w:.3f}" for w in row]} for i, row in enumerate(weights)],
        "hover": [
            [f"query “{tokens[i]}” → key “{tokens[j]}”: weight {w:.3f}" for j, w in enumerate(row)]
            for i, row in enumerate(weights)
        ],
        "readouts": [readout(q) for q in range(len(tokens))],
        "readout": readout(len(tokens) - 1),
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


ATTENTION_SENTENCE = "The cat sat on the mat because it was tired"

# What attention_figure accepts, clamped with no notice (the widget shows the values it used);
# a fraction of d or seed is cut toward zero.
INPUTS = Spec(
    d=Param(2, 64, fractions="cut"),
    temperature=Param(0.1, 5.0, step=0.1),
    seed=Param(*SEED, fractions="cut"),
)


@takes(INPUTS)
@with_view(attention_view)
def attention_figure(
    d: int = 8,
    temperature: float = 1.0,
    seed: int = 0,
    causal: bool = True,
    sentence: str = ATTENTION_SENTENCE,
) -> AttentionDemoResult:
    """Scaled dot-product attention on a short sentence with seeded random Q, K, V.

    Returns the tokens, the (T, T) attention weights, the (T, d) outputs and the
    inputs after clamping, so the page can show exactly what was computed.
    """
    d, temperature, seed = INPUTS.check({"d": d, "temperature": temperature, "seed": seed}).values()
    temperature = float(temperature)
    tokens = text("sentence", sentence).split()
    if not tokens:
        raise ValueError("attention_figure needs at least one word")
    rng = np.random.default_rng(seed)
    t = len(tokens)
    q = rng.standard_normal((t, d))  # (T, d)
    k = rng.standard_normal((t, d))  # (T, d)
    v = rng.standard_normal((t, d))  # (T, d)
    out, weights = scaled_dot_product_attention(q, k, v, causal=causal, temperature=temperature)
    return {
        "tokens": tokens,
        "d": d,
        "temperature": temperature,
        "seed": seed,
        "causal": bool(causal),
        "scale": float(1 / np.sqrt(d)),
        "weights": np.round(weights, 6).tolist(),
        "outputs": np.round(out, 6).tolist(),
    }


PRONOUNS = (" it", " It", " he", " He", " she", " She", " they", " They")


def pronoun_head() -> PronounHead | None:
    """The head the model card found to resolve pronouns best (models/evaluate.py,
    pronoun_heads: mean attention from "it"/"he"/"she" to the antecedent over held-out
    sentences), with its measured figures; None for a card without that measurement."""
    ph = tiny.tiny_card().get("pronoun_heads")
    if not ph:
        return None
    best = ph["best"]
    return {
        "layer": best["layer"],
        "head": best["head"],
        "it": best["it"],
        "he_she": best["he_she"],
        "best_he_she": ph["best_he_she"],
        "best_he_she_other": ph["he_she"]["other_person_by_head"][ph["best_he_she"]["layer"]][
            ph["best_he_she"]["head"]
        ],
        "best_it": ph["best_it"],
        "sentences_it": ph["it"]["sentences"],
        "sentences_he_she": ph["he_she"]["sentences"],
        "bar": ph["bar"],
        "bar_reached": ph["bar_reached"],
    }


def model_attention_figure(
    prompt: str = tiny.ATTENTION_PROMPT,
    layer: int | None = None,
    head: int | str | None = None,
    query: int | None = None,
) -> ModelAttentionResult:
    """Attention weights of every layer and head for a prompt (numpy reference):
    weights[layer][head][query][key], plus the average over heads per layer.

    `layer`, `head` ("mean" or an index) and `query` (a token index, negative from
    the end; None = the last pronoun " it", " He", " she", ... if there is one, else
    the last token) choose what the widget shows first; they come back clamped in
    `view`. Layer and head default to the card's pronoun head (`pronoun_head`).
    """
    if not text("prompt", prompt).strip():
        raise ValueError("prompt is empty")
    model, tok = tiny.model_and_tokenizer()
    ids = tok.encode(prompt)[: model.config.block_size]
    _, _, atts = model.forward(np.array([ids]), None, return_attention=True)
    weights = [np.asarray(a[0], dtype=np.float64) for a in atts]  # per layer (nh, T, T)
    tokens = [tok.token_str(i) for i in ids]
    T, L, H = len(ids), model.config.n_layer, model.config.n_head
    best = pronoun_head()
    if layer is None:
        layer = best["layer"] if best else 0
    if head is None:
        head = best["head"] if best else "mean"
    if query is None:
        found = [i for i, t in enumerate(tokens) if t in PRONOUNS]
        query = found[-1] if found else T - 1
    query = int(query) + (T if int(query) < 0 else 0)
    view = {
        "layer": min(max(int(layer), 0), L - 1),
        "head": "mean" if head == "mean" else min(max(int(head), 0), H - 1),
        "query": min(max(query, 0), T - 1),
    }
    return {
        "prompt": prompt,
        "ids": [int(i) for i in ids],
        "tokens": tokens,
        # 4 decimals: the widget shows at most 3, and the page carries every layer and head
        # (the eviction page's chat is 40 % smaller at 4 decimals than at 6: bench/results/2026-12-02-runtime.md)
        "weights": [np.round(w, 4).tolist() for w in weights],
        "mean_over_heads": [np.round(w.mean(axis=0), 4).tolist() for w in weights],
        "n_layer": L,
        "n_head": H,
        "view": view,
        "pronoun_head": best,
        "pronouns": list(PRONOUNS),  # the tokens the first query is picked from (the widget does the same live)
    }


QKV_INPUTS = Spec(layer=Param(0, 3), head=Param(0, 3))
QKV_MAX_TOKENS = 16  # a sentence: the picture draws 3 vectors of 32 numbers per token


def _cells(vec: np.ndarray, scale: float) -> list[dict]:
    """One vector as cells to colour: m = |x| / scale (0..1, 2 decimals), s = its sign."""
    return [{"m": round(min(abs(float(x)) / scale, 1.0), 2), "s": "pos" if x >= 0 else "neg"} for x in vec]


@takes(QKV_INPUTS)
def qkv_figure(
    sentence: str = "The cat sat on the mat because it was warm.",
    layer: int = 0,
    head: int = 0,
    query: int | None = None,
) -> QkvPictureResult:
    """q, k and v of every token of a real sentence, as the tiny model computes them in one layer and
    head (kvlab.core.gpt.GPT.layer_qkv: k and v are exactly what its cache stores), and for each query
    token what it reads: the model's own attention weights over the tokens up to it, and the output,
    the weighted sum of their values (that head's output before the projection).

    >>> r = qkv_figure("The cat sat.")
    >>> len(r["tokens"]) == len(r["rows"]) == len(r["queries"]), len(r["rows"][0]["k"])
    (True, 32)
    >>> round(sum(x["weight"] for x in r["queries"][-1]["reads"]), 3)
    1.0
    """
    p = QKV_INPUTS.check({"layer": layer, "head": head})
    layer, head = p["layer"], p["head"]
    if not text("sentence", sentence).strip():
        raise ValueError("sentence is empty")
    model, tok = tiny.model_and_tokenizer()
    ids = tok.encode(sentence)
    cut = max(0, len(ids) - QKV_MAX_TOKENS)
    ids = ids[:QKV_MAX_TOKENS]
    T = len(ids)
    q, k, v = (a[0, head] for a in model.layer_qkv(ids, layer))  # each (T, hs)
    _, _, atts = model.forward(np.array([ids]), None, return_attention=True)
    att = np.asarray(atts[layer][0, head], dtype=np.float64)  # (T, T), causal
    out = att @ v  # (T, hs): what each query token takes away
    tokens = [tok.token_str(i) for i in ids]
    scale = {name: float(np.abs(a).max()) or 1.0 for name, a in (("q", q), ("k", k), ("v", v), ("out", out))}
    if query is None:
        query = T - 1
    query = min(max(int(query) + (T if int(query) < 0 else 0), 0), T - 1)
    queries = []
    for i in range(T):
        top = int(np.argmax(att[i, : i + 1]))
        queries.append(
            {
                "index": i,
                "token": tokens[i],
                "reads": [
                    {
                        "token": tokens[j],
                        "weight": round(float(att[i, j]), 4),
                        "pct": round(100 * float(att[i, j]), 1),
                        "weight_text": f"{att[i, j]:.2f}",
                    }
                    for j in range(i + 1)
                ],
                "out": _cells(out[i], scale["out"]),
                "text": (
                    f"“{tokens[i]}” compares its q with the k of each of the {i + 1} tokens up to it, and takes "
                    f"a mix of their v: most of all “{tokens[top]}” ({att[i, top]:.0%})."
                ),
            }
        )
    return {
        "sentence": sentence,
        "tokens": tokens,
        "layer": layer,
        "head": head,
        "head_dim": int(q.shape[-1]),
        "cut": cut,
        "rows": [
            {
                "index": i,
                "token": tokens[i],
                "q": _cells(q[i], scale["q"]),
                "k": _cells(k[i], scale["k"]),
                "v": _cells(v[i], scale["v"]),
            }
            for i in range(T)
        ],
        "queries": queries,
        "query": query,
        "view": {
            "caption": (
                f"Layer {layer + 1}, head {head + 1} of the tiny model: each token's q, k and v, "
                f"{int(q.shape[-1])} numbers each (colour: size; stripes: negative)."
            ),
            "cut": f"Only the first {QKV_MAX_TOKENS} tokens are drawn ({cut} more were cut)." if cut else "",
            "kept": (
                f"The cache keeps the k and v of all {plural(T, 'token')}: {plural(2 * T * int(q.shape[-1]), 'number')} "
                f"in this head and layer. Each q is used once, at its own token's step, and dropped."
            ),
            "smear": (
                "This model first mixes each key with the one before it (half and half, in most heads) and then "
                "compares; the weights are the model's own."
            ),
            "status": f"Computed in your browser by kvlab.qkv_figure ({plural(T, 'token')}, layer {layer + 1}, "
            f"head {head + 1}).",
        },
    }
