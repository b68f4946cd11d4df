"""model.js's per-step rules against the Python functions they port, over a grid of
logits: the top-k probabilities and a token's NLL (kvlab.core.sampling). The worker
runs them at every decode step, so they cannot be a Python call; they must agree.
And the model widgets' views: widget.js's JS twins against the Python views in kvlab.widgets.tokens, generate and attention."""

from __future__ import annotations

import json

import numpy as np
import pytest

import kvlab
from kvlab.core import sampling, tiny
from kvlab.widgets import attention, generate, tokens

TEMPERATURES = [0.0, 0.3, 1.0, 2.5]
KS = [1, 5, 20]


def logits_grid() -> list[np.ndarray]:
    """The real model's logits after a few prompts, and hard cases: ties, a spike,
    a flat row, huge and tiny values (float32, as onnxruntime returns them)."""
    model, tok = tiny._model_and_tokenizer()
    rows = []
    for prompt in [tiny.DEFAULT_PROMPT, "user: what number opens the door? bot:", "The"]:
        logits, _ = model.forward(np.array([tok.encode(prompt)]), None)
        rows.append(logits[0, -1])
    rng = np.random.default_rng(7)
    ties = np.zeros(64, np.float32)
    ties[[3, 9, 40]] = 2.0
    spike = rng.standard_normal(64).astype(np.float32)
    spike[11] = 80.0
    rows += [ties, spike, np.full(64, -3.0, np.float32), (rng.standard_normal(64) * 1e4).astype(np.float32)]
    return [r.astype(np.float32) for r in rows]


@pytest.fixture
def home(page, site_url):
    page.goto(site_url)
    page.add_script_tag(url=site_url + "assets/kvlab/model.js")
    return page


def test_top_k_and_nll_in_model_js_match_kvlab(home):
    rows = logits_grid()
    cases = [(i, k, t) for i in range(len(rows)) for k in KS for t in TEMPERATURES]
    got = home.evaluate(
        """([rows, cases, targets]) => {
            const s = self.kvlabModel.sampling;
            const f32 = rows.map((bits) => new Float32Array(Uint32Array.from(bits).buffer));
            return {
              top: cases.map(([i, k, t]) => s.topK(f32[i], k, t).map((c) => [c.token, c.p])),
              nll: targets.map(([i, target]) => s.nll(f32[i], target)),
            };
        }""",
        [
            [r.view(np.uint32).tolist() for r in rows],
            cases,
            [(i, j) for i, r in enumerate(rows) for j in (0, int(np.argmax(r)), r.size - 1)],
        ],
    )
    for (i, k, t), js in zip(cases, got["top"], strict=True):
        py = sampling.top_k_probs(rows[i], k, t)
        assert [tok for tok, _ in js] == [tok for tok, _ in py], (i, k, t)
        np.testing.assert_allclose([p for _, p in js], [p for _, p in py], rtol=1e-12, atol=1e-300)
    targets = [(i, j) for i, r in enumerate(rows) for j in (0, int(np.argmax(r)), r.size - 1)]
    for (i, target), js in zip(targets, got["nll"], strict=True):
        assert js == pytest.approx(sampling.token_nll(rows[i], target), rel=1e-12, abs=1e-12), (i, target)


# ---------------------------------------------------------------------------- the model widgets' views
# next-token, generate and model-attention get their live numbers from the model in the browser, so
# each widget.js has a JS twin of its Python view (beside its function in kvlab.widgets), which draws the build-time page:
# for the same numbers the two must write the same strings. kvlab.kit.fixed is their one number format.


def in_js(page, fn: str, arg):
    """page.evaluate(fn, arg), with arg sent as JSON text: Playwright sends Python's 0.0 as -0."""
    return page.evaluate(f"(text) => ({fn})(JSON.parse(text))", json.dumps(arg))


@pytest.fixture
def widgets_page(page, site_url):
    page.goto(site_url + "attention/")  # runtime.js and widgets.js: on every page
    page.wait_for_function("() => window.kvlab && kvlab.kit && kvlab.kit.fixed && kvlab.widgets['model-attention']")
    return page


def test_kit_fixed_writes_numbers_as_python_does(widgets_page):
    # exact ties (Python rounds them to even, toFixed away from zero), near-ties, grouping, signs
    xs = [0.0625, 0.125, 0.375, 2.5, 0.5, 1.5, 0.1235, 1.005, 0.9995, -0.0625, -0.0005, 0.0, -0.0, 1e-7, 0.25]
    xs += [1234567.25, 999.96, 12.345, 50.22090805036246, 46.7, 1e6 + 0.5, 3.0, 0.049999999999999996]
    cases = [(x, d, g) for x in xs for d in range(5) for g in (False, True)]
    got = in_js(widgets_page, "cases => cases.map(([x, d, g]) => kvlab.kit.fixed(x, d, g))", cases)
    want = [f"{x:,.{d}f}" if g else f"{x:.{d}f}" for x, d, g in cases]
    assert [(c, g) for c, g, w in zip(cases, got, want) if g != w] == []


def test_next_token_view_in_js_is_pythons(widgets_page):
    datas = [kvlab.next_token_figure(p, top_k=20) for p in ("Mia had a red ball. She gave", "The", 'He said "no')]
    datas.append({"n_tokens": 3, "top": [{"token": 1, "text": "\n", "p": 0.0625}, {"token": 2, "text": '"', "p": 0.5}]})
    got = in_js(widgets_page, "ds => ds.map((d) => kvlab.widgets['next-token'].view(d))", datas)
    assert got == [tokens.next_token_view(d) for d in datas]


def test_generate_view_in_js_is_pythons(widgets_page):
    data = kvlab.generate_figure(max_new_tokens=6, top_k=4)
    n = len(data["steps"])
    # a run in the browser: step times, positions, an uncached run's cache lengths, a token outside the top-k
    browser = {**data, "prompt": "…the end", "steps": [dict(s) for s in data["steps"]]}
    for k, s in enumerate(browser["steps"]):
        s.update(ms=[12.25, 0.05, 3.0, 0.15, 1234.5, 7.0][k], position=data["prompt_len"] + k)
    browser["steps"][2]["token"] = -1
    uncached = {**browser, "steps": [{**s, "cache_len_before": 0, "cache_len_after": 0} for s in browser["steps"]]}
    empty = {**data, "steps": []}
    cases = [
        (d, at, cache, built)
        for d in (data, browser, uncached)
        for at in (0, 2, n - 1)
        for cache in (True, False)
        for built in (True, False)
    ]
    cases.append((empty, 0, True, False))
    got = in_js(widgets_page, "cs => cs.map(([d, at, c, b]) => kvlab.widgets.generate.view(d, at, c, b))", cases)
    for (d, at, cache, built), js in zip(cases, got, strict=True):
        assert js == generate.generate_view(d, at, cache, built), (at, cache, built)
    default = in_js(widgets_page, "d => kvlab.widgets.generate.view(d)", data)
    assert default == generate.generate_view(data)


def test_model_attention_display_in_js_is_pythons(widgets_page):
    # the last prompt has tokens that are only whitespace (a newline, a space): shown as ↵ and ␣
    for prompt in (tiny.ATTENTION_PROMPT, 'Tom lost his key, so "he" looked for it.', "Alice:\nThe code.\n\nBob:  ok"):
        data = kvlab.model_attention_figure(prompt)
        T, heads = len(data["tokens"]), ["mean", *range(data["n_head"])]
        cases = [
            (layer, head, q, source)
            for layer in range(data["n_layer"])
            for head in heads
            for q in (0, T // 2, T - 1)
            for source in ("built", "live")
        ]
        got = in_js(
            widgets_page,
            "([d, cs]) => cs.map(([l, h, q, s]) => kvlab.widgets['model-attention'].display(d, l, h, q, s))",
            [data, cases],
        )
        for (layer, head, q, source), js in zip(cases, got, strict=True):
            assert js == attention.model_attention_display(data, layer, head, q, source), (prompt, layer, head, q)
