"""Prefix (prompt) caching across requests.

Within one reply the KV cache saves recomputation; across requests it is the
prefix cache that lets a new request skip the prefill of a prompt start it
shares with an earlier one. Two designs:

- `BlockPrefixCache` (vLLM automatic prefix caching): the prompt is cut into
  blocks of `block_size` tokens; block i's hash covers the parent block's hash
  and block i's tokens, so equal hashes mean equal *prefixes*. Only full blocks
  are cached; a hit is the longest run of leading blocks found. Freed blocks go
  on an LRU list (a finished request's blocks are freed tail first, so the
  shared start of a prompt is evicted last).
- `RadixPrefixCache` (SGLang RadixAttention): a radix tree over tokens, so a
  hit can end on any token; LRU eviction removes whole leaves.

Both always recompute a prompt's last token (the model needs its logits), as
vLLM does with `max_cache_hit_length = num_tokens - 1`.
"""

from __future__ import annotations

import hashlib
from kvlab.inputs import short_repr
from collections import OrderedDict
from functools import lru_cache

ROOT_HASH = "root"


@lru_cache(maxsize=1 << 16)
def block_hash(parent: str, block: tuple[int, ...]) -> str:
    """Hash of one full block, chained to its parent's hash (sha256, 16 hex digits).

    sha256 rather than Python's hash(): the same on 64-bit CPython and on
    32-bit Pyodide, so a page and a test agree. Memoised: a shared prefix is
    hashed once, not once per request.
    """
    text = parent + ":" + ",".join(str(t) for t in block)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def block_hashes(tokens: list[int], block_size: int) -> list[str]:
    """Chained hashes of the full blocks of `tokens` (a trailing partial block has none).

    >>> len(block_hashes(list(range(100)), 16))
    6
    >>> block_hashes([1, 2, 3, 4], 2)[1] == block_hashes([1, 2, 3, 4, 5], 2)[1]
    True
    >>> block_hashes([9, 2, 3, 4], 2)[1] == block_hashes([1, 2, 3, 4], 2)[1]
    False
    """
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, got {block_size}")
    out, parent = [], ROOT_HASH
    for start in range(0, len(tokens) - block_size + 1, block_size):
        parent = block_hash(parent, tuple(tokens[start : start + block_size]))
        out.append(parent)
    return out


def _check_tokens(tokens: list[int]) -> list[int]:
    tokens = [int(t) for t in tokens]
    if not tokens:
        raise ValueError("a request needs at least one token")
    return tokens


class BlockPrefixCache:
    """vLLM-style automatic prefix caching over hashed blocks with LRU eviction.

    capacity_blocks: most blocks kept (None: unbounded). bytes_per_token: KV
    bytes of one token (see the memory calculator), for `memory_bytes_held`.

    >>> cache = BlockPrefixCache(block_size=4)
    >>> cache.process(list(range(10)))["tokens_reused"]
    0
    >>> r = cache.process(list(range(9)) + [99])
    >>> r["blocks_hit"], r["tokens_reused"], r["tokens_computed"]
    (2, 8, 2)
    """

    def __init__(self, block_size: int = 16, capacity_blocks: int | None = None, bytes_per_token: int = 0):
        if block_size < 1:
            raise ValueError(f"block_size must be >= 1, got {block_size}")
        if capacity_blocks is not None and capacity_blocks < 0:
            raise ValueError(f"capacity_blocks must be >= 0 or None, got {capacity_blocks}")
        self.block_size = block_size
        self.capacity_blocks = capacity_blocks
        self.bytes_per_token = bytes_per_token
        self.blocks: OrderedDict[str, int] = OrderedDict()  # hash -> tokens in block; first = least recently used
        self.n_requests = 0

    def __len__(self) -> int:
        return len(self.blocks)

    def process(self, tokens: list[int], flops_per_token: float = 1.0) -> dict:
        """Prefill one request: look up, compute the misses, cache its full blocks. Returns a readout."""
        tokens = _check_tokens(tokens)
        hashes = block_hashes(tokens, self.block_size)
        max_hit_blocks = (len(tokens) - 1) // self.block_size  # the last token is always recomputed
        hit = 0
        while hit < min(max_hit_blocks, len(hashes)) and hashes[hit] in self.blocks:
            hit += 1
        reused = hit * self.block_size

        # store this request's full blocks; its own blocks are in use and cannot be evicted
        in_use, evicted, not_stored = set(hashes), [], 0
        free = None  # eviction candidates, least recently used first (listed once, when first needed)
        for h in hashes:
            if h in self.blocks:
                continue
            if self.capacity_blocks is not None and len(self.blocks) >= self.capacity_blocks:
                if free is None:
                    free = iter([b for b in self.blocks if b not in in_use])
                victim = next(free, None)
                if victim is None:
                    not_stored += 1
                    continue
                del self.blocks[victim]
                evicted.append(victim)
            self.blocks[h] = self.block_size
        # the request finishes: free its blocks tail first, so the first block is the most recently used
        for h in reversed(hashes):
            if h in self.blocks:
                self.blocks.move_to_end(h)

        self.n_requests += 1
        return {
            "request": self.n_requests - 1,
            "n_tokens": len(tokens),
            "full_blocks": len(hashes),
            "partial_block_tokens": len(tokens) % self.block_size,
            "blocks_hit": hit,
            "block_status": ["hit"] * hit + ["miss"] * (len(hashes) - hit),
            "tokens_reused": reused,
            "tokens_computed": len(tokens) - reused,
            "flops_saved": reused * flops_per_token,
            "blocks_evicted": len(evicted),
            "blocks_not_stored": not_stored,
            "cached_blocks_after": len(self.blocks),
            "cached_tokens_after": len(self.blocks) * self.block_size,
            "memory_bytes_held": len(self.blocks) * self.block_size * self.bytes_per_token,
        }


class _Node:
    __slots__ = ("key", "children", "parent", "last_used")

    def __init__(self, key: tuple[int, ...], parent: _Node | None):
        self.key = key  # the tokens on the edge into this node
        self.children: dict[int, _Node] = {}  # first token of the child's edge -> child
        self.parent = parent
        self.last_used = 0


class RadixPrefixCache:
    """SGLang-style radix tree: token-granular prefix hits, LRU eviction of leaves.

    Unlike BlockPrefixCache: a hit may end on any token (no partial-block
    loss), and the tree stores each shared token once. capacity_tokens: most
    tokens held between requests (None: unbounded); a request is always
    prefilled in full, then the tree is trimmed.

    >>> cache = RadixPrefixCache()
    >>> _ = cache.process([1, 2, 3, 4, 5])
    >>> r = cache.process([1, 2, 3, 9])
    >>> r["tokens_reused"], r["tokens_computed"], r["cached_tokens_after"]
    (3, 1, 6)
    """

    def __init__(self, capacity_tokens: int | None = None, bytes_per_token: int = 0):
        if capacity_tokens is not None and capacity_tokens < 0:
            raise ValueError(f"capacity_tokens must be >= 0 or None, got {capacity_tokens}")
        self.capacity_tokens = capacity_tokens
        self.bytes_per_token = bytes_per_token
        self.root = _Node((), None)
        self.n_tokens = 0
        self.n_requests = 0
        self._clock = 0

    def __len__(self) -> int:
        return self.n_tokens

    def match(self, tokens: list[int]) -> int:
        """Length of the longest cached prefix of `tokens`."""
        node, i = self.root, 0
        while i < len(tokens) and tokens[i] in node.children:
            child = node.children[tokens[i]]
            n = _common(child.key, tokens[i:])
            i += n
            if n < len(child.key):
                break
            node = child
        return i

    def _insert(self, tokens: list[int]) -> list[_Node]:
        """Insert `tokens`, splitting edges as needed; mark the path as just used and return it."""
        node, i, path = self.root, 0, []
        while i < len(tokens):
            child = node.children.get(tokens[i])
            if child is None:
                leaf = _Node(tuple(tokens[i:]), node)
                node.children[tokens[i]] = leaf
                self.n_tokens += len(leaf.key)
                path.append(leaf)
                break
            n = _common(child.key, tokens[i:])
            if n < len(child.key):  # split the edge: node -> mid -> child
                mid = _Node(child.key[:n], node)
                child.key, child.parent = child.key[n:], mid
                mid.children[child.key[0]] = child
                node.children[mid.key[0]] = mid
                child = mid
            path.append(child)
            node, i = child, i + n
        self._clock += 1
        for n in path:
            n.last_used = self._clock
        return path

    def _evict(self) -> int:
        """Remove least recently used leaves (whole edges, as SGLang does) until within capacity."""
        evicted = 0
        while self.capacity_tokens is not None and self.n_tokens > self.capacity_tokens:
            leaves = [n for n in self._nodes() if not n.children]
            leaf = min(leaves, key=lambda n: n.last_used)
            del leaf.parent.children[leaf.key[0]]
            self.n_tokens -= len(leaf.key)
            evicted += len(leaf.key)
        return evicted

    def _nodes(self):
        stack = list(self.root.children.values())
        while stack:
            n = stack.pop()
            yield n
            stack.extend(n.children.values())

    def process(self, tokens: list[int], flops_per_token: float = 1.0) -> dict:
        """Prefill one request: reuse the longest cached prefix, insert the rest; once the
        request is done, evict LRU leaves until the tree fits `capacity_tokens` again."""
        tokens = _check_tokens(tokens)
        reused = min(self.match(tokens), len(tokens) - 1)  # the last token is always recomputed
        self._insert(tokens)
        evicted = self._evict()
        self.n_requests += 1
        return {
            "request": self.n_requests - 1,
            "n_tokens": len(tokens),
            "tokens_reused": reused,
            "tokens_computed": len(tokens) - reused,
            "flops_saved": reused * flops_per_token,
            "tokens_evicted": evicted,
            "cached_tokens_after": self.n_tokens,
            "memory_bytes_held": self.n_tokens * self.bytes_per_token,
        }


def _common(a: tuple[int, ...], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def shared_prompt_requests(n_requests: int, prefix_len: int, suffix_len: int) -> list[list[int]]:
    """`n_requests` prompts: one shared `prefix_len`-token system prompt plus a distinct user part.

    Token ids: the prefix uses 0..prefix_len-1; request r's suffix uses ids no
    other request uses, so any hit is the shared prefix and nothing else.

    >>> shared_prompt_requests(2, 3, 2)
    [[0, 1, 2, 3, 4], [0, 1, 2, 5, 6]]
    """
    if n_requests < 1 or prefix_len < 0 or suffix_len < 1:
        raise ValueError("need n_requests >= 1, prefix_len >= 0, suffix_len >= 1")
    prefix = list(range(prefix_len))
    return [prefix + [prefix_len + r * suffix_len + j for j in range(suffix_len)] for r in range(n_requests)]


def run_requests(
    requests: list[list[int]],
    *,
    mode: str = "radix",
    block_size: int = 16,
    capacity: int | None = None,
    flops_per_token: float = 1.0,
    bytes_per_token: int = 0,
) -> dict:
    """Send `requests` one after another through a fresh prefix cache; per-request readouts and totals.

    mode "blocks": BlockPrefixCache(block_size, capacity in blocks);
    mode "radix": RadixPrefixCache(capacity in tokens).
    """
    if mode == "blocks":
        cache: BlockPrefixCache | RadixPrefixCache = BlockPrefixCache(block_size, capacity, bytes_per_token)
    elif mode == "radix":
        cache = RadixPrefixCache(capacity, bytes_per_token)
    else:
        raise ValueError(f"mode must be 'blocks' or 'radix', got {short_repr(mode)}")
    per_request = [cache.process(r, flops_per_token) for r in requests]
    total_tokens = sum(r["n_tokens"] for r in per_request)
    reused = sum(r["tokens_reused"] for r in per_request)
    return {
        "mode": mode,
        "block_size": block_size if mode == "blocks" else 1,
        "capacity": capacity,
        "requests": per_request,
        "total_tokens": total_tokens,
        "tokens_reused": reused,
        "tokens_computed": total_tokens - reused,
        "flops_saved": reused * flops_per_token,
        "hit_rate": reused / total_tokens if total_tokens else 0.0,
    }
