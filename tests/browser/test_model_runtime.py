"""The browser model runtime (site_src/runtime/model.js) against kvlab in CPython:
the JS tokenizer port, and generation with cache eviction vs the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

from kvlab.core import tiny

TRICKY = [
    "",
    "a",
    "The door code is 4719.",
    "héllo wörld 😀 안녕하세요 Привет",
    "tabs\tand\nnew\n\nlines   x",
    "a\x1cb\x85c\ufeffd\u3000e",
    "<b>html</b> & 'quotes'",
    "123 456 7890",
]


@pytest.fixture
def home(warm_page, site_url):
    warm_page.goto(site_url)
    return warm_page


def test_js_tokenizer_matches_python_on_tricky_text(home):
    _, tok = tiny._model_and_tokenizer()
    got = home.evaluate(
        "async (strs) => (await kvlab.encode(strs)).map(r => [r.ids, r.text])",
        TRICKY,
    )
    for text, (ids, back) in zip(TRICKY, got):
        assert ids == tok.encode(text), text
        assert back == text


def reference_with_eviction(prompt: str, n: int, sinks: int, window: int):
    """Greedy generation in numpy, keeping the first `sinks` and last `window` cache slots."""
    model, tok = tiny._model_and_tokenizer()
    seq = tok.encode(prompt)
    cached, cache, out = [], None, []
    for step in range(n):
        start = 0 if step == 0 else len(seq) - 1
        logits, cache = model.forward(
            np.array([seq[start:]]), cache, position_ids=np.array([list(range(start, len(seq)))])
        )
        cached += list(range(start, len(seq)))
        if len(cached) > sinks + window:
            keep = [i for i in range(len(cached)) if i < sinks or i >= len(cached) - window]
            cache = [(k[:, :, keep], v[:, :, keep]) for k, v in cache]
            cached = [cached[i] for i in keep]
        token = int(np.argmax(logits[0, -1]))
        out.append(token)
        seq.append(token)
    return out, cached


@pytest.mark.parametrize("sinks,window", [(0, 6), (4, 8)])
def test_generation_with_eviction_matches_the_numpy_reference(home, sinks, window):
    prompt = "Mia had a red ball. She gave it to the dog, and the dog ran to the park."
    got = home.evaluate(
        """async ([prompt, sinks, window]) => {
            const r = await kvlab.generate({prompt, maxNewTokens: 16, useCache: true, evict: {sinks, window}});
            const last = r.steps[r.steps.length - 1];
            return {tokens: r.tokens, cached: last.cachedPositions, after: r.steps.map(s => s.cacheLenAfter)};
        }""",
        [prompt, sinks, window],
    )
    want_tokens, want_cached = reference_with_eviction(prompt, 16, sinks, window)
    assert got["tokens"] == want_tokens
    assert got["cached"] == want_cached
    assert set(got["after"]) == {sinks + window}


def test_a_second_generation_while_one_runs_waits_its_turn(home):
    """Model runs queue in the worker: a second call while one runs is not refused,
    and each gets the tokens it would get alone."""
    got = home.evaluate(
        """async () => {
            const both = await Promise.all([
                kvlab.generate({prompt: "The dog", maxNewTokens: 12}),
                kvlab.generate({prompt: "The cat", maxNewTokens: 3}),
            ]);
            const alone = await kvlab.generate({prompt: "The cat", maxNewTokens: 3});
            return [both[0].tokens.length, both[1].tokens, alone.tokens];
        }"""
    )
    assert got[0] == 12
    assert got[1] == got[2]


def test_a_cancelled_generation_stops_and_the_next_one_runs(home):
    got = home.evaluate(
        """async () => {
            const stop = new AbortController();
            const first = kvlab.generate({prompt: "The dog", maxNewTokens: 200, signal: stop.signal,
                                          onToken: (s) => s.step === 2 && stop.abort()});
            const queued = new AbortController();
            const second = kvlab.generate({prompt: "The cat", maxNewTokens: 5, signal: queued.signal});
            queued.abort();  // still waiting behind the first: dropped before it starts
            const third = kvlab.generate({prompt: "The cat", maxNewTokens: 5});
            const [a, b, c] = await Promise.all([first, second, third]);
            return [a.stopped, a.steps.length, b.stopped, b.steps.length, c.stopped, c.steps.length];
        }"""
    )
    stopped, n_first, second_stopped, n_second, third_stopped, n_third = got
    assert stopped and 3 <= n_first < 200
    assert second_stopped and n_second == 0
    assert not third_stopped and n_third == 5
