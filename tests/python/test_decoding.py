"""Decoding with and without a cache: same outputs, counted work against brute-force counts."""

import numpy as np
import pytest

from kvlab.core.decoding import DecoderConfig, ToyDecoder, decoding_costs, step_cost, times_processed

CONFIGS = {
    "mha": DecoderConfig(n_layers=2, n_heads=4, n_kv_heads=4, head_dim=4, d_model=16, d_ff=32, vocab_size=23, seed=1),
    "gqa": DecoderConfig(n_layers=3, n_heads=6, n_kv_heads=2, head_dim=4, d_model=12, d_ff=20, vocab_size=31, seed=2),
    "mqa": DecoderConfig(n_layers=1, n_heads=4, n_kv_heads=1, head_dim=8, d_model=24, d_ff=16, vocab_size=17, seed=3),
}


@pytest.fixture(scope="module", params=sorted(CONFIGS))
def runs(request):
    config = CONFIGS[request.param]
    model = ToyDecoder(config)
    prompt = [3, 1, 4, 1, 5]
    return config, prompt, model.generate(prompt, 7, use_cache=False), model.generate(prompt, 7, use_cache=True)


def test_cached_and_uncached_decoding_give_identical_tokens_and_logits(runs):
    _, _, plain, cached = runs
    assert plain.tokens == cached.tokens
    np.testing.assert_allclose(plain.logits, cached.logits, rtol=1e-10, atol=1e-10)


def test_hidden_state_of_a_position_depends_only_on_earlier_tokens():
    model = ToyDecoder(CONFIGS["gqa"])
    tokens = [5, 9, 2, 7, 7, 1]
    full = model.forward(tokens)
    for i in range(len(tokens)):
        np.testing.assert_allclose(model.forward(tokens[: i + 1])[-1], full[i], atol=1e-10)


def test_counted_costs_equal_the_closed_form(runs):
    config, prompt, plain, cached = runs
    for run, use_cache in ((plain, False), (cached, True)):
        expected = decoding_costs(config, len(prompt), len(run.steps), use_cache)
        assert [s["step_cost"] for s in run.steps] == [e["step_cost"] for e in expected]


def brute_counts(config, prompt_len, n_steps, use_cache):
    """Count the work by enumerating every (step, token) and every (query, key) pair."""
    tokens = kv = attn_pairs = read_entries = written_entries = 0
    for step in range(n_steps):
        seq_len = prompt_len + step  # tokens in the sequence after this step
        new = list(range(seq_len)) if (step == 0 or not use_cache) else [seq_len - 1]
        tokens += len(new)
        kv += 2 * config.n_layers * config.n_kv_heads * len(new)
        for query in new:
            attn_pairs += query + 1  # keys 0..query
        if use_cache:
            read_entries += seq_len - len(new)
            written_entries += len(new)
    return tokens, kv, attn_pairs, read_entries, written_entries


@pytest.mark.parametrize("use_cache", [False, True])
@pytest.mark.parametrize("prompt_len,n_steps", [(1, 1), (1, 19), (5, 7), (3, 30)])
def test_cumulative_counts_match_brute_force_enumeration(use_cache, prompt_len, n_steps):
    config = CONFIGS["gqa"]
    tokens, kv, pairs, read, written = brute_counts(config, prompt_len, n_steps, use_cache)
    total = decoding_costs(config, prompt_len, n_steps, use_cache)[-1]["cumulative"]
    entry = 2 * config.n_layers * config.n_kv_heads * config.head_dim * config.bytes_per_value
    assert total["tokens_processed"] == tokens
    assert total["kv_vectors_computed"] == kv
    assert total["attention_macs"] == pairs * config.n_layers * config.n_heads * 2 * config.head_dim
    assert total["cache_bytes_read"] == read * entry
    assert total["cache_bytes_written"] == written * entry


def test_at_19_tokens_the_uncached_model_does_exactly_10x_the_token_computations():
    # docs/claims.md: (1 + ... + 19) / 19 = 190 / 19 = 10, measured on the running model
    model = ToyDecoder(DecoderConfig())
    plain = model.generate([7], 19, use_cache=False).steps[-1]["cumulative"]["tokens_processed"]
    cached = model.generate([7], 19, use_cache=True).steps[-1]["cumulative"]["tokens_processed"]
    assert (plain, cached) == (sum(range(1, 20)), 19) == (190, 19)
    assert plain / cached == 10


def test_a_1000_token_reply_costs_500500_token_computations_without_a_cache():
    config = DecoderConfig()
    plain = decoding_costs(config, 1, 1000, use_cache=False)[-1]["cumulative"]["tokens_processed"]
    cached = decoding_costs(config, 1, 1000, use_cache=True)[-1]["cumulative"]["tokens_processed"]
    assert (plain, cached) == (1000 * 1001 // 2, 1000) == (500_500, 1000)


def test_by_token_50_token_1_was_processed_50_times_and_token_10_41_times():
    counts = times_processed(50, use_cache=False)
    assert counts[0] == 50 and counts[9] == 41
    assert counts == [50 - i for i in range(50)]  # token i (1-based) is processed at steps i..50
    assert times_processed(50, use_cache=True) == [1] * 50


def test_cache_bytes_written_equal_final_cache_size(runs):
    config, prompt, _, cached = runs
    entry = 2 * config.n_layers * config.n_kv_heads * config.head_dim * config.bytes_per_value
    final = cached.steps[-1]
    assert final["cache_len_after"] == len(prompt) + len(cached.steps) - 1
    assert final["cumulative"]["cache_bytes_written"] == final["cache_len_after"] * entry


def test_without_a_cache_nothing_is_read_from_or_written_to_a_cache(runs):
    _, _, plain, _ = runs
    assert plain.steps[-1]["cumulative"]["cache_bytes_read"] == 0
    assert plain.steps[-1]["cumulative"]["cache_bytes_written"] == 0


def test_uncached_per_step_work_grows_while_cached_decode_work_is_flat():
    config = DecoderConfig()
    plain = [step_cost(config, t, 1, use_cache=False).projection_macs for t in range(1, 6)]
    cached = [step_cost(config, t, 1, use_cache=True).projection_macs for t in range(1, 6)]
    assert all(b > a for a, b in zip(plain, plain[1:]))
    assert len(set(cached)) == 1


def test_gqa_computes_fewer_kv_vectors_than_mha():
    mha = DecoderConfig(n_heads=4, n_kv_heads=4)
    gqa = DecoderConfig(n_heads=4, n_kv_heads=1)
    assert step_cost(gqa, 0, 10, True).kv_vectors_computed * 4 == step_cost(mha, 0, 10, True).kv_vectors_computed


@pytest.mark.parametrize("field,value", [("n_layers", 0), ("head_dim", 0), ("n_kv_heads", 3)])
def test_bad_config_is_rejected(field, value):
    with pytest.raises(ValueError, match="n_kv_heads|" + field):
        DecoderConfig(**{field: value})


def test_generate_rejects_out_of_vocabulary_prompt():
    with pytest.raises(ValueError, match="prompt"):
        ToyDecoder(DecoderConfig(vocab_size=8)).generate([8], 2, use_cache=True)
