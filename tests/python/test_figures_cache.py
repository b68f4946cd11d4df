"""kvlab.widgets.wall and kv_cache (the *_figure functions): the page-level wrappers agree with the kvlab functions they wrap and with docs/claims.md."""

from __future__ import annotations

import pytest

import kvlab


def test_race_landmarks_match_claims():
    lm = kvlab.race_figure()["landmarks"]
    assert lm["target"] == {"ratio": 10, "n": 19, "no_cache": 190, "cache": 19, "exact": True}
    assert lm["reply"] == {"n": 1000, "no_cache": 500500, "cache": 1000, "ratio": 500.5}


@pytest.mark.parametrize("n", [1, 2, 19, 300])
def test_race_figure_is_race_plus_landmarks(n):
    fig = kvlab.race_figure(n)
    fig.pop("landmarks")
    odometers = fig.pop("odometers")
    view = fig.pop("view")  # the widget's display strings (kvlab.widgets.views)
    assert view["n"] == f"{n:,}"
    assert fig == kvlab.race(n)
    assert odometers == kvlab.race_odometers(fig["no_cache"]["cumulative"], fig["cache"]["cumulative"])


def test_race_landmark_is_the_first_n_reaching_the_ratio():
    lm = kvlab.race_figure(5, reply=100, target_ratio=7)["landmarks"]["target"]
    assert lm["n"] == 13 and kvlab.race(12)["totals"]["ratio"] < 7 <= kvlab.race(13)["totals"]["ratio"]


@pytest.mark.parametrize("n, max_points", [(10, 128), (1024, 128), (4096, 50)])
def test_quadratic_wall_figure_samples_the_full_figure(n, max_points):
    full = kvlab.quadratic_wall(n=n)
    fig = kvlab.quadratic_wall_figure(n=n, max_points=max_points)
    assert len(fig["tokens"]) <= max_points and fig["tokens"][0] == 1 and fig["tokens"][-1] == n
    for i, t in enumerate(fig["tokens"]):
        for side in ("no_cache", "cache"):
            assert fig[side]["attention_macs"][i] == full[side]["attention_macs"][t - 1]
            assert fig[side]["weight_macs"][i] == full[side]["weight_macs"][t - 1]
    assert fig["last"]["cache"]["cumulative_macs"] == full["cache"]["cumulative_macs"][-1]
    # the cache flattens the weights; attention still grows with the context (docs/claims.md)
    assert fig["growth"]["cache"]["weight"] == 1.0
    assert fig["growth"]["cache"]["attention"] == n


def test_step_through_figure_equivalence_is_cache_equivalence_for_the_default_model():
    fig = kvlab.step_through_figure(prompt_len=6, steps=4, layers=2)
    ref = kvlab.cache_equivalence(prompt_len=6, steps=5, seed=0)
    eq = fig["equivalence"]
    assert eq["tokens_cache"] == ref["tokens_cache"] == fig["tokens"]
    assert eq["tokens_no_cache"] == ref["tokens_no_cache"]
    assert eq["max_abs_logit_diff"] == ref["max_abs_logit_diff"]
    assert eq["tokens_processed"] == {k: v["tokens_processed"] for k, v in ref["totals"].items()}


@pytest.mark.parametrize("layers", [1, 3, 8])
def test_step_through_figure_matches_step_through_and_cache_lengths(layers):
    fig = kvlab.step_through_figure(prompt_len=5, steps=3, layers=layers)
    eq = fig.pop("equivalence")
    view = fig.pop("view")  # the widget's display strings (kvlab.widgets.views): one per step
    assert len(view["steps"]) == len(fig["steps"])
    assert fig == kvlab.step_through(prompt_len=5, steps=3, layers=layers)
    assert eq["same_tokens"] and eq["tokens_cache"] == fig["tokens"]
    for s in fig["steps"]:
        want = kvlab.cache_lengths(5, s["step"])
        assert (s["phase"], s["cache_len_before"], s["cache_len_after"]) == (
            want["phase"],
            want["cache_len_before"],
            want["cache_len_after"],
        )
