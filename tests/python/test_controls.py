"""The pages' sliders and number boxes take their ranges from kvlab.inputs.CONTROLS.

Both ends of every range must reach the widget's function unchanged (nothing
clamped, nothing refused), and no template may type a range of its own.
"""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest

import kvlab
from kvlab.inputs import CONTROLS, LIMITS
from kvlab.widgets.wall import WALL_SHAPES

WIDGETS = Path(__file__).resolve().parents[2] / "site_src" / "widgets"
# The control's name where the function calls it something else.
ARGUMENT = {("model-race", "n"): "n_new"}
# Controls bound by another: the H2O policy's recent tokens are part of its budget.
WITH = {("eviction", "budget", 0): {"recent": 1}, ("eviction", "recent", 1): {"budget": 128}}
# Used only by the browser (model.js samples the next token): no Python function takes them.
BROWSER_ONLY = {("generate", "temperature"), ("generate", "seed")}


def _echo(result: dict, name: str):
    """The value the function says it used: its "params" echo, or a top-level key."""
    return result["params"][name] if "params" in result else result[name]


@pytest.mark.parametrize(
    "widget,name,end",
    [(w, n, end) for w, controls in CONTROLS.items() for n in controls for end in (0, 1) if (w, n) not in BROWSER_ONLY],
)
def test_both_ends_of_every_control_reach_the_function_unchanged(widget, name, end):
    lo, hi = CONTROLS[widget][name]
    assert lo < hi
    function = getattr(kvlab, json.loads((WIDGETS / widget / "widget.json").read_text())["function"])
    argument = ARGUMENT.get((widget, name), name)
    value = (lo, hi)[end]
    result = function(**{argument: value, **WITH.get((widget, name, end), {})})
    assert not result.get("clamped"), f"{widget}: {name}={value} was clamped: {result['clamped']}"
    assert _echo(result, argument) == value


def test_the_browser_only_controls_reach_greedy_and_every_seed():
    assert CONTROLS["generate"]["temperature"][0] == 0  # 0 = greedy in model.js
    assert CONTROLS["generate"]["seed"] == LIMITS["seed"]


@pytest.mark.parametrize("widget", sorted(CONTROLS))
def test_every_control_in_the_table_is_in_its_template(widget):
    template = (WIDGETS / widget / "template.html").read_text()
    for name in CONTROLS[widget]:
        assert f'name="{name}" min="{{{{ ctl.{name}[0] }}}}" max="{{{{ ctl.{name}[1] }}}}"' in template, (widget, name)


def test_no_template_types_a_range_of_its_own():
    typed = []
    for template in sorted(WIDGETS.glob("*/template.html")):
        for m in re.finditer(r"<input\b[^>]*>", template.read_text()):
            # an index slider (over data the template reads) may start at 0
            if re.search(r'\bmax="-?[0-9]|\bmin="(?!0")-?[0-9]', m.group(0)):
                typed.append(f"{template.parent.name}: {m.group(0)}")
    assert not typed, (
        "ranges typed into templates (read them from the widget's data or kvlab.inputs.CONTROLS):\n" + "\n".join(typed)
    )


def test_quadratic_wall_opens_on_its_first_model_shape():
    """The widget's first "Model shape" choice is what the static figure was drawn with."""
    first = next(iter(WALL_SHAPES.values()))["shape"]
    defaults = {k: p.default for k, p in inspect.signature(kvlab.quadratic_wall_figure).parameters.items()}
    assert {k: defaults[k] for k in first} == first
