"""KVCache phases and readouts; cached == uncached for random shapes and GQA layouts."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvlab.core.attention import multi_head_attention
from kvlab.core.cache import KVCache, cache_lengths
from kvlab.core.decoding import DecoderConfig, ToyDecoder


def run_cache(cache, prompt_len, n_decode, rng):
    """Drive `cache` like a model would; return the readouts and what was fed per layer."""
    fed_k = [[] for _ in range(cache.n_layers)]
    for step in range(n_decode + 1):
        n_new = prompt_len if step == 0 else 1
        cache.begin_step(n_new)
        for layer in range(cache.n_layers):
            k = rng.standard_normal((cache.n_kv_heads, n_new, cache.head_dim))
            cache.update(layer, k, -k)
            fed_k[layer].append(k)
        cache.end_step()
    return cache.readouts, fed_k


def test_prefill_fills_an_empty_cache_and_decode_step_k_goes_from_p_plus_k_minus_1_to_p_plus_k():
    p = 5
    readouts, _ = run_cache(KVCache(2, 1, 3), p, 4, np.random.default_rng(0))
    assert readouts[0]["phase"] == "prefill"
    assert (readouts[0]["cache_len_before"], readouts[0]["cache_len_after"]) == (0, p)
    for k in range(1, 5):
        assert readouts[k]["phase"] == "decode"
        assert (readouts[k]["cache_len_before"], readouts[k]["cache_len_after"]) == (p + k - 1, p + k)


def test_cache_lengths_formula_agrees_with_a_running_cache():
    readouts, _ = run_cache(KVCache(1, 2, 2), 3, 6, np.random.default_rng(1))
    for r in readouts:
        expected = cache_lengths(3, r["step"])
        assert {k: r[k] for k in expected if k != "step"} == {k: v for k, v in expected.items() if k != "step"}


@settings(max_examples=30, deadline=None)
@given(
    st.integers(1, 6), st.integers(0, 5), st.integers(1, 3), st.integers(1, 3), st.integers(1, 4), st.integers(0, 2**16)
)
def test_cache_holds_exactly_what_was_fed_in_order(prompt_len, n_decode, layers, kv_heads, head_dim, seed):
    cache = KVCache(layers, kv_heads, head_dim, bytes_per_value=4)
    readouts, fed = run_cache(cache, prompt_len, n_decode, np.random.default_rng(seed))
    assert len(cache) == prompt_len + n_decode
    for layer in range(layers):
        np.testing.assert_array_equal(cache.k[layer], np.concatenate(fed[layer], axis=1))
        np.testing.assert_array_equal(cache.v[layer], -np.concatenate(fed[layer], axis=1))
    entry = 2 * layers * kv_heads * head_dim * 4
    for r in readouts:
        assert r["cache_len_after"] - r["cache_len_before"] == r["n_new"]
        assert r["bytes_read"] == r["cache_len_before"] * entry
        assert r["bytes_written"] == r["n_new"] * entry
        for lay in r["layers"]:
            assert lay["read"] == [0, r["cache_len_before"]]
            assert lay["computed"] == [r["cache_len_before"], r["cache_len_after"]]
    assert cache.nbytes == len(cache) * entry


def test_decode_steps_add_exactly_one_token():
    cache = KVCache(1, 1, 2)
    cache.begin_step(2)
    cache.update(0, np.zeros((1, 2, 2)), np.zeros((1, 2, 2)))
    cache.end_step()
    with pytest.raises(ValueError, match="exactly one"):
        cache.begin_step(2)


def test_a_step_cannot_end_before_every_layer_is_updated():
    cache = KVCache(2, 1, 2)
    cache.begin_step(1)
    cache.update(0, np.zeros((1, 1, 2)), np.zeros((1, 1, 2)))
    with pytest.raises(RuntimeError, match=r"\[1\]"):
        cache.end_step()


def test_a_layer_cannot_be_updated_twice_in_one_step():
    cache = KVCache(1, 1, 2)
    cache.begin_step(1)
    cache.update(0, np.zeros((1, 1, 2)), np.zeros((1, 1, 2)))
    with pytest.raises(RuntimeError, match="already"):
        cache.update(0, np.zeros((1, 1, 2)), np.zeros((1, 1, 2)))


def test_update_checks_shapes():
    cache = KVCache(1, 2, 2)
    cache.begin_step(3)
    with pytest.raises(ValueError, match=r"\(2, 3, 2\)"):
        cache.update(0, np.zeros((1, 3, 2)), np.zeros((1, 3, 2)))


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from([(1, 1), (2, 1), (2, 2), (4, 2), (6, 3), (8, 2)]),
    st.integers(1, 5),
    st.integers(1, 5),
    st.integers(1, 4),
    st.integers(0, 2**16),
)
def test_incremental_attention_over_the_cache_equals_full_causal_attention(heads, prompt_len, n_decode, d, seed):
    H, G = heads
    S = prompt_len + n_decode
    rng = np.random.default_rng(seed)
    q, k, v = rng.standard_normal((H, S, d)), rng.standard_normal((G, S, d)), rng.standard_normal((G, S, d))
    full, _ = multi_head_attention(q, k, v, causal=True)  # (H, S, d)
    cache = KVCache(1, G, d)
    outs = []
    for step in range(n_decode + 1):
        lo, hi = (0, prompt_len) if step == 0 else (prompt_len + step - 1, prompt_len + step)
        cache.begin_step(hi - lo)
        k_all, v_all = cache.update(0, k[:, lo:hi], v[:, lo:hi])
        cache.end_step()
        out, _ = multi_head_attention(q[:, lo:hi], k_all, v_all, causal=True)
        outs.append(out)
    np.testing.assert_allclose(np.concatenate(outs, axis=1), full, atol=1e-12)


@settings(max_examples=12, deadline=None)
@given(
    st.sampled_from([(1, 1), (2, 1), (4, 4), (4, 2), (6, 3)]),
    st.integers(1, 3),
    st.integers(1, 6),
    st.integers(1, 6),
    st.integers(0, 1000),
)
def test_toy_decoder_outputs_are_the_same_with_and_without_cache(heads, layers, head_dim, prompt_len, seed):
    H, G = heads
    config = DecoderConfig(
        n_layers=layers, n_heads=H, n_kv_heads=G, head_dim=head_dim, d_model=8, d_ff=12, vocab_size=19, seed=seed
    )
    model = ToyDecoder(config)
    prompt = [int(t) for t in np.random.default_rng(seed).integers(0, 19, prompt_len)]
    a = model.generate(prompt, 5, use_cache=False)
    b = model.generate(prompt, 5, use_cache=True)
    assert a.tokens == b.tokens
    np.testing.assert_allclose(a.logits, b.logits, rtol=1e-9, atol=1e-9)


# Exact readouts and error messages (they reach the pages and the CLI as they are).


def test_cache_lengths_exact_readouts():
    assert cache_lengths(1, 0) == {
        "step": 0,
        "phase": "prefill",
        "n_new": 1,
        "cache_len_before": 0,
        "cache_len_after": 1,
    }
    assert cache_lengths(5, 0) == {
        "step": 0,
        "phase": "prefill",
        "n_new": 5,
        "cache_len_before": 0,
        "cache_len_after": 5,
    }
    assert cache_lengths(1, 1) == {
        "step": 1,
        "phase": "decode",
        "n_new": 1,
        "cache_len_before": 1,
        "cache_len_after": 2,
    }
    with pytest.raises(ValueError, match=r"^prompt_len must be >= 1, got 0$"):
        cache_lengths(0, 0)
    with pytest.raises(ValueError, match=r"^step must be >= 0, got -1$"):
        cache_lengths(3, -1)


def test_a_full_readout_with_bytes_read_and_written():
    cache = KVCache(n_layers=2, n_kv_heads=3, head_dim=4)  # 2 bytes per value by default
    assert cache.bytes_per_position == 2 * 2 * 3 * 4 * 2
    cache.begin_step(3)
    for layer in range(2):
        cache.update(layer, np.zeros((3, 3, 4)), np.zeros((3, 3, 4)))
    cache.end_step()
    cache.begin_step(1)
    for layer in range(2):
        cache.update(layer, np.zeros((3, 1, 4)), np.zeros((3, 1, 4)))
    assert cache.end_step() == {
        "step": 1,
        "phase": "decode",
        "n_new": 1,
        "cache_len_before": 3,
        "cache_len_after": 4,
        "bytes_read": 3 * 96,
        "bytes_written": 96,
        "cache_bytes_after": 4 * 96,
        "layers": [{"layer": 0, "read": [0, 3], "computed": [3, 4]}, {"layer": 1, "read": [0, 3], "computed": [3, 4]}],
    }
    assert cache.nbytes == 4 * 96


@pytest.mark.parametrize("args", [(0, 1, 1, 1), (1, 0, 1, 1), (1, 1, 0, 1), (1, 1, 1, 0)])
def test_every_dimension_must_be_positive(args):
    with pytest.raises(ValueError, match=r"^n_layers, n_kv_heads, head_dim and bytes_per_value must all be >= 1$"):
        KVCache(*args)


def test_steps_must_be_opened_and_closed_in_order():
    cache = KVCache(1, 1, 2)
    with pytest.raises(RuntimeError, match=r"^update: call begin_step first$"):
        cache.update(0, np.zeros((1, 1, 2)), np.zeros((1, 1, 2)))
    with pytest.raises(RuntimeError, match=r"^end_step: no step in progress$"):
        cache.end_step()
    with pytest.raises(ValueError, match=r"^prefill needs at least one prompt token, got n_new=0$"):
        cache.begin_step(0)
    cache.begin_step(2)
    with pytest.raises(RuntimeError, match=r"^begin_step: the previous step was not ended$"):
        cache.begin_step(1)
    with pytest.raises(ValueError, match=r"^layer must be in \[0, 1\), got 1$"):
        cache.update(1, np.zeros((1, 2, 2)), np.zeros((1, 2, 2)))
    with pytest.raises(ValueError, match="must be"):
        cache.update(0, np.zeros((1, 2, 2)), np.zeros((1, 3, 2)))  # a wrong V alone is refused too
