"""Everyday words are tokens: on ordinary English sentences (tests/python/data/everyday/,
written for this test, not generated) at least 90% of words are a single token, with a
sentence-initial capital counted as its own word. Round-trips stay exact."""

import os

import pytest

from kvlab.core.tokenizer import load_tokenizer, word_coverage

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOKENIZER_JSON = os.path.join(ROOT, "models", "tiny", "tokenizer.json")
SENTENCES = os.path.join(os.path.dirname(__file__), "data", "everyday", "sentences.txt")

BAR = 0.90


def everyday_sentences() -> list[str]:
    with open(SENTENCES, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(TOKENIZER_JSON)


def test_everyday_sentences_round_trip(tok):
    for s in everyday_sentences():
        assert tok.decode(tok.encode(s)) == s


def test_everyday_words_are_single_tokens(tok):
    text = " ".join(everyday_sentences())
    single, total, split = word_coverage(tok, text)
    assert total > 500
    assert single / total >= BAR, f"{single}/{total} = {single / total:.3f} words are one token; split: {split[:40]}"


def test_sentence_initial_capitals_are_single_tokens(tok):
    firsts = [s.split()[0].strip("?,.!") for s in everyday_sentences()]
    single = sum(len(tok.encode(w)) == 1 for w in firsts)
    assert single / len(firsts) >= BAR, [w for w in firsts if len(tok.encode(w)) > 1]
