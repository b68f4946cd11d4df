"""Numbers in a page's prose are computed (sitebuild.widget_blocks.replace_values): a placeholder
names a kvlab function, its parameters and a path into its result, as the widget binds it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import kvlab
from sitebuild.widget_blocks import VALUE_RE, WidgetRenderer, discover_widgets, replace_values

PAGES = Path(__file__).resolve().parents[2] / "site_src" / "pages"


@pytest.fixture(scope="module")
def renderer():
    return WidgetRenderer(discover_widgets())


def test_a_value_is_the_function_result_at_its_path(renderer):
    out = replace_values("<!-- value: race_figure n=100 path=view.totals.no_cache --> units", renderer)
    assert out == f'<span class="kv-value">{kvlab.race_figure(n=100)["view"]["totals"]["no_cache"]}</span> units'
    assert "5,050" in out  # 1 + 2 + ... + 100
    listed = replace_values(
        "<!-- value: step_through_figure prompt_len=6 steps=4 layers=2 path=steps.3.cache_len_after -->", renderer
    )
    assert listed == '<span class="kv-value">9</span>'


@pytest.mark.parametrize(
    "bad, why",
    [
        ("<!-- value: race_figure n=100 path=view.nosuch -->", "no 'nosuch'"),
        ("<!-- value: race_figure n=100 path=view.totals -->", "not a single value"),
        ("<!-- value: race_figure n=100 -->", "no path="),
        ("<!-- value: os_system path=x -->", "not a kvlab function"),
    ],
)
def test_a_value_that_cannot_be_computed_stops_the_build(renderer, bad, why):
    with pytest.raises(ValueError, match=re.escape(why)):
        replace_values(bad, renderer)


def test_the_teachers_page_answers_every_exercise_with_computed_values():
    text = (PAGES / "teach.md").read_text(encoding="utf-8")
    answers = text.split('??? note "Answer"')[1:]
    assert len(answers) == 5
    assert all(VALUE_RE.search(a.split("\n## ")[0]) for a in answers)
