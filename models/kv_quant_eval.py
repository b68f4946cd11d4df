"""The quantized-cache table of the model card: card.json "kv_quant" and the table in README.md.

    python models/kv_quant_eval.py       # ~2 min on one core; also run by models/evaluate.py

Per cache format (fp32, fp16, int8, q8_0, q4_0; kvlab.core.kv_quant):

- bytes per token, max |Δlogit| against fp32, top-1 agreement and the first step where
  greedy output diverges, on the kv-quant widget's default generation (kvlab.kv_quant_figure:
  the same numbers as the memory page's static figure, numpy reference);
- door-code recall by distance on the held-out chats of evaluate.py (codes and seeds never
  used in training): prefill, then 10 greedy tokens, with the cache stored in that format
  from the prefill on; right iff the answer says "code NNNN" with the right code.

Everything is computed by kvlab's numpy reference (kvlab.core.gpt), which the browser's
runtime matches token for token in every format (tests/browser/test_kv_quant.py).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pycode"))
sys.path.insert(0, HERE)

from corpus import heldout_episodes  # noqa: E402
from kvlab.core import kv_quant, tiny  # noqa: E402
from kvlab.widgets.kv_quant import kv_quant_figure, score_answer  # noqa: E402

TINY = os.path.join(HERE, "tiny")
README = os.path.join(HERE, "README.md")
BUCKETS = [(0, 100), (100, 200), (200, 300), (300, 400), (400, 512)]
START, END = "<!-- kv-quant table: written by models/kv_quant_eval.py -->", "<!-- end of kv-quant table -->"


def heldout() -> list[dict]:
    """evaluate.py's held-out chats (the same seeds)."""
    episodes = []
    for f in range(11):
        episodes += heldout_episodes(1000 + f, 24, f)
    return episodes


def recall_by_distance(episodes: list[dict], n_new: int = 10) -> dict:
    """Door-code recall per format and distance bucket (tokens from the code's last digit
    to the answer, as evaluate.py counts them)."""
    model, tok = tiny._model_and_tokenizer()
    cue = tok.encode(" code")[0]
    recs = []
    for ep in episodes:
        ids = tok.encode(ep["prompt"])
        if len(ids) + n_new > model.config.block_size:
            continue
        distance = len(ids) - (ids.index(cue) + 4)
        right = {
            fmt: score_answer(tok.decode(kv_quant.generate_stored(model, ids, n_new, fmt)["tokens"]), ep["code"])
            for fmt in kv_quant.FORMATS
        }
        recs.append((distance, right))
    buckets = [(f"{lo}-{hi}", lambda d, lo=lo, hi=hi: lo <= d < hi) for lo, hi in BUCKETS] + [
        (">=200", lambda d: d >= 200)
    ]
    out = {"n": {}, "formats": {fmt: {} for fmt in kv_quant.FORMATS}}
    for name, sel in buckets:
        chosen = [r for d, r in recs if sel(d)]
        if not chosen:
            continue
        out["n"][name] = len(chosen)
        for fmt in kv_quant.FORMATS:
            out["formats"][fmt][name] = round(sum(r[fmt]["correct"] for r in chosen) / len(chosen), 4)
    out["episodes"] = len(recs)
    return out


def kv_quant_card() -> dict:
    """card.json's "kv_quant": the widget's table and recall by distance."""
    demo = kv_quant_figure()
    table = demo["table"]
    return {
        "method": (
            "numpy reference (kvlab.core.gpt); each step's new cache entries quantized when written, "
            "the cache read back dequantized; max |dlogit|, top-1 agreement and first divergence "
            "teacher-forced on fp32's greedy continuation of the prompt"
        ),
        "prompt": demo["prompt"],
        "n_steps": table["n_steps"],
        "rows": [
            {
                k: r[k]
                for k in (
                    "format",
                    "bytes_per_token",
                    "vs_fp32",
                    "max_abs_dlogit",
                    "top1_agreement",
                    "first_divergence",
                )
            }
            for r in table["rows"]
        ],
        "recall_by_distance": recall_by_distance(heldout()),
    }


def markdown_table(kq: dict) -> str:
    rec = kq["recall_by_distance"]
    names = list(rec["n"])
    head = (
        "| format | bytes per token | vs fp32 | max \\|Δlogit\\| | top-1 agreement | greedy output first differs at | "
        + " | ".join(f"recall {n} (n={rec['n'][n]})" for n in names)
        + " |"
    )
    lines = [head, "|" + "---|" * (6 + len(names))]
    for r in kq["rows"]:
        fmt = r["format"]
        div = "never" if r["first_divergence"] is None else f"token {r['first_divergence']}"
        lines.append(
            f"| {fmt} | {r['bytes_per_token']:,} | {r['vs_fp32']:.3f} | {r['max_abs_dlogit']:.3g} | "
            f"{r['top1_agreement']:.3f} | {div} | " + " | ".join(f"{rec['formats'][fmt][n]:.2f}" for n in names) + " |"
        )
    return "\n".join(lines)


def write_readme_table(kq: dict, path: str = README) -> None:
    """Replace the text between the two markers in models/README.md."""
    text = open(path, encoding="utf-8").read()
    block = (
        f'{START}\n{markdown_table(kq)}\n\nGeneration: {kq["n_steps"]} steps after "{kq["prompt"]}" '
        f"(greedy, fp32's continuation fed to every format). Recall: "
        f"{kq['recall_by_distance']['episodes']} held-out chats.\n{END}"
    )
    pattern = re.compile(re.escape(START) + r".*?" + re.escape(END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: the markers for the kv-quant table are missing")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(pattern.sub(lambda _: block, text))


def main() -> None:
    t0 = time.time()
    kq = kv_quant_card()
    path = os.path.join(TINY, "card.json")
    with open(path, encoding="utf-8") as fh:
        card = json.load(fh)
    card["kv_quant"] = kq
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(card, fh, indent=1)
    write_readme_table(kq)
    print(markdown_table(kq))
    print(f"{time.time() - t0:.0f}s -> {path} and {README}")


if __name__ == "__main__":
    main()
