"""The disaggregated page's two widgets (pd-transfer, kv-routing): their templates are the only markup, every
bound path exists in the default result and Jinja writes what the binder would (the checks of
test_widget_binding, run here on these widgets), and their JS builds no rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.python.test_widget_binding import ROWS_BUILT, check, render

WIDGETS = Path(__file__).resolve().parents[2] / "site_src" / "widgets"
NAMES = ["pd-transfer", "kv-routing"]


@pytest.mark.parametrize("name", NAMES)
def test_template_binds_paths_of_the_result_and_jinja_agrees(name):
    tree, data = render(name)
    problems: list[str] = []
    check(tree, data, name, problems)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("name", NAMES)
def test_widget_js_builds_no_rows_or_list_items(name):
    js = (WIDGETS / name / "widget.js").read_text(encoding="utf-8")
    assert not ROWS_BUILT.search(js)


def test_the_checker_sees_a_path_the_result_lacks():
    tree, data = render("kv-routing")
    del data["headline"]
    problems: list[str] = []
    check(tree, data, "kv-routing", problems)
    assert any("headline" in p for p in problems)
