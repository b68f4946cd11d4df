"""Four engines, one model (memory/): the static figure and, live, a change of GPUs, equal CPython's
kvlab.engines_figure row by row; each engine's bar is as long as its share of the largest budget."""

from __future__ import annotations

import html as html_lib

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import open_live

PAGE = "memory/"
DEFAULTS = {"model": "qwen3-32b", "gpu": "h100-sxm", "context": 32768, "n_gpus": 1, "weights": "BF16"}
COLUMNS = ("name", "budget_text", "tokens_text", "sequences_text", "longest_text")


def test_static_figure_is_kvlab_at_the_page_settings(built_site):
    page = (built_site / "memory" / "index.html").read_text()
    data = kvlab.engines_figure(**DEFAULTS)
    assert html_lib.escape(data["view"]["headline"], quote=False) in page
    assert [r["name"] for r in data["rows"]] == ["vLLM", "SGLang", "TensorRT-LLM", "llama.cpp"]
    # the page's example is one where the engines disagree: some start at this context, some cannot
    assert {r["fits"] for r in data["rows"]} == {True, False}


def test_more_gpus_give_every_engine_the_rows_kvlab_computes(warm_page, site_url):
    root = open_live(warm_page, site_url + PAGE, "engines")
    root.locator('select[name="n_gpus"]').select_option(index=1)  # 2 GPUs (index: "2" would match a label)
    want = kvlab.engines_figure(**{**DEFAULTS, "n_gpus": 2})
    expect(root.locator('[data-field="headline"]')).to_have_text(want["view"]["headline"], timeout=60_000)
    rows = root.locator('[data-field="table"] tbody tr')
    expect(rows).to_have_count(4)
    for i, r in enumerate(want["view"]["rows"]):
        cells = rows.nth(i).locator("th, td")
        for j, key in enumerate(COLUMNS):
            expect(cells.nth(j)).to_have_text(r[key])
    widths = root.locator(".kv-en-bar").evaluate_all("bars => bars.map(b => b.style.width)")
    assert widths == [f"{r['percent']:g}%" for r in want["view"]["rows"]]
