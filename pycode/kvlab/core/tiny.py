"""The tiny transformer on the site's pages: its numbers, computed by the numpy
reference (kvlab.gpt) from the committed weights, and the cost theory that the
browser's measured race is compared with.

In the browser the model itself runs on onnxruntime-web (site_src/runtime/model.js);
at build time these functions draw the static figures from the same weights, and
the tests check that both give the same tokens and attention weights.
`race_theory` needs no weights, so it also runs in Pyodide.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from kvlab.decoding import DecoderConfig, decoding_costs

TINY_DIR = Path(__file__).resolve().parents[2] / "models" / "tiny"
# In the browser (Pyodide) the build packs the tokenizer into the kvlab zip here:
PACKED_TOKENIZER = Path(__file__).resolve().parent / "data" / "tiny" / "tokenizer.json"
DEFAULT_PROMPT = "Mia had a red ball. She gave it to the dog, and the dog"
ATTENTION_PROMPT = "The cat sat on the mat because it was tired."

GENERATE_LIMITS = {"max_new_tokens": (1, 200), "top_k": (1, 20)}
RACE_LIMITS = {"prompt_len": (1, 511), "n_new": (1, 511)}


@lru_cache(maxsize=1)
def tiny_card() -> dict:
    """models/tiny/card.json: config, parameter count, training and recall metrics."""
    return json.loads((TINY_DIR / "card.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def tiny_tokenizer():
    """The tiny model's BPE tokenizer (from models/tiny/, or packed in the kvlab zip)."""
    from kvlab.tokenizer import load_tokenizer

    path = TINY_DIR / "tokenizer.json"
    return load_tokenizer(str(path if path.is_file() else PACKED_TOKENIZER))


def tokenize_demo(text: str = "The cat sat on the mat. Its door code is 4719! 😀") -> dict:
    """How text becomes tokens: each token's text, id and UTF-8 bytes.

    Works in the browser too (the tokenizer is pure Python). Long input is cut
    at 2,000 characters, and the result says so.
    """
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    limit = 2000
    cut = len(text) > limit
    text = text[:limit]
    tok = tiny_tokenizer()
    ids = tok.encode(text)
    pieces = [{"id": int(i), "text": _display(tok.vocab[int(i)]), "bytes": len(tok.vocab[int(i)])} for i in ids]
    n_bytes = len(text.encode("utf-8"))
    return {
        "text": text,
        "truncated": cut,
        "tokens": pieces,
        "n_tokens": len(ids),
        "n_chars": len(text),
        "n_bytes": n_bytes,
        "bytes_per_token": round(n_bytes / len(ids), 3) if ids else 0.0,
        "vocab_size": tok.vocab_size,
    }


def _display(raw: bytes) -> str:
    """A token's text, or its bytes in hex when they are only part of a character.

    >>> _display(b" cat"), _display(b"\\xf0\\x9f")
    (' cat', '<F0 9F>')
    """
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return "<" + " ".join(f"{b:02X}" for b in raw) + ">"


def next_token_demo(prompt: str = "Mia had a red ball. She gave", top_k: int = 10) -> dict:
    """One forward pass of the tiny model (numpy reference): the probabilities
    of the most likely next tokens after the prompt (softmax at temperature 1)."""
    if not prompt.strip():
        raise ValueError("prompt is empty")
    top_k = int(min(max(int(top_k), 1), 20))
    model, tok = _model_and_tokenizer()
    ids = tok.encode(prompt)[-model.config.block_size:]
    logits, _ = model.forward(np.array([ids]), None)
    probs = _softmax(logits[0, -1].astype(np.float64))
    order = np.argsort(-probs, kind="stable")[:top_k]
    return {
        "prompt": prompt,
        "n_tokens": len(ids),
        "vocab_size": int(probs.shape[0]),
        "top": [{"token": int(i), "text": tok.token_str(int(i)), "p": round(float(probs[i]), 6)} for i in order],
    }


@lru_cache(maxsize=1)
def _model_and_tokenizer():
    from kvlab.gpt import GPT

    return GPT.from_npz(str(TINY_DIR / "weights.npz")), tiny_tokenizer()


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    return e / e.sum()


def generation_demo(prompt: str = DEFAULT_PROMPT, max_new_tokens: int = 24, top_k: int = 5) -> dict:
    """Greedy generation with the KV cache, step by step (numpy reference).

    Per step: phase, the token chosen, the top-k next-token probabilities
    (softmax at temperature 1) and the cache length before and after the step.
    """
    lo, hi = GENERATE_LIMITS["max_new_tokens"]
    max_new_tokens = int(min(max(int(max_new_tokens), lo), hi))
    top_k = int(min(max(int(top_k), 1), GENERATE_LIMITS["top_k"][1]))
    if not prompt.strip():
        raise ValueError("prompt is empty")
    model, tok = _model_and_tokenizer()
    ids = tok.encode(prompt)
    prompt_len = len(ids)
    steps, cache, feed = [], None, ids
    for step in range(max_new_tokens):
        logits, cache = model.forward(np.array([feed]), cache)
        probs = _softmax(logits[0, -1].astype(np.float64))
        order = np.argsort(-probs, kind="stable")[:top_k]
        token = int(order[0])
        steps.append({
            "step": step,
            "phase": "prefill" if step == 0 else "decode",
            "token": token,
            "text": tok.token_str(token),
            "top": [{"token": int(i), "text": tok.token_str(int(i)), "p": round(float(probs[i]), 6)} for i in order],
            "tokens_in": prompt_len if step == 0 else 1,
            "cache_len_before": 0 if step == 0 else prompt_len + step - 1,
            "cache_len_after": prompt_len + step,
        })
        feed = [token]
    return {
        "prompt": prompt,
        "prompt_tokens": [tok.token_str(i) for i in ids],
        "prompt_len": prompt_len,
        "steps": steps,
        "text": tok.decode([s["token"] for s in steps]),
        "n_layer": model.config.n_layer,
        "block_size": model.config.block_size,
        "limits": GENERATE_LIMITS,
        "card": _card_facts(),
    }


def _card_facts() -> dict:
    card = tiny_card()
    training = card.get("training", {})
    return {
        "params": card["params"],
        "config": card["config"],
        "onnx_bytes": card["files_bytes"]["model.onnx"],
        "train_minutes": training.get("minutes"),
        "val_loss": training.get("val_loss"),
        "train_loss": training.get("final_train_loss"),
        "recall_far": card["recall"][">=200"]["full_cache"],
        "recall_far_evicted": card["recall"][">=200"]["fact_evicted"],
    }


def model_attention(prompt: str = ATTENTION_PROMPT, layer: int = 0, head: int | str = "mean",
                    query: int | None = None) -> dict:
    """Attention weights of every layer and head for a prompt (numpy reference):
    weights[layer][head][query][key], plus the average over heads per layer.

    `layer`, `head` ("mean" or an index) and `query` (a token index, negative from
    the end; None = the pronoun " it" if there is one, else the last token) choose
    what the widget shows first; they come back clamped in `view`.
    """
    if not prompt.strip():
        raise ValueError("prompt is empty")
    model, tok = _model_and_tokenizer()
    ids = tok.encode(prompt)[: model.config.block_size]
    _, _, atts = model.forward(np.array([ids]), None, return_attention=True)
    weights = [np.asarray(a[0], dtype=np.float64) for a in atts]  # per layer (nh, T, T)
    tokens = [tok.token_str(i) for i in ids]
    T, L, H = len(ids), model.config.n_layer, model.config.n_head
    if query is None:
        query = tokens.index(" it") if " it" in tokens else T - 1
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
        "weights": [np.round(w, 6).tolist() for w in weights],
        "mean_over_heads": [np.round(w.mean(axis=0), 6).tolist() for w in weights],
        "n_layer": L,
        "n_head": H,
        "view": view,
    }


def race_demo(n_new: int = 128) -> dict:
    """race_theory for the default prompt (its length counted by the tokenizer),
    with the prompt itself: the static figure of the model-race widget."""
    prompt_len = len(tiny_tokenizer().encode(DEFAULT_PROMPT))
    return {**race_theory(prompt_len=prompt_len, n_new=n_new), "prompt": DEFAULT_PROMPT}


def race_theory(prompt_len: int = 8, n_new: int = 128, n_layer: int = 4, n_head: int = 4,
                n_embd: int = 128, vocab_size: int = 768) -> dict:
    """What kvlab's accounting predicts for the race on the tiny model.

    Multiply-adds per step with and without the cache (projections, MLP,
    attention, LM head), cumulative, and the predicted speed-up
    (uncached total / cached total). Runs in Pyodide: no weights needed.
    """
    for name, value in (("prompt_len", prompt_len), ("n_new", n_new)):
        lo, hi = RACE_LIMITS[name]
        if not lo <= int(value) <= hi:
            raise ValueError(f"{name} must be between {lo} and {hi}, got {value}")
    if prompt_len + n_new > 512:
        raise ValueError(f"prompt_len + n_new must fit the 512-token context, got {prompt_len + n_new}")
    config = DecoderConfig(n_layers=n_layer, n_heads=n_head, n_kv_heads=n_head, head_dim=n_embd // n_head,
                           d_model=n_embd, d_ff=4 * n_embd, vocab_size=vocab_size, max_positions=512,
                           bytes_per_value=4)
    runs = {mode: decoding_costs(config, prompt_len, n_new, use_cache=(mode == "cache")) for mode in ("cache", "no_cache")}

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


# ---------------------------------------------------------------------------- eviction, on the real model

EVICTION_LIMITS = {"window": (8, 512), "sinks": (0, 32), "episode": (0, 3)}


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
    """
    model, _ = _model_and_tokenizer()
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
            m = row.max()
            nll.append(float(-(row[ids[pos + 1]] - m - np.log(np.exp(row - m).sum()))))
        else:
            out.append(int(np.argmax(row)))
    return {"prompt_nll": nll, "tokens": out[:n_new], "cached": cached}


def _episode_facts(ep: dict) -> dict:
    """An episode's token ids and the positions of its code's digits."""
    _, tok = _model_and_tokenizer()
    ids = tok.encode(ep["prompt"])
    ends = np.cumsum([len(tok.vocab[i]) for i in ids])
    start_byte = ep["prompt"].encode("utf-8").index(ep["code"].encode("utf-8"))
    code_positions = [i for i, e in enumerate(ends) if start_byte < e <= start_byte + len(ep["code"])]
    return {"prompt": ep["prompt"], "code": ep["code"], "ids": ids, "n_tokens": len(ids), "code_positions": code_positions}


def eviction_recall_demo(episode: int = 0, window: int = 64, sinks: int = 4, n_new: int = 8) -> dict:
    """The door-code question after a long chat, answered by the tiny model with
    the full cache, a sliding window, and attention sinks + the same window.

    For each policy: the answer it generates, whether the code is right, whether
    the code's tokens were still in the cache, and how surprised the model was by
    each token of the chat (its loss) as it read it.
    """
    lo, hi = EVICTION_LIMITS["episode"]
    episode = int(min(max(int(episode), lo), min(hi, len(demo_episodes()) - 1)))
    window = int(min(max(int(window), EVICTION_LIMITS["window"][0]), EVICTION_LIMITS["window"][1]))
    sinks = int(min(max(int(sinks), 0), EVICTION_LIMITS["sinks"][1]))
    n_new = int(min(max(int(n_new), 1), 16))
    _, tok = _model_and_tokenizer()
    episodes = [_episode_facts(e) for e in demo_episodes()]
    ep = episodes[episode]
    ids, code_positions = ep["ids"], ep["code_positions"]
    policies = {}
    for name, (s, w) in {"full": (None, None), "window": (0, window), "sinks": (sinks, window)}.items():
        run = streaming_run(ids, s, w, n_new)
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
        "measured": _measured_recall(),
    }


def _measured_recall() -> dict:
    """The model card's recall over held-out chats, at distances of 200 tokens or more."""
    card = tiny_card()
    far = card["recall"][">=200"]
    return {
        "n_episodes": sum(v["n"] for k, v in card["recall"].items() if k != ">=200"),
        "n_far": far["n"],
        "full_cache": far["full_cache"],
        "full_cache_digits": far["full_cache_digits"],
        "fact_evicted": far["fact_evicted"],
        "fact_evicted_digits": far["fact_evicted_digits"],
    }
