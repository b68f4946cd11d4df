"""Shareable state: a content page's address carries its widgets' settings, namespaced by
each widget's key (`?gpu-fit.model=…&gpu-fit.context=32768#kv-gpu-fit`), validated as
strictly as an embed's (kvlab.applyQueryParams), applied without starting anything before
the reader's intent, and kept in step with the live widget (site_src/runtime/embed.js)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

from playwright.sync_api import expect

import kvlab
from tests.browser.widgets import activate, open_widget, set_range, wait_ready

LINK = (
    "memory/?gpu-fit.model=llama-3.1-70b&gpu-fit.gpu=h100-sxm&gpu-fit.context=32768"
    "&gpu-fit.weights=FP64&gpu-fit.n_seq=0x10&gpu-fit.colour=red"  # a bad choice, a non-decimal number, no such setting
    "&kv-memory.n_seq=4&nosuch.context=1&plain=1"  # another widget's; a widget not on the page; no key at all
)


def settings(url: str, key: str) -> dict[str, str]:
    """The settings a URL gives the widget `key`, by name."""
    return {
        k[len(key) + 1 :]: v
        for k, v in parse_qsl(urlsplit(url).query, keep_blank_values=True)
        if k.startswith(key + ".")
    }


def poll(page, read, want, timeout_ms: int = 10_000):
    """Poll read() until it returns want (the page's CSP forbids wait_for_function with a string)."""
    for _ in range(timeout_ms // 100):
        got = read()
        if got == want:
            return got
        page.wait_for_timeout(100)
    assert read() == want


def test_a_link_sets_gpu_fit_and_the_figure_follows_once_live(page_factory, site_url):
    page, _ = page_factory(allowed=[site_url])
    page.set_default_timeout(90_000)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    root = open_widget(page, site_url + LINK + "#kv-gpu-fit", "gpu-fit")
    expect(root).to_have_attribute("data-mounted", "true")
    assert root.get_attribute("id") == "kv-gpu-fit" and root.get_attribute("data-kv-key") == "gpu-fit"
    form = root.locator("form.kv-controls")
    expect(form.locator('select[name="model"]')).to_have_value("llama-3.1-70b")
    expect(form.locator('select[name="gpu"]')).to_have_value("h100-sxm")
    expect(form.locator('input[name="context"]')).to_have_value("32768")
    expect(form.locator('select[name="weights"]')).to_have_value("Q4_K_M")  # FP64: not an option
    expect(form.locator('input[name="n_seq"]')).to_have_value("1")  # 0x10: not decimal
    ignored = root.locator(".kv-link")
    for name in ("gpu-fit.weights", "gpu-fit.n_seq", "gpu-fit.colour"):
        expect(ignored).to_contain_text(f"“{name}”")
    assert "nosuch" not in ignored.inner_text() and "plain" not in ignored.inner_text()
    expect(root.locator(".kv-link-applied")).to_be_visible()
    # the other widget on the page took its own, and had nothing to say
    memory = page.locator('[data-widget="kv-memory"]')
    expect(memory.locator('input[name="n_seq"]')).to_have_value("4")
    expect(memory.locator(".kv-link")).to_have_count(0)
    # nothing heavy before the reader's intent: the controls are set, the figure is the build's
    assert page.evaluate("kvlab.runtimeState('python')") == "idle"
    assert root.get_attribute("data-activated") is None and root.get_attribute("data-state") == "static"

    activate(root)
    wait_ready(root)
    want = kvlab.gpu_fit_figure(model="llama-3.1-70b", gpu="h100-sxm", weights="Q4_K_M", kv="q8_0", context=32768)
    expect(root.locator('[data-field="headline"]')).to_have_text(want["headline"])
    expect(root.locator('[data-field="verdict"]')).to_have_text(want["verdict"])
    expect(root.locator('[data-field="max-context"]')).to_have_text(want["max_context_text"])
    expect(root.locator('[data-field="flags"]')).to_have_text(want["flags"])
    expect(root.locator(".kv-link-applied")).to_be_hidden()  # the figure follows them now

    # the Link: this page, this widget's settings (no one else's), scrolled to the widget; copied
    button = root.get_by_role("button", name="Link", exact=True)
    button.click()
    expect(button).to_have_attribute("aria-expanded", "true")
    area = root.locator("textarea.kv-link-url")
    assert area.evaluate("el => el === document.activeElement && el.selectionEnd === el.value.length")
    link = area.input_value()
    parts = urlsplit(link)
    assert link.startswith(site_url + "memory/?") and parts.fragment == "kv-gpu-fit"
    assert {k.split(".")[0] for k, _ in parse_qsl(parts.query)} == {"gpu-fit"}
    mine = settings(link, "gpu-fit")
    assert mine["model"] == "llama-3.1-70b" and mine["gpu"] == "h100-sxm" and mine["context"] == "32768"
    assert mine["weights"] == "Q4_K_M" and mine["n_seq"] == "1"
    root.get_by_role("button", name="Copy link").click()
    expect(root.locator(".kv-link-copied")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == link
    # the Embed snippet carries the same settings (one function), and opening it closes the Link's panel
    root.get_by_role("button", name="Embed").click()
    expect(button).to_have_attribute("aria-expanded", "false")
    snippet = root.locator("textarea.kv-embed-snippet").input_value()
    src = snippet.split('src="')[1].split('"')[0].replace("&amp;", "&")
    assert src.startswith(site_url + "embed/gpu-fit/?") and dict(parse_qsl(urlsplit(src).query)) == mine

    # the reader changes a control: the address bar follows, in place (no history entry),
    # keeping the other widgets' settings, the unknown ones and the hash
    history = page.evaluate("history.length")
    form.locator('select[name="weights"]').select_option("BF16")
    poll(page, lambda: settings(page.url, "gpu-fit").get("weights"), "BF16")
    assert page.evaluate("history.length") == history
    assert settings(page.url, "gpu-fit") == {**mine, "weights": "BF16"}
    assert (
        settings(page.url, "kv-memory") == {"n_seq": "4"} and "nosuch.context=1" in page.url and "plain=1" in page.url
    )
    assert urlsplit(page.url).fragment == "kv-gpu-fit"

    # the copied link round-trips: a fresh load of it sets the same controls
    page.goto(link)
    root = page.locator('[data-widget="gpu-fit"]')
    expect(root).to_have_attribute("data-mounted", "true")
    expect(root.locator(".kv-link")).to_have_count(0)  # nothing ignored, nothing clamped
    expect(root.locator(".kv-link-clamped")).to_have_count(0)
    assert root.evaluate("r => Object.fromEntries(kvlab.widgetSettings(r))") == mine


def test_instant_navigation_applies_settings_and_the_second_widget_has_its_own_key(warm_page, site_url):
    page = warm_page
    page.goto(site_url + "memory/")
    page.evaluate("window.kvSameVisit = true")
    page.goto(
        site_url
        + "prefix-cache/?prefix-blocks-2.prefix_len=500&prefix-blocks-2.suffix_len=99999&prefix-blocks.nosuch=1"
    )
    assert page.evaluate("window.kvSameVisit === true"), "not an instant navigation"
    first = page.locator('[data-widget="prefix-blocks"]').nth(0)
    second = page.locator('[data-widget="prefix-blocks"]').nth(1)
    expect(second).to_have_attribute("data-mounted", "true")
    expect(first).to_have_attribute("data-kv-key", "prefix-blocks")
    expect(second).to_have_attribute("data-kv-key", "prefix-blocks-2")
    expect(second.locator('input[name="prefix_len"]')).to_have_value("500")
    expect(second.locator('output[name="prefix_len-out"]')).to_have_text("500")  # the slider's readout too
    hi = kvlab.prefix_blocks_figure()["limits"]["suffix_len"][1]
    expect(second.locator('input[name="suffix_len"]')).to_have_value(str(hi))
    expect(second.locator(".kv-link-clamped")).to_have_text(
        f"Out of range, so clamped: Own tokens: asked 99999, used {hi}."  # the control's label, not the key
    )
    expect(first.locator('input[name="prefix_len"]')).to_have_value("40")  # the first keeps its own
    expect(first.locator(".kv-link")).to_contain_text("“prefix-blocks.nosuch”")

    second.scroll_into_view_if_needed()
    activate(second)
    wait_ready(second)
    want = kvlab.prefix_blocks_figure(prefix_len=500, suffix_len=hi, block_size=16)["view"]
    for name in ("n_tokens", "blocks_hit", "tokens_reused", "radix_reused"):
        expect(second.locator(f'[data-field="{name}"]')).to_have_text(str(want[name]))
    history = page.evaluate("history.length")
    set_range(second, "prefix_len", 600)
    poll(page, lambda: settings(page.url, "prefix-blocks-2").get("prefix_len"), "600")
    assert page.evaluate("history.length") == history
    assert settings(page.url, "prefix-blocks") == {"nosuch": "1"}  # the first widget's untouched
    second.get_by_role("button", name="Link", exact=True).click()
    link = second.locator("textarea.kv-link-url").input_value()
    assert settings(link, "prefix-blocks-2") == {"prefix_len": "600", "suffix_len": str(hi), "block_size": "16"}
    assert urlsplit(link).fragment == second.get_attribute("id") and "prefix-blocks.nosuch" not in link


def test_with_javascript_off_a_link_changes_nothing_and_shows_no_controls(browser, site_url):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(site_url + LINK)
        root = page.locator('[data-widget="gpu-fit"]')
        expect(root.locator(".kv-widget-badge")).to_be_visible()
        expect(root.locator(".kv-link-button")).to_be_hidden()
        expect(root.locator(".kv-link-panel")).to_be_hidden()
        fit = kvlab.gpu_fit_figure(model="qwen3.6-27b", gpu="rtx-4090", weights="Q4_K_M", kv="q8_0", context=131072)
        expect(root.locator('[data-field="headline"]')).to_have_text(fit["headline"])
    finally:
        context.close()


def test_a_link_works_from_the_offline_zip(page_factory, unzipped):
    # file:// keeps a query string, and lets history.replaceState change it
    page, _ = page_factory(allowed=["file:///"])
    page.set_default_timeout(120_000)
    memory = (unzipped / "memory.html").as_uri()
    root = open_widget(page, memory + "?gpu-fit.model=llama-3.1-70b&gpu-fit.context=99999999#kv-gpu-fit", "gpu-fit")
    expect(root).to_have_attribute("data-mounted", "true")
    expect(root.locator('select[name="model"]')).to_have_value("llama-3.1-70b")
    hi = kvlab.gpu_fit_figure()["options"]["limits"]["context"]["max"]
    expect(root.locator(".kv-link-clamped")).to_contain_text(f"Context in tokens: asked 99999999, used {hi}")
    root.get_by_role("button", name="Link", exact=True).click()
    link = root.locator("textarea.kv-link-url").input_value()
    assert link.startswith(memory + "?gpu-fit.model=llama-3.1-70b&") and link.endswith("#kv-gpu-fit")
    history = page.evaluate("history.length")
    root.locator('select[name="weights"]').focus()  # intent: the widget goes live
    root.locator('select[name="weights"]').select_option("BF16")
    poll(page, lambda: settings(page.url, "gpu-fit").get("weights"), "BF16")
    assert page.url.startswith(memory + "?") and page.evaluate("history.length") == history


# widgets whose long titles left room for Link but not for Embed at 1280 px (Embed wrapped under it)
LONG_TITLES = ("prefix-cache/", "kv-offload/", "memory/")
BUTTON_TOPS_JS = """() => [...document.querySelectorAll('.kv-widget')].map(w => {
  const link = w.querySelector('.kv-link-button'), embed = w.querySelector('.kv-embed-button:not(.kv-link-button)');
  const title = w.querySelector('.kv-widget-title').getBoundingClientRect();
  const [l, e] = [link, embed].map(b => b.getBoundingClientRect());
  return {widget: w.dataset.widget, visible: l.width > 0 && e.width > 0, link: Math.round(l.top), embed: Math.round(e.top),
          inside: l.left >= title.left - 1 && e.right <= w.getBoundingClientRect().right + 1};
})"""


def test_link_and_embed_stay_on_one_line(page_factory, site_url):
    """Link and Embed are one group: beside the title, or together below it, never split."""
    for width in (375, 1280):
        page, _ = page_factory(allowed=[site_url], viewport={"width": width, "height": 800})
        for path in LONG_TITLES:
            page.goto(site_url + path)
            # every widget's buttons are shown when it mounts, each when its script has run: wait for all of
            # them (under load the last widget on memory/ was measured before its script ran)
            expect(page.locator(".kv-widget:not([data-mounted])")).to_have_count(0)
            tops = page.evaluate(BUTTON_TOPS_JS)
            assert tops, path
            for t in tops:
                assert t["visible"], (width, path, t)
                assert t["link"] == t["embed"], f"at {width} px on {path}: Link and Embed on two lines: {t}"
                assert t["inside"], (width, path, t)
