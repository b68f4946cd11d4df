"""The registry of widget calls (tests/python/widget_calls.py) that the harnesses walk: it finds every
function the widgets call, each public (the bridge calls nothing else), and its other lists name only those."""

from __future__ import annotations

import kvlab
from tests.python.widget_calls import (
    BOUND_WIDGETS,
    CALLS,
    CASES,
    FUNCTIONS,
    NOT_BOUND,
    PARAMETERS,
    SLOW_FUNCTIONS,
    SLOW_WIDGETS,
    WIDGET_FUNCTION,
)


def test_every_widget_function_is_found_and_public():
    assert len(WIDGET_FUNCTION) >= 32, WIDGET_FUNCTION
    assert len(FUNCTIONS) >= 19, FUNCTIONS  # the widget.json functions + the names widgets' JS calls
    assert {"race_theory", "kv_quant_table"} <= set(FUNCTIONS) - set(WIDGET_FUNCTION.values())  # called from JS
    assert [name for name in FUNCTIONS if name not in kvlab.__all__] == []


def test_each_widget_calls_a_function_named_after_it():
    """One naming rule for entry points: the widget `kv-offload` calls `kv_offload_figure` (docs/design.md)."""
    misnamed = {w: fn for w, fn in WIDGET_FUNCTION.items() if fn != w.replace("-", "_") + "_figure"}
    assert misnamed == {}, f"widget.json functions not named <widget>_figure: {misnamed}"


def test_the_lists_name_widget_functions_and_widgets():
    assert set(CALLS) <= set(FUNCTIONS) and SLOW_FUNCTIONS <= set(FUNCTIONS)
    assert {name for name, _ in CASES} == set(FUNCTIONS) and len(CASES) > 2 * len(FUNCTIONS)
    assert SLOW_WIDGETS == {"kv-quant", "model-eviction"}
    assert set(NOT_BOUND) <= set(WIDGET_FUNCTION) and set(BOUND_WIDGETS) | set(NOT_BOUND) == set(WIDGET_FUNCTION)


def test_the_grid_covers_the_widget_functions():
    assert len({name for name, _ in PARAMETERS}) >= 15, PARAMETERS
