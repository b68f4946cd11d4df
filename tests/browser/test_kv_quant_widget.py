"""The kv-quant widget on the memory page: measured live in the browser, its table equals
what kvlab derives from the numpy reference's measurements (same tokens, so the same
divergence, agreement and recall; logits within float noise)."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from kvlab import kv_quant_figure

from .widgets import open_live, wait_ready


def test_live_table_matches_the_numpy_reference(warm_page, site_url):
    root = open_live(warm_page, site_url + "memory/", "kv-quant")
    root.locator("button[name=run]").click()
    expect(root).to_have_attribute("data-state", "loading")
    wait_ready(root, timeout=300_000)
    live = json.loads(root.get_attribute("data-table"))
    want = kv_quant_figure()["table"]
    assert live["source"].startswith("your browser")
    assert (live["n_steps"], live["prompt_len"], live["distances"]) == (
        want["n_steps"],
        want["prompt_len"],
        want["distances"],
    )
    for got, ref in zip(live["rows"], want["rows"], strict=True):
        for key in (
            "format",
            "bytes_per_token",
            "vs_fp32",
            "cache_bytes",
            "top1_agreement",
            "first_divergence",
            "recall",
        ):
            assert got[key] == ref[key], (got["format"], key)
        assert abs(got["max_abs_dlogit"] - ref["max_abs_dlogit"]) <= 0.01 + 0.02 * ref["max_abs_dlogit"], got["format"]
    # what the page shows is that table
    q4 = root.locator('tr[data-format="q4_0"]')
    row = next(r for r in live["rows"] if r["format"] == "q4_0")
    expect(q4.locator('[data-col="bytes"]')).to_contain_text(f"{row['bytes_per_token']:,}")
    expect(q4.locator('[data-col="diverge"]')).to_have_text(
        "never (48 steps)" if row["first_divergence"] is None else f"token {row['first_divergence']}"
    )
    expect(root.locator('[data-field="caption"]')).to_contain_text("in your browser")
