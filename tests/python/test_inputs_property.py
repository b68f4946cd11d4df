"""Every widget function, any value for any of its parameters (hypothesis): a JSON result, or a
ValueError / TypeError of one short line; never another exception (an OverflowError, a
RecursionError, a KeyError from deep down), never NaN in the result. Not only refusals: each
function must reach a result for some of the inputs drawn (a test whose every input was refused
checked no result).

The functions are the registry's (tests/python/widget_calls.py FUNCTIONS); the numbers drawn include each parameter's declared range
and the values just outside it (the function's `inputs` Spec). Derandomized: every run tries the
same examples, so a failure here is a regression, not a new draw.
"""

from __future__ import annotations

import inspect
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kvlab
from tests.python.widget_calls import CALLS, FUNCTIONS, SLOW_FUNCTIONS, slow_if

MAX_MESSAGE = 500  # what the bridge passes on to the page (kvlab.bridge._error)
EXAMPLES = 30
# functions that run the tiny model over whole episodes at every call (the registry's SLOW_FUNCTIONS): fewer examples
FEW_EXAMPLES = dict.fromkeys(SLOW_FUNCTIONS, 4)

NUMBERS = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 2**31, 2**63, -(2**63), 10**400, -(10**400), 10**5000]),
    st.floats(allow_nan=True, allow_infinity=True),
)
TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "nan", "1e999", "-0", "12", "0x10", "{}", "[]", "null", "\x00", "\u202e", "🙂" * 3]),
    # long text: digits, brackets (deep JSON), odd unicode
    st.builds(
        lambda piece, n: piece * n,
        st.sampled_from(["9", "x", "{", "[", '{"a":', "é", "\u202e", "🙂", "\n", "<script>"]),
        st.sampled_from([100, 5_000, 100_000]),
    ),
)
OTHER = st.one_of(
    st.none(),
    st.booleans(),
    st.lists(st.one_of(st.integers(-5, 5), st.text(max_size=3)), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-5, 5), max_size=2),
)
ANYTHING = st.one_of(NUMBERS, TEXT, OTHER)


def values_for(function, name: str):
    """Anything; the values the page sends (the parameter's default, and what the registry's CALLS pass it); and
    for a declared number its range's ends and just beyond them."""
    default = inspect.signature(function).parameters[name].default
    sent = [default] if default is not inspect.Parameter.empty else []
    sent += [kw[name] for kw in CALLS.get(function.__name__, []) if name in kw and kw[name] not in sent]
    param = (getattr(function, "inputs", None) or {}).get(name)
    edges = [] if param is None else [param.lo, param.hi, param.lo - 1, param.hi + 1, (param.lo + param.hi) / 2]
    return st.one_of(*(st.sampled_from(v) for v in (sent, edges) if v), ANYTHING)


@pytest.mark.parametrize("name", [pytest.param(n, marks=slow_if(n)) for n in FUNCTIONS])
def test_any_input_gives_a_result_or_a_short_value_or_type_error(name):
    function = getattr(kvlab, name)
    parameters = list(inspect.signature(function).parameters)
    outcomes = {"result": 0, "refused": 0}

    @settings(
        max_examples=FEW_EXAMPLES.get(name, EXAMPLES),
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(data=st.data())
    def check(data):
        names = data.draw(st.lists(st.sampled_from(parameters), min_size=1, max_size=3, unique=True), label="names")
        kwargs = {p: data.draw(values_for(function, p), label=p) for p in names}
        try:
            result = function(**kwargs)
        except (ValueError, TypeError) as exc:
            message = str(exc)
            assert len(message) < MAX_MESSAGE, f"{name}: a {len(message):,}-character message: {message[:300]}..."
            outcomes["refused"] += 1
            return
        json.dumps(result, allow_nan=False)  # what the bridge sends the page
        outcomes["result"] += 1

    check()
    # not only refusals: some of the inputs drawn reached the function's result and its JSON
    assert outcomes["result"] > 0, f"{name}: every input drawn was refused ({outcomes})"
