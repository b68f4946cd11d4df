"""The byte-level BPE tokenizer: round-trips, saved file, digits as single tokens."""

import os

import pytest
from corpus import documents  # models/ is on pytest's pythonpath (pyproject.toml)
from hypothesis import given, settings, strategies as st

from kvlab.core.tokenizer import BPETokenizer, get_stats, load_tokenizer, merge, split_chunks

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

TOKENIZER_JSON = os.path.join(ROOT, "models", "tiny", "tokenizer.json")


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(TOKENIZER_JSON)


def corpus_sample() -> str:
    return "\n\n".join(d["text"] for d in documents(7, 40))


STRINGS = [
    "",
    "?",
    "a",
    "hello world",
    "the door has code 4719.",
    "😀🦀👩‍👩‍👧",
    "안녕하세요, 반갑습니다",
    "Привет, мир!",
    "日本語のテキスト",
    "tabs\tand\nnew lines\r\n  and   spaces  ",
    "FILE:corpus",
]


def _resolve(s: str) -> str:
    return corpus_sample() if s == "FILE:corpus" else s


@pytest.mark.parametrize("text", STRINGS)
def test_encode_decode_round_trips(tok, text):
    text = _resolve(text)
    assert tok.decode(tok.encode(text)) == text


@pytest.mark.parametrize("text", STRINGS)
def test_untrained_tokenizer_is_plain_bytes(text):
    text = _resolve(text)
    t = BPETokenizer()
    assert t.encode(text) == list(text.encode("utf-8"))
    assert t.decode(t.encode(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_unicode_round_trips(text):
    t = load_tokenizer(TOKENIZER_JSON)
    assert t.decode(t.encode(text)) == text


def test_the_256_bytes_are_always_in_the_vocab(tok):
    assert all(tok.vocab[i] == bytes([i]) for i in range(256))
    assert tok.vocab_size == len(tok.vocab)


def test_save_load_round_trip(tok, tmp_path):
    path = tmp_path / "tok.json"
    tok.save(str(path))
    again = BPETokenizer.load(str(path))
    assert again.merges == tok.merges and again.pattern == tok.pattern
    from_bytes = load_tokenizer(path.read_bytes())
    text = corpus_sample()
    assert again.encode(text) == tok.encode(text) == from_bytes.encode(text)


def test_saved_file_is_versioned(tok):
    import json

    with open(TOKENIZER_JSON, encoding="utf-8") as f:
        data = json.load(f)
    assert data["format"] == "kvlab-bpe" and data["version"] == 1
    assert data["tokens"][tok.encode(" door")[0]] == " door"


def test_no_token_holds_two_digits(tok):
    for i in range(tok.vocab_size):
        assert sum(c.isdigit() for c in tok.vocab[i].decode("utf-8", errors="replace")) <= 1


@pytest.mark.parametrize("code", ["4719", "0000", "1234567890"])
def test_digits_stay_single_tokens(tok, code):
    ids = tok.encode(f"the door has code {code}.")
    digit_tokens = [i for i in ids if any(c.isdigit() for c in tok.token_str(i))]
    assert len(digit_tokens) == len(code)


def test_cue_word_is_one_token(tok):
    assert len(tok.encode(" code")) == 1


def test_training_learns_merges_and_round_trips():
    text = "the cat sat on the mat. the cat ate. " * 20
    t = BPETokenizer()
    t.train(text, 256 + 20)
    assert 256 < t.vocab_size <= 276  # stops early once every chunk is a single token
    assert len(t.encode(text)) < len(text.encode("utf-8"))
    assert t.decode(t.encode(text)) == text
    assert len(t.encode(" the")) < 4  # a frequent word got shorter


def test_helpers_match_their_docstrings():
    assert get_stats([1, 2, 3, 1, 2]) == {(1, 2): 2, (2, 3): 1, (3, 1): 1}
    assert merge([1, 2, 3, 1, 2], (1, 2), 4) == [4, 3, 4]
    assert split_chunks("code 4719") == ["code", " 4", "7", "1", "9"]
