"""The binder (kvlab.kit.bind) against the templates, without a browser.

A converted widget's template is its only markup: Jinja fills it at build time, and in the
browser kit.bind fills the same elements from a call's result by their data-bind paths. Here,
for every widget of the registry's BOUND_WIDGETS (tests/python/widget_calls.py: every widget but
the ones NOT_BOUND names): every path in the template exists in the widget function's default
result, every element Jinja filled shows the value its path names (so the build and the binder
agree), every <template data-each> row has one root element marked data-item; and the widget's JS
builds no table rows or list items of its own. The checker is tests/python/template_binding.py.
"""

from __future__ import annotations

import re

import pytest

from tests.python.template_binding import ROWS_BUILT, check, render
from tests.python.widget_calls import BOUND_WIDGETS, NOT_BOUND, WIDGET_FUNCTION, WIDGETS, slow_widget_if


def test_the_registry_binds_every_widget_but_the_named_ones():
    assert len(BOUND_WIDGETS) >= 28, BOUND_WIDGETS
    assert set(NOT_BOUND) <= set(WIDGET_FUNCTION), NOT_BOUND
    for name in ("spec-decode", "kv-offload", "pd-transfer", "kv-routing", "kv-memory", "model-eviction"):
        assert name in BOUND_WIDGETS


# kv-quant and model-eviction run the tiny model over whole episodes: slow, left out of `build.py test --fast`
@pytest.mark.parametrize("name", [pytest.param(n, marks=slow_widget_if(n)) for n in BOUND_WIDGETS])
def test_template_binds_paths_of_the_result_and_jinja_agrees(name):
    tree, data = render(name)
    problems: list[str] = []
    check(tree, data, name, problems)
    assert not problems, "\n".join(problems)
    source = (WIDGETS / name / "template.html").read_text(encoding="utf-8")
    assert "data-bind" in source, f"{name}: the template binds nothing"


@pytest.mark.parametrize("name", BOUND_WIDGETS)
def test_converted_widget_js_builds_no_rows_or_list_items(name):
    js = (WIDGETS / name / "widget.js").read_text(encoding="utf-8")
    found = [m.group(0) for m in ROWS_BUILT.finditer(js)]
    assert not found, f"{name}/widget.js builds rows or list items ({found}): bind them in the template"


def test_the_checker_sees_a_row_built_in_js():
    assert ROWS_BUILT.search('const tr = document.createElement("tr");')
    assert ROWS_BUILT.search("li = el('li', null, 'x')")
    assert not ROWS_BUILT.search("kvlab.kit.bind(root, data);")


def test_the_checker_sees_a_path_the_result_lacks():
    tree, data = render("kv-routing")
    del data["view"]["headline"]
    problems: list[str] = []
    check(tree, data, "kv-routing", problems)
    assert any("view.headline" in p for p in problems)


# The widget loop (read form.kv-controls, call the function, bind and draw, put the values used back, again on
# the reader's input) is ctx.form's (site_src/runtime/context.js). A widget whose widget.js writes it out by
# hand (ctx.live, or an "input" listener of its own on its form) must be named here, with why its loop is
# another one; a widget named here that uses ctx.form makes the list stale, and fails too.
OWN_LOOP = {
    "model-attention": "the model runs on Show (or Enter) only; its settings (layer, head) redraw the numbers it "
    "already has, without a call",
    "generate": "a generation streamed token by token from the model, played back step by step",
    "model-race": "two generations raced on the model, timed, then kvlab.race_measured",
    "kv-quant": "a measurement run on a button: the model over every cache format, then kvlab.kv_quant_table",
    "model-eviction": "a run on a button: the model reads the chat under three caches, then kvlab.door_code_score",
}
HAND_LOOP = re.compile(r"""ctx\.live\(|form\.addEventListener\(\s*["']input["']""")


@pytest.mark.parametrize("name", sorted(WIDGET_FUNCTION))
def test_widget_loop_is_ctx_form_unless_named(name):
    js = (WIDGETS / name / "widget.js").read_text(encoding="utf-8")
    hand = HAND_LOOP.findall(js)
    if name in OWN_LOOP:
        assert "ctx.form(" not in js, f"{name} uses ctx.form: take it out of OWN_LOOP"
    else:
        assert "ctx.form(" in js, f"{name}/widget.js has no ctx.form: use it, or name the widget in OWN_LOOP (and why)"
        assert not hand, (
            f"{name}/widget.js writes the widget loop by hand ({hand}): ctx.form reads the form and listens"
        )


def test_the_checker_sees_a_loop_written_by_hand():
    assert HAND_LOOP.search('const compute = ctx.live("prefix_blocks_figure", render);')
    assert HAND_LOOP.search("form.addEventListener('input', update);")
    assert not HAND_LOOP.search('return ctx.form("prefix_blocks_figure", { draw });')
    assert set(OWN_LOOP) <= set(WIDGET_FUNCTION), OWN_LOOP
