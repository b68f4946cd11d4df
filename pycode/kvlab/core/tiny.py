"""The tiny transformer behind the site's model widgets: where its files are, and how
the numpy reference (kvlab.core.gpt) runs it.

models/tiny/ holds the committed files (weights.npz, model.onnx, tokenizer.json,
card.json, episodes.json); the build packs the tokenizer into the kvlab zip under
kvlab/data/tiny/ so tokenizing also works in Pyodide. The weights are not packed:
in the browser the model runs on onnxruntime-web (site_src/runtime/model.js), and
the tests check that both give the same tokens and attention weights. The one
widget that runs the numpy model in Pyodide (speculative decoding, which needs the
model cut after its first layers) has the worker fetch them (PACKED_WEIGHTS). The widget
functions that use the model live with their pages in kvlab.widgets.
"""

from __future__ import annotations

import json
import copy
from functools import lru_cache
from pathlib import Path

import numpy as np

from kvlab.core.sampling import token_nll

TINY_DIR = Path(__file__).resolve().parents[3] / "models" / "tiny"
# In the browser (Pyodide) the build packs the tokenizer into the kvlab zip here:
PACKED_TOKENIZER = Path(__file__).resolve().parents[1] / "data" / "tiny" / "tokenizer.json"
# The weights stay out of the zip (5 MB): the worker downloads them on the first call of a
# function that runs the numpy model in the browser (kvlab.bridge.BROWSER_FILES) and writes them here.
PACKED_WEIGHTS = PACKED_TOKENIZER.with_name("weights.npz")
# a story opening: 24 greedy tokens go on with the story (the old "…and the dog" ended it in four
# tokens and went on into the corpus's chat lines, "user: hello! bot: …", which read as gibberish)
DEFAULT_PROMPT = "Once upon a time, a little girl named Mia had a red ball. One day she"
ATTENTION_PROMPT = "My cat was tired. It slept on the bed all day."


@lru_cache(maxsize=1)
def tiny_card() -> dict:
    """models/tiny/card.json: config, parameter count, training and recall metrics."""
    return json.loads((TINY_DIR / "card.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def tiny_tokenizer():
    """The tiny model's BPE tokenizer (from models/tiny/, or packed in the kvlab zip)."""
    from kvlab.core.tokenizer import load_tokenizer

    path = TINY_DIR / "tokenizer.json"
    return load_tokenizer(str(path if path.is_file() else PACKED_TOKENIZER))


@lru_cache(maxsize=1)
def model_and_tokenizer():
    from kvlab.core.gpt import GPT

    path = TINY_DIR / "weights.npz"
    return GPT.from_npz(str(path if path.is_file() else PACKED_WEIGHTS)), tiny_tokenizer()


_model_and_tokenizer = model_and_tokenizer  # the old name, still used by tests/browser


# The card's recall bucket for "far" chats (models/evaluate.py writes ">=200": the code stated
# at least this many tokens before the question).
FAR_TOKENS = 200
FAR_BUCKET = f">={FAR_TOKENS}"


def card_facts() -> dict:
    card = tiny_card()
    training = card.get("training", {})
    return {
        "params": card["params"],
        "config": card["config"],
        "onnx_bytes": card["files_bytes"]["model.onnx"],
        "train_minutes": training.get("minutes"),
        "val_loss": training.get("val_loss"),
        "train_loss": training.get("final_train_loss"),
        "recall_far": card["recall"][FAR_BUCKET]["full_cache"],
        "recall_far_evicted": card["recall"][FAR_BUCKET]["fact_evicted"],
        "far_tokens": FAR_TOKENS,
    }


@lru_cache(maxsize=1)
def demo_episodes() -> list[dict]:
    """Held-out door-code chats (models/tiny/episodes.json, from models/demo_episodes.py)."""
    return json.loads((TINY_DIR / "episodes.json").read_text(encoding="utf-8"))["episodes"]


def streaming_run(ids: list[int], sinks: int | None, window: int | None, n_new: int) -> dict:
    """Read `ids` one token at a time with a KV cache that keeps the first `sinks`
    and the last `window` entries (None: keep everything), then generate `n_new`
    tokens greedily. Kept tokens keep their original positions (RoPE), as in
    the browser (site_src/runtime/model.js, streamPrompt).

    prompt_nll[i] = -ln p(ids[i+1] | what the cache still holds).

    A run is deterministic and costs a forward pass per token: the last few are kept
    (a reader going back to a setting, and every window's full-cache run, reuse them);
    each caller gets its own copy.
    """
    return copy.deepcopy(_streaming_run(tuple(ids), sinks, window, n_new))


@lru_cache(maxsize=16)
def _streaming_run(ids: tuple[int, ...], sinks: int | None, window: int | None, n_new: int) -> dict:
    model, _ = model_and_tokenizer()
    budget = None if window is None else (sinks or 0) + window
    cache, cached, nll, out = None, [], [], []
    seq = list(ids)
    logits = None
    for pos in range(len(seq) + n_new - 1):
        if pos >= len(seq):  # generation: feed the token chosen last
            seq.append(out[-1])
        logits, cache = model.forward(np.array([[seq[pos]]]), cache, position_ids=np.array([[pos]]))
        cached.append(pos)
        if budget is not None and len(cached) > budget:
            keep = [i for i in range(len(cached)) if i < (sinks or 0) or i >= len(cached) - window]
            cache = [(k[:, :, keep], v[:, :, keep]) for k, v in cache]
            cached = [cached[i] for i in keep]
        row = logits[0, -1].astype(np.float64)
        if pos + 1 < len(ids):
            nll.append(token_nll(row, ids[pos + 1]))
        else:
            out.append(int(np.argmax(row)))
    return {"prompt_nll": nll, "tokens": out[:n_new], "cached": cached}


def episode_facts(ep: dict) -> dict:
    """An episode's token ids and the positions of its code's digits."""
    _, tok = model_and_tokenizer()
    ids = tok.encode(ep["prompt"])
    ends = np.cumsum([len(tok.vocab[i]) for i in ids])
    start_byte = ep["prompt"].encode("utf-8").index(ep["code"].encode("utf-8"))
    code_positions = [i for i, e in enumerate(ends) if start_byte < e <= start_byte + len(ep["code"])]
    return {
        "prompt": ep["prompt"],
        "code": ep["code"],
        "ids": ids,
        "n_tokens": len(ids),
        "code_positions": code_positions,
    }


def measured_recall() -> dict:
    """The model card's recall over held-out chats, at distances of 200 tokens or more."""
    card = tiny_card()
    far = card["recall"][FAR_BUCKET]
    return {
        "n_episodes": sum(v["n"] for k, v in card["recall"].items() if k != FAR_BUCKET),
        "far_tokens": FAR_TOKENS,
        "chance_digit": card["chance"]["digit"],
        "n_far": far["n"],
        "full_cache": far["full_cache"],
        "full_cache_digits": far["full_cache_digits"],
        "fact_evicted": far["fact_evicted"],
        "fact_evicted_digits": far["fact_evicted_digits"],
    }
