"""The numpy reference GPT vs the exported ONNX graph: same logits, same tokens with and
without a KV cache, and the door-code recall that models/tiny/card.json claims."""

import json
import os

import numpy as np
import onnxruntime as ort  # pinned in requirements.txt: missing, it fails the run (never a skip)
import pytest
from corpus import heldout_episodes  # models/ is on pytest's pythonpath (pyproject.toml)
from evaluate import OnnxLM, greedy_answer, keep_slots, score

from kvlab.core.gpt import GPT, GPTConfig, smear_keys
from kvlab.core.tokenizer import load_tokenizer

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

TINY = os.path.join(ROOT, "models", "tiny")
PROMPT = "user: hello!\nbot: hi there.\nuser: tell me a story about a cat.\nbot: Tom had a red"


def test_the_parity_tests_run_the_pinned_onnxruntime():
    """onnxruntime is imported, not importorskip'ed: without it this module fails to collect."""
    pin = next(
        line.split("==")[1].strip()
        for line in open(os.path.join(ROOT, "requirements.txt"))
        if line.startswith("onnxruntime==")
    )
    assert ort.__version__ == pin


@pytest.fixture(scope="module")
def tok():
    return load_tokenizer(os.path.join(TINY, "tokenizer.json"))


@pytest.fixture(scope="module")
def model():
    return GPT.from_npz(os.path.join(TINY, "weights.npz"))


@pytest.fixture(scope="module")
def lm():
    return OnnxLM(os.path.join(TINY, "model.onnx"))


@pytest.fixture(scope="module")
def card():
    with open(os.path.join(TINY, "card.json")) as f:
        return json.load(f)


def onnx_generate(lm, ids, n, use_cache):
    out = []
    if use_cache:
        logits, cache = lm.step(ids, lm.empty_cache(), list(range(len(ids))))
        for _ in range(n):
            t = int(np.argmax(logits[-1]))
            out.append(t)
            logits, cache = lm.step([t], cache, [len(ids) + len(out) - 1])
    else:
        for _ in range(n):
            seq = ids + out
            logits, _ = lm.step(seq, lm.empty_cache(), list(range(len(seq))))
            out.append(int(np.argmax(logits[-1])))
    return out


def test_weights_load_from_bytes_and_path(model):
    with open(os.path.join(TINY, "weights.npz"), "rb") as f:
        again = GPT.from_npz(f.read())
    assert again.config == model.config
    assert isinstance(model.config, GPTConfig) and model.config.block_size >= 512
    assert all(np.array_equal(again.w[k], model.w[k]) for k in model.w)
    assert all(v.dtype == np.float32 for v in model.w.values())


@pytest.mark.slow  # 200 steps of the tiny model, twice: left out of `build.py test --fast`
def test_numpy_cached_and_uncached_generation_agree_for_200_steps(model, tok):
    ids = tok.encode(PROMPT)
    cached = model.generate(ids, 200, use_cache=True)
    uncached = model.generate(ids, 200, use_cache=False)
    assert cached == uncached


@pytest.mark.slow  # 200 steps of the tiny model, twice: left out of `build.py test --fast`
def test_onnx_cached_and_uncached_generation_agree_for_200_steps(lm, tok, model):
    ids = tok.encode(PROMPT)
    cached = onnx_generate(lm, ids, 200, use_cache=True)
    assert cached == onnx_generate(lm, ids, 200, use_cache=False)
    assert cached == model.generate(ids, 200)


def test_numpy_matches_onnxruntime_logits(model, lm, tok):
    ids = tok.encode(PROMPT + " ball. He took it to the park.")
    n = len(ids) // 2
    la, cache_o = lm.step(ids[:n], lm.empty_cache(), list(range(n)))  # past length 0
    lb, _ = lm.step(ids[n:], cache_o, list(range(n, len(ids))))  # past length > 0
    na, cache_n = model.forward(np.array([ids[:n]]))
    nb, _ = model.forward(np.array([ids[n:]]), cache_n)
    err = max(np.abs(la - na[0]).max(), np.abs(lb - nb[0]).max())
    kv_err = max(np.abs(a - b).max() for (ka, va), (kb, vb) in zip(cache_o, cache_n) for a, b in ((ka, kb), (va, vb)))
    print(f"\nmax abs logit error numpy vs onnxruntime: {err:.3g} (cache: {kv_err:.3g})")
    assert err < 1e-4 and kv_err < 1e-4


def test_attention_weights_are_exposed_and_agree(model, lm, tok):
    ids = tok.encode(PROMPT)
    names = [o.name for o in lm.sess.get_outputs()]
    assert names[0] == "logits" and f"attentions.{lm.L - 1}" in names
    att0 = lm.sess.run(["attentions.0"], lm.feeds(ids))[0]  # past length 0
    _, _, atts = model.forward(np.array([ids]), return_attention=True)
    assert att0.shape == (1, lm.H, len(ids), len(ids))
    assert np.allclose(att0.sum(-1), 1, atol=1e-5)
    assert np.abs(att0 - atts[0]).max() < 1e-5


def test_evicted_cache_keeps_original_positions(model, tok):
    """RoPE: early cache slots can be dropped and decoding goes on with the true position ids
    (the kept keys were rotated once, at their own position)."""
    ids = tok.encode(PROMPT + " ball.")
    _, cache = model.forward(np.array([ids[:-1]]))
    keep = list(range(4)) + list(range(12, len(ids) - 1))
    small = [(k[:, :, keep], v[:, :, keep]) for k, v in cache]
    a, _ = model.forward(np.array([ids[-1:]]), small, position_ids=[[len(ids) - 1]])
    assert a.shape == (1, 1, model.config.vocab_size) and np.isfinite(a).all()


@pytest.fixture(scope="module")
def far_episodes(tok):
    eps = []
    for f in (7, 8, 9, 10):
        for ep in heldout_episodes(5000 + f, 8, f):
            p = tok.encode(ep["prompt"])
            d = len(p) - (p.index(tok.encode(" code")[0]) + 4)
            if d >= 200 and len(p) + 10 <= 512:
                eps.append((ep, p, d))
    return eps


def test_door_code_recall_at_200_tokens_or_more_matches_the_card(lm, tok, card, far_episodes):
    assert len(far_episodes) >= 15
    full = [score(tok.decode(greedy_answer(lm, p)), ep["code"])[0] for ep, p, d in far_episodes]
    recall = sum(full) / len(full)
    claimed = card["recall"][">=200"]["full_cache"]
    print(f"\nrecall at >= 200 tokens: {recall:.2f} on {len(full)} episodes (card: {claimed:.2f})")
    assert recall >= claimed - 0.15


def test_door_code_recall_meets_the_bar_with_the_full_cache(lm, tok, far_episodes):
    """Issue 5's bar: with the full cache, >= 90% of held-out codes at >= 200 tokens."""
    full = [score(tok.decode(greedy_answer(lm, p)), ep["code"])[0] for ep, p, d in far_episodes]
    assert sum(full) / len(full) >= 0.9, f"{sum(full)}/{len(full)} codes recalled"


def test_smeared_keys_mix_each_key_with_the_previous_slot(model):
    """The attention keys: g k_j + (1 - g) k_{j-1}, zero before the first slot; the cache keeps k."""
    k = np.random.RandomState(0).randn(1, model.config.n_head, 5, model.config.head_dim).astype(np.float32)
    smear = model.w["transformer.h.1.attn.smear"]
    g = 1 / (1 + np.exp(-smear))
    ks = smear_keys(k, smear)
    assert np.allclose(ks[:, :, 0], g[None, :, None] * k[:, :, 0], atol=1e-6)
    assert np.allclose(ks[:, :, 3], g[None, :, None] * k[:, :, 3] + (1 - g)[None, :, None] * k[:, :, 2], atol=1e-6)


def test_door_code_recall_falls_to_chance_once_the_fact_is_evicted(lm, tok, far_episodes):
    cue = tok.encode(" code")[0]
    hits = []
    for ep, p, _ in far_episodes[:12]:
        last = p.index(cue) + 4

        def evict(c, pos, last=last):
            return keep_slots(c, pos, list(range(4)) + list(range(last + 1, len(pos))))

        hits.append(score(tok.decode(greedy_answer(lm, p, evict)), ep["code"])[0])
    assert sum(hits) / len(hits) <= 0.1
