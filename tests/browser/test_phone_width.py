"""At 375 px no page scrolls sideways, with its widgets live: the document's
scrollWidth stays within the viewport, and a table wider than the column sits in a
scroll container (overflow-x auto) instead of widening the page."""

from __future__ import annotations

import pytest

PHONE = {"width": 375, "height": 812}
# widgets whose activation loads nothing until the reader presses their button (they stay "static")
WAIT_FOR_BUTTON = {"model-race"}


def content_pages(site) -> list[str]:
    pages = [""] + sorted(
        p.parent.name + "/" for p in site.glob("*/index.html") if p.parent.name not in ("assets", "search", "embed")
    )
    return pages


def test_there_are_pages_to_check(built_site):
    pages = content_pages(built_site)
    assert "wrap-up/" in pages and "eviction/" in pages and len(pages) >= 11


@pytest.mark.parametrize("scheme", ["light"])
def test_no_page_scrolls_sideways_at_375_px(page_factory, site_url, built_site, scheme):
    page, _ = page_factory(allowed=[site_url], viewport=PHONE)
    page.set_default_timeout(180_000)
    wide = {}
    for path in content_pages(built_site):
        page.goto(site_url + path)
        page.wait_for_function("() => [...document.querySelectorAll('[data-widget]')].every(r => r.dataset.mounted)")
        # go live everywhere: live figures (grids, plots, tables filled by JS) are what widened pages before
        page.evaluate(
            "() => document.querySelectorAll('[data-widget]').forEach(r => r.kvActivate && r.kvActivate(true))"
        )
        page.wait_for_function(
            """skip => [...document.querySelectorAll('[data-widget]')]
                 .every(r => skip.includes(r.dataset.widget) || ['ready', 'error'].includes(r.dataset.state))""",
            arg=sorted(WAIT_FOR_BUTTON),
            timeout=240_000,
        )
        page.wait_for_timeout(300)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE["width"]:
            wide[path or "home"] = (
                width,
                page.evaluate("""() => [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > 376).slice(0, 5).map(e => e.tagName + '.' + e.className)"""),
            )
        # wide tables: inside a container that scrolls
        loose = page.evaluate("""() => [...document.querySelectorAll('.md-content table')].filter(t => {
            if (t.closest('.kv-visually-hidden, .kv-sr-only, [hidden]')) return false;  // for screen readers only
            if (t.getBoundingClientRect().width <= t.parentElement.getBoundingClientRect().width + 1) return false;
            for (let p = t.parentElement; p && p !== document.body; p = p.parentElement)
              if (/(auto|scroll)/.test(getComputedStyle(p).overflowX)) return false;
            return true; }).map(t => t.className)""")
        assert not loose, f"{path}: tables wider than the column with no scroll container: {loose}"
    assert not wide, f"pages wider than 375 px: {wide}"


def test_step_tables_on_the_quadratic_wall_read_at_375_px(page_factory, site_url):
    """The race's step table (and the other step tables on the page): column headers wrap
    above their numbers instead of running into each other, and the table fits the column."""
    page, _ = page_factory(allowed=[site_url], viewport=PHONE)
    page.goto(site_url + "quadratic-wall/")
    for table in ("kv-race-table", "kv-reprocessing-table", "kv-wall-table"):
        page.evaluate(f"() => document.querySelector('table.{table}').closest('details')?.setAttribute('open', '')")
        boxes = page.evaluate(f"""() => [...document.querySelectorAll('table.{table} thead th')].map(th => {{
            const r = document.createRange(); r.selectNodeContents(th);
            const text = r.getBoundingClientRect(), cell = th.getBoundingClientRect();
            return {{left: cell.left, right: cell.right, textLeft: text.left, textRight: text.right}}; }})""")
        assert len(boxes) >= 3, table
        for a, b in zip(boxes, boxes[1:]):
            assert a["textRight"] + 4 <= b["textLeft"], f"{table}: headers run together: {a} {b}"
            assert a["textLeft"] >= a["left"] - 0.5 and a["textRight"] <= a["right"] + 0.5, (
                f"{table}: text outside its cell"
            )
        wrap = page.evaluate(
            f"() => {{ const w = document.querySelector('table.{table}').closest('.kv-table-wrap');"
            " return [w.scrollWidth, w.clientWidth]; }"
        )
        assert wrap[0] <= wrap[1], f"{table} scrolls at 375 px: {wrap}"
