"""The tiny model live in a real Chromium (onnxruntime-web): generation with and
without the KV cache, attention weights against the numpy reference, the
model-race and model-attention widgets, and no leak over many generations."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
from playwright.sync_api import expect

import kvlab
from kvlab.core import tiny
from tests.browser.widgets import activate, heatmap_weights, open_widget, set_range

ROOT = Path(__file__).resolve().parents[2]

GEN_TIMEOUT_MS = 120_000


def generate_pair(page, prompt: str, n: int, **opts) -> dict:
    """kvlab.generate with and without the cache, same options, one after the other."""
    return page.evaluate(
        """async ([prompt, n, opts]) => {
            const run = (useCache) => kvlab.generate(Object.assign({prompt, maxNewTokens: n, useCache}, opts));
            const cached = await run(true);
            const uncached = await run(false);
            return {cached, uncached};
        }""",
        [prompt, n, opts],
    )


def assert_cache_lengths_follow_the_definitions(res: dict, n: int) -> None:
    """docs/claims.md: prefill 0 before, prompt_len after; decode step k: prompt_len+k-1 before, prompt_len+k after."""
    p = res["promptLen"]
    assert len(res["steps"]) == n
    for k, s in enumerate(res["steps"]):
        assert s["step"] == k
        assert s["phase"] == ("prefill" if k == 0 else "decode")
        assert (s["cacheLenBefore"], s["cacheLenAfter"]) == ((0, p) if k == 0 else (p + k - 1, p + k)), s
        assert s["tokensIn"] == (p if k == 0 else 1)
        assert s["position"] == p + k


def test_cached_and_uncached_generation_write_the_same_tokens(warm_page, site_url):
    warm_page.goto(site_url + "generate/")  # kvlab.generate: on any page of the site
    prompt, n = tiny.DEFAULT_PROMPT, 24
    greedy = generate_pair(warm_page, prompt, n, temperature=0, seed=0)
    sampled = generate_pair(warm_page, prompt, n, temperature=0.9, topK=8, seed=1234)

    for res in (greedy, sampled):
        a = [s["token"] for s in res["cached"]["steps"]]
        b = [s["token"] for s in res["uncached"]["steps"]]
        assert a == b == res["cached"]["tokens"] == res["uncached"]["tokens"]
        assert_cache_lengths_follow_the_definitions(res["cached"], n)
        # without a cache nothing is kept, and every step reads the whole sequence again
        p = res["uncached"]["promptLen"]
        assert [(s["cacheLenBefore"], s["cacheLenAfter"]) for s in res["uncached"]["steps"]] == [(0, 0)] * n
        assert [s["tokensIn"] for s in res["uncached"]["steps"]] == [p + k for k in range(n)]

    # greedy in the browser = greedy in the numpy reference (CPython)
    ref = kvlab.generate_figure(prompt, max_new_tokens=n)
    assert greedy["cached"]["promptLen"] == ref["prompt_len"]
    assert greedy["cached"]["tokens"] == [s["token"] for s in ref["steps"]]
    # the sampled run really sampled: equal tokens in both modes are not the greedy ones
    assert sampled["cached"]["tokens"] != greedy["cached"]["tokens"]


def test_browser_attention_equals_the_numpy_reference(warm_page, site_url):
    warm_page.goto(site_url + "attention/")  # kvlab.attention: on any page of the site
    for prompt in (tiny.ATTENTION_PROMPT, "Tom lost his key, so he looked for it under the bed."):
        got = warm_page.evaluate("(p) => kvlab.attention(p)", prompt)
        want = kvlab.model_attention_figure(prompt)
        assert got["ids"] == want["ids"]
        assert got["tokens"] == want["tokens"]
        diff = np.abs(np.array(got["weights"]) - np.array(want["weights"]))
        print(f"\n{prompt!r}: max |onnxruntime-web - numpy| = {diff.max():.2e}")
        assert diff.max() < 1e-4
        # model.js's mean over heads is a port of model_attention_figure's mean_over_heads
        mean = np.abs(np.array(got["mean"]) - np.array(want["mean_over_heads"]))
        assert mean.max() < 1e-4


# ---------------------------------------------------------------------------- model-attention widget


def expected_readout(tokens: list[str], row: list[float], q: int) -> str:
    """The widget's sentence for query q, from the reference numbers (same format as widget.js)."""
    order = sorted(range(q + 1), key=lambda j: (-row[j], j))
    parts = [f"“{tokens[j]}” {row[j]:.2f}" for j in order[:3]]
    return f"“{tokens[q]}” reads: " + ", ".join(parts) + (", …" if q + 1 > 3 else "")


def shown_weights(root) -> list[float]:
    return root.locator("button.kv-ma-token[data-weight]").evaluate_all("bs => bs.map(b => Number(b.dataset.weight))")


def test_model_attention_widget_shows_what_the_reference_computes(warm_page, site_url):
    ref = kvlab.model_attention_figure(tiny.ATTENTION_PROMPT)
    tokens = ref["tokens"]
    root = open_widget(warm_page, site_url + "attention/", "model-attention")
    activate(root)  # the runtime starts on the reader's intent, not on scroll
    expect(root).to_have_attribute("data-state", "ready", timeout=GEN_TIMEOUT_MS)
    expect(root.locator('[data-field="where"]')).to_contain_text("onnxruntime-web")
    buttons = root.locator("button.kv-ma-token")
    expect(buttons).to_have_count(len(tokens))
    assert root.locator("button.kv-ma-token .kv-ma-text").all_text_contents() == tokens

    # focus the pronoun (keyboard): the page opens on the card's pronoun head
    view = ref["view"]
    best = tiny.tiny_card()["pronoun_heads"]["best"]
    assert (view["layer"], view["head"]) == (best["layer"], best["head"])
    q = view["query"]
    buttons.nth(q).focus()
    row = ref["weights"][view["layer"]][view["head"]][q]
    expect(root.locator('[data-field="readout"]')).to_have_text(expected_readout(tokens, row, q))
    assert np.allclose(shown_weights(root), row[: q + 1], atol=1e-4)
    expect(buttons.nth(q)).to_have_attribute("aria-pressed", "true")

    # the average over heads is one choice away
    root.locator('select[name="head"]').select_option("mean")
    buttons.nth(q).focus()
    row = ref["mean_over_heads"][view["layer"]][q]
    expect(root.locator('[data-field="readout"]')).to_have_text(expected_readout(tokens, row, q))

    # layer 3, head 2; hover the next-to-last token with the mouse
    root.locator('select[name="layer"]').select_option("2")
    root.locator('select[name="head"]').select_option("1")
    q = len(tokens) - 2
    buttons.nth(q).hover()
    row = ref["weights"][2][1][q]
    expect(root.locator('[data-field="readout"]')).to_have_text(expected_readout(tokens, row, q))
    assert np.allclose(shown_weights(root), row[: q + 1], atol=1e-4)
    # the heatmap is the same layer and head, the future masked out
    z = heatmap_weights(root)
    want = ref["weights"][2][1]
    assert len(z) == len(tokens)
    for i, zrow in enumerate(z):
        assert all(v is None for v in zrow[i + 1 :])
        assert np.allclose(zrow[: i + 1], want[i][: i + 1], atol=6e-4)  # drawn to 3 decimals

    # the arrow keys move along the sentence
    buttons.nth(q).focus()
    warm_page.keyboard.press("ArrowLeft")
    expect(root.locator('[data-field="readout"]')).to_have_text(
        expected_readout(tokens, ref["weights"][2][1][q - 1], q - 1)
    )


def test_model_attention_static_figure_is_the_reference(built_site):
    html = (built_site / "attention" / "index.html").read_text()
    ref = kvlab.model_attention_figure()
    view = ref["view"]
    q = view["query"]
    row = ref["weights"][view["layer"]][view["head"]][q]
    assert 'data-widget="model-attention"' in html
    assert expected_readout(ref["tokens"], row, q) in html
    assert f"layer {view['layer'] + 1}, head {view['head'] + 1}</strong>, the model's pronoun head" in html
    for w in row[: q + 1]:
        assert f">{w:.3f}</td>" in html


# ---------------------------------------------------------------------------- model-race widget


def test_model_race_static_figure_is_race_theory_for_the_default_prompt(built_site):
    html = (built_site / "generate" / "index.html").read_text()
    assert 'data-widget="model-race"' in html
    # race_theory for the default prompt's length in tokens, and the textarea holds that prompt
    prompt_len = len(tiny._model_and_tokenizer()[1].encode(tiny.DEFAULT_PROMPT))
    data = json.loads(
        html.split('data-widget="model-race"', 1)[1].split('class="kv-data">', 1)[1].split("</template>", 1)[0]
    )
    assert data == {**kvlab.race_theory(prompt_len=prompt_len, n_new=128), "prompt": tiny.DEFAULT_PROMPT}
    assert f">{tiny.DEFAULT_PROMPT}</textarea>" in html
    assert f"{data['speedup_decode']:,.1f}" in html and f"{data['total_macs']['no_cache']:,.0f}" in html
    assert "The measured race runs in your browser" in html
    # the theory is there before any race (with JavaScript on, before the reader's first run)
    theory = html.split('data-widget="model-race"', 1)[1].split('data-field="theory"', 1)[1].split("</strong>", 1)[0]
    assert f'data-value="{data["speedup_decode"]}">{data["speedup_decode"]:,.1f}×' in theory


def race_with(page, site_url: str, n: int):
    """The model-race widget on its content page (the warm visit: the model may be running
    already), set to `n` new tokens as a reader's slider would."""
    root = open_widget(page, site_url + "generate/", "model-race")
    expect(root).to_have_attribute("data-mounted", "true")
    set_range(root, "n", n)
    expect(root.locator('output[name="n-out"]')).to_have_text(str(n))
    return root


def test_model_race_widget_runs_and_agrees_with_the_theory(warm_page, site_url):
    n = 16
    root = race_with(warm_page, site_url, n)
    run = root.locator('button[name="run"]')
    # Read the buttons in the click's own task: with the model warm a 16-token race can end
    # before a later poll sees it running (the race was seen to end between two expects).
    buttons = run.evaluate("b => { b.click(); return [b.disabled, b.form.elements.stop.disabled]; }")
    assert buttons == [True, False]  # running: no overlapping runs, and Stop is offered
    expect(root).to_have_attribute("data-state", "ready", timeout=GEN_TIMEOUT_MS)
    expect(run).to_be_enabled()

    identical = root.locator('[data-field="identical"]')
    expect(identical).to_have_text(f"✓ identical tokens: both runs wrote the same {n} tokens.")
    expect(identical).to_have_attribute("data-identical", "true")
    expect(root.locator('[data-field="progress-cache-text"]')).to_have_text(f"done: {n} of {n} steps")
    expect(root.locator('[data-field="progress-no-cache-text"]')).to_have_text(f"done: {n} of {n} steps")

    prompt_len = len(tiny._model_and_tokenizer()[1].encode(tiny.DEFAULT_PROMPT))
    theory = kvlab.race_theory(prompt_len=prompt_len, n_new=n)
    expect(root.locator('[data-field="theory"]')).to_have_text(f"{theory['speedup_decode']:.1f}×")
    assert float(root.locator('[data-field="theory"]').get_attribute("data-value")) == theory["speedup_decode"]
    measured = float(root.locator('[data-field="measured"]').get_attribute("data-value"))
    assert measured > 0
    expect(root.locator('[data-field="measured-note"]')).to_contain_text(f"Sum of the {n - 1} decode steps")
    # one line per mode, one point per decode step, at the positions of the new tokens
    xs = root.locator(".kv-plot").evaluate("el => el.data.map(t => t.x)")
    assert xs == [list(range(prompt_len + 1, prompt_len + n))] * 2
    # the hovers are race_measured_view's: the run, the position and the step's ms (two decimals)
    traces = root.locator(".kv-plot").evaluate("el => el.data.map(t => [t.hovertext, t.x, t.y, t.hovertemplate])")
    for (hover, x, y, template), name in zip(traces, ("with the cache", "without the cache"), strict=True):
        assert template == "%{hovertext}<extra></extra>"
        assert hover == [f"{name}<br>new token at position {p}<br>{ms:.2f} ms" for p, ms in zip(x, y, strict=True)]
    expect(root.locator(".kv-status")).to_contain_text(f"Measured in your browser: {n} tokens with the cache")
    print(f"\nmodel-race n={n}: measured {measured:.2f}x, theory {theory['speedup_decode']:.2f}x (decode steps)")


def test_model_race_stop_and_readable_error(warm_page, site_url):
    root = race_with(warm_page, site_url, 448)
    root.locator('button[name="run"]').evaluate("b => b.click()")
    expect(root.locator('[data-field="progress-cache-text"]')).to_contain_text("step", timeout=GEN_TIMEOUT_MS)
    root.locator('button[name="stop"]').evaluate("b => b.click()")
    expect(root.locator('button[name="run"]')).to_be_enabled(timeout=GEN_TIMEOUT_MS)
    lanes = root.locator(".kv-mr-lane").all_inner_texts()
    # Stop ends the race wherever it is: within the cached run (then the uncached one never
    # starts) or, on a fast machine where 448 cached steps finish first, within the uncached run
    if "stopped at step" in lanes[0]:
        assert "of 448" in lanes[0] and "not run (stopped)" in lanes[1], lanes
    else:
        assert "done: 448 of 448" in lanes[0], lanes
        m = re.search(r"stopped at step (\d+) of 448", lanes[1])
        assert m and int(m.group(1)) < 448, lanes
    expect(root.locator(".kv-status")).to_contain_text("Stopped")

    # an empty prompt: the runtime's message, readable, and Run works again
    root.locator("textarea[name=prompt]").fill("   ")
    root.locator('button[name="run"]').click()
    expect(root).to_have_attribute("data-state", "error", timeout=GEN_TIMEOUT_MS)
    expect(root.locator(".kv-status")).to_contain_text("Type a prompt first")
    expect(root.locator('button[name="run"]')).to_be_enabled()


# ---------------------------------------------------------------------------- leaks


def test_no_tensor_leak_over_100_generations(page, site_url):
    """JS memory after a forced GC stays flat over 100 short generations (both modes).

    Tensor data live in ArrayBuffers, whose backing stores V8 counts outside its
    heap: measure the heap plus the backing stores (CDP Runtime.getHeapUsage),
    and print performance.memory.usedJSHeapSize as well. Keeping every
    uncached step's presents alive would add ~16 MB here; healthy growth is ~0.1 MB.
    """
    # The model's code runs on the page here (no Worker: the runtime's fallback),
    # so the page's heap is the model's heap.
    page.add_init_script("delete window.Worker")
    page.goto(site_url + "embed/model-race/")
    cdp = page.context.new_cdp_session(page)

    def memory_after_gc() -> tuple[int, int]:
        for _ in range(2):
            cdp.send("HeapProfiler.collectGarbage")
        usage = cdp.send("Runtime.getHeapUsage")
        return int(usage["usedSize"]) + int(usage.get("backingStorageSize", 0)), int(
            page.evaluate("performance.memory.usedJSHeapSize")
        )

    batch = """async ([count, offset]) => {
        for (let i = 0; i < count; i++)
            await kvlab.generate({prompt: "The cat sat on the mat", maxNewTokens: 6, useCache: (i + offset) % 2 === 0, seed: i});
    }"""
    page.evaluate(batch, [10, 0])  # warm-up: model, runtime, JIT
    before, js_before = memory_after_gc()
    page.evaluate(batch, [50, 0])
    middle, _ = memory_after_gc()
    page.evaluate(batch, [50, 1])
    after, js_after = memory_after_gc()
    growth_mb = (after - before) / 1e6
    print(
        f"\nJS heap + ArrayBuffers after GC: {before / 1e6:.2f} MB → {middle / 1e6:.2f} MB (50 runs) → "
        f"{after / 1e6:.2f} MB (100 runs): growth {growth_mb:+.2f} MB; "
        f"performance.memory.usedJSHeapSize {js_before / 1e6:.2f} → {js_after / 1e6:.2f} MB"
    )
    assert growth_mb < 10


# ---------------------------------------------------------------------------- without the model, without JS


def test_model_attention_keeps_the_reference_numbers_when_the_model_cannot_load(page_factory, site_url):
    page, problems = page_factory(allowed=[site_url])
    problems.expect_console_error("ERR_FAILED")
    page.route("**/*.onnx", lambda route: route.abort())
    root = open_widget(page, site_url + "embed/model-attention/", "model-attention")
    ref = kvlab.model_attention_figure()
    view = ref["view"]
    q = view["query"]
    want = expected_readout(ref["tokens"], ref["weights"][view["layer"]][view["head"]][q], q)
    expect(root.locator('[data-field="readout"]')).to_have_text(want)
    root.locator("button.kv-ma-token").nth(q).focus()
    expect(root).to_have_attribute("data-state", "error", timeout=GEN_TIMEOUT_MS)
    expect(root.locator(".kv-status")).to_contain_text("Could not run this widget in your browser")
    expect(root.locator('[data-field="readout"]')).to_have_text(want)


def test_both_widgets_read_without_javascript(browser, site_url):
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site_url + "generate/")
    race = page.locator('[data-widget="model-race"]')
    expect(race.locator(".kv-mr-table")).to_be_visible()
    expect(race.locator(".kv-mr-static")).to_contain_text("The measured race runs in your browser")
    expect(race.locator(".kv-controls")).to_be_hidden()
    page.goto(site_url + "attention/")
    att = page.locator('[data-widget="model-attention"]')
    expect(att.locator(".kv-ma-table")).to_be_visible()
    expect(att.locator(".kv-ma-token")).to_have_count(len(kvlab.model_attention_figure()["tokens"]))
    expect(att.locator(".kv-controls")).to_be_hidden()
    context.close()


def test_eviction_page_shows_the_copy_head_reading_the_code(built_site):
    """The second model-attention on the eviction page: the card's copy head, from the last
    token of a chat that ends before the code, reads the code's first digit."""
    import re

    from sitebuild.widget_blocks import parse_params

    page = (ROOT / "site_src" / "pages" / "eviction.md").read_text()
    params = parse_params(re.search(r"<!-- widget: model-attention(.*?)-->", page).group(1))
    copy = tiny.tiny_card()["copy_head"]
    assert (params["layer"], params["head"]) == (copy["layer"], copy["head"])
    ref = kvlab.model_attention_figure(**params)
    q = ref["view"]["query"]
    row = ref["weights"][copy["layer"]][copy["head"]][q]
    top = max(range(q + 1), key=lambda j: row[j])
    assert ref["tokens"][q] == " code" and ref["tokens"][top] == " 3" and row[top] > 0.5
    html = (built_site / "eviction" / "index.html").read_text()
    assert expected_readout(ref["tokens"], row, q) in html
    assert f"Layer {copy['layer'] + 1}, head {copy['head'] + 1}; numbers" in html


def test_copy_head_view_survives_going_live(warm_page, site_url):
    """The page's layer, head and query stay selected when the model runs in the browser."""
    # in the warm visit the mouse rests where an earlier test left it: a token under it would be hovered,
    # and hovering a token picks it as the query, as it should; park the mouse away from the page
    warm_page.mouse.move(0, 0)
    root = open_widget(warm_page, site_url + "eviction/", "model-attention")
    copy = tiny.tiny_card()["copy_head"]
    expect(root.locator('select[name="head"]')).to_have_value(str(copy["head"]))
    root.locator('select[name="layer"]').focus()
    expect(root).to_have_attribute("data-state", "ready", timeout=GEN_TIMEOUT_MS)
    expect(root.locator('[data-field="where"]')).to_contain_text(
        f"Layer {copy['layer'] + 1}, head {copy['head'] + 1}; numbers from the tiny model"
    )
    expect(root.locator('[data-field="readout"]')).to_contain_text("“ code” reads: “ 3”")


def test_concurrent_model_calls_queue_instead_of_colliding(warm_page, site_url):
    """Two widgets on one page may run the model at once: the runs queue (onnxruntime-web
    cannot run one session concurrently) and each gets its own, right answer."""
    warm_page.goto(site_url + "generate/")  # kvlab.generate: on any page of the site
    got = warm_page.evaluate(
        """async () => {
            const work = Promise.all([
                kvlab.attention("The cat sat on the mat."),
                kvlab.attention("Tom lost his key."),
                kvlab.generate({prompt: "The dog", maxNewTokens: 8}),
            ]);
            const timeout = new Promise((r) => setTimeout(() => r("timed out"), 90000));
            const res = await Promise.race([work, timeout]);
            return res === "timed out" ? res : [res[0].tokens, res[1].tokens, res[2].tokens];
        }"""
    )
    assert got != "timed out"
    assert got[0] == kvlab.model_attention_figure("The cat sat on the mat.")["tokens"]
    assert got[1] == kvlab.model_attention_figure("Tom lost his key.")["tokens"]
    assert got[2] == [s["token"] for s in kvlab.generate_figure("The dog", max_new_tokens=8)["steps"]]


def test_model_attention_refuses_a_blank_sentence_and_keeps_the_last_one(warm_page, site_url):
    """Like kvlab.model_attention_figure (ValueError), a sentence of spaces is not run."""
    root = open_widget(warm_page, site_url + "attention/", "model-attention")
    root.locator('input[name="prompt"]').focus()
    expect(root).to_have_attribute("data-state", "ready", timeout=GEN_TIMEOUT_MS)
    root.locator('input[name="prompt"]').fill("   ")
    root.locator('button[name="show"]').click()
    expect(root.locator(".kv-notice")).to_contain_text("Type a sentence first")
    expect(root.locator("button.kv-ma-token")).to_have_count(len(kvlab.model_attention_figure()["tokens"]))
    assert warm_page.evaluate("kvlab.attention('  ').then(() => 'ran', (e) => e.message)") == "Type a prompt first."
