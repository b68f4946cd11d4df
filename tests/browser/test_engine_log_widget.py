"""engine-log, live in a real Chromium: the checks the page shows equal CPython's kvlab.engine_log_figure."""

from __future__ import annotations

import kvlab
from playwright.sync_api import expect
from tests.browser.widgets import open_live, open_widget, wait_ready


def rows(root) -> list[list[str]]:
    return root.locator('[data-field="checks"] tbody tr').evaluate_all(
        "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent.trim()))"
    )


def want_rows(data) -> list[list[str]]:
    return [
        [c["figure"] + (f" (line {c['line']})" if c["line"] else ""), c["status_label"], c["logged"], c["rebuilt"]]
        for c in data["view"]["checks"]
    ]


def test_static_figure_explains_the_default_example(built_site):
    html = (built_site / "memory" / "index.html").read_text()
    data = kvlab.engine_log_figure()
    assert data["summary"] in html and data["example"]["source"] in html
    assert "Maximum concurrency for 20000 tokens per request: 1.56x" in html  # the real log, shown as published


def test_live_examples_and_a_pasted_log(warm_page, site_url):
    root = open_live(warm_page, site_url + "memory/", "engine-log")
    assert rows(root) == want_rows(kvlab.engine_log_figure())

    # an example with a figure that differs: the difference and its reason are shown
    root.locator('select[name="example"]').select_option("vllm-gpt-oss-120b-refused")
    wait_ready(root)
    data = kvlab.engine_log_figure(example="vllm-gpt-oss-120b-refused")
    assert rows(root) == want_rows(data)
    assert "max_num_batched_tokens from 896 to 1,152" in root.locator('[data-field="details"]').inner_text()

    # stating the setting the log hides makes the figure exact
    root.locator('input[name="settings"]').fill("max_num_batched_tokens=1024")
    root.locator('form.kv-controls button[type="submit"]').click()
    wait_ready(root)
    data = kvlab.engine_log_figure(
        example="vllm-gpt-oss-120b-refused",
        model="gpt-oss-120b",
        log=data["log"],
        settings="max_num_batched_tokens=1024",
    )
    assert [c["status"] for c in data["checks"]] == ["exact"]
    assert rows(root) == want_rows(data)
    root.locator('input[name="settings"]').fill("")

    # a pasted llama.cpp line for a catalogue model
    line = (
        "llama_kv_cache: size =  512.00 MiB (  4096 cells,  32 layers,  1/1 seqs), "
        "K (f16):  256.00 MiB, V (f16):  256.00 MiB"
    )
    root.locator('select[name="model"]').select_option("mistral-7b-v0.3")
    root.locator('textarea[name="log"]').fill(line)
    root.locator('form.kv-controls button[type="submit"]').click()
    wait_ready(root)
    data = kvlab.engine_log_figure(log=line, model="mistral-7b-v0.3")
    assert rows(root) == want_rows(data)
    assert root.locator('[data-field="summary"]').inner_text() == data["summary"]
    assert root.locator('[data-field="example-source"]').is_hidden()


def test_a_log_with_terminal_colours_is_read_as_a_log(warm_page, site_url):
    """vLLM's log as a terminal shows it, colour codes and all ("\\x1b[1;36m(EngineCore_DP0 pid=…)"):
    explained as CPython explains it; it was refused as JSON "nested 88 levels deep" (the nesting
    check, meant for a pasted config.json, ran on the log)."""
    root = open_live(warm_page, site_url + "memory/", "engine-log")
    example = kvlab.engine_log_figure()["example"]
    # a start-up as a terminal shows it: vLLM's lines before the memory report (their form, from
    # vLLM 0.10's start-up), then the example's real lines; every line with its coloured prefix
    before = [
        "INFO 08-01 12:00:00 [__init__.py:241] Automatically detected platform cuda.",
        "INFO 08-01 12:00:03 [api_server.py:1805] vLLM API server version 0.10.0",
        "INFO 08-01 12:00:03 [utils.py:326] non-default args: {'max_model_len': 20000}",
        "INFO 08-01 12:00:09 [config.py:1604] Using max model len 20000",
        "INFO 08-01 12:00:12 [core.py:654] Waiting for init message from front-end.",
        "INFO 08-01 12:00:14 [gpu_model_runner.py:1913] Starting to load model",
    ] * 4
    log = "".join(
        "\x1b[1;36m(EngineCore_DP0 pid=4242)\x1b[0;0m " + line.replace("INFO", "\x1b[32mINFO\x1b[0m") + "\n"
        for line in before + kvlab.engine_log_figure()["log"].splitlines()
    )
    assert log.count("[") - log.count("]") > 64  # deeper than the JSON check allows, were it JSON
    root.locator('select[name="model"]').select_option(example["model"])
    root.locator('textarea[name="log"]').fill(log)
    root.locator('form.kv-controls button[type="submit"]').click()
    wait_ready(root)
    assert root.locator('[data-field="error"]').is_hidden()
    assert rows(root) == want_rows(kvlab.engine_log_figure(log=log, model=example["model"]))


def test_a_paste_too_big_to_read_is_refused_at_once(page_factory, site_url):
    """10 MB pasted into the log box: refused before it reaches the box (a <textarea> holding it froze
    the page for seconds before the size check could speak), said beside the box; the box keeps its log."""
    page, _ = page_factory(allowed=[site_url])
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    root = open_widget(page, site_url + "memory/", "engine-log")
    area = root.locator('textarea[name="log"]')
    before = area.input_value()
    page.evaluate("navigator.clipboard.writeText('INFO Available KV cache memory: 20.50 GiB\\n'.repeat(250000))")
    area.focus()
    area.press("Control+End")
    area.press("Control+V")
    note = root.locator('.kv-field-note[data-kind="paste"]')
    expect(note).to_contain_text("Not pasted: 10.5 MB")
    expect(note).to_contain_text("256 KB this box reads")
    assert area.input_value() == before
    # a paste within the limit goes in, and the note goes
    page.evaluate("navigator.clipboard.writeText('INFO Available KV cache memory: 20.50 GiB')")
    area.press("Control+V")
    expect(note).to_be_hidden()
    assert area.input_value().endswith("INFO Available KV cache memory: 20.50 GiB")
