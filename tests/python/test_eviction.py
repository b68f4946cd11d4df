"""Eviction policies: invariants over policies x sequences, behaviour by name, H2O against a reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvlab.core.attention import softmax
from kvlab.reuse.eviction import (
    AttentionSinks,
    FullCache,
    HeavyHitters,
    SlidingWindow,
    make_policy,
    simulate,
    toy_attention_logits,
)

POLICY_FACTORIES = {
    "full": lambda: FullCache(),
    "window-1": lambda: SlidingWindow(1),
    "window-5": lambda: SlidingWindow(5),
    "sinks-0+3": lambda: AttentionSinks(0, 3),
    "sinks-2+4": lambda: AttentionSinks(2, 4),
    "h2o-6/2": lambda: HeavyHitters(6, 2),
    "h2o-3/3": lambda: HeavyHitters(3, 3),
}


@pytest.mark.parametrize("name", sorted(POLICY_FACTORIES))
@pytest.mark.parametrize("n,seed", [(1, 0), (7, 1), (40, 2)])
def test_invariants_hold_at_every_step(name, n, seed):
    policy = POLICY_FACTORIES[name]()
    seen, gone = [], set()
    for s in simulate(policy, n, seed=seed):
        seen.append(s["position"])
        cached = s["cached"]
        assert cached == sorted(set(cached)), "cached positions ascending, no duplicates"
        assert set(cached) <= set(seen)
        assert policy.budget is None or len(cached) <= policy.budget
        assert cached[-1] == s["position"], "the newest token is always kept"
        assert not set(s["evicted"]) & set(cached)
        assert not gone & set(cached), "an evicted token never comes back"
        gone |= set(s["evicted"])
        assert gone | set(cached) == set(seen)
        assert s["cache_len_after"] == len(cached)
        assert 0.0 <= s["attention_kept"] <= 1.0 + 1e-9


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(["full", "window", "sinks", "h2o"]),
    st.integers(1, 60),
    st.integers(1, 10),
    st.integers(0, 5),
    st.integers(1, 6),
    st.integers(0, 8),
    st.integers(0, 999),
)
def test_random_policies_respect_budget_keep_newest_and_keep_sinks(kind, n, window, n_sink, recent, heavy, seed):
    policy = make_policy(kind, window=window, n_sink=n_sink, budget=recent + heavy, recent=recent)
    for s in simulate(policy, n, seed=seed):
        t, cached = s["position"], s["cached"]
        if policy.budget is not None:
            assert len(cached) == min(t + 1, policy.budget)
        assert t in cached
        if kind == "sinks":
            assert set(range(min(n_sink, t + 1))) <= set(cached)
        if kind in ("window", "sinks"):
            assert set(range(max(0, t - window + 1), t + 1)) <= set(cached)
        if kind == "h2o":
            assert set(range(max(0, t - recent + 1), t + 1)) <= set(cached)


def test_sliding_window_drops_oldest_token_first():
    policy = SlidingWindow(3)
    dropped = []
    for t in range(6):
        policy.append(t)
        dropped += policy.evict()
    assert dropped == [0, 1, 2]
    assert policy.cached == [3, 4, 5]


def test_attention_sinks_keep_the_first_tokens_and_drop_the_oldest_after_them():
    policy = AttentionSinks(n_sink=2, window=3)
    dropped = []
    for t in range(8):
        policy.append(t)
        dropped += policy.evict()
    assert policy.cached == [0, 1, 5, 6, 7]
    assert dropped == [2, 3, 4]


def test_full_cache_never_evicts():
    timeline = simulate(FullCache(), 25, seed=3)
    assert all(s["evicted"] == [] for s in timeline)
    assert timeline[-1]["cached"] == list(range(25))
    assert all(s["attention_kept"] == pytest.approx(1.0) for s in timeline)


def test_sinks_with_no_sinks_behave_like_a_sliding_window():
    a = [s["cached"] for s in simulate(AttentionSinks(0, 4), 20, seed=5)]
    b = [s["cached"] for s in simulate(SlidingWindow(4), 20, seed=5)]
    assert a == b


def test_h2o_with_no_heavy_budget_behaves_like_a_sliding_window():
    a = [s["cached"] for s in simulate(HeavyHitters(budget=4, recent=4), 20, seed=6)]
    b = [s["cached"] for s in simulate(SlidingWindow(4), 20, seed=6)]
    assert a == b


def reference_h2o(scores, budget, recent):
    """H2O from scratch: accumulate softmax weights over the cached set; drop the lowest outside the recent window."""
    cached, acc, timeline = [], {}, []
    for t in range(scores.shape[0]):
        cached.append(t)
        acc[t] = 0.0
        logits = np.array([scores[t, j] for j in cached])
        w = np.exp(logits - logits.max())
        w /= w.sum()
        for j, wj in zip(cached, w):
            acc[j] += wj
        while len(cached) > budget:
            candidates = sorted(cached[: len(cached) - recent], key=lambda j: (acc[j], j))
            cached.remove(candidates[0])
            del acc[candidates[0]]
        timeline.append(list(cached))
    return timeline


@pytest.mark.parametrize("budget,recent,seed", [(6, 2, 0), (8, 3, 1), (5, 1, 2), (10, 4, 3)])
def test_h2o_matches_a_from_scratch_reference(budget, recent, seed):
    scores = toy_attention_logits(40, seed)
    got = [s["cached"] for s in simulate(HeavyHitters(budget, recent), 40, scores=scores)]
    assert got == reference_h2o(scores, budget, recent)


def test_h2o_keeps_a_token_that_draws_heavy_attention_long_after_the_window_passed_it():
    n = 30
    scores = np.zeros((n, n))
    scores[:, 3] = 5.0  # every query looks hard at token 3
    policy = HeavyHitters(budget=5, recent=2)
    timeline = simulate(policy, n, scores=scores)
    assert 3 in timeline[-1]["cached"]
    assert 3 not in [s["cached"] for s in simulate(SlidingWindow(5), n, scores=scores)][-1]


def test_h2o_evicts_the_lowest_accumulated_score_outside_the_recent_window():
    policy = HeavyHitters(budget=3, recent=1)
    for t, w in enumerate([[1.0], [0.2, 0.8], [0.5, 0.1, 0.4]]):
        policy.append(t)
        policy.observe(np.array(w))
        assert policy.evict() == []
    policy.append(3)
    policy.observe(np.array([0.1, 0.6, 0.2, 0.1]))
    # scores: 0 -> 1.8, 1 -> 1.5, 2 -> 0.6, 3 is recent
    assert policy.evict() == [2]


def test_sinks_keep_more_attention_than_a_window_of_the_same_size_when_token_0_is_a_sink():
    # the toy attention makes token 0 a sink, as StreamingLLM observed in trained models
    window = np.mean([s["attention_kept"] for s in simulate(SlidingWindow(8), 64, seed=0)])
    sinks = np.mean([s["attention_kept"] for s in simulate(AttentionSinks(1, 7), 64, seed=0)])
    assert sinks > window


def test_simulate_feeds_the_policy_softmax_over_cached_positions():
    scores = toy_attention_logits(5, seed=9)
    seen = []

    class Spy(FullCache):
        def observe(self, weights):
            seen.append(np.array(weights))

    simulate(Spy(), 5, scores=scores)
    np.testing.assert_allclose(seen[-1], softmax(scores[4, :5]))


def test_positions_must_increase():
    policy = SlidingWindow(2)
    policy.append(3)
    with pytest.raises(ValueError, match="increase"):
        policy.append(3)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"policy": "lru"}, "policy"),
        ({"policy": "window", "window": 0}, "window"),
        ({"policy": "h2o", "budget": 2, "recent": 3}, "budget"),
        ({"policy": "sinks", "n_sink": -1}, "n_sink"),
    ],
)
def test_bad_policy_parameters_are_rejected_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_policy(**kwargs)


def test_h2o_breaks_score_ties_by_evicting_the_oldest():
    policy = HeavyHitters(budget=2, recent=1)
    for t, w in enumerate([[0.5], [0.0, 0.5], [0.0, 0.0, 1.0]]):
        policy.append(t)
        policy.observe(np.array(w))
        dropped = policy.evict()
    assert dropped == [0]  # 0 and 1 both scored 0.5


# Exact values: the defaults the pages use, the toy scores, a whole timeline, the messages.


def test_make_policy_defaults_exactly():
    assert make_policy("full").describe() == {"policy": "full", "budget": None}
    assert make_policy("window").describe() == {"policy": "window", "budget": 8, "window": 8}
    assert make_policy("sinks").describe() == {"policy": "sinks", "budget": 12, "window": 8, "n_sink": 4}
    assert make_policy("h2o").describe() == {"policy": "h2o", "budget": 12, "recent": 4, "heavy": 8}
    assert HeavyHitters(budget=10, recent=3).describe()["heavy"] == 7


def test_toy_attention_logits_are_pinned():
    """Seed 0, d=16, sink strength 3 (the defaults): the numbers every eviction figure starts from."""
    want = np.array(
        [
            [1.937558535259, 0.904972597501, 0.388067631723],
            [3.03812928889, 0.960432685992, -0.082315822684],
            [4.734383512447, 1.800554419816, 1.381286717284],
        ]
    )
    np.testing.assert_allclose(toy_attention_logits(3), want, rtol=0, atol=1e-11)
    np.testing.assert_allclose(toy_attention_logits(3, seed=0, d=16, sink_strength=3.0), want, rtol=0, atol=1e-11)
    assert not np.allclose(toy_attention_logits(3, seed=1), want)


def test_the_first_token_is_a_sink_only_when_asked():
    with_sink = softmax(toy_attention_logits(64, seed=5)[63])[0]
    without = softmax(toy_attention_logits(64, seed=5, sink_strength=0.0)[63])[0]
    assert with_sink > 5 * without


def test_a_whole_timeline_exactly():
    timeline = simulate(make_policy("sinks", window=2, n_sink=1), 5)
    assert timeline == [
        {
            "step": 0,
            "position": 0,
            "cache_len_before": 0,
            "cache_len_after": 1,
            "cached": [0],
            "evicted": [],
            "attention_kept": 1.0,
        },
        {
            "step": 1,
            "position": 1,
            "cache_len_before": 1,
            "cache_len_after": 2,
            "cached": [0, 1],
            "evicted": [],
            "attention_kept": 1.0,
        },
        {
            "step": 2,
            "position": 2,
            "cache_len_before": 2,
            "cache_len_after": 3,
            "cached": [0, 1, 2],
            "evicted": [],
            "attention_kept": 1.0,
        },
        {
            "step": 3,
            "position": 3,
            "cache_len_before": 3,
            "cache_len_after": 3,
            "cached": [0, 2, 3],
            "evicted": [1],
            "attention_kept": 0.996069,
        },
        {
            "step": 4,
            "position": 4,
            "cache_len_before": 3,
            "cache_len_after": 3,
            "cached": [0, 3, 4],
            "evicted": [2],
            "attention_kept": 0.850669,
        },
    ]


def test_simulate_uses_its_seed():
    for seed in (0, 3):
        given = simulate(make_policy("h2o", budget=4, recent=2), 12, scores=toy_attention_logits(12, seed))
        assert simulate(make_policy("h2o", budget=4, recent=2), 12, seed=seed) == given
    assert simulate(make_policy("h2o", budget=4, recent=2), 12) == simulate(
        make_policy("h2o", budget=4, recent=2), 12, seed=0
    )
    assert simulate(make_policy("h2o", budget=4, recent=2), 12, seed=3) != simulate(
        make_policy("h2o", budget=4, recent=2), 12
    )


def test_h2o_scores_start_at_zero_and_add_up_the_attention():
    policy = HeavyHitters(budget=4, recent=1)
    policy.append(0)
    assert policy.scores == {0: 0.0}
    policy.observe(np.array([1.0]))
    policy.append(1)
    policy.observe(np.array([0.25, 0.75]))
    assert policy.scores == {0: 1.25, 1: 0.75}


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: make_policy("lru"), "policy must be one of ['full', 'h2o', 'sinks', 'window'], got 'lru'"),
        (lambda: SlidingWindow(0), "window must be >= 1, got 0"),
        (lambda: AttentionSinks(-1, 4), "n_sink must be >= 0, got -1"),
        (lambda: HeavyHitters(4, 0), "recent must be >= 1, got 0"),
        (lambda: HeavyHitters(2, 3), "budget (2) must be >= recent (3)"),
        (lambda: simulate(FullCache(), 0), "n must be >= 1, got 0"),
    ],
)
def test_error_messages_exactly(make, message):
    with pytest.raises(ValueError) as err:
        make()
    assert str(err.value) == message


def test_observe_and_append_messages():
    policy = HeavyHitters(4, 1)
    policy.append(2)
    with pytest.raises(ValueError) as err:
        policy.observe(np.array([0.5, 0.5]))
    assert str(err.value) == "observe: 2 weights for 1 cached positions"
    with pytest.raises(ValueError) as err:
        policy.append(1)
    assert str(err.value) == "positions must increase: got 1 after 2"
