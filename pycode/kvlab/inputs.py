"""Every check of a reader's input, in one place: a widget function's inputs declared once
beside it (`Param`, `Spec`), clamping with a notice, and errors that name the field.

Each widget module declares the numbers its functions take as a `Spec` of `Param`s, beside the
function (`@takes(SPEC)` hands it to the site build). The same declaration is read by:

- the function: `SPEC.check(values, clamped)` clamps each number into [lo, hi] and records what
  it clamped; `SPEC.require(values)` refuses what is out of range instead;
- the template: `limits[name]` holds the control's min, max, step and choices
  (`SPEC.limits()`, which the site build passes to the widget's template);
- tests/python/test_controls.py: both ends of every control reach the function unchanged.

Other checks: `one_of(name, value, choices)`: one of a fixed list of options; `text(name, value)`: a string;
`finite_number(name, value, minimum, maximum, integer)`: refuse, never clamp (the public
calculators: out of range is an error, not a slider's end). An error shows a value through
`short_repr`, never more than a few dozen characters of it (a pasted 5,000-digit number is not
echoed back).

A clamped value is recorded as `clamped[name] = {"requested": ..., "used": ...}`
(`note_clamped`); the widget returns that dict and the runtime shows it.
Every refusal is a ValueError whose message starts with the field's name.

>>> clamped = {}
>>> Param(1, 32, fractions="refuse").check("steps", "40", clamped), clamped
(32, {'steps': {'requested': 40, 'used': 32}})
>>> Param(1, 10).check("context", 2.6, None)
3
>>> finite_number("context", float("nan"))
Traceback (most recent call last):
...
ValueError: context must be a finite number, got nan
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

SEED = (0, 2**31 - 1)  # the seeds every widget takes
SHOWN_CHARS = 40  # the most of an input value an error message repeats


def short_repr(value, limit: int = SHOWN_CHARS) -> str:
    """repr(value) for an error message, cut to about `limit` characters with the full length said.

    >>> short_repr("abc"), short_repr("x" * 1000)
    ("'abc'", "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (1,000 characters)")
    >>> short_repr(10**5000)
    'an integer of about 5,000 digits'
    """
    if isinstance(value, int) and value.bit_length() > 128:  # over 38 digits; repr fails past 4,300
        return f"an integer of about {value.bit_length() * math.log10(2):,.0f} digits"
    try:
        text = repr(value)
    except Exception:  # an object whose repr fails
        return f"a {type(value).__name__}"
    if len(text) <= limit:
        return text
    size = f"{len(value):,} characters" if isinstance(value, str) else f"{len(text):,} characters as text"
    return f"{text[:limit]}... ({size})"


def note_clamped(clamped: dict | None, name: str, requested, used) -> None:
    """Record in `clamped` that `name` asked for `requested` and got `used` (if they differ)."""
    if clamped is not None and used != requested:
        clamped[name] = {"requested": requested, "used": used}


def one_of(name: str, value, choices: list[str]) -> str:
    """`value` if it is one of `choices`, else a ValueError naming `name` and the choices."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {short_repr(value)}")
    return value


def text(name: str, value) -> str:
    """`value` if it is text, else a ValueError naming `name` (the page and a URL can send any JSON).

    >>> text("prompt", 12)
    Traceback (most recent call last):
    ...
    ValueError: prompt must be text, got 12
    """
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text, got {short_repr(value)}")
    return value


def finite_number(name: str, value, minimum: float | None = None, maximum: float | None = None, integer: bool = False):
    """`value` as a finite number (an int if `integer`), or a ValueError that names `name`.

    NaN, infinity, text and out-of-range values are refused with the field's name, never a
    traceback from deeper down (OverflowError, 'cannot convert float NaN to integer').

    >>> finite_number("context", 4096.0, 1, integer=True)
    4096
    >>> finite_number("context", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: context must be a finite number, got nan
    """
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {short_repr(value)}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a number, got {short_repr(value)}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {short_repr(value)}")
    if integer:
        if not number.is_integer():
            raise ValueError(f"{name} must be a whole number, got {short_repr(value)}")
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be at least {minimum:,}, got {short_repr(value)}")
    if maximum is not None and number > maximum:
        raise ValueError(f"{name} must be at most {maximum:,}, got {short_repr(value)}")
    if integer:
        return int(value) if isinstance(value, int) else int(number)
    return number


def _integer(name: str, value) -> int:
    """`value` as an int: whole numbers and their text ("12"); fractions, bools and other text raise."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {short_repr(value)}")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError(f"{name} must be an integer, got {short_repr(value)}") from None
    if isinstance(value, float) or isinstance(value, np.floating):
        if not math.isfinite(value) or not float(value).is_integer():
            raise ValueError(f"{name} must be a whole number, got {short_repr(value)}")
    try:
        number = int(value)
        float(number)  # beyond a float: no page holds it (nor JSON: Python writes at most 4,300 digits)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer, got {short_repr(value)}") from None
    except OverflowError:
        raise ValueError(f"{name} must be a finite number, got {short_repr(value)}") from None
    return number


@dataclass(frozen=True)
class Param:
    """One number a widget function takes from a control.

    lo, hi    what the function accepts: a number outside is clamped into [lo, hi] (with a notice)
    step      the control's step. A whole-number step (1, 5, 16) makes a whole-number input; a
              fraction (0.1) or "any" a fractional one
    choices   where given, the value must be one of them after clamping (else a ValueError)
    control   the (min, max) the page's control offers, where narrower than [lo, hi]
    fractions what a whole-number input does with a fraction: "round" it (and say so when it
              changed), "cut" it toward zero, or "refuse" it (a ValueError; text such as "12" is
              accepted, and the notice shows the number read)
    digits    a fractional input is rounded to this many digits after clamping (None: kept as given)

    >>> Param(1, 64, fractions="cut").check("d", 70.9, None), Param(0.0, 3.0, step=0.1, digits=2).check("skew", 1.234, None)
    (64, 1.23)
    >>> Param(1, 4096, step=16, control=(16, 4096)).limits()
    {'min': 16, 'max': 4096, 'step': 16}
    """

    lo: float
    hi: float
    step: float | str = 1
    choices: tuple = ()
    control: tuple | None = None
    fractions: str = "round"
    digits: int | None = None

    def __post_init__(self):
        if self.fractions not in ("round", "cut", "refuse"):
            raise ValueError(f"fractions must be 'round', 'cut' or 'refuse', got {self.fractions!r}")

    @property
    def whole(self) -> bool:
        return isinstance(self.step, int) and not isinstance(self.step, bool)

    def check(self, name: str, value, clamped: dict | None):
        """`value` within [lo, hi]; what was clamped (or rounded) goes into `clamped` (None: say nothing)."""
        requested = value
        if not self.whole:
            number = v = requested = finite_number(name, value)
        elif self.fractions == "refuse":
            number = v = requested = _integer(name, value)
        else:
            number = finite_number(name, value)
            v = round(number) if self.fractions == "round" else int(number)
        used = min(max(v, self.lo), self.hi)
        if self.whole:
            used = int(used)
        if used != number:
            note_clamped(clamped, name, requested, used)
        if self.digits is not None:
            used = round(used, self.digits)
        if self.choices and used not in self.choices:
            raise ValueError(f"{name} must be one of {', '.join(map(str, self.choices))}, got {short_repr(value)}")
        return used

    def require(self, name: str, value, lo: float | None = None):
        """`value` within [lo, hi] (`lo` given: a bound that depends on another input), else a ValueError."""
        return finite_number(name, value, self.lo if lo is None else lo, self.hi, integer=self.whole)

    def limits(self) -> dict:
        lo, hi = self.control or (self.lo, self.hi)
        out = {"min": lo, "max": hi, "step": self.step}
        if self.choices:
            out["choices"] = list(self.choices)
        return out


class Spec(dict):
    """A widget function's numeric inputs by name: `check` them all at once, hand `limits` to the template.

    >>> spec = Spec(context=Param(1, 1024), share=Param(0.1, 1.0, step=0.01, digits=2), block=Param(1, 64, choices=(16, 32)))
    >>> clamped = {}
    >>> spec.check({"context": 4096, "share": 0.955, "block": 16}, clamped), clamped
    ({'context': 1024, 'share': 0.95, 'block': 16}, {'context': {'requested': 4096, 'used': 1024}})
    >>> spec.limits()["block"]
    {'min': 1, 'max': 64, 'step': 1, 'choices': [16, 32]}
    >>> spec.ranges("context")
    {'context': [1, 1024]}
    """

    def check(self, values: dict, clamped: dict | None = None) -> dict:
        """Each value clamped into its range, in the order given (`clamped`: see Param.check)."""
        return {name: self[name].check(name, values[name], clamped) for name in values}

    def require(self, values: dict) -> dict:
        """Each value, or a ValueError naming the first one out of range (nothing is clamped)."""
        return {name: self[name].require(name, values[name]) for name in values}

    def limits(self) -> dict:
        """The controls' min, max, step (and choices) by name, for the template."""
        return {name: param.limits() for name, param in self.items()}

    def ranges(self, *names: str) -> dict:
        """[lo, hi] of each name (all by default): what the function accepts."""
        return {name: [self[name].lo, self[name].hi] for name in names or self}


def takes(spec: Spec):
    """Decorator: `spec` is what the widget function accepts (`function.inputs`); the site build
    passes `spec.limits()` to the widget's template as `limits`."""

    def declare(function):
        function.inputs = spec
        return function

    return declare
