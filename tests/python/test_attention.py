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


def test_the_qkv_picture_draws_what_the_model_computes_and_caches():
    """kvlab.qkv_figure: k and v are the model's cache (GPT.layer_qkv against forward's presents), each
    query's weights are the model's attention row over the tokens up to it, and its output their mix."""
    import numpy as np

    from kvlab.core import tiny
    from kvlab.widgets.attention import qkv_figure

    sentence = "The cat sat on the mat because it was warm."
    model, tok = tiny.model_and_tokenizer()
    ids = tok.encode(sentence)
    _, cache, atts = model.forward(np.array([ids]), None, return_attention=True)
    for layer in (0, 2):
        q, k, v = model.layer_qkv(ids, layer)
        assert np.array_equal(k, cache[layer][0]) and np.array_equal(v, cache[layer][1])
    r = qkv_figure(sentence, layer=2, head=1, query=7)
    assert r["tokens"] == [tok.token_str(i) for i in ids] and r["query"] == 7
    att = np.asarray(atts[2][0, 1], dtype=np.float64)
    for i, qr in enumerate(r["queries"]):
        assert [x["weight"] for x in qr["reads"]] == [round(float(w), 4) for w in att[i, : i + 1]]
        assert len(qr["reads"]) == i + 1  # the causal mask: a token reads itself and the tokens before it
    kmax = np.abs(cache[2][0][0, 1]).max()
    assert [c["m"] for c in r["rows"][3]["k"]] == [round(abs(float(x)) / kmax, 2) for x in cache[2][0][0, 1, 3]]
    assert r["view"]["kept"].startswith(f"The cache keeps the k and v of all {len(ids)} tokens")
    long = qkv_figure("word " * 40)
    assert len(long["rows"]) == 16 and long["cut"] > 0 and long["view"]["cut"]
