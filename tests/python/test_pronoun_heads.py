"""The pronoun-head figures of the model card, recomputed from the committed model.

models/evaluate.py measures, over held-out sentences (models/everyday.py, a seed
training never uses), how much of each head's attention goes from "it" to the animal
or thing, and from "he"/"she" to the right one of two people; the card stores it and
the attention page opens on the best head. Here the same measurement runs again on
models/tiny/model.onnx and must give the card's numbers."""

import os

import numpy as np
import pytest

from evaluate import OnnxLM, pronoun_heads

import kvlab
from kvlab.core import tiny

TINY = os.path.join(os.path.dirname(__file__), "..", "..", "models", "tiny")


@pytest.fixture(scope="module")
def card_and_measured():
    lm = OnnxLM(os.path.join(TINY, "model.onnx"))
    return tiny.tiny_card().get("pronoun_heads"), pronoun_heads(lm, tiny.tiny_tokenizer())


def test_card_pronoun_heads_are_recomputed_from_the_committed_model(card_and_measured):
    card, measured = card_and_measured
    if card is None:  # a card from before the measurement: the page falls back to the head average
        assert kvlab.model_attention_figure()["view"]["head"] == "mean"
        return
    for kind in ("it", "he_she"):
        assert card[kind]["sentences"] == measured[kind]["sentences"] >= 200
        assert np.allclose(card[kind]["by_head"], measured[kind]["by_head"], atol=2e-3)
    assert card["best"] == measured["best"]
    assert card["bar_reached"] == measured["bar_reached"]


def test_attention_page_opens_on_the_pronoun_head(card_and_measured):
    card, _ = card_and_measured
    data = kvlab.model_attention_figure()
    if card is None:
        assert data["pronoun_head"] is None and data["view"]["head"] == "mean"
        return
    assert (data["view"]["layer"], data["view"]["head"]) == (card["best"]["layer"], card["best"]["head"])
    assert data["tokens"][data["view"]["query"]] in (" it", " It", " he", " He", " she", " She")
    assert data["pronoun_head"]["it"] == card["best"]["it"]
