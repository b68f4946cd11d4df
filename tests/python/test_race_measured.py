"""kvlab.race_measured: the model-race's numbers from the browser's raw runs."""

from __future__ import annotations

import pytest

import kvlab


def run(tokens, ms):
    return {"tokens": tokens, "ms": ms}


def test_decode_steps_only_and_their_ratio():
    r = kvlab.race_measured(run([5, 6, 7, 8], [40, 1, 2, 3]), run([5, 6, 7, 8], [41, 4, 8, 12]), n_new=4, prompt_len=10)
    assert r["decode_ms"] == {"cache": 6.0, "no_cache": 24.0}  # the prefill (40, 41 ms) is left out
    assert r["speedup_decode"] == 4.0
    assert r["prefill_ms"] == 40.0
    assert (r["compared"], r["stopped"], r["identical"], r["first_difference"]) == (4, False, True, None)
    assert r["theory"] == kvlab.race_theory(prompt_len=10, n_new=4)


def test_first_difference_is_one_based_and_breaks_identity():
    r = kvlab.race_measured(run([5, 6, 7], [1, 1, 1]), run([5, 9, 7], [1, 2, 2]), n_new=3)
    assert (r["first_difference"], r["identical"]) == (2, False)


def test_a_stopped_race_compares_and_predicts_only_the_steps_both_finished():
    r = kvlab.race_measured(run([1, 2, 3, 4, 5], [9, 1, 1, 1, 1]), run([1, 2, 3], [9, 3, 5]), n_new=50, prompt_len=8)
    assert (r["compared"], r["stopped"], r["identical"]) == (3, True, False)
    assert r["decode_ms"] == {"cache": 2.0, "no_cache": 8.0}
    assert r["theory"]["n_new"] == 3
    one = kvlab.race_measured(run([1], [9]), None, n_new=50)
    assert (one["compared"], one["speedup_decode"], one["decode_ms"], one["theory"]) == (0, None, None, None)


def test_default_is_the_theory_itself():
    r = kvlab.race_measured()
    assert r["speedup_decode"] == pytest.approx(r["theory"]["speedup_decode"], rel=1e-9)


@pytest.mark.parametrize(
    ("cached", "field"),
    [
        (run([1, 2], [1]), "cached"),
        (run([1, 2], [1, "x"]), "cached.ms"),
        (run([1, -2], [1, 1]), "cached.tokens"),
        (run([1], [float("nan")]), "cached.ms"),
        ("nope", "cached"),
    ],
)
def test_malformed_runs_name_the_field(cached, field):
    with pytest.raises(ValueError, match=field.replace(".", r"\.")):
        kvlab.race_measured(cached, None)


def test_the_race_is_written_by_python_with_the_pages_formats():
    """The measured race's lines come from race_measured_view (no JS twin): the same keys and number formats as
    the page's lines before a race (model_race_view), the run's text, and a status line."""
    from kvlab.widgets import generate

    demo = kvlab.model_race_figure()
    r = kvlab.race_measured(n_new=demo["n_new"], prompt_len=demo["prompt_len"], text_written=" a b")
    page = generate.model_race_view(demo)
    assert set(r["view"]) == set(page) | {"status", "hover"}  # a race's status line and chart hovers
    ms = r["step_ms"]["cache"]
    assert len(r["view"]["hover"]["cache"]) == len(ms) - 1 == len(r["view"]["hover"]["no_cache"])
    assert r["view"]["hover"]["cache"][0] == (
        f"with the cache<br>new token at position {demo['prompt_len'] + 1}<br>{ms[1]:.2f} ms"
    )
    assert (r["view"]["theory"], r["view"]["theory_value"]) == (page["theory"], page["theory_value"])
    assert r["view"]["identical"] == f"✓ identical tokens: both runs wrote the same {demo['n_new']} tokens."
    assert r["view"]["wrote"] == " a b" and r["view"]["status"].startswith("Measured in your browser")
    stopped = kvlab.race_measured(run([1, 2], [9, 1]), None, n_new=50, prompt_cut=3)
    assert stopped["view"]["status"] == "Stopped: compared the 0 steps both runs finished."
    assert "(the first 3 cut off to fit the context)" in stopped["view"]["prompt"]
