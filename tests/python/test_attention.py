"""Attention against a brute-force reference written with plain Python loops."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvlab.core.attention import causal_mask, multi_head_attention, scaled_dot_product_attention, softmax


def brute_attention(q, k, v, causal=False, temperature=1.0):
    """One head, loops only: q (T, d), k (S, d), v (S, dv)."""
    T, d = q.shape
    S = k.shape[0]
    out = np.zeros((T, v.shape[1]))
    weights = np.zeros((T, S))
    for i in range(T):
        pos = S - T + i  # absolute position of query i
        visible = [j for j in range(S) if not causal or j <= pos]
        scores = [sum(q[i, c] * k[j, c] for c in range(d)) / math.sqrt(d) / temperature for j in visible]
        m = max(scores)
        exps = [math.exp(s - m) for s in scores]
        total = sum(exps)
        for j, e in zip(visible, exps):
            weights[i, j] = e / total
            out[i] += weights[i, j] * v[j]
    return out, weights


shapes = st.tuples(st.integers(1, 5), st.integers(0, 4), st.integers(1, 6))  # T, extra past, d


@settings(max_examples=40, deadline=None)
@given(shapes, st.booleans(), st.floats(0.2, 3.0), st.integers(0, 2**16))
def test_single_head_matches_brute_force(shape, causal, temperature, seed):
    T, extra, d = shape
    S = T + extra
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((T, d)), rng.standard_normal((S, d)), rng.standard_normal((S, d))
    out, w = scaled_dot_product_attention(q, k, v, causal=causal, temperature=temperature)
    ref_out, ref_w = brute_attention(q, k, v, causal=causal, temperature=temperature)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([(1, 1), (2, 1), (2, 2), (4, 1), (4, 2), (4, 4), (6, 3), (6, 2)]),
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(0, 2**16),
)
def test_grouped_query_heads_read_kv_head_h_div_group(heads, T, d, seed):
    H, G = heads
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((H, T, d)), rng.standard_normal((G, T, d)), rng.standard_normal((G, T, d))
    out, w = multi_head_attention(q, k, v, causal=True)
    for h in range(H):
        g = h // (H // G)
        ref_out, ref_w = brute_attention(q[h], k[g], v[g], causal=True)
        np.testing.assert_allclose(out[h], ref_out, atol=1e-12)
        np.testing.assert_allclose(w[h], ref_w, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 8), st.integers(1, 6), st.integers(0, 2**16))
def test_last_query_alone_equals_last_row_of_full_causal_attention(S, d, seed):
    # the identity a KV cache relies on: a new token's query against all cached keys
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((S, d)), rng.standard_normal((S, d)), rng.standard_normal((S, d))
    full_out, _ = scaled_dot_product_attention(q, k, v, causal=True)
    last_out, _ = scaled_dot_product_attention(q[-1:], k, v, causal=True)
    np.testing.assert_allclose(last_out[0], full_out[-1], atol=1e-12)


def test_causal_weights_are_zero_above_the_diagonal_and_rows_sum_to_one():
    rng = np.random.default_rng(1)
    q = k = v = rng.standard_normal((6, 4))
    _, w = scaled_dot_product_attention(q, k, v, causal=True)
    assert np.all(np.triu(w, 1) == 0)
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)


def test_causal_mask_with_more_keys_places_queries_last():
    m = causal_mask(2, 5)
    assert m.tolist() == [[j <= 3 for j in range(5)], [True] * 5]


def test_softmax_of_all_masked_row_is_zero():
    assert softmax(np.array([[-np.inf, -np.inf]])).tolist() == [[0.0, 0.0]]


def test_lower_temperature_sharpens_weights():
    rng = np.random.default_rng(2)
    q, k, v = rng.standard_normal((1, 4)), rng.standard_normal((5, 4)), rng.standard_normal((5, 4))
    _, sharp = scaled_dot_product_attention(q, k, v, temperature=0.2)
    _, flat = scaled_dot_product_attention(q, k, v, temperature=5.0)
    assert sharp.max() > flat.max()


@pytest.mark.parametrize("temperature", [0.0, -1.0])
def test_non_positive_temperature_is_rejected(temperature):
    x = np.ones((1, 2))
    with pytest.raises(ValueError, match="temperature"):
        scaled_dot_product_attention(x, x, x, temperature=temperature)


def test_kv_heads_must_divide_query_heads():
    with pytest.raises(ValueError, match="divide"):
        multi_head_attention(np.ones((3, 1, 2)), np.ones((2, 1, 2)), np.ones((2, 1, 2)))
