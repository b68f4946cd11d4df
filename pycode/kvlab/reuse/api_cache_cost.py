"""What prompt caching costs on an API: the vendors' prices (kvlab/data/api_prompt_cache_prices.json)
applied to a request mix and its timing, in closed form.

A workload is N requests a day, evenly spaced `gap` minutes apart over `hours` hours; each request
is a shared prefix of P tokens (the system prompt, the documents), U tokens of its own and O output
tokens. Each day's traffic starts with a cold cache. Per vendor:

- Anthropic (explicit, with a lifetime): the first request writes the prefix (1.25x the input price
  for a 5-minute entry, 2x for a 1-hour one); a later request reads it (0.1x) if it comes within
  the lifetime of the last use (a hit refreshes the lifetime), else it writes again. A prefix
  shorter than the model's minimum is not cached at all (full price, no write).
- OpenAI (automatic): no write surcharge; a request within the cache's lifetime reads the longest
  cached prefix at the cached price: 1,024 tokens or more, in steps of 128. Anything else is
  full price.
- Google Gemini (explicit context caching with storage): the cache is created once a day (billed
  at the input price), stored for the whole traffic window (a price per token per hour), and
  every request reads it. The gap does not matter; the number of requests does.

Evenly spaced requests make the hit pattern simple: either every gap is within the lifetime
(one write a day, N - 1 reads) or none is (N writes). tests/python/test_api_cache_cost.py checks
these sums against a request-by-request simulation of the timeline.

>>> c = api_cache_cost(prefix_tokens=10_000, unique_tokens=500, output_tokens=300,
...                    requests_per_hour=30, hours=8, model="claude-sonnet-4-5", ttl="5m")
>>> c["requests_per_day"], c["writes_per_day"], c["reads_per_day"]
(240, 1, 239)
>>> round(c["cached"]["per_day"], 4), round(c["uncached"]["per_day"], 4)
(2.1945, 8.64)
"""

from __future__ import annotations

import json
import math
from kvlab.inputs import short_repr
from functools import cache
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "api_prompt_cache_prices.json"
MTOK = 1_000_000
TTL_CHOICES = ("5m", "1h")


@cache
def _prices() -> dict:
    return json.loads(DATA_FILE.read_text(encoding="utf-8"))


def api_price_table() -> dict:
    """The whole data file (vendors, their rules, their models, each with its source and date)."""
    return json.loads(json.dumps(_prices()))  # a copy the caller may change


def api_models() -> list[dict]:
    """Every model of every vendor, flattened: {"id", "name", "vendor", "vendor_name", "mode", ...prices}."""
    out = []
    for vendor in _prices()["vendors"]:
        for m in vendor["models"]:
            out.append({**m, "vendor": vendor["id"], "vendor_name": vendor["name"], "mode": vendor["mode"]})
    return out


def api_model(model_id: str) -> dict:
    for m in api_models():
        if m["id"] == model_id:
            return m
    raise ValueError(f"model must be one of {[m['id'] for m in api_models()]}, got {short_repr(model_id)}")


def _vendor(vendor_id: str) -> dict:
    return next(v for v in _prices()["vendors"] if v["id"] == vendor_id)


def openai_cached_tokens(prefix_tokens: int) -> int:
    """Tokens OpenAI serves from its cache on a hit: the shared prefix rounded down to 1,024 + 128·k.

    >>> openai_cached_tokens(1023), openai_cached_tokens(1024), openai_cached_tokens(1151), openai_cached_tokens(1152)
    (0, 1024, 1024, 1152)
    """
    rules = _vendor("openai")["rules"]
    lo, step = rules["min_prompt_tokens"], rules["increment_tokens"]
    if prefix_tokens < lo:
        return 0
    return lo + step * ((prefix_tokens - lo) // step)


def ttl_minutes(model: dict, ttl: str) -> float | None:
    """How long an entry lives after its last use, in minutes (None: the whole traffic window)."""
    rules = _vendor(model["vendor"])["rules"]
    if model["mode"] == "explicit_ttl":
        return float(rules["ttl_minutes"][ttl])
    if model["mode"] == "automatic":
        return float(rules["ttl_minutes"])
    return None


def request_prices(model: dict, prefix_tokens: int, unique_tokens: int, output_tokens: int, ttl: str = "5m") -> dict:
    """USD of one request of each kind: "uncached", "write" (the prefix stored), "read" (the prefix
    from the cache), plus "cacheable" (is the prefix long enough) and "cached_tokens" (how many
    tokens a read serves from the cache). For Gemini, "write" is the day's cache creation alone
    (no request) and "storage_per_hour" what keeping the prefix costs per hour."""
    inp = model["input_per_mtok"] / MTOK
    out = model["output_per_mtok"] / MTOK
    read = model["cache_read_per_mtok"] / MTOK
    P, U, O = prefix_tokens, unique_tokens, output_tokens
    rest = U * inp + O * out
    uncached = P * inp + rest
    mode = model["mode"]
    storage = 0.0
    if mode == "explicit_ttl":
        cacheable = P >= model["min_cacheable_tokens"]
        cached_tokens = P if cacheable else 0
        write_rate = model["cache_write_5m_per_mtok" if ttl == "5m" else "cache_write_1h_per_mtok"] / MTOK
        write = P * write_rate + rest if cacheable else uncached
        read_cost = P * read + rest if cacheable else uncached
    elif mode == "automatic":
        cached_tokens = openai_cached_tokens(P)
        cacheable = cached_tokens > 0
        write = uncached  # a miss stores the prefix for free
        read_cost = cached_tokens * read + (P - cached_tokens) * inp + rest
    else:  # explicit_storage
        cacheable = P >= model["min_cacheable_tokens"]
        cached_tokens = P if cacheable else 0
        write = P * inp if cacheable else 0.0  # creating the cache, once a day
        read_cost = P * read + rest if cacheable else uncached
        storage = P * model["storage_per_mtok_hour"] / MTOK if cacheable else 0.0
    return {
        "uncached": uncached,
        "write": write,
        "read": read_cost,
        "storage_per_hour": storage,
        "cacheable": cacheable,
        "cached_tokens": cached_tokens,
    }


def requests_per_day(requests_per_hour: float, hours: float) -> int:
    """Requests in one day's window: floor(rate x hours), at least one."""
    return max(1, math.floor(requests_per_hour * hours + 1e-9))


def break_even(model: dict, ttl: str = "5m", hours: float = 8.0) -> dict:
    """When caching starts to pay, in closed form, per prefix token (the unique part and the output
    cost the same either way).

    "reuses": reads of one entry needed (within its lifetime) before caching costs less than not
    caching. Anthropic: a write w and k reads r against 1 + k full prices, so k > (w - 1)/(1 - r).
    OpenAI: a miss costs nothing extra, so the first hit already saves. Gemini: creation (1) plus
    storage (s·hours, in input prices) against n requests saving (1 - r) each: n > (1 + s·h)/(1 - r)
    (every request reads, so "reuses" counts all of them).
    "max_gap_minutes": the longest gap that still hits (None: any gap, Gemini's cache lives all day).

    >>> break_even(api_model("claude-sonnet-4-5"), "5m")["reuses"], break_even(api_model("claude-sonnet-4-5"), "1h")["reuses"]
    (1, 2)
    """
    inp = model["input_per_mtok"]
    r = round(model["cache_read_per_mtok"] / inp, 12)  # 0.1, not 0.09999999999999999
    mode = model["mode"]
    if mode == "explicit_ttl":
        w = round(model["cache_write_5m_per_mtok" if ttl == "5m" else "cache_write_1h_per_mtok"] / inp, 12)
        threshold = (w - 1) / (1 - r)
        reuses = math.floor(threshold) + 1
        return {"write": w, "read": r, "storage": 0.0, "threshold": threshold, "reuses": reuses,
                "max_gap_minutes": ttl_minutes(model, ttl)}  # fmt: skip
    if mode == "automatic":
        return {"write": 1.0, "read": r, "storage": 0.0, "threshold": 0.0, "reuses": 1,
                "max_gap_minutes": ttl_minutes(model, ttl)}  # fmt: skip
    s = model["storage_per_mtok_hour"] / inp * hours  # storage for the window, in input prices
    threshold = (1 + s) / (1 - r)
    return {"write": 1.0, "read": r, "storage": s, "threshold": threshold, "reuses": math.floor(threshold) + 1,
            "max_gap_minutes": None}  # fmt: skip


def api_cache_cost(
    prefix_tokens: int,
    unique_tokens: int,
    output_tokens: int,
    requests_per_hour: float,
    hours: float,
    model: str,
    ttl: str = "5m",
) -> dict:
    """One workload on one model, with and without prompt caching, per request, per day and per month.

    Inputs are assumed valid (kvlab.widgets.api_cache checks the reader's). Returns plain numbers:
    {"model", "vendor", "mode", "gap_minutes", "ttl_minutes", "requests_per_day", "writes_per_day",
    "reads_per_day", "hit_rate", "cacheable", "cached_tokens", "prices": {uncached, write, read,
    storage_per_hour}, "uncached": {per_request, per_day, per_month}, "cached": {...},
    "saving_per_day", "break_even": {...}, "min_requests_per_hour" (None: caching never pays)}.
    """
    m = api_model(model)
    days = _prices()["days_per_month"]
    gap = 60.0 / requests_per_hour
    n = requests_per_day(requests_per_hour, hours)
    p = request_prices(m, prefix_tokens, unique_tokens, output_tokens, ttl)
    life = ttl_minutes(m, ttl)
    storage = 0.0
    if not p["cacheable"]:
        writes, reads = 0, 0
        cached_day = n * p["uncached"]
    elif m["mode"] == "explicit_storage":
        writes, reads = 1, n  # the cache is created once; every request reads it
        storage = p["storage_per_hour"] * hours
        cached_day = p["write"] + storage + n * p["read"]
    else:
        hit = gap <= life
        writes, reads = (1, n - 1) if hit else (n, 0)
        cached_day = writes * p["write"] + reads * p["read"]
    uncached_day = n * p["uncached"]
    be = break_even(m, ttl, hours)
    return {
        "model": m["id"],
        "vendor": m["vendor"],
        "mode": m["mode"],
        "gap_minutes": gap,
        "ttl_minutes": life,
        "requests_per_day": n,
        "writes_per_day": writes,
        "reads_per_day": reads,
        "hit_rate": reads / n,
        "cacheable": p["cacheable"],
        "cached_tokens": p["cached_tokens"],
        "prices": {k: p[k] for k in ("uncached", "write", "read", "storage_per_hour")},
        "storage_per_day": storage,
        "uncached": {"per_request": uncached_day / n, "per_day": uncached_day, "per_month": uncached_day * days},
        "cached": {"per_request": cached_day / n, "per_day": cached_day, "per_month": cached_day * days},
        "saving_per_day": uncached_day - cached_day,
        "break_even": be,
        "min_requests_per_hour": min_requests_per_hour(m, p["cacheable"], be, hours),
    }


def min_requests_per_hour(model: dict, cacheable: bool, be: dict, hours: float) -> float | None:
    """The lowest request rate at which caching costs less per day than not caching (closed form).

    Anthropic and OpenAI need every gap within the lifetime (rate >= 60 / lifetime) and enough
    requests a day for `be["reuses"]` reads after the first write (N >= reuses + 1). Gemini needs
    N >= reuses requests a day. None when the prefix cannot be cached."""
    if not cacheable:
        return None
    if model["mode"] == "explicit_storage":
        return be["reuses"] / hours
    return max(60.0 / be["max_gap_minutes"], (be["reuses"] + 1) / hours)
