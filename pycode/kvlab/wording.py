"""Words around numbers, in one place: plurals, byte sizes and counts as the pages print them,
so the static figure, the live widget and the tests all show the very same text.

>>> plural(1, "token"), plural(131072, "token"), plural(2, "chat", "chats"), plural(0, "request")
('1 token', '131,072 tokens', '2 chats', '0 requests')
>>> plural(1, "sequence", show_number=False), plural(3, "sequence", show_number=False)
('sequence', 'sequences')
>>> human_bytes(524288), human_bytes(64 * 2**30), human_bytes(156893184)
('512 KiB', '64 GiB', '149.62 MiB')
>>> exact_bytes(524288)
'524,288 B'
"""

from __future__ import annotations

from kvlab.dtypes import GIB, KIB, MIB, TIB


def plural(n: float, singular: str, plural_form: str | None = None, show_number: bool = True) -> str:
    """'1 token', '2 tokens', '1,024 tokens' ('-s' unless `plural_form` is given)."""
    word = singular if n == 1 else (plural_form or singular + "s")
    if not show_number:
        return word
    number = f"{int(n):,}" if float(n).is_integer() else f"{n:,}"
    return f"{number} {word}"


# ---------------------------------------------------------------------------
# Formatting: one place, so the page, the widget and the tests agree
# ---------------------------------------------------------------------------


def human_bytes(n: float) -> str:
    """Binary units, at most two decimals, trailing zeros dropped (as llama.cpp's MiB, rounded)."""
    n = float(n)
    for unit, size in (("TiB", TIB), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if abs(n) >= size:
            return f"{trim(n / size)} {unit}"
    return f"{int(n):,} B"


def exact_bytes(n: float) -> str:
    return f"{int(n):,} B"


def trim(x: float) -> str:
    text = f"{x:,.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def amount(n: float) -> dict:
    """A byte count in the three forms a page needs."""
    return {"bytes": int(n), "human": human_bytes(n), "exact": exact_bytes(n), "gib": n / GIB}


def percent(x: float) -> str:
    """A share as a reader reads it: 0.8132 → "81.3%"."""
    return f"{100 * x:.1f}%"


def token_count(n: int) -> str:
    return f"{int(n):,}"


def params_billions(p: float | None) -> str:
    if not p:
        return "?"
    return f"{p / 1e9:.3g}B"


def span_text(runs: list[list[int]]) -> str:
    """[[0, 4], [9, 10]] → "0–3, 9" (inclusive, as a reader counts)."""
    if not runs:
        return "none"
    return ", ".join(str(a) if b - a == 1 else f"{a}–{b - 1}" for a, b in runs)


SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x: float) -> str:
    """1.3986e15 → "1.40 × 10¹⁵" (plain text, so the page needs no markup for it)."""
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.2e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(SUPERSCRIPT)}"
