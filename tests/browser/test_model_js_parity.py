"""model.js's per-step rules against the Python functions they port, over a grid of
logits: the top-k probabilities and a token's NLL (kvlab.core.sampling). The worker
runs them at every decode step, so they cannot be a Python call; they must agree."""

from __future__ import annotations

import numpy as np
import pytest

from kvlab.core import sampling, tiny

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
