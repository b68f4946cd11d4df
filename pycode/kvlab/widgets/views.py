"""What several widgets' views share: `with_view`, which attaches a widget's view to its function's
result, and a few formatters (times, token spans, raster runs with their tooltips and ticks, a token's
text shown visibly).

Each widget's view lives beside its entry function in that page's module (e.g.
kvlab.widgets.prefix.prefix_blocks_view above prefix_blocks_figure), with its TypedDict in the
module's *_types.py: the display strings its template binds (kvlab.kit.bind in the browser, Jinja
at build time) that the result does not hold as numbers: a sentence picked by a condition, a list
joined from two, a table whose rows cross two lists, a tooltip made of several values. Python
writes them so that no widget.js formats text of its own.
"""

from __future__ import annotations

import functools
import re
import json
from typing import TYPE_CHECKING

from collections.abc import Callable

if TYPE_CHECKING:
    from kvlab.widgets.shared_types import RasterRuns, RasterTick, RasterTicks


def with_view(view):
    """Adds `view` (view(result)) to a widget function's result."""

    def decorate(fn):
        @functools.wraps(fn)
        def with_display_strings(*args, **kwargs):
            out = fn(*args, **kwargs)
            out["view"] = view(out)
            return out

        return with_display_strings

    return decorate


def computed_status(fn: str, detail: str) -> str:
    """A widget's status line after a result: which kvlab function computed it, with what.

    >>> computed_status("race_figure", "n = 19")
    'Computed in your browser by kvlab.race_figure (n = 19).'
    """
    return f"Computed in your browser by kvlab.{fn} ({detail})."


def si_number(x: float, digits: int = 3) -> str:
    """x with an SI prefix and `digits` significant digits, as a chart's hover shows it (d3's ".3s").

    >>> si_number(1_234_567), si_number(999), si_number(12), si_number(0), si_number(2.5e10)
    ('1.23M', '999', '12.0', '0.00', '25.0G')
    """
    if x == 0:
        return f"{0:.{digits - 1}f}"
    e = int(f"{abs(x):.{digits - 1}e}".split("e")[1])  # the exponent after rounding to `digits`
    k = max(-24, min(24, e // 3 * 3))
    prefixes = {-24: "y", -21: "z", -18: "a", -15: "f", -12: "p", -9: "n", -6: "µ", -3: "m", 0: "", 3: "k", 6: "M"}
    prefixes |= {9: "G", 12: "T", 15: "P", 18: "E", 21: "Z", 24: "Y"}
    return f"{x / 10**k:.{max(0, digits - 1 - (e - k))}f}{prefixes[k]}"


def significant(x: float, digits: int = 3) -> str:
    """x to `digits` significant digits, trailing zeros dropped (d3's ".3~g").

    >>> significant(0.012345), significant(1.5), significant(1234.5)
    ('0.0123', '1.5', '1.23e+3')
    """
    s = f"{x:.{digits}g}"
    return re.sub(r"e([+-])0*(\d)", r"e\1\2", s)


def times(x: float) -> str:
    """A growth factor: up to 2 decimals, no trailing zeros, thousands with commas.

    >>> times(1.0), times(12.345), times(1536.5)
    ('1', '12.35', '1,536.5')
    """
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def raster_display(grid: list) -> dict:
    """What a step-by-position raster's readout needs: its last step and token."""
    return {"last_step": len(grid) - 1, "last_token": len(grid[0]) - 1 if grid else 0}


# A raster's cells get a tooltip each only on grids up to this many cells: a <title> per run
# costs the page's size and the drawing's time (kvlab.kit.raster draws what raster_runs gives).
RASTER_TITLES_MAX = 4096


def raster_runs(grid: list[list[int]], title: Callable[[int, int, int, int], str]) -> RasterRuns:
    """A raster of small categories as it is drawn, the build's SVG and kvlab.kit.raster alike:
    its size in cells, one run [x, y, length, value] per stretch of one non-zero value in a row
    (a row of 32 cached positions is one rect, not 32), row by row, and each run's tooltip,
    title(row, first, last, value), on grids of at most RASTER_TITLES_MAX cells (none past it:
    `titles` is empty). numpy finds the runs: an eviction grid of 512 x 512 is 262,144 cells.

    >>> r = raster_runs([[0, 2, 2, 1], [1, 0, 3, 3]], lambda y, a, b, v: f"row {y}, {a}–{b}: {v}")
    >>> r["width"], r["height"], r["runs"]
    (4, 2, [[1, 0, 2, 2], [3, 0, 1, 1], [0, 1, 1, 1], [2, 1, 2, 3]])
    >>> r["titles"]
    ['row 0, 1–2: 2', 'row 0, 3–3: 1', 'row 1, 0–0: 1', 'row 1, 2–3: 3']
    >>> raster_runs([[0, 0]], print)["runs"], raster_runs([], print)["width"]
    ([], 0)
    """
    import numpy as np

    cells = np.asarray(grid, dtype=np.int64).reshape(len(grid), -1 if grid else 0)
    height, width = cells.shape
    starts = np.ones(cells.shape, dtype=bool)  # a cell that begins a run: the row's first, or a new value
    starts[:, 1:] = cells[:, 1:] != cells[:, :-1]
    ys, xs = np.nonzero(starts)  # row by row, left to right
    ends = np.append(xs[1:], width)  # a run ends where the next begins, or at its row's end
    ends[np.append(ys[1:] != ys[:-1], True)] = width
    values = cells[ys, xs]
    kept = values != 0
    out = np.stack([xs[kept], ys[kept], (ends - xs)[kept], values[kept]], axis=1).tolist()
    return {
        "width": width,
        "height": height,
        "runs": out,
        "titles": [title(y, x, x + n - 1, v) for x, y, n, v in out] if height * width <= RASTER_TITLES_MAX else [],
    }


def span_words(first: int, last: int, one: str, many: str) -> str:
    """A run of columns in words: one column by its name, several as a range.

    >>> span_words(4, 4, "position", "positions"), span_words(4, 9, "position", "positions")
    ('position 4', 'positions 4–9')
    """
    return f"{one} {first}" if first == last else f"{many} {first}–{last}"


def _tick_step(last: int, most: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … that puts at most `most` ticks on 0..last.

    >>> _tick_step(8, 6), _tick_step(40, 6), _tick_step(47, 8), _tick_step(4000, 6)
    (2, 10, 10, 1000)
    """
    step = 1
    while last // step + 1 > most:
        step = step * 5 // 2 if str(step)[0] == "2" else step * 2  # 1 → 2 → 5 → 10 → 20 → 50 → …
    return step


def raster_ticks(rows: int, cols: int, most: int = 6) -> RasterTicks:
    """Axis ticks for a rows x cols raster drawn cell by cell (kvlab.kit.raster: a cell's
    rect is 0.9 wide from its index): labels at whole steps, placed at the cell's middle
    in percent of the drawing, for ticks laid over the SVG.

    >>> raster_ticks(3, 4, most=2)["x"]
    [{'label': '0', 'at': 11.25}, {'label': '2', 'at': 61.25}]
    """

    def axis(count: int) -> list[RasterTick]:
        if count <= 0:
            return []
        step = _tick_step(count - 1, most)
        return [{"label": f"{i:,}", "at": round(100 * (i + 0.45) / count, 3)} for i in range(0, count, step)]

    return {"x": axis(cols), "y": axis(rows)}


# ---- the model widgets (next-token, generate, model-attention, model-race)
# Their live numbers come from the tiny model in the browser (onnxruntime-web), not from
# Pyodide, so each has a JS twin of its view beside it (site_src/widgets/<name>/widget.js,
# `view`), formatting numbers with kvlab.kit.fixed as these f-strings do. The template calls
# the Python view for the build-time page; tests/browser/test_model_js_parity.py holds the
# two equal for the same numbers.


def token_text(text: str) -> str:
    """A token as a table cell shows it: quotes, backslashes and control characters escaped
    (JSON.stringify's escapes, without the quotes around it).

    >>> token_text(' a'), token_text('\\n'), token_text('"')
    (' a', '\\\\n', '\\\\"')
    """
    return json.dumps(text, ensure_ascii=False)[1:-1]
