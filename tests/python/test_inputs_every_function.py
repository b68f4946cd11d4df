"""Every widget function, every numeric parameter (PARAMETERS of the registry, tests/python/widget_calls.py),
junk in: a result, or one line that names the field (no raw tracebacks for any input; absurd numbers name the
field). What the page and an embed's query string can send reaches these functions
through kvlab.bridge, so that is the door tested here."""

from __future__ import annotations

import json

import pytest

from kvlab.bridge import call_json
from tests.python.widget_calls import PARAMETERS, slow_if

# JSON the page could send for a number: text, NaN, infinities, huge, null, a list, a bool
JUNK = ['"x"', "NaN", "Infinity", "-Infinity", "1e308", "-1e308", "null", "[1]", "true"]


@pytest.mark.parametrize(("function", "parameter"), [pytest.param(f, p, marks=slow_if(f)) for f, p in PARAMETERS])
def test_junk_gives_a_result_or_an_error_that_names_the_field(function, parameter):
    for junk in JUNK:
        reply = json.loads(call_json(function, f'{{"{parameter}": {junk}}}'))
        if "error" in reply:
            error = reply["error"]
            assert parameter in error and "\n" not in error, f"{function}({parameter}={junk}): {error}"
            assert error.startswith("ValueError: "), f"{function}({parameter}={junk}): {error}"
        else:
            assert list(reply) == ["result"], f"{function}({parameter}={junk}): {reply}"
