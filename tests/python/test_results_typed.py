"""Every widget function's result has the shape its return annotation declares.

Each function the widgets call (FUNCTIONS of the registry, tests/python/widget_calls.py) is
annotated with a TypedDict from its page's kvlab/widgets/<page>_types.py (imported by the widget
module for type checking only, so the annotation is resolved here against every *_types module).
Its result, for the defaults and for the registry's CALLS (the other branches: clamped values,
null fields, optional keys, other models and engines), is checked
against that annotation with typeguard, every item of every list included: a key the TypedDict
does not declare, a required key that is missing, or a value of another type fails here, naming
the path (e.g. "value of key 'steps' of dict ... item 0 ... is not an instance of int").

A new shape is declared in its page's kvlab/widgets/<page>_types.py; a new widget function without a TypedDict
return annotation fails test_every_widget_function_returns_a_typed_dict.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest
from typeguard import CollectionCheckStrategy, TypeCheckError, check_type

import kvlab
from kvlab import widgets
from kvlab.inputs import Param, Spec, takes
from tests.python.widget_calls import CALLS, CASES, FUNCTIONS, PARAMETERS, SLOW_FUNCTIONS, slow_if

# Public helpers whose results are parts of the widgets' (typed with the same TypedDicts).
HELPERS: dict[str, list[dict]] = {
    "race": [{}, {"n": 1}],
    "add_token_counters": [{"n": 1}, {"n": 40}],
    "race_odometers": [{"cumulative_no_cache": [1, 3, 6], "cumulative_cache": [1, 2, 3], "frames": 2}],
    "step_through": [{}, {"prompt_len": 1, "steps": 1, "layers": 1}],
}

# Too slow to call once per numeric parameter and extreme (the tiny model's forward passes).
SLOW = SLOW_FUNCTIONS | {"generate_figure"}
EXTREMES = (1e308, -1e308, 2.5)


# Every result shape, by name: the widget modules import their *_types module under TYPE_CHECKING
# only, so get_type_hints resolves their annotations against this namespace.
TYPE_MODULES = [
    importlib.import_module(f"kvlab.widgets.{m.name}")
    for m in pkgutil.iter_modules(widgets.__path__)
    if m.name.endswith("_types")
]
TYPES = {k: v for mod in TYPE_MODULES for k, v in vars(mod).items() if not k.startswith("__")}


def hints_of(fn) -> dict:
    return typing.get_type_hints(fn, localns=TYPES)


def return_type(name: str):
    return hints_of(getattr(kvlab, name))["return"]


def check(value, hint) -> None:
    """typeguard.check_type on every item of every list and dict, not only the first (its default)."""
    check_type(value, hint, collection_check_strategy=CollectionCheckStrategy.ALL_ITEMS)


def typed_dicts() -> list[type]:
    return [
        v for mod in TYPE_MODULES for v in vars(mod).values() if typing.is_typeddict(v) and v.__module__ == mod.__name__
    ]


def test_every_widget_function_returns_a_typed_dict():
    untyped = []
    for name in FUNCTIONS + sorted(HELPERS):
        hint = hints_of(getattr(kvlab, name)).get("return")
        if not (typing.is_typeddict(hint) and hint.__module__.endswith("_types")):
            untyped.append(f"{name} -> {hint}")
    assert untyped == [], f"annotate with a TypedDict from kvlab/widgets/<page>_types.py: {untyped}"


def test_the_calls_reach_every_widget_function_and_many_shapes():
    assert set(CALLS) <= set(FUNCTIONS) and {name for name, _ in CASES} == set(FUNCTIONS)
    assert len(FUNCTIONS) >= 27 and len(typed_dicts()) >= 100


@pytest.mark.parametrize("td", typed_dicts(), ids=lambda td: td.__name__)
def test_not_required_keys_are_optional(td):
    """The annotations are evaluated (no *_types module has `from __future__ import annotations`), so a
    NotRequired key is in __optional_keys__ and everything else in __required_keys__."""
    hints = typing.get_type_hints(td, include_extras=True)
    optional = {k for k, h in hints.items() if typing.get_origin(h) is typing.NotRequired}
    assert set(td.__optional_keys__) == optional
    assert set(td.__required_keys__) == set(hints) - optional


def test_type_modules_evaluate_their_annotations():
    """python/cpython#97727: with string annotations a NotRequired key would count as required."""
    for mod in TYPE_MODULES:
        tree = ast.parse(Path(mod.__file__).read_text(encoding="utf-8"))
        future = [
            a.name for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__" for a in n.names
        ]
        assert "annotations" not in future, mod


def test_widget_modules_import_their_types_for_type_checking_only():
    """The browser's first widget pays for no TypedDict: importing every widget module loads no *_types module."""
    pycode = Path(kvlab.__file__).resolve().parents[1]
    script = (
        f"import sys; sys.path.insert(0, {str(pycode)!r}); import pkgutil, importlib, kvlab.widgets as w\n"
        "for m in pkgutil.iter_modules(w.__path__):\n"
        "    if not m.name.endswith('_types'): importlib.import_module('kvlab.widgets.' + m.name)\n"
        "print(sorted(m for m in sys.modules if m.endswith('_types') or m.endswith('.results')))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [pytest.param(n, kw, marks=slow_if(n)) for n, kw in CASES],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_result_matches_its_declared_type(name, kwargs):
    check(getattr(kvlab, name)(**kwargs), return_type(name))


@pytest.mark.parametrize(("name", "kwargs"), [(n, kw) for n, calls in HELPERS.items() for kw in calls])
def test_helper_result_matches_its_declared_type(name, kwargs):
    check(getattr(kvlab, name)(**kwargs), return_type(name))


def extremes_problems(function, parameter: str, hint) -> list[str]:
    """What is wrong with `function` called with `parameter` at the extremes, at the ends of its declared
    range (its `inputs` Param) and at its default, each alone: a result that is not of the declared type,
    a refusal of the default, a refusal of a declared end that is not for another input's sake (a
    ValueError whose message names another of the function's parameters or of its Spec's inputs, such as
    "n_heads (12) must divide d_model (8)"), or no call accepted at all. Values beyond the declared range
    and fractions may be clamped or refused (naming the field: test_inputs_every_function's business)."""
    params = inspect.signature(function).parameters
    default = params[parameter].default
    declared = (getattr(function, "inputs", None) or {}).get(parameter)
    ends = (
        []
        if declared is None
        else [v for v in (declared.lo, declared.hi) if not declared.choices or v in declared.choices]
    )
    # the other inputs: the function's parameters and its Spec's names (model_race_figure's n_new meets the prompt_len
    # of its fixed prompt: "prompt_len + n_new must fit the 512-token context")
    others = {*params, *(getattr(function, "inputs", None) or {})} - {parameter}
    problems, accepted = [], 0
    for value in (*EXTREMES, *ends, default):
        try:
            result = function(**{parameter: value})
        except ValueError as error:
            if value == default:
                problems.append(f"{parameter}={value!r} (its default) refused: {error}")
            elif value in ends and not any(re.search(rf"\b{p}\b", str(error)) for p in others):
                problems.append(f"{parameter}={value!r} (an end of its declared range) refused: {error}")
            continue
        try:
            check(result, hint)
        except TypeCheckError as error:
            problems.append(f"{parameter}={value!r}: the result is not of its declared type: {error}")
        accepted += 1
    if not accepted:
        problems.append(f"every call refused: {parameter} in {(*EXTREMES, *ends, default)}")
    return problems


@pytest.mark.parametrize(("name", "parameter"), [(f, p) for f, p in PARAMETERS if f not in SLOW])
def test_extremes_match_the_declared_type(name, parameter):
    """Each numeric parameter at the ends of what the page can send (clamped or refused), at the ends of
    its declared range (accepted) and at its default (accepted): every result of the declared type."""
    assert extremes_problems(getattr(kvlab, name), parameter, return_type(name)) == []


def test_the_extremes_check_fails_on_a_refused_declared_value_and_on_a_wrong_type():
    """test_extremes_match_the_declared_type cannot pass on a function that refuses everything."""
    hint = return_type("reprocessing_figure")
    good = kvlab.reprocessing_figure()

    @takes(Spec(n=Param(1, 4096), k=Param(1, 8)))
    def refuses_all(n: int = 100, k: int = 2):
        raise ValueError(f"n must be a whole number, got {n}")

    @takes(Spec(n=Param(1, 4096), k=Param(1, 8)))
    def refuses_the_top_for_k(n: int = 100, k: int = 2):
        if n > 4000:
            raise ValueError(f"n and k: n ({n}) must be below 4000 * k")
        return good

    @takes(Spec(n=Param(1, 4096)))
    def wrong_type_at_the_top(n: int = 100):
        return {**good, "n": "many"} if n >= 4096 else good

    refused = extremes_problems(refuses_all, "n", hint)
    assert any("(its default) refused" in p for p in refused) and any("every call refused" in p for p in refused)
    assert any("n=4096 (an end of its declared range) refused" in p for p in refused), refused
    assert extremes_problems(refuses_the_top_for_k, "n", hint) == []  # refused for k's sake: allowed
    assert any("not of its declared type" in p for p in extremes_problems(wrong_type_at_the_top, "n", hint))


def test_the_check_fails_on_an_undeclared_key_a_missing_key_and_a_wrong_type():
    good = kvlab.attention_figure()
    hint = return_type("attention_figure")
    check(good, hint)
    broken = {
        "an undeclared key": {**good, "extra": 1},
        "a missing key": {k: v for k, v in good.items() if k != "scale"},
        "a wrong type": {**good, "d": "8"},
        "a wrong type after the first list item": {**good, "tokens": [*good["tokens"][:-1], 5]},
        "null where none is declared": {**good, "temperature": None},
    }
    for what, value in broken.items():
        with pytest.raises(TypeCheckError):
            check(value, hint)
            pytest.fail(f"{what} passed the check")
    nested = kvlab.context_shift_figure()
    nested["steps"][-1]["visible"] = [[0, "8"]]
    with pytest.raises(TypeCheckError, match="steps"):
        check(nested, return_type("context_shift_figure"))
