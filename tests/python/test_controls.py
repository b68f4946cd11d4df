"""The pages' sliders, number boxes and pickers take their ranges from the Spec declared beside
each widget's function (kvlab.inputs.Spec; the site build hands `spec.limits()` to the template).

Every control a Spec declares shows the Spec's min, max and step (and its choices), both ends of
every range reach the widget's function unchanged (nothing clamped, nothing refused), and no
template types a range of its own. Templates are rendered from the functions' snapshots
(tests/python/snapshots), so no widget function runs to read its controls.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import kvlab
from kvlab.inputs import SEED
from kvlab.widgets.wall import WALL_SHAPES
from tests.python.widget_calls import ROOT, WIDGET_FUNCTION, WIDGETS, slow_widget_if

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
# The control's name where the function calls it something else.
ARGUMENT = {("model-race", "n"): "n_new"}
# Controls bound by another: the H2O policy's recent tokens are part of its budget; the prompt
# must fit the context; the routing cache holds at least one request.
WITH = {
    ("eviction", "budget", 0): {"recent": 1},
    ("eviction", "recent", 1): {"budget": 128},
    ("context-shift", "n_ctx", 0): {"prompt_len": 1, "n_keep": 0},
    ("context-shift", "prompt_len", 1): {"n_ctx": 256},
    ("kv-routing", "cache_blocks", 0): {"prefix_tokens": 0, "own_tokens": 16},
}
# The value used, where the result does not echo it under "params" or its own name.
ECHO = {
    ("generate", "max_new_tokens"): lambda r: len(r["steps"]),
    ("generate", "top_k"): lambda r: len(r["steps"][0]["top"]),
}


def function_of(widget: str):
    return getattr(kvlab, WIDGET_FUNCTION[widget])


SPECS = {w: function_of(w).inputs for w in WIDGET_FUNCTION if hasattr(function_of(w), "inputs")}


class _Controls(HTMLParser):
    """Each named <input> and <select> of a form: its attributes, and a select's option values."""

    def __init__(self):
        super().__init__()
        self.controls: dict[str, dict] = {}
        self._select: dict | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag in ("input", "select") and a.get("name"):
            self.controls[a["name"]] = {"tag": tag, **a, "options": []}
            self._select = self.controls[a["name"]] if tag == "select" else None
        elif tag == "option" and self._select is not None:
            self._select["options"].append(a.get("value"))

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None


def rendered_controls(widget: str) -> dict[str, dict]:
    """The widget's controls as its template renders them, by the function's argument name."""
    sys.path.insert(0, str(ROOT))
    from sitebuild.widget_blocks import WidgetRenderer, discover_widgets

    data = json.loads((SNAPSHOTS / f"{function_of(widget).__name__}.json").read_text())
    html = WidgetRenderer(discover_widgets()).render_template(widget, data, {}, uid="w")
    parser = _Controls()
    parser.feed(html)
    return {ARGUMENT.get((widget, n), n): c for n, c in parser.controls.items()}


def _spec_controls(widget: str) -> dict[str, dict]:
    """The rendered controls the widget's Spec declares ({} if the template does not render:
    test_every_control_shows_its_spec renders it again and fails with the error)."""
    try:
        return {n: c for n, c in rendered_controls(widget).items() if n in SPECS[widget]}
    except Exception:
        return {}


CONTROLS = {w: _spec_controls(w) for w in SPECS}


def _takes(widget: str, name: str) -> bool:
    """Whether the widget's function takes `name` (the generate widget's sampling runs in the browser only)."""
    return name in inspect.signature(function_of(widget)).parameters


def _echo(widget: str, result: dict, name: str):
    """The value the function says it used: its "params" echo, or a top-level key."""
    if (widget, name) in ECHO:
        return ECHO[widget, name](result)
    return result["params"][name] if "params" in result and name in result["params"] else result[name]


def test_every_widget_with_a_range_control_has_a_spec():
    assert {"attention", "race", "reprocessing", "quadratic-wall", "step-through", "eviction", "generate"} <= set(SPECS)
    assert {"model-race", "spec-decode", "kv-memory", "gpu-fit", "serving", "kv-offload", "context-shift"} <= set(SPECS)
    assert sum(len(c) for c in CONTROLS.values()) >= 60, CONTROLS


# Widgets whose Spec's inputs have no control on the page, only the default (an embed's query string and the
# bridge still reach them): nothing to compare, so they are named here rather than passing the test below vacuously.
NO_CONTROLS = {"kv-quant": "n_new (48 tokens generated per format)", "next-token": "top_k (the 10 likeliest tokens)"}


def test_the_widgets_without_controls_are_the_named_ones():
    assert {w for w in SPECS if not CONTROLS[w]} == set(NO_CONTROLS)


@pytest.mark.parametrize("widget", sorted(set(SPECS) - set(NO_CONTROLS)))
def test_every_control_shows_its_spec(widget):
    limits = SPECS[widget].limits()
    controls = {n: c for n, c in rendered_controls(widget).items() if n in SPECS[widget]}
    checked = 0
    for name, control in controls.items():
        lim = limits[name]
        if control["tag"] == "select":
            # a picker over the Spec's choices; or over a range (the prefix widgets' block sizes, qkv's layers and
            # heads): values inside it, on its steps
            if "choices" in lim:
                assert control["options"] == [str(c) for c in lim["choices"]], (widget, name)
            else:
                values = [float(o) for o in control["options"]]
                assert values and all(lim["min"] <= v <= lim["max"] for v in values), (widget, name, values, lim)
                assert all(((v - lim["min"]) / lim["step"]).is_integer() for v in values), (widget, name, values, lim)
            checked += 1
            continue
        shown = {k: control.get(k) for k in ("min", "max", "step")}
        assert shown == {k: str(lim[k]) for k in ("min", "max", "step")}, (widget, name)
        checked += 1
    # not vacuous: the widget renders some control of its Spec, and its range or choices were compared
    assert checked, (
        f"{widget}: no control of its Spec ({sorted(SPECS[widget])}) was compared (rendered: {sorted(controls)})"
    )


@pytest.mark.parametrize(
    "widget,name,end",
    [
        pytest.param(w, n, end, marks=slow_widget_if(w))  # the tiny model over whole episodes: full run only
        for w, controls in CONTROLS.items()
        for n, c in controls.items()
        for end in (0, 1)
        if c["tag"] == "input" and _takes(w, n)
    ],
)
def test_both_ends_of_every_control_reach_the_function_unchanged(widget, name, end):
    lim = SPECS[widget].limits()[name]
    assert lim["min"] < lim["max"]
    value = (lim["min"], lim["max"])[end]
    result = function_of(widget)(**{name: value, **WITH.get((widget, name, end), {})})
    assert not result.get("clamped"), f"{widget}: {name}={value} was clamped: {result['clamped']}"
    assert _echo(widget, result, name) == value


def test_the_browser_only_controls_reach_greedy_and_every_seed():
    spec = SPECS["generate"]
    assert spec["temperature"].lo == 0  # 0 = greedy in model.js
    assert (spec["seed"].lo, spec["seed"].hi) == SEED
    assert not _takes("generate", "temperature") and not _takes("generate", "seed")


def test_no_template_types_a_range_of_its_own():
    typed = []
    for template in sorted(WIDGETS.glob("*/template.html")):
        for m in re.finditer(r"<input\b[^>]*>", template.read_text()):
            # an index slider (over data the template reads) may start at 0
            if re.search(r'\bmax="-?[0-9]|\bmin="(?!0")-?[0-9]|\bstep="(?!1")[0-9a-z.]', m.group(0)):
                typed.append(f"{template.parent.name}: {m.group(0)}")
    assert not typed, (
        "ranges typed into templates (read them from `limits`, the Spec beside the widget's function):\n"
        + "\n".join(typed)
    )


def test_quadratic_wall_opens_on_its_first_model_shape():
    """The widget's first "Model shape" choice is what the static figure was drawn with."""
    first = next(iter(WALL_SHAPES.values()))["shape"]
    defaults = {k: p.default for k, p in inspect.signature(kvlab.quadratic_wall_figure).parameters.items()}
    assert {k: defaults[k] for k in first} == first
