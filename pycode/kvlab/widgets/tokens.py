"""The "Tokens" page (tokens.md): the tokens widget (the tiny model's BPE tokenizer,
pure Python, so it runs in Pyodide too) and the next-token widget (one forward pass
of the tiny model's numpy reference).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kvlab.core import tiny
from kvlab.core.sampling import top_k_probs
from kvlab.inputs import Param, Spec, takes, text
from kvlab.widgets.views import with_view

if TYPE_CHECKING:
    from kvlab.widgets.tokens_types import NextTokenDemoResult, NextTokenView, TokenizeDemoResult, TokensView


# ---------------------------------------------------------------------------- views: the words this module's widgets show


def tokens_view(data: dict) -> TokensView:
    return {
        "status": "Tokenized in your browser by kvlab.tokens_figure.",
        "tokens": [
            {**t, "title": f"token id {t['id']}, {t['bytes']} byte{'' if t['bytes'] == 1 else 's'}"}
            for t in data["tokens"]
        ],
        "bytes_per_token": f"{data['bytes_per_token']:g}",
    }


def next_token_view(data: dict) -> NextTokenView:
    return {"n_tokens": data["n_tokens"], "top": [{"text": t["text"], "p": f"{t['p']:.3f}"} for t in data["top"]]}


@with_view(tokens_view)
def tokens_figure(text: str = "The cat sat on the mat. Its door code is 4719! 😀") -> TokenizeDemoResult:
    """How text becomes tokens: each token's text, id and UTF-8 bytes.

    Works in the browser too (the tokenizer is pure Python). Long input is cut
    at 2,000 characters, and the result says so.
    """
    if not isinstance(text, str):
        raise ValueError("text must be a string")
    limit = 2000
    cut = len(text) > limit
    text = text[:limit]
    tok = tiny.tiny_tokenizer()
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


# What next_token_figure accepts, clamped with no notice (the widget shows the tokens it lists).
NEXT_TOKEN_INPUTS = Spec(top_k=Param(1, 20, fractions="cut"))


@takes(NEXT_TOKEN_INPUTS)
def next_token_figure(prompt: str = "Mia had a red ball. She gave", top_k: int = 10) -> NextTokenDemoResult:
    """One forward pass of the tiny model (numpy reference): the probabilities
    of the most likely next tokens after the prompt (softmax at temperature 1)."""
    if not text("prompt", prompt).strip():
        raise ValueError("prompt is empty")
    top_k = NEXT_TOKEN_INPUTS["top_k"].check("top_k", top_k, None)
    model, tok = tiny.model_and_tokenizer()
    ids = tok.encode(prompt)[-model.config.block_size :]
    logits, _ = model.forward(np.array([ids]), None)
    row = logits[0, -1]
    return {
        "prompt": prompt,
        "n_tokens": len(ids),
        "vocab_size": int(row.shape[0]),
        "top": [{"token": i, "text": tok.token_str(i), "p": round(p, 6)} for i, p in top_k_probs(row, top_k)],
    }
