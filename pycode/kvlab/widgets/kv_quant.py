"""The memory page (memory.md), section "A quantized cache, measured": the kv-quant widget.

The tiny model's cache stored as fp32, fp16, int8, q8_0 or q4_0 (kvlab.core.kv_quant),
and what each costs in quality on a real generation and on door-code recall.

Raw measurements come either from the numpy reference (`kv_quant_measure`, at build
time: the static figure and the model card) or from the browser (kvlab.generate with
kvFormat, on onnxruntime-web); `kv_quant_table` turns either into the table, so the
page and the card derive every number the same way:

- bytes per token: kvlab's memory code (kv_quant.bytes_per_token);
- max |Δlogit|: the largest difference, over every step and every vocabulary entry,
  between the format's logits and fp32's, with both reading the same text (teacher
  forcing on fp32's greedy continuation);
- top-1 agreement: the share of steps where the format's most likely token is fp32's;
- first divergence: the first step (1 = the token right after the prompt) where the
  two differ, which is where the format's own greedy text starts to differ;
- recall: the door-code chats answered with the cache in that format, right iff the
  answer says "code NNNN" with the right code (models/evaluate.py's rule).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from typing import TYPE_CHECKING

import numpy as np

from kvlab.core import kv_quant, tiny
from kvlab.inputs import Param, Spec, takes
from kvlab.widgets.views import with_view

if TYPE_CHECKING:
    from kvlab.widgets.kv_quant_types import KvQuantDemoResult, KvQuantTableResult, KvQuantView


# ---------------------------------------------------------------------------- views: the words this module's widgets show


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


KV_QUANT_PROMPT = tiny.DEFAULT_PROMPT
# What kv_quant_figure accepts, clamped with no notice (the widget shows the value it used).
INPUTS = Spec(n_new=Param(4, 64, fractions="cut"))
ANSWER_TOKENS = 8  # the answer "the door has code NNNN." fits in 8 tokens
_CODE = re.compile(r"code (\d{4})")


def score_answer(text: str, code: str) -> dict:
    """The code an answer names, and whether it is right (models/evaluate.py's rule).

    >>> score_answer(" the door has code 4719.", "4719")
    {'said': '4719', 'correct': True, 'digits_right': 4}
    >>> score_answer(" hello", "4719")["correct"]
    False
    """
    m = _CODE.search(str(text))
    said = m.group(1) if m else ""
    return {"said": said, "correct": said == code, "digits_right": sum(a == b for a, b in zip(said, code))}


def recall_episodes() -> list[dict]:
    """The held-out door-code chats of the eviction page, with the distance in tokens from
    the code's last digit to the end of the chat (as models/evaluate.py counts it)."""
    out = []
    for ep in tiny.demo_episodes():
        facts = tiny.episode_facts(ep)
        out.append(
            {
                "prompt": ep["prompt"],
                "code": ep["code"],
                "n_tokens": facts["n_tokens"],
                "distance": facts["n_tokens"] - facts["code_positions"][-1],
            }
        )
    return sorted(out, key=lambda e: e["distance"])


def kv_quant_measure(prompt: str = KV_QUANT_PROMPT, n_new: int = 48, episodes: list[dict] | None = None) -> dict:
    """The raw measurements, from the numpy reference, in the form the browser sends them.

    generation: fp32 decodes greedily from `prompt` for n_new steps; every other format
    is fed fp32's tokens (teacher forcing); each run's logits per step and cache bytes.
    recall: each chat answered (ANSWER_TOKENS greedy tokens) with the cache in each format.

    Deterministic, and a few seconds of model runs: the last few are kept (a reader going
    back to a setting reuses them); each caller gets its own copy.
    """
    key = None if episodes is None else json.dumps(episodes, sort_keys=True)
    return copy.deepcopy(_measure(prompt, n_new, key))


@functools.lru_cache(maxsize=4)
def _measure(prompt: str, n_new: int, episodes_json: str | None) -> dict:
    episodes = None if episodes_json is None else json.loads(episodes_json)
    model, tok = tiny.model_and_tokenizer()
    ids = tok.encode(prompt)
    cfg = model.config
    runs = {}
    ref = kv_quant.generate_stored(model, ids, n_new, "fp32")
    for fmt in kv_quant.FORMATS:
        run = ref if fmt == "fp32" else kv_quant.generate_stored(model, ids, n_new, fmt, force=ref["tokens"])
        runs[fmt] = {"logits": [row.tolist() for row in run["logits"]], "cache_bytes": run["cache_bytes"]}
    recall = []
    for ep in episodes if episodes is not None else recall_episodes():
        ep_ids = tok.encode(ep["prompt"])
        answers = {
            fmt: tok.decode(kv_quant.generate_stored(model, ep_ids, ANSWER_TOKENS, fmt)["tokens"])
            for fmt in kv_quant.FORMATS
        }
        recall.append({"code": ep["code"], "distance": ep["distance"], "answers": answers})
    return {
        "source": "numpy reference (kvlab.core.gpt)",
        "config": {"n_layer": cfg.n_layer, "n_head": cfg.n_head, "n_embd": cfg.n_embd},
        "prompt": prompt,
        "prompt_len": len(ids),
        "generation": runs,
        "recall": recall,
    }


@with_view(kv_quant_view)
def kv_quant_table(measurements: dict | None = None) -> KvQuantTableResult:
    """The table from raw measurements (the browser's, or the numpy reference's when None).

    measurements = {config: {n_layer, n_head, n_embd[, n_kv_head]}, prompt_len, source,
                    generation: {format: {logits: [[...vocab] per step], cache_bytes}},
                    recall: [{code, distance, answers: {format: text}}]}
    fp32 must be among the generation's formats: the others are compared with it.
    """
    if measurements is None:
        measurements = kv_quant_measure()
    if not isinstance(measurements, dict):
        raise ValueError("measurements must be an object")
    cfg = measurements.get("config") or {}
    try:  # the model's own config (GPTConfig names), as the runtime reports it
        n_layer, n_head, n_embd = (int(cfg[k]) for k in ("n_layer", "n_head", "n_embd"))
        n_kv_head = int(cfg.get("n_kv_head") or n_head)
        head_dim = n_embd // n_head
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        raise ValueError("measurements.config needs the model's n_layer, n_head and n_embd") from None
    gen = measurements.get("generation") or {}
    if "fp32" not in gen:
        raise ValueError("measurements.generation needs an fp32 run to compare with")
    for fmt in gen:
        kv_quant.bytes_per_vector(fmt, head_dim)  # unknown formats: a ValueError naming the choices
    ref = np.asarray(gen["fp32"]["logits"], dtype=np.float64)  # (steps, vocab)
    if ref.ndim != 2 or not np.isfinite(ref).all():
        raise ValueError("measurements.generation.fp32.logits must be finite, one row per step")
    ref_top = ref.argmax(axis=1)
    recall = measurements.get("recall") or []
    fp32_bytes = kv_quant.bytes_per_token("fp32", n_layer, n_kv_head, head_dim)
    rows = []
    for fmt in [f for f in kv_quant.FORMATS if f in gen]:
        lg = np.asarray(gen[fmt]["logits"], dtype=np.float64)
        if lg.shape != ref.shape or not np.isfinite(lg).all():
            raise ValueError(f"measurements.generation.{fmt}.logits must be finite and shaped like fp32's {ref.shape}")
        agree = lg.argmax(axis=1) == ref_top
        bpt = kv_quant.bytes_per_token(fmt, n_layer, n_kv_head, head_dim)
        scored = [score_answer(r["answers"][fmt], str(r["code"])) for r in recall if fmt in r.get("answers", {})]
        rows.append(
            {
                "format": fmt,
                "bytes_per_token": bpt,
                "vs_fp32": round(bpt / fp32_bytes, 4),
                "cache_bytes": int(gen[fmt]["cache_bytes"]),
                "max_abs_dlogit": float(f"{float(np.abs(lg - ref).max()):.4g}"),
                "top1_agreement": round(float(agree.mean()), 4),
                "first_divergence": None if agree.all() else int(np.argmin(agree)) + 1,
                "recall": [
                    {"said": s["said"], "correct": s["correct"], "digits_right": s["digits_right"]} for s in scored
                ],
                "recall_rate": round(sum(s["correct"] for s in scored) / len(scored), 4) if scored else None,
            }
        )
    return {
        "source": str(measurements.get("source", "")),
        "n_steps": int(ref.shape[0]),
        "prompt_len": int(measurements.get("prompt_len", 0)),
        "distances": [int(r["distance"]) for r in recall],
        "codes": [str(r["code"]) for r in recall],
        "rows": rows,
    }


@takes(INPUTS)
def kv_quant_figure(prompt: str = KV_QUANT_PROMPT, n_new: int = 48) -> KvQuantDemoResult:
    """The kv-quant widget's static figure: the table measured on the numpy reference,
    the chats it asks about, and the model card's recall by distance per format."""
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("prompt is empty")
    n_new = INPUTS["n_new"].check("n_new", n_new, None)
    episodes = recall_episodes()
    table = kv_quant_table(kv_quant_measure(prompt, n_new, episodes))
    card = tiny.tiny_card().get("kv_quant", {})
    return {
        "prompt": prompt,
        "n_new": n_new,
        "answer_tokens": ANSWER_TOKENS,
        "formats": list(kv_quant.FORMATS),
        "episodes": episodes,
        "table": table,
        "card_recall": card.get("recall_by_distance"),
        "limits": INPUTS.ranges(),
    }
