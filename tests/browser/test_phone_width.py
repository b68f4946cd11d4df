"""At 375 px, tables read: the step tables' headers wrap instead of running together.
(That no page scrolls sideways at 375 px with its widgets live is checked by the quality
gate's phone pass, tests/browser/test_gates.py, which has every page live at that width.)"""

from __future__ import annotations


PHONE = {"width": 375, "height": 812}


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
