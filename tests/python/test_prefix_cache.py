"""Prefix caches against a longest-common-prefix reference; LRU and block granularity by behaviour."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvlab.prefix_cache import BlockPrefixCache, RadixPrefixCache, block_hashes, run_requests, shared_prompt_requests


def lcp(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def reference_reuse(requests, block_size=None):
    """Unbounded cache: reuse = longest prefix shared with any earlier request, last token recomputed,
    rounded down to whole blocks when block_size is given."""
    out = []
    for i, r in enumerate(requests):
        best = max((lcp(r, p) for p in requests[:i]), default=0)
        if block_size is None:
            out.append(min(best, len(r) - 1))
        else:
            out.append(min(best // block_size, (len(r) - 1) // block_size) * block_size)
    return out


def test_one_system_prompt_shared_by_1000_requests_saves_99900_prefill_token_computations():
    # CLAIMS.md: the first request computes the prefix, the other 999 reuse it: 999 x 100
    requests = shared_prompt_requests(1000, prefix_len=100, suffix_len=20)
    for run in (run_requests(requests, mode="radix"), run_requests(requests, mode="blocks", block_size=1)):
        assert run["tokens_reused"] == 999 * 100 == 99_900
        assert run["requests"][0]["tokens_reused"] == 0
        assert all(r["tokens_reused"] == 100 for r in run["requests"][1:])
    assert run_requests(requests, mode="radix", flops_per_token=2.0)["flops_saved"] == 2.0 * 99_900


@pytest.mark.parametrize("block_size", [1, 3, 8, 16, 32, 64, 128])
def test_blocks_only_reuse_whole_blocks_of_the_shared_prefix(block_size):
    requests = shared_prompt_requests(5, prefix_len=100, suffix_len=20)
    run = run_requests(requests, mode="blocks", block_size=block_size)
    whole_blocks = sum(1 for start in range(0, 100 - block_size + 1, block_size))  # full blocks inside the prefix
    assert [r["tokens_reused"] for r in run["requests"]] == [0] + [whole_blocks * block_size] * 4


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=12), min_size=1, max_size=8), st.integers(1, 4))
def test_unbounded_caches_reuse_exactly_the_longest_shared_prefix(requests, block_size):
    radix = run_requests(requests, mode="radix")
    blocks = run_requests(requests, mode="blocks", block_size=block_size)
    assert [r["tokens_reused"] for r in radix["requests"]] == reference_reuse(requests)
    assert [r["tokens_reused"] for r in blocks["requests"]] == reference_reuse(requests, block_size)
    for run in (radix, blocks):
        assert all(r["tokens_reused"] + r["tokens_computed"] == r["n_tokens"] for r in run["requests"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 2), min_size=1, max_size=12), min_size=1, max_size=8))
def test_radix_tree_stores_each_distinct_prefix_once(requests):
    cache = RadixPrefixCache()
    for r in requests:
        cache.process(r)
    distinct_prefixes = {tuple(r[: i + 1]) for r in requests for i in range(len(r))}
    assert len(cache) == len(distinct_prefixes)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=20), min_size=1, max_size=10), st.integers(0, 12), st.integers(1, 4))
def test_bounded_caches_never_hold_more_than_their_capacity(requests, capacity, block_size):
    blocks = BlockPrefixCache(block_size, capacity_blocks=capacity, bytes_per_token=10)
    radix = RadixPrefixCache(capacity_tokens=capacity, bytes_per_token=10)
    for r in requests:
        b, x = blocks.process(r), radix.process(r)
        assert b["cached_blocks_after"] <= capacity
        assert x["cached_tokens_after"] <= capacity
        assert b["memory_bytes_held"] == b["cached_blocks_after"] * block_size * 10
        assert x["memory_bytes_held"] == x["cached_tokens_after"] * 10
        # a bounded cache can only reuse less than an unbounded one would
        assert b["tokens_reused"] <= len(r) - 1 and x["tokens_reused"] <= len(r) - 1


def test_block_hash_chains_over_the_parent():
    # the same block of tokens after a different prefix gets a different hash
    a = block_hashes([1, 2, 7, 7], 2)
    b = block_hashes([3, 4, 7, 7], 2)
    assert a[1] != b[1]
    assert block_hashes([1, 2, 7, 7, 9], 2) == a  # the trailing partial block has no hash
    assert len(set(a)) == 2


def test_a_repeated_prompt_still_recomputes_its_last_token():
    prompt = list(range(32))
    radix = run_requests([prompt, prompt], mode="radix")["requests"][1]
    blocks = run_requests([prompt, prompt], mode="blocks", block_size=16)["requests"][1]
    assert radix["tokens_computed"] == 1
    # the last block holds the last token, so block granularity recomputes that whole block
    assert blocks["tokens_computed"] == 16


def test_least_recently_used_blocks_are_evicted_first():
    cache = BlockPrefixCache(block_size=2, capacity_blocks=4)
    a, b, c = [1, 1, 1, 1, 0], [2, 2, 2, 2, 0], [3, 3, 3, 3, 0]
    cache.process(a)
    cache.process(b)
    cache.process(a)  # a is now more recent than b
    r = cache.process(c)  # needs 2 blocks: b's go
    assert r["blocks_evicted"] == 2
    assert cache.process(a + [5])["tokens_reused"] == 4
    assert cache.process(b + [5])["tokens_reused"] == 0


def test_a_finished_request_is_evicted_tail_first_so_its_shared_start_survives():
    cache = BlockPrefixCache(block_size=1, capacity_blocks=6)
    cache.process([1, 2, 3, 4, 0])  # 5 blocks
    cache.process([9, 8, 0])  # 3 new blocks, 2 evictions from the first request: its last two
    assert cache.process([1, 2, 3, 7])["tokens_reused"] == 3


def test_blocks_in_use_by_the_request_are_not_evicted_for_it():
    cache = BlockPrefixCache(block_size=1, capacity_blocks=2)
    r = cache.process([1, 2, 3, 4, 5])
    assert r["cached_blocks_after"] == 2
    assert r["blocks_not_stored"] == 3


def test_radix_cache_splits_an_edge_where_requests_diverge():
    cache = RadixPrefixCache()
    cache.process([1, 2, 3, 4])
    r = cache.process([1, 2, 9, 9])
    assert r["tokens_reused"] == 2
    assert len(cache) == 6
    assert cache.match([1, 2, 3, 4, 5]) == 4 and cache.match([1, 2, 9]) == 3 and cache.match([7]) == 0


def test_radix_cache_evicts_the_least_recently_used_leaf():
    cache = RadixPrefixCache(capacity_tokens=9)
    cache.process([0, 0, 0, 1, 1, 1])  # shared [0, 0, 0] + leaf [1, 1, 1]
    cache.process([0, 0, 0, 2, 2, 2])  # 9 tokens held
    r = cache.process([0, 0, 0, 3, 3, 3])  # 12 > 9: the [1, 1, 1] leaf (oldest) goes
    assert r["tokens_evicted"] == 3 and len(cache) == 9
    assert cache.match([0, 0, 0, 1]) == 3 and cache.match([0, 0, 0, 2]) == 4


@pytest.mark.parametrize("kwargs,match", [({"mode": "paged"}, "mode"), ({"mode": "blocks", "block_size": 0}, "block_size"), ({"mode": "radix", "capacity": -1}, "capacity")])
def test_bad_arguments_are_rejected_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_requests([[1, 2]], **kwargs)


def test_an_empty_request_is_rejected():
    with pytest.raises(ValueError, match="token"):
        RadixPrefixCache().process([])
