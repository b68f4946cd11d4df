"""The tiny model's page numbers: numpy reference, cache phases, race theory."""

from __future__ import annotations

import numpy as np
import pytest

import kvlab
from kvlab.core import tiny
from kvlab.core.decoding import DecoderConfig, step_cost


def test_generate_figure_is_the_greedy_continuation_of_the_reference_model():
    model, tok = tiny.model_and_tokenizer()
    data = kvlab.generate_figure(max_new_tokens=12)
    ids = tok.encode(tiny.DEFAULT_PROMPT)
    assert [s["token"] for s in data["steps"]] == model.generate(ids, 12, use_cache=False)
    assert data["text"] == tok.decode([s["token"] for s in data["steps"]])


def test_generate_figure_reports_cache_length_before_and_after_each_step():
    data = kvlab.generate_figure(max_new_tokens=5)
    p = data["prompt_len"]
    first, *rest = data["steps"]
    assert (first["phase"], first["cache_len_before"], first["cache_len_after"], first["tokens_in"]) == (
        "prefill",
        0,
        p,
        p,
    )
    for k, s in enumerate(rest, start=1):
        assert (s["phase"], s["cache_len_before"], s["cache_len_after"], s["tokens_in"]) == (
            "decode",
            p + k - 1,
            p + k,
            1,
        )


def test_top_k_probabilities_are_sorted_and_the_chosen_token_is_the_most_likely():
    for s in kvlab.generate_figure(max_new_tokens=4, top_k=5)["steps"]:
        ps = [t["p"] for t in s["top"]]
        assert ps == sorted(ps, reverse=True) and 0 < sum(ps) <= 1 + 1e-6
        assert s["top"][0]["token"] == s["token"]


def test_empty_prompt_is_refused():
    with pytest.raises(ValueError, match="prompt is empty"):
        kvlab.generate_figure(prompt="   ")


def test_model_attention_rows_are_causal_distributions():
    data = kvlab.model_attention_figure()
    t = len(data["tokens"])
    w = np.array(data["weights"])  # (layers, heads, T, T)
    assert w.shape == (data["n_layer"], data["n_head"], t, t)
    assert np.allclose(w.sum(-1), 1, atol=t * 5e-5)  # each weight rounded to 4 decimals
    assert np.allclose(np.triu(w, k=1), 0)
    assert np.allclose(np.array(data["mean_over_heads"]), w.mean(1), atol=1e-4)


def test_race_theory_sums_the_step_costs_of_both_modes():
    r = kvlab.race_theory(prompt_len=5, n_new=7)
    cfg = DecoderConfig(
        n_layers=4,
        n_heads=4,
        n_kv_heads=4,
        head_dim=32,
        d_model=128,
        d_ff=512,
        vocab_size=tiny.tiny_card()["config"]["vocab_size"],
        max_positions=512,
        bytes_per_value=4,
    )
    cached = step_cost(cfg, 0, 5, True).to_dict()["total_macs"] + sum(
        step_cost(cfg, 5 + k - 1, 1, True).to_dict()["total_macs"] for k in range(1, 7)
    )
    # without a cache, step k pushes the whole sequence of 5 + k tokens through again
    uncached = sum(step_cost(cfg, 0, 5 + k, False).to_dict()["total_macs"] for k in range(7))
    assert r["total_macs"] == {"cache": cached, "no_cache": uncached}
    assert r["speedup_total"] == pytest.approx(uncached / cached)


def test_race_theory_refuses_what_does_not_fit_the_context():
    with pytest.raises(ValueError, match="512-token context"):
        kvlab.race_theory(prompt_len=400, n_new=200)


@pytest.mark.slow  # the tiny model over whole episodes: left out of `build.py test --fast`
def test_the_full_cache_recalls_every_demo_code_and_a_short_window_forgets_it():
    """The eviction page's chats, read token by token by the numpy reference."""
    for i in range(len(tiny.demo_episodes())):
        d = kvlab.model_eviction_figure(episode=i, window=64, sinks=4)
        full, window = d["policies"]["full"], d["policies"]["window"]
        assert full["code_in_cache"] and full["correct"], (i, full["answer"])
        assert not window["code_in_cache"] and not window["correct"], (i, window["answer"])


def test_the_generate_widget_states_the_card_recall():
    facts = kvlab.generate_figure()["card"]
    card = tiny.tiny_card()["recall"][">=200"]
    assert (facts["recall_far"], facts["recall_far_evicted"]) == (card["full_cache"], card["fact_evicted"])


def test_model_attention_view_is_clamped_and_defaults_to_the_pronoun():
    data = kvlab.model_attention_figure()
    best = data["pronoun_head"]
    layer, head = (best["layer"], best["head"]) if best else (0, "mean")
    pronouns = [i for i, t in enumerate(data["tokens"]) if t in (" it", " It", " he", " He", " she", " She")]
    assert data["view"] == {"layer": layer, "head": head, "query": pronouns[-1]}
    T = len(data["tokens"])
    view = kvlab.model_attention_figure(layer=99, head=9, query=-1)["view"]
    assert view == {"layer": data["n_layer"] - 1, "head": data["n_head"] - 1, "query": T - 1}
    assert kvlab.model_attention_figure(layer=-3, head=-1, query=10_000)["view"] == {
        "layer": 0,
        "head": 0,
        "query": T - 1,
    }
