"""The rasters' runs and tooltips (kvlab.widgets.views.raster_runs): what the build's SVG and
kvlab.kit.raster draw for the eviction, context-shift and serving-sim widgets. Python writes each
run's tooltip; the browser only draws the runs it is given (issue 41: JS only binds)."""

from __future__ import annotations

import random

import kvlab
from kvlab.widgets.serving import SIM_STATES
from kvlab.widgets.views import RASTER_TITLES_MAX, raster_runs


def cell_by_cell(grid) -> list[list[int]]:
    """The runs found one cell at a time: [x, y, length, value] per stretch of one non-zero value."""
    out: list[list[int]] = []
    for y, row in enumerate(grid):
        for x, v in enumerate(row):
            if v and out and out[-1][1] == y and out[-1][3] == v and out[-1][0] + out[-1][2] == x:
                out[-1][2] += 1
            elif v:
                out.append([x, y, 1, v])
    return out


def test_runs_are_the_cell_by_cell_runs():
    rng = random.Random(41)
    for _ in range(200):
        rows, cols = rng.randint(1, 9), rng.randint(1, 12)
        grid = [[rng.choice((0, 0, 1, 2, 2, 3)) for _ in range(cols)] for _ in range(rows)]
        r = raster_runs(grid, lambda y, a, b, v: f"{y}:{a}-{b}={v}")
        assert (r["width"], r["height"]) == (cols, rows)
        assert r["runs"] == cell_by_cell(grid), grid
        assert r["titles"] == [f"{y}:{x}-{x + n - 1}={v}" for x, y, n, v in r["runs"]]


def test_titles_only_on_small_grids():
    side = int(RASTER_TITLES_MAX**0.5)
    small = [[1] * side for _ in range(side)]
    big = [[1] * (side + 1) for _ in range(side)]

    def title(y, a, b, v):
        return f"row {y}"

    assert raster_runs(small, title)["titles"] == [f"row {y}" for y in range(side)]
    assert raster_runs(big, title)["titles"] == [] and len(raster_runs(big, title)["runs"]) == side


def test_the_widgets_tooltips_name_the_step_the_cells_and_their_state():
    ev = kvlab.eviction_figure(policy="window", n=12, window=4)["view"]["raster"]
    assert ev["runs"][:3] == [[0, 0, 1, 3], [0, 1, 1, 2], [1, 1, 1, 3]]
    assert ev["titles"][:3] == [
        "step 0, position 0: added at this step",
        "step 1, position 0: cached",
        "step 1, position 1: added at this step",
    ]
    assert "step 11, positions 0–7: evicted" in ev["titles"]
    cs = kvlab.context_shift_figure(prompt_len=8, n_generate=40, n_ctx=32, n_keep=4)["view"]["raster"]
    assert cs["titles"][:2] == [
        "step 0, text tokens 0–3: seen, protected by n_keep",
        "step 0, text tokens 4–7: seen by the model",
    ]
    sim = kvlab.serving_sim_figure(users=4, input_len=1024, output_len=64, num_prompts=8)
    r = sim["view"]["raster"]
    assert r["height"] * r["width"] <= RASTER_TITLES_MAX and len(r["titles"]) == len(r["runs"]) > 0
    for (_, y, _, v), title in zip(r["runs"], r["titles"], strict=True):
        assert title == f"chat {sim['rows'][y] + 1}: {SIM_STATES[v]}"
    assert SIM_STATES[1] == "waiting in the engine's queue" and SIM_STATES[3] == "decode"
