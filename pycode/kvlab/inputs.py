"""Every check of a reader's input, in one place: the limits, clamping with a notice,
and errors that name the field.

A widget function takes what the page (or an embed's query string) sends, so
each number goes through one of these before any arithmetic:

- `clamp_int(name, value, clamped, limits_key=None)`: a whole number (text such as
  "12" is accepted, 2.5 is refused), clamped into LIMITS[limits_key or name].
- `clamp_view_int(...)`: the same, then into the tighter VIEW_LIMITS range.
- `clamp_number(name, value, lo, hi, clamped)`: a finite number, clamped into [lo, hi].
- `clamp_rounded(name, value, lo, hi, clamped=None)`: a finite number, rounded to a
  whole number, then clamped (the memory and serving calculators).
- `clamp_quietly(name, value, lo, hi, integer)`: clamped with no notice (the attention demo and the
  tiny model's widgets, whose pages show the value used instead).
- `one_of(name, value, choices)`: one of a fixed list of options.
- `finite_number(name, value, minimum, maximum, integer)`: refuse, never clamp
  (the public calculators: out of range is an error, not a slider's end).
- `Param` / `Spec`: a widget function's inputs declared once, beside the function: the checker
  (`Spec.check`) and the template (`Spec.limits`, the controls' min, max, step and choices) read the
  same declaration.

A clamped value is recorded as `clamped[name] = {"requested": ..., "used": ...}`
(`note_clamped`); the widget returns that dict and the runtime shows it.
Every refusal is a ValueError whose message starts with the field's name.

>>> clamped = {}
>>> clamp_int("steps", "40", clamped), clamped
(32, {'steps': {'requested': 40, 'used': 32}})
>>> clamp_rounded("context", 2.6, 1, 10)
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

# Ranges shared by the page controls, the embed query-string parser and this code.
LIMITS = {
    "n": (1, 4096),
    "eviction_n": (1, 512),  # eviction_timeline's n: the timeline lists every cached position at every step
    "prompt_len": (1, 32),
    "steps": (1, 32),
    "layers": (1, 8),
    "n_layers": (1, 128),
    "d_model": (8, 16384),
    "n_heads": (1, 256),
    "n_kv_heads": (1, 256),
    "d_ff": (8, 65536),
    "window": (1, 512),
    "n_sink": (0, 64),
    "budget": (1, 1024),
    "recent": (1, 512),
    "seed": (0, 2**31 - 1),
    "n_requests": (1, 1000),
    "prefix_len": (0, 1024),
    "suffix_len": (1, 256),
    "block_size": (1, 256),
    "capacity": (0, 1_000_000),
    "n_ctx": (4, 8192),
    "n_generate": (0, 8192),
    "n_keep": (-1, 8192),
    "context_prompt_len": (1, 8191),
}


# Tighter than LIMITS where a raster grows with the square of the inputs:
# these views list every position at every step, and the page must stay quick.
VIEW_LIMITS = {
    "eviction_n": (1, 256),
    "n_ctx": (4, 256),
    "n_generate": (0, 256),
    "n_keep": (-1, 253),
    "context_prompt_len": (1, 255),
}


# The range each page's slider or number box offers, per widget (site_src/widgets/<name>/):
# a range a reader can move through in sensible steps, inside what the widget's function
# accepts (LIMITS or the module's own limits; tests/python/test_controls.py checks both
# ends). Templates read their min/max from here, never from literals in the markup.
CONTROLS = {
    "attention": {"d": (2, 64), "temperature": (0.1, 5.0), "seed": LIMITS["seed"]},
    "race": {"n": (1, 1000)},
    "reprocessing": {"n": (1, 100)},
    "quadratic-wall": {"n": (16, 4096)},
    "step-through": {"prompt_len": (1, 12), "steps": (1, 12), "layers": (1, 8)},
    "eviction": {"window": (1, 64), "n_sink": (0, 16), "budget": (1, 128), "recent": (1, 64)},
    # sampling happens in the browser (model.js); temperature 0 is greedy
    "generate": {"temperature": (0.0, 2.0), "seed": LIMITS["seed"]},
    # the default prompt plus n must fit the tiny model's 512-token context; 16 so the timings mean something
    "model-race": {"n": (16, 448)},
    # kvlab.widgets.speculative.SPEC_LIMITS; draft_layers below the tiny model's 4 (the target)
    "spec-decode": {"k": (1, 8), "draft_layers": (1, 3), "n_new": (8, 48)},
}


def note_clamped(clamped: dict | None, name: str, requested, used) -> None:
    """Record in `clamped` that `name` asked for `requested` and got `used` (if they differ)."""
    if clamped is not None and used != requested:
        clamped[name] = {"requested": requested, "used": used}


def view_limits(*names: str, key: dict | None = None) -> dict:
    """[lo, hi] of each name for a template: VIEW_LIMITS where it is tighter, else LIMITS."""
    key = key or {}
    return {n: list(VIEW_LIMITS.get(key.get(n, n), LIMITS[key.get(n, n)])) for n in names}


def clamp_int(name: str, value, clamped: dict, limits_key: str | None = None) -> int:
    """`value` as an int within LIMITS[limits_key or name]; non-integers raise, out-of-range values are clamped."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if isinstance(value, str):
        try:
            value = int(value.strip())
        except ValueError:
            raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if isinstance(value, float) or isinstance(value, np.floating):
        if not math.isfinite(value) or not float(value).is_integer():
            raise ValueError(f"{name} must be a whole number, got {value!r}")
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    lo, hi = LIMITS[limits_key or name]
    used = min(max(v, lo), hi)
    note_clamped(clamped, name, v, used)
    return used


def clamp_view_int(name: str, value, clamped: dict, limits_key: str | None = None) -> int:
    """clamp_int, then the tighter VIEW_LIMITS range (one "clamped" entry with the reader's own value)."""
    v = clamp_int(name, value, clamped, limits_key)
    lo, hi = VIEW_LIMITS[limits_key or name]
    used = min(max(v, lo), hi)
    note_clamped(clamped, name, clamped.get(name, {}).get("requested", v), used)
    return used


def clamp_number(name: str, value, lo: float, hi: float, clamped: dict) -> float:
    """`value` as a finite float within [lo, hi], clamped."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if isinstance(value, bool) or not math.isfinite(v):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    used = min(max(v, lo), hi)
    note_clamped(clamped, name, v, used)
    return used


def clamp_rounded(name: str, value, lo, hi, clamped: dict | None = None):
    """`value` as a whole number within [lo, hi]; NaN, infinity and text are a ValueError naming `name`.

    Non-integers are rounded; out-of-range values are clamped, and `clamped[name]` records what was
    asked (as given) and what was used (the runtime's reportClamped shows it)."""
    v = finite_number(name, value)
    used = int(min(hi, max(lo, round(v))))
    if used != v:
        note_clamped(clamped, name, value, used)
    return used


def clamp_quietly(name: str, value, lo, hi, integer: bool = False):
    """`value` as a finite number (cut to a whole number if `integer`) within [lo, hi], with no
    notice: for widgets that show the value they used. Text, NaN and infinity are a ValueError
    that names `name`, as everywhere else."""
    v = finite_number(name, value)
    if integer:
        v = int(v)
    return min(max(v, lo), hi)


def one_of(name: str, value, choices: list[str]) -> str:
    """`value` if it is one of `choices`, else a ValueError naming `name` and the choices."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")
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
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if integer:
        if not number.is_integer():
            raise ValueError(f"{name} must be a whole number, got {value!r}")
    if minimum is not None and number < minimum:
        raise ValueError(f"{name} must be at least {minimum:,}, got {value!r}")
    if maximum is not None and number > maximum:
        raise ValueError(f"{name} must be at most {maximum:,}, got {value!r}")
    if integer:
        return int(value) if isinstance(value, int) else int(number)
    return number


@dataclass(frozen=True)
class Param:
    """One number a widget takes from its controls: clamped into [lo, hi] with a notice, rounded to `step`
    (1: a whole number), and, where `choices` are given, one of them after clamping (else a ValueError
    naming the field)."""

    lo: float
    hi: float
    step: float = 1
    choices: tuple = ()

    def check(self, name: str, value, clamped: dict | None):
        if self.step == 1:
            used = clamp_rounded(name, value, self.lo, self.hi, clamped)
        else:
            digits = max(0, -math.floor(math.log10(self.step)))
            used = round(clamp_number(name, value, self.lo, self.hi, clamped if clamped is not None else {}), digits)
        if self.choices and used not in self.choices:
            raise ValueError(f"{name} must be one of {', '.join(map(str, self.choices))}, got {value}")
        return used

    def limits(self) -> dict:
        out = {"min": self.lo, "max": self.hi, "step": self.step}
        if self.choices:
            out["choices"] = list(self.choices)
        return out


class Spec(dict):
    """A widget function's numeric inputs by name: `check` them all at once, hand `limits` to the template.

    >>> spec = Spec(context=Param(1, 1024), share=Param(0.1, 1.0, step=0.01), block=Param(1, 64, choices=(16, 32)))
    >>> clamped = {}
    >>> spec.check({"context": 4096, "share": 0.955, "block": 16}, clamped), clamped
    ({'context': 1024, 'share': 0.95, 'block': 16}, {'context': {'requested': 4096, 'used': 1024}})
    >>> spec.limits()["block"]
    {'min': 1, 'max': 64, 'step': 1, 'choices': [16, 32]}
    """

    def check(self, values: dict, clamped: dict | None = None) -> dict:
        return {name: self[name].check(name, values[name], clamped) for name in values}

    def limits(self) -> dict:
        return {name: param.limits() for name, param in self.items()}
