"""Words around numbers, in one place: plurals and checked numeric input.

>>> plural(1, "token"), plural(131072, "token"), plural(2, "chat", "chats"), plural(0, "request")
('1 token', '131,072 tokens', '2 chats', '0 requests')
>>> plural(1, "sequence", show_number=False), plural(3, "sequence", show_number=False)
('sequence', 'sequences')
"""
from __future__ import annotations

import math


def plural(n: float, singular: str, plural_form: str | None = None, show_number: bool = True) -> str:
    """'1 token', '2 tokens', '1,024 tokens' ('-s' unless `plural_form` is given)."""
    word = singular if n == 1 else (plural_form or singular + "s")
    if not show_number:
        return word
    number = f"{int(n):,}" if float(n).is_integer() else f"{n:,}"
    return f"{number} {word}"


def finite_number(name: str, value, minimum: float | None = None, maximum: float | None = None,
                  integer: bool = False):
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
