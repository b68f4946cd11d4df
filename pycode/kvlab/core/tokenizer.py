"""Byte-level BPE tokenizer of the kvlab tiny model, in the spirit of minbpe.

Text is first split into chunks by a small stdlib `re` pattern (words with their
leading space, single digits, runs of other symbols, whitespace). Each chunk is
turned into its UTF-8 bytes (token ids 0..255), then the learned merges are
applied in the order they were learned. Merges never cross chunk boundaries.

- Byte fallback: ids 0..255 are the 256 single bytes, always in the vocab, so any
  Unicode string encodes (emoji, Korean, ...) and decodes back exactly.
- Digits: the pattern puts every digit in its own chunk (" 4", "7", "1", "9"), so
  no token ever holds two digits and a door code is four tokens.
- `vocab` is derived from `merges` (never stored separately as the truth).
- Pure Python, stdlib only: identical results in CPython and Pyodide.

Saved as JSON (``models/tiny/tokenizer.json``): {"format": "kvlab-bpe",
"version": 1, "pattern", "merges": [[a, b], ...]} plus a human-readable "tokens"
list that `load` ignores.
"""

from __future__ import annotations

import json
import re

__all__ = ["BPETokenizer", "SPLIT_PATTERN", "get_stats", "merge", "load_tokenizer", "word_coverage"]

FORMAT = "kvlab-bpe"
VERSION = 1

# words with an optional leading space | one digit | other symbols | trailing whitespace | whitespace
SPLIT_PATTERN = r""" ?[A-Za-z]+| ?[0-9]| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+"""


def get_stats(ids: list[int], counts: dict | None = None, weight: int = 1) -> dict:
    """Count consecutive pairs (optionally adding `weight` to an existing dict).

    >>> get_stats([1, 2, 3, 1, 2])
    {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    >>> get_stats([1, 2], {(1, 2): 5}, weight=3)
    {(1, 2): 8}
    """
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + weight
    return counts


def merge(ids: list[int], pair: tuple[int, int], idx: int) -> list[int]:
    """Replace every occurrence of `pair` in `ids` by the new token `idx`.

    >>> merge([1, 2, 3, 1, 2], (1, 2), 4)
    [4, 3, 4]
    >>> merge([1, 1, 1], (1, 1), 9)
    [9, 1]
    """
    out = []
    i = 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def split_chunks(text: str, pattern: str = SPLIT_PATTERN) -> list[str]:
    """Split text into the chunks that merges never cross.

    >>> split_chunks("the door has code 4719.")
    ['the', ' door', ' has', ' code', ' 4', '7', '1', '9', '.']
    >>> "".join(split_chunks("a  b\\n\\nc 😀!"))
    'a  b\\n\\nc 😀!'
    """
    return re.findall(pattern, text)


class BPETokenizer:
    """Byte-level BPE: `merges` maps (id, id) -> new id, in the order learned."""

    def __init__(self, merges: dict[tuple[int, int], int] | None = None, pattern: str = SPLIT_PATTERN):
        self.pattern = pattern
        self.merges = dict(merges or {})
        self.vocab = self._build_vocab()
        self._cache: dict[str, list[int]] = {}

    def _build_vocab(self) -> dict[int, bytes]:
        vocab = {i: bytes([i]) for i in range(256)}
        for (a, b), idx in self.merges.items():  # dicts keep insertion (= learning) order
            vocab[idx] = vocab[a] + vocab[b]
        return vocab

    @property
    def vocab_size(self) -> int:
        return 256 + len(self.merges)

    # --- training ------------------------------------------------------------

    def train(self, text: str, vocab_size: int, verbose: bool = False) -> None:
        """Learn `vocab_size - 256` merges from `text` (chunks counted once, weighted)."""
        assert vocab_size >= 256
        chunk_counts: dict[str, int] = {}
        for ch in split_chunks(text, self.pattern):
            chunk_counts[ch] = chunk_counts.get(ch, 0) + 1
        words = [(list(ch.encode("utf-8")), n) for ch, n in chunk_counts.items()]
        merges: dict[tuple[int, int], int] = {}
        for k in range(vocab_size - 256):
            stats: dict = {}
            for ids, n in words:
                get_stats(ids, stats, n)
            if not stats:
                break
            pair = max(stats, key=lambda p: (stats[p], -p[0], -p[1]))  # ties: smallest pair
            idx = 256 + k
            words = [(merge(ids, pair, idx), n) for ids, n in words]
            merges[pair] = idx
            if verbose:
                print(f"merge {k + 1}: {pair} -> {idx} ({stats[pair]} times)")
        self.merges = merges
        self.vocab = self._build_vocab()
        self._cache = {}

    # --- encode / decode -----------------------------------------------------

    def _encode_chunk(self, chunk: str) -> list[int]:
        ids = list(chunk.encode("utf-8"))
        while len(ids) >= 2:
            stats = get_stats(ids)
            # the pair merged earliest during training goes first
            pair = min(stats, key=lambda p: self.merges.get(p, float("inf")))
            if pair not in self.merges:
                break  # subtle: nothing left to merge (min returned an unknown pair)
            ids = merge(ids, pair, self.merges[pair])
        return ids

    def encode(self, text: str) -> list[int]:
        """Text -> token ids.

        >>> BPETokenizer().encode("hi!")
        [104, 105, 33]
        """
        out: list[int] = []
        for chunk in split_chunks(text, self.pattern):
            ids = self._cache.get(chunk)
            if ids is None:
                ids = self._encode_chunk(chunk)
                if len(self._cache) < 100_000:
                    self._cache[chunk] = ids
            out.extend(ids)
        return out

    def decode(self, ids: list[int]) -> str:
        """Token ids -> text (invalid UTF-8 from a partial sequence becomes U+FFFD).

        >>> BPETokenizer().decode([104, 105, 33])
        'hi!'
        """
        return b"".join(self.vocab[int(i)] for i in ids).decode("utf-8", errors="replace")

    def token_str(self, idx: int) -> str:
        """A printable form of one token (for attention maps and tables)."""
        return self.vocab[int(idx)].decode("utf-8", errors="replace")

    # --- save / load ---------------------------------------------------------

    def to_json(self) -> str:
        data = {
            "format": FORMAT,
            "version": VERSION,
            "pattern": self.pattern,
            "vocab_size": self.vocab_size,
            "merges": [[a, b] for (a, b) in self.merges],
            # for humans and the browser's token display; derived, ignored by load
            "tokens": [self.token_str(i) for i in range(self.vocab_size)],
        }
        return json.dumps(data, ensure_ascii=False, indent=0)

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @classmethod
    def from_json(cls, text: str | bytes) -> BPETokenizer:
        if isinstance(text, (bytes, bytearray)):
            text = text.decode("utf-8")
        data = json.loads(text)
        assert data.get("format") == FORMAT and data.get("version") == VERSION, "not a kvlab-bpe v1 file"
        merges = {(int(a), int(b)): 256 + k for k, (a, b) in enumerate(data["merges"])}
        return cls(merges, data["pattern"])

    @classmethod
    def load(cls, path: str) -> BPETokenizer:
        with open(path, "rb") as f:
            return cls.from_json(f.read())


def load_tokenizer(source: str | bytes) -> BPETokenizer:
    """Load from a path, or from the JSON file's bytes (as fetched in the browser)."""
    if isinstance(source, (bytes, bytearray)):
        return BPETokenizer.from_json(source)
    return BPETokenizer.load(source)


WORD_CHUNK = re.compile(r" ?[A-Za-z]+")


def word_coverage(tok: BPETokenizer, text: str) -> tuple[int, int, list[str]]:
    """How many words of `text` are one token each: (single-token words, words, the split ones).

    A word is a chunk of letters with its leading space, as the split pattern cuts it
    ("The", " cat", " don" + "'" + "t"), so a sentence-initial capital counts as its own word.

    >>> word_coverage(BPETokenizer(), "I am")
    (1, 2, [' am'])
    """
    single, total, split = 0, 0, []
    for chunk in split_chunks(text, tok.pattern):
        if not WORD_CHUNK.fullmatch(chunk):
            continue
        total += 1
        if len(tok.encode(chunk)) == 1:
            single += 1
        else:
            split.append(chunk)
    return single, total, split
