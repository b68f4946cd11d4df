"""The one door from JavaScript into kvlab (used by the browser runtime).

JSON in, JSON out, so the page sees exactly the numbers CPython would give,
and a Python error reaches the page as one readable line, not a traceback.

>>> import json
>>> json.loads(call_json("attention_demo", '{"d": 4}'))["result"]["d"]
4
>>> json.loads(call_json("attention_demo", '{"d": "x"}'))["error"]
"ValueError: invalid literal for int() with base 10: 'x'"
>>> json.loads(call_json("os", '{}'))["error"]
'NameError: kvlab has no public function os'
"""
from __future__ import annotations

import json

import kvlab


def call_json(name: str, kwargs_json: str) -> str:
    """Call kvlab.<name>(**kwargs) for a name in kvlab.__all__; reply with JSON."""
    if name not in kvlab.__all__:
        return json.dumps({"error": f"NameError: kvlab has no public function {name}"})
    try:
        kwargs = json.loads(kwargs_json)
        result = getattr(kvlab, name)(**kwargs)
    except (ValueError, TypeError, KeyError) as exc:  # bad input from the page
        return json.dumps({"error": f"{type(exc).__name__}: {exc}"})
    return json.dumps({"result": result})
