"""A number field shows what the reader typed, at a person's pace (issue 37, point 1).

Every enabled number field of every widget on every content page is typed into, key by key,
at 300 ms and at 100 ms a key, with the widget live: while the reader types, each key makes a
call (kvlab.inputs clamps "8" for a field whose minimum is 256), and the value Python used must
not be written into the field the reader is typing in ("8192" used to become "256192").
After the last key, once the widget has settled, the field still holds exactly what was typed,
focused and after Tab (the values chosen are in range, so nothing is clamped on blur either).

The fields are found in the browser, not listed here: a new widget's fields are typed too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.widgets import wait_ready

PAGES = Path(__file__).resolve().parents[2] / "site_src" / "pages"
WIDGETS = PAGES.parent / "widgets"
BLOCK = re.compile(r"<!--\s*widget:\s*([\w-]+)")


def _has_number_field(name: str) -> bool:
    template = (WIDGETS / name / "template.html").read_text(encoding="utf-8")
    return 'type="number"' in template or "vllm_controls(" in template


# the content pages with at least one widget that has a number field (the gallery, embed.md, is
# the embeds' page: tests/browser/test_embed_page.py)
TYPED_PAGES = sorted(
    md.stem
    for md in PAGES.glob("*.md")
    if md.stem not in ("index", "embed")
    and any(_has_number_field(n) for n in BLOCK.findall(md.read_text(encoding="utf-8")))
)

# what to type: a value in range whose first keys alone are out of range where the field allows it
# ("8" < 256, "0" < 0.1), so a call made after each key is clamped while the reader is still typing
INTEGERS = ("8192", "2048", "512", "500", "250", "25", "12", "7")
DECIMALS = ("0.5", "0.75", "2.5", "1.5", "12.5")

FIELDS_JS = """root => [...root.querySelectorAll("form.kv-controls input[type=number]")]
    .filter(el => !el.disabled && el.offsetParent !== null)
    .map(el => ({name: el.name, min: el.min, max: el.max, step: el.step, value: el.value}))"""

# the widget's state changes are stamped, so "settled" can be waited for: no call in flight,
# nothing changed for 500 ms, and 500 ms since the last key
WATCH_JS = """root => {
    if (root.kvTypingWatch) return;
    root.kvTypingWatch = new MutationObserver(() => { root.kvStateAt = performance.now(); });
    root.kvTypingWatch.observe(root, {attributes: true, attributeFilter: ["data-state"]});
    root.kvStateAt = performance.now();
}"""
SETTLED_JS = """([root, since]) => root.dataset.state !== "loading"
    && performance.now() - Math.max(root.kvStateAt, since) > 500"""


def choose(field: dict) -> str | None:
    """A value in the field's range, other than the one it holds, that takes several keys."""
    lo = float(field["min"]) if field["min"] else float("-inf")
    hi = float(field["max"]) if field["max"] else float("inf")
    step = float(field["step"]) if field["step"] not in ("", "any") else None
    fractional = field["step"] == "any" or (step is not None and step != int(step))
    for text in DECIMALS if fractional else INTEGERS:
        v = float(text)
        aligned = fractional or step is None or lo == float("-inf") or (v - lo) % step == 0
        if lo <= v <= hi and aligned and text != field["value"]:
            return text
    return None


@pytest.mark.parametrize("delay", [300, 100], ids=["300ms", "100ms"])
@pytest.mark.parametrize("slug", TYPED_PAGES)
def test_every_number_field_keeps_what_the_reader_types(warm_page, site_url, slug, delay):
    page = warm_page
    page.goto(f"{site_url}{slug}/")
    typed = []
    for root in page.locator("[data-widget]").all():
        if root.locator("form.kv-controls input[type=number]:disabled").count():
            # vLLM's own settings (gpu-fit's --gpu-memory-utilization) are on only with vLLM chosen
            for choice in root.locator("form.kv-controls select:has(option[value=vllm])").all():
                choice.select_option("vllm")
        fields = root.evaluate(FIELDS_JS)
        if not fields:
            continue
        root.evaluate(WATCH_JS)
        for field in fields:
            text = choose(field)
            assert text is not None, f"{root.get_attribute('data-widget')}.{field['name']}: no value to type in {field}"
            box = root.locator(f'form.kv-controls input[name="{field["name"]}"]')
            box.scroll_into_view_if_needed()
            box.focus()
            if root.get_attribute("data-activated") != "true":
                root.evaluate("r => r.kvActivate(true)")
            if root.get_attribute("data-state") == "loading":
                wait_ready(root)
            box.press("Control+A")
            box.press_sequentially(text, delay=delay)
            since = page.evaluate("performance.now()")
            page.wait_for_function(SETTLED_JS, arg=[root.element_handle(), since], timeout=60_000)
            where = f"{slug}: {root.get_attribute('data-widget')}.{field['name']} typed {text!r} at {delay} ms a key"
            assert box.input_value() == text, f"{where}: the field shows {box.input_value()!r}"
            expect(box).to_be_focused()
            box.press("Tab")  # blur: the value is committed; in range, so it stays as typed
            since = page.evaluate("performance.now()")
            page.wait_for_function(SETTLED_JS, arg=[root.element_handle(), since], timeout=60_000)
            assert box.input_value() == text, f"{where}, then Tab: the field shows {box.input_value()!r}"
            assert root.get_attribute("data-state") != "error", f"{where}: {root.locator('.kv-status').inner_text()}"
            typed.append(where)
    assert typed, f"{slug}: no enabled number field found, though its widgets' templates have one"


def test_an_out_of_range_value_is_clamped_on_enter_and_said_beside_the_field(warm_page, site_url):
    """Typed below the minimum: while focused the field keeps "5"; Enter puts the value Python used
    (256) in it and "clamped to 256" beside it (its description); a value in range clears the note."""
    page = warm_page
    page.goto(f"{site_url}kv-offload/")
    root = page.locator('[data-widget="kv-offload"]')
    box = root.locator('input[name="prefix_tokens"]')
    lo = box.get_attribute("min")
    box.focus()
    if root.get_attribute("data-activated") != "true":
        root.evaluate("r => r.kvActivate(true)")
    wait_ready(root)
    root.evaluate(WATCH_JS)
    box.press("Control+A")
    box.press_sequentially("5", delay=100)
    since = page.evaluate("performance.now()")
    page.wait_for_function(SETTLED_JS, arg=[root.element_handle(), since], timeout=60_000)
    note = root.locator('.kv-field-note[data-for="prefix_tokens"]')
    expect(note).to_have_text(f"clamped to {lo}")
    assert box.input_value() == "5"  # still the reader's while they type
    box.press("Enter")
    expect(box).to_have_value(lo)
    expect(box).to_be_focused()
    note_id = note.get_attribute("id")
    assert note_id in (box.get_attribute("aria-describedby") or "").split()
    expect(root.locator(".kv-clamped")).to_contain_text(f"asked 5, used {lo}")
    # typing on from the clamped value, then a value in range: the note goes
    box.press("Control+A")
    box.press_sequentially("4096", delay=100)
    box.press("Tab")
    since = page.evaluate("performance.now()")
    page.wait_for_function(SETTLED_JS, arg=[root.element_handle(), since], timeout=60_000)
    expect(box).to_have_value("4096")
    expect(note).to_be_hidden()
    expect(root.locator(".kv-clamped")).to_be_hidden()
