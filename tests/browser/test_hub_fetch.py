"""kv-memory's "Fetch from the Hub", in a real Chromium under the site's own CSP.

The Hub is played by the browser context: requests to https://huggingface.co are answered from the real
files in tests/python/data/checkpoints/ (Devstral-Small-2507's config.json and safetensors index, with their
sources in SOURCES.md there), a gated repository answers 403, and a one-file model has no index. What the
page shows must equal what CPython's kvlab computes from the same texts; a CSP that did not allow the Hub
would show up as a console error, which fails the test.
"""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import open_live

DATA = Path(__file__).resolve().parents[1] / "python" / "data" / "checkpoints"
HUB = "https://huggingface.co"
CONFIG = (DATA / "devstral-small-2507.config.json").read_text(encoding="utf-8")
INDEX = (DATA / "devstral-small-2507.index.json").read_text(encoding="utf-8")
FILES = {
    "/mistralai/Devstral-Small-2507/resolve/main/config.json": (200, CONFIG),
    "/mistralai/Devstral-Small-2507/resolve/main/model.safetensors.index.json": (200, INDEX),
    "/one/file-model/resolve/main/config.json": (200, CONFIG),
}
GATED = "/gated/model/"


def serve_hub(route):
    path = route.request.url.removeprefix(HUB)
    if path.startswith(GATED):
        route.fulfill(
            status=403, body="Access to this model is restricted", headers={"access-control-allow-origin": "*"}
        )
        return
    status, body = FILES.get(path, (404, "Entry not found"))
    route.fulfill(status=status, body=body, headers={"access-control-allow-origin": "*", "content-type": "text/plain"})


def fetch(root, repo: str) -> None:
    form = root.locator(".kv-hub-form")
    form.locator('input[name="repo"]').fill(repo)
    form.get_by_role("button", name="Fetch from the Hub").click()


def test_a_hub_model_is_fetched_read_by_python_and_its_failures_said(page_factory, site_url):
    page, problems = page_factory(allowed=[site_url, HUB])
    page.set_default_timeout(90_000)
    # Chromium logs every fetch that is answered 403 or 404; the page reads those answers on purpose
    problems.expect_console_error("status of 403")
    problems.expect_console_error("status of 404")
    page.context.route(f"{HUB}/**", serve_hub)
    root = open_live(page, site_url + "memory/", "kv-memory")
    root.locator(".kv-config summary").click()
    message = root.locator('[data-field="hub-message"]')

    # a real repository: config.json and the index, read by the same Python as on the command line
    fetch(root, "mistralai/Devstral-Small-2507")
    want = kvlab.kv_memory_figure(config=CONFIG, index=INDEX, hub="mistralai/Devstral-Small-2507", hub_status="ok")
    expect(root.locator('[data-field="weights-stored"]')).to_have_text(want["view"]["weights_stored"])
    expect(root.locator('[data-field="model"]')).to_have_text(want["result"]["model"])
    expect(root.locator('[data-field="total"]')).to_have_text(want["result"]["total"]["human"])
    expect(message).to_be_hidden()
    assert "43.91 GiB" in want["view"]["weights_stored"]  # the index's total_size, 47,144,806,400 B

    # a gated repository: nothing to read, and the reader is told what to do
    fetch(root, "gated/model")
    gated = kvlab.kv_memory_figure(hub="gated/model", hub_status="gated")["hub_message"]
    expect(message).to_have_text(gated)
    expect(root.locator('[data-field="weights-stored"]')).to_be_hidden()

    # a one-file model: the KV cache from its config, the weights not read here (and why)
    fetch(root, "one/file-model")
    expect(message).to_have_text(kvlab.kv_memory_figure(hub="one/file-model", hub_status="no-index")["hub_message"])
    expect(root.locator('[data-field="model"]')).to_contain_text("one/file-model")

    # a misspelt id: Python's sentence names the field, and no request leaves the page
    requests = []
    page.on("request", lambda r: requests.append(r.url) if r.url.startswith(HUB) else None)
    fetch(root, "not a model id")
    expect(root.locator(".kv-config-form .kv-error")).to_contain_text("write it as org/name")
    assert requests == []


def test_the_offline_copy_offers_the_paste_only(page_factory, unzipped):
    page, _ = page_factory(allowed=["file://"])
    page.set_default_timeout(90_000)
    root = open_live(page, (unzipped / "memory.html").as_uri(), "kv-memory")
    root.locator(".kv-config summary").click()
    expect(root.locator(".kv-hub-form")).to_be_hidden()
    expect(root.locator(".kv-hub-offline")).to_be_visible()
    policy = page.locator('meta[http-equiv="Content-Security-Policy"]').get_attribute("content")
    assert "connect-src 'self';" in policy and "huggingface" not in policy
