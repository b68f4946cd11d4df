"""Helpers for driving widgets in the real browser (Playwright)."""

from __future__ import annotations

from playwright.sync_api import Page, expect

LOAD_TIMEOUT_MS = 120_000  # Pyodide + numpy on a loaded 2-core machine


def open_widget(page: Page, url: str, name: str, index: int = 0):
    """Go to url and return the widget's root element."""
    page.goto(url)
    root = page.locator(f'[data-widget="{name}"]').nth(index)
    expect(root).to_be_visible()
    return root


def activate(root) -> None:
    """Make the widget live as a reader would: its "Make it live" button (a
    widget whose runtimes are already running in this visit has none)."""
    expect(root).to_have_attribute("data-mounted", "true")  # runtime.js has run
    button = root.locator(".kv-live-button")
    if button.count():
        button.click()
    else:
        root.locator(".kv-controls input, .kv-controls select, .kv-controls textarea").first.focus()


def wait_ready(root, timeout: int = LOAD_TIMEOUT_MS) -> None:
    """Wait until the widget has rendered live data (data-state=ready)."""
    expect(root).to_have_attribute("data-state", "ready", timeout=timeout)


def open_live(page: Page, url: str, name: str, index: int = 0):
    """open_widget, then make it live and wait for its first live result: the widget's root."""
    root = open_widget(page, url, name, index)
    activate(root)
    wait_ready(root)
    return root


def select(root, **choices) -> None:
    """Pick each select's option, in the order given (a later choice may depend on an earlier one)."""
    for name, value in choices.items():
        root.locator(f'select[name="{name}"]').select_option(value)


def set_range(root, name: str, value) -> None:
    """Set a range/number input and fire `input`, as dragging would."""
    root.locator(f'input[name="{name}"]').evaluate(
        "(el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', {bubbles: true})); }", value
    )


def heatmap_weights(root) -> list[list[float | None]]:
    """The weights a kit.heatmap draws, row by row (None: no cell, e.g. a masked key),
    read from the cells' --w (3 decimals)."""
    return root.locator(".kv-hm-grid").evaluate(
        """grid => {
            const cols = Number(grid.style.getPropertyValue("--kv-hm-cols"));
            const cells = [...grid.querySelectorAll(".kv-hm-cell")];
            const rows = [];
            for (let i = 0; i < cells.length; i += cols)
                rows.push(cells.slice(i, i + cols).map(c =>
                    c.classList.contains("kv-hm-none") ? null : Number(c.style.getPropertyValue("--w"))));
            return rows;
        }"""
    )


# every body cell of every table of the widget, and the body text's size: the tables of these
# widgets stood at the body's 16 px at 1280 px while the notes and every other widget's
# tables read at 0.72em of it (11.5 px)
TABLE_SIZES_JS = """root => ({
  body: parseFloat(getComputedStyle(root).fontSize),
  cells: [...root.querySelectorAll('table tbody :is(th, td)')].map(c => parseFloat(getComputedStyle(c).fontSize)),
})"""


def assert_one_table_size(root, width):
    sizes = root.evaluate(TABLE_SIZES_JS)
    assert sizes["cells"], "no table cells"
    assert len(set(sizes["cells"])) == 1, f"mixed sizes at {width} px: {sorted(set(sizes['cells']))}"
    want = max(0.72 * sizes["body"], 12) if width < 720 else 0.72 * sizes["body"]  # kvlab.css: the phones' 12 px floor
    assert abs(sizes["cells"][0] - want) < 0.5, (width, sizes["cells"][0], want)
