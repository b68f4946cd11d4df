"""Prefix caches against a longest-common-prefix reference; LRU and block granularity by behaviour."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvlab.reuse.prefix_cache import (
    BlockPrefixCache,
    RadixPrefixCache,
    block_hashes,
    run_requests,
    shared_prompt_requests,
)


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
    # docs/claims.md: the first request computes the prefix, the other 999 reuse it: 999 x 100
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
@given(
    st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=20), min_size=1, max_size=10),
    st.integers(0, 12),
    st.integers(1, 4),
)
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


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"mode": "paged"}, "mode"),
        ({"mode": "blocks", "block_size": 0}, "block_size"),
        ({"mode": "radix", "capacity": -1}, "capacity"),
    ],
)
def test_bad_arguments_are_rejected_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_requests([[1, 2]], **kwargs)


def test_an_empty_request_is_rejected():
    with pytest.raises(ValueError, match="token"):
        RadixPrefixCache().process([])


# Exact readouts (worked by hand), defaults and messages.


def test_block_cache_readouts_exactly():
    cache = BlockPrefixCache(block_size=2, capacity_blocks=2, bytes_per_token=10)
    first = cache.process([1, 2, 3, 4, 5], flops_per_token=3.0)
    assert first == {
        "request": 0,
        "n_tokens": 5,
        "full_blocks": 2,
        "partial_block_tokens": 1,
        "blocks_hit": 0,
        "block_status": ["miss", "miss"],
        "tokens_reused": 0,
        "tokens_computed": 5,
        "flops_saved": 0.0,
        "blocks_evicted": 0,
        "blocks_not_stored": 0,
        "cached_blocks_after": 2,
        "cached_tokens_after": 4,
        "memory_bytes_held": 40,
    }
    # both blocks hit; the third has no room (the two cached blocks are in use by this request)
    second = cache.process([1, 2, 3, 4, 6, 7], flops_per_token=3.0)
    assert second == {
        "request": 1,
        "n_tokens": 6,
        "full_blocks": 3,
        "partial_block_tokens": 0,
        "blocks_hit": 2,
        "block_status": ["hit", "hit", "miss"],
        "tokens_reused": 4,
        "tokens_computed": 2,
        "flops_saved": 12.0,
        "blocks_evicted": 0,
        "blocks_not_stored": 1,
        "cached_blocks_after": 2,
        "cached_tokens_after": 4,
        "memory_bytes_held": 40,
    }
    # a new block evicts the least recently used one: [3, 4] (request 1 touched [1, 2] last)
    third = cache.process([9, 8, 7])
    assert third == {
        "request": 2,
        "n_tokens": 3,
        "full_blocks": 1,
        "partial_block_tokens": 1,
        "blocks_hit": 0,
        "block_status": ["miss"],
        "tokens_reused": 0,
        "tokens_computed": 3,
        "flops_saved": 0.0,
        "blocks_evicted": 1,
        "blocks_not_stored": 0,
        "cached_blocks_after": 2,
        "cached_tokens_after": 4,
        "memory_bytes_held": 40,
    }
    assert cache.process([1, 2, 3])["tokens_reused"] == 2  # [1, 2] survived
    assert set(cache.blocks.values()) == {2}  # each cached block holds block_size tokens


def test_radix_cache_readouts_exactly():
    cache = RadixPrefixCache(capacity_tokens=4, bytes_per_token=10)
    assert cache.process([1, 2, 3], flops_per_token=3.0) == {
        "request": 0,
        "n_tokens": 3,
        "tokens_reused": 0,
        "tokens_computed": 3,
        "flops_saved": 0.0,
        "tokens_evicted": 0,
        "cached_tokens_after": 3,
        "memory_bytes_held": 30,
    }
    # the edge splits at [1, 2]; 5 tokens > 4: the least recently used leaf [3] goes
    assert cache.process([1, 2, 5, 6], flops_per_token=3.0) == {
        "request": 1,
        "n_tokens": 4,
        "tokens_reused": 2,
        "tokens_computed": 2,
        "flops_saved": 6.0,
        "tokens_evicted": 1,
        "cached_tokens_after": 4,
        "memory_bytes_held": 40,
    }
    # 7 tokens: [5, 6] goes, then [1, 2] (a leaf now), 4 tokens evicted in one request
    assert cache.process([7, 8, 9]) == {
        "request": 2,
        "n_tokens": 3,
        "tokens_reused": 0,
        "tokens_computed": 3,
        "flops_saved": 0.0,
        "tokens_evicted": 4,
        "cached_tokens_after": 3,
        "memory_bytes_held": 30,
    }


def test_defaults():
    assert BlockPrefixCache().block_size == 16
    assert BlockPrefixCache().process(list(range(20)))["memory_bytes_held"] == 0  # one full block held, 0 bytes
    assert RadixPrefixCache().process([1, 2])["memory_bytes_held"] == 0
    block = BlockPrefixCache(2)
    block.process([1, 2, 3])
    assert block.process([1, 2, 3])["flops_saved"] == 2.0
    radix = RadixPrefixCache()
    radix.process([1, 2, 3])
    assert radix.process([1, 2, 3])["flops_saved"] == 2.0


def test_shared_prompt_requests_exactly():
    assert shared_prompt_requests(3, 2, 2) == [[0, 1, 2, 3], [0, 1, 4, 5], [0, 1, 6, 7]]
    assert shared_prompt_requests(2, 0, 1) == [[0], [1]]


def test_run_requests_exactly():
    requests = shared_prompt_requests(3, 4, 2)
    r = run_requests(requests)
    assert {k: v for k, v in r.items() if k != "requests"} == {
        "mode": "radix",
        "block_size": 1,
        "capacity": None,
        "total_tokens": 18,
        "tokens_reused": 8,
        "tokens_computed": 10,
        "flops_saved": 8.0,
        "hit_rate": 8 / 18,
    }
    assert [x["tokens_reused"] for x in r["requests"]] == [0, 4, 4]
    assert r["requests"][0]["memory_bytes_held"] == 0  # bytes_per_token defaults to 0
    r = run_requests(requests, mode="blocks", block_size=2, flops_per_token=2.0, bytes_per_token=3, capacity=3)
    assert {k: v for k, v in r.items() if k != "requests"} == {
        "mode": "blocks",
        "block_size": 2,
        "capacity": 3,
        "total_tokens": 18,
        "tokens_reused": 8,
        "tokens_computed": 10,
        "flops_saved": 16.0,
        "hit_rate": 8 / 18,
    }
    assert [x["cached_blocks_after"] for x in r["requests"]] == [3, 3, 3]  # capacity 3 blocks holds
    assert r["requests"][0]["memory_bytes_held"] == 3 * 2 * 3
    assert [x["flops_saved"] for x in r["requests"]] == [0.0, 8.0, 8.0]  # flops_per_token reaches each request
    assert run_requests([]) == {
        "mode": "radix",
        "block_size": 1,
        "capacity": None,
        "requests": [],
        "total_tokens": 0,
        "tokens_reused": 0,
        "tokens_computed": 0,
        "flops_saved": 0.0,
        "hit_rate": 0.0,
    }


def test_run_requests_default_block_size_is_16():
    r = run_requests(shared_prompt_requests(2, 32, 1), mode="blocks")
    assert r["block_size"] == 16
    assert r["requests"][1]["tokens_reused"] == 32


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda: block_hashes([1], 0), "block_size must be >= 1, got 0"),
        (lambda: BlockPrefixCache(0), "block_size must be >= 1, got 0"),
        (lambda: BlockPrefixCache(4, -1), "capacity_blocks must be >= 0 or None, got -1"),
        (lambda: RadixPrefixCache(-1), "capacity_tokens must be >= 0 or None, got -1"),
        (lambda: RadixPrefixCache().process([]), "a request needs at least one token"),
        (lambda: BlockPrefixCache().process([]), "a request needs at least one token"),
        (lambda: shared_prompt_requests(0, 1, 1), "need n_requests >= 1, prefix_len >= 0, suffix_len >= 1"),
        (lambda: shared_prompt_requests(1, -1, 1), "need n_requests >= 1, prefix_len >= 0, suffix_len >= 1"),
        (lambda: shared_prompt_requests(1, 1, 0), "need n_requests >= 1, prefix_len >= 0, suffix_len >= 1"),
        (lambda: run_requests([[1]], mode="lru"), "mode must be 'blocks' or 'radix', got 'lru'"),
    ],
)
def test_error_messages_exactly(make, message):
    with pytest.raises(ValueError) as err:
        make()
    assert str(err.value) == message
