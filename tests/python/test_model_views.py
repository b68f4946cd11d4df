"""The model widgets' views (each beside its function in kvlab.widgets): what the build-time page shows."""

from __future__ import annotations

import kvlab
from kvlab.widgets import attention


def test_model_attention_never_shows_an_empty_token():
    """A token that is only whitespace is a box (and, live, a button) of its own: it needs
    something to show and a name for screen readers: a newline is ↵, a run of spaces ␣."""
    data = kvlab.model_attention_figure("Alice:\nThe code.\n\nBob:  ok")
    assert "\n" in data["tokens"] and " " in data["tokens"]
    shown = attention.model_attention_display(data, 0, "mean", len(data["tokens"]) - 1)
    texts = [t["text"] for t in shown["tokens"]]
    assert all(t.strip() for t in texts), texts
    assert texts[data["tokens"].index("\n")] == "↵" and texts[data["tokens"].index(" ")] == "␣"
    assert [r["token"] for r in shown["rows"]] == texts
    # the other tokens as they are
    assert [t for t, raw in zip(texts, data["tokens"], strict=True) if raw.strip()] == [
        raw for raw in data["tokens"] if raw.strip()
    ]
