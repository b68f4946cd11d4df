"""The "Prompt caching in the API" page (api-prompt-caching.md): the api-cache widget.

The reader's request mix and timing go through kvlab.inputs (clamped with a notice, junk refused
with the field's name), then kvlab.reuse.api_cache_cost prices the workload on the chosen model
and on every other model in the data file. The result keeps the numbers; api_cache_view writes every
readout, the status line and the curve's hovers from them, so the page's JavaScript only places strings
and draws the curve.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from kvlab.inputs import Param, Spec, one_of, takes
from kvlab.reuse.api_cache_cost import (
    TTL_CHOICES,
    api_cache_cost,
    api_model,
    api_models,
    api_price_table,
    break_even,
)
from kvlab.widgets.views import with_view
from kvlab.wording import percent

if TYPE_CHECKING:
    from kvlab.widgets.api_cache_types import ApiCacheFigureResult, ApiCacheView


# ---------------------------------------------------------------------------- views: the words this module's widgets show


def api_cache_view(data: dict) -> ApiCacheView:
    m, c, cost, params = data["model_info"], data["curve"], data["cost"], data["params"]
    ttl, hours = params["ttl"], params["hours"]
    life = cost["ttl_minutes"]
    days = data["days_per_month"]
    return {
        "model": f"{m['vendor_name']} · {m['name']}",
        "verdict": _verdict(cost, m, params, ttl),
        "break_even": _break_even_text(cost, m, ttl, hours),
        "working": _working(cost, m, params),
        "gap": _minutes(cost["gap_minutes"]),
        "lifetime": "the whole day's window" if life is None else _minutes(life),
        "requests_per_day": f"{cost['requests_per_day']:,}",
        "hit_rate": percent(cost["hit_rate"]),
        "uncached_per_request": usd(cost["uncached"]["per_request"]),
        "cached_per_request": usd(cost["cached"]["per_request"]),
        "uncached_per_day": usd(cost["uncached"]["per_day"]),
        "cached_per_day": usd(cost["cached"]["per_day"]),
        "uncached_per_month": usd(cost["uncached"]["per_month"]),
        "cached_per_month": usd(cost["cached"]["per_month"]),
        "saving_per_day": usd(cost["saving_per_day"]),
        "saving_per_month": usd(cost["saving_per_day"] * days),
        "month": f"{days} days",
        "prices": (
            f"input ${m['input_per_mtok']:g}, cached ${m['cache_read_per_mtok']:g}, "
            f"output ${m['output_per_mtok']:g} per million tokens"
            + (
                f"; writes ${m['cache_write_5m_per_mtok']:g} (5 min), ${m['cache_write_1h_per_mtok']:g} (1 h)"
                if m["mode"] == "explicit_ttl"
                else ""
            )
            + (
                f"; storage ${m['storage_per_mtok_hour']:g} per million tokens per hour"
                if m["storage_per_mtok_hour"] is not None
                else ""
            )
        ),
        "price_status": STATUS_TEXT[m["status"]],
        "curve_heads": [f"{s['name']}, {kind}" for s in c["series"] for kind in ("cached", "not cached")],
        "curve_rows": [
            {
                "rate": rate,
                "cells": [usd(x) for s in c["series"] for x in (s["cached"][i], s["uncached"][i])],
            }
            for i, rate in enumerate(c["rate_labels"])
        ],
        "compare": [
            {
                "name": f"{o['vendor_name']} · {o['name']}",
                "row": "chosen" if o["chosen"] else None,
                "cells": [
                    usd(o["uncached_per_day"]),
                    usd(o["cached_per_day"]),
                    percent(o["saving_per_day"] / o["uncached_per_day"]) if o["uncached_per_day"] else "0.0%",
                    percent(o["hit_rate"]),
                    (
                        f"{o['break_even_reuses']} a day"
                        if o["mode"] == "explicit_storage"
                        else f"{o['break_even_reuses']}"
                    )
                    if o["cacheable"]
                    else "not cacheable",
                    o["status"],
                ],
            }
            for o in data["compare"]
        ],
        "hover": [
            [f"{rate} per hour: {usd(y)}" for rate, y in zip(c["rate_labels"], ys)]
            for s in c["series"]
            for ys in (s["cached"], s["uncached"])
        ],
        "status": f"Computed in your browser by kvlab.api_cache_figure ({m['name']}).",
    }


# What api_cache_figure accepts (token counts rounded; clamped with a notice); the page's controls offer the same.
INPUTS = Spec(
    prefix_tokens=Param(0, 1_000_000),
    unique_tokens=Param(0, 200_000),
    output_tokens=Param(0, 100_000),
    requests_per_hour=Param(0.1, 3600, step="any"),
    hours=Param(1, 24),
)
# The curve's request rates (per hour): from one every 4 hours to ten a minute.
CURVE_RATES = [0.25, 0.5, 1, 2, 3, 4, 6, 8, 10, 12, 15, 20, 30, 60, 120, 240, 600]
CURVE_TICKS = [0.25, 1, 4, 12, 60, 600]  # the axis labels (every rate is too many at 375 px)
STATUS_TEXT = {
    "vendor": "read on the vendor's page",
    "quoted": "the vendor's page as quoted elsewhere",
    "unconfirmed": "unconfirmed: third-party figures",
}
TTL_LABELS = {"5m": "5 minutes (write 1.25×)", "1h": "1 hour (write 2×)"}
TTL_NAMES = {"5m": "5-minute", "1h": "1-hour"}


def usd(x: float) -> str:
    """Dollars for a reader: cents where they matter, three significant digits below a cent.

    >>> usd(1234.6), usd(8.64), usd(0.5), usd(0.036), usd(0.000123), usd(0)
    ('$1,235', '$8.64', '$0.50', '$0.036', '$0.000123', '$0')
    """
    if x == 0:
        return "$0"
    if x < 0:
        return "−" + usd(-x)
    if abs(x) >= 1000:
        return f"${x:,.0f}"
    if abs(x) >= 0.1:
        return f"${x:,.2f}"
    digits = 2 - math.floor(math.log10(abs(x)))
    return f"${x:.{digits}f}".rstrip("0")


def _minutes(m: float) -> str:
    if m >= 120:
        return f"{m / 60:,.3g} hours"
    if m >= 1:
        return f"{m:,.3g} min"
    return f"{m * 60:,.3g} s"


def _rate(r: float) -> str:
    return f"{r:,.3g}"


def _verdict(c: dict, m: dict, p: dict, ttl: str) -> str:
    gap, name = _minutes(c["gap_minutes"]), m["name"]
    save, cost = c["saving_per_day"], c["cached"]["per_day"]
    plain = c["uncached"]["per_day"]
    if not c["cacheable"]:
        minimum = 1024 if m["mode"] == "automatic" else m["min_cacheable_tokens"]
        return (
            f"The shared prefix ({p['prefix_tokens']:,} tokens) is shorter than the {minimum:,} tokens "
            f"{name} needs before it caches anything: every request pays full price, {usd(plain)} a day."
        )
    change = f"{usd(plain)} → {usd(cost)} a day"
    if m["mode"] == "explicit_storage":
        if save > 0:
            return f"Caching pays: {change} ({percent(save / plain)} less), storage included."
        return (
            f"Caching does not pay: storing the prefix for {p['hours']:g} hours costs {usd(c['storage_per_day'])} a day, "
            f"more than {c['requests_per_day']:,} reads save ({change})."
        )
    if c["reads_per_day"] == 0:
        if m["mode"] == "automatic":
            return (
                f"A request every {gap} comes after the cache is typically cleared (5–10 minutes of inactivity): "
                f"no hits, so caching saves nothing and costs nothing ({usd(plain)} a day)."
            )
        return (
            f"A request every {gap} is longer than the {TTL_NAMES[ttl]} lifetime: every request "
            f"writes the cache again and pays {percent(c['break_even']['write'] - 1)} more for its prefix ({change})."
        )
    if save > 0:
        return f"A request every {gap} keeps the prefix cached all day: {change} ({percent(save / plain)} less)."
    return f"A request every {gap} hits the cache, but too few requests a day repay the write ({change})."


def _break_even_text(c: dict, m: dict, ttl: str, hours: float) -> str:
    be = c["break_even"]
    need = c["min_requests_per_hour"]
    if m["mode"] == "explicit_ttl":
        life = TTL_NAMES[ttl]
        text = (
            f"A {life} write costs {be['write']:g}× the input price and a read {be['read']:g}×, so one entry pays "
            f"for itself after {be['reuses']} {'reuse' if be['reuses'] == 1 else 'reuses'} within its lifetime: "
            f"k > ({be['write']:g} − 1) / (1 − {be['read']:g}) = {be['threshold']:.2f}."
        )
    elif m["mode"] == "automatic":
        text = (
            f"No write surcharge, so caching never costs more; each hit bills {c['cached_tokens']:,} tokens at "
            f"{be['read']:g}× the input price."
        )
    else:
        text = (
            f"Creating the cache costs the prefix once at the input price, storing it for {hours:g} hours "
            f"{be['storage']:.2f}× that; each request saves 1 − {be['read']:g} of it: "
            f"n > (1 + {be['storage']:.2f}) / (1 − {be['read']:g}) = {be['threshold']:.1f} requests a day."
        )
    if need is None:
        return text + " Here the prefix is too short to cache."
    gap = "" if m["mode"] == "explicit_storage" else f" (a gap of {_minutes(60 / need)} or less)"
    return (
        text
        + f" Caching pays from {_rate(need)} {'request' if need == 1 else 'requests'} an hour{gap} over {hours:g} hours."
    )


def _working(c: dict, m: dict, p: dict) -> str:
    pr = c["prices"]
    P, U, O = p["prefix_tokens"], p["unique_tokens"], p["output_tokens"]
    head = (
        f"Per request without caching: ({P:,} + {U:,}) × ${m['input_per_mtok']:g}/M + {O:,} × "
        f"${m['output_per_mtok']:g}/M = {usd(pr['uncached'])}."
    )
    if not c["cacheable"]:
        return head
    if m["mode"] == "explicit_storage":
        return head + (
            f" With the cache: a read {usd(pr['read'])}; once a day, creating it {usd(pr['write'])} and storing it "
            f"{usd(pr['storage_per_hour'])} an hour × {p['hours']:g} h."
        )
    return head + (
        f" With caching: a write {usd(pr['write'])}, a read {usd(pr['read'])};"
        f" {c['writes_per_day']:,} {'write' if c['writes_per_day'] == 1 else 'writes'} and {c['reads_per_day']:,}"
        f" {'read' if c['reads_per_day'] == 1 else 'reads'} a day."
    )


@takes(INPUTS)
@with_view(api_cache_view)
def api_cache_figure(
    prefix_tokens: int = 10_000,
    unique_tokens: int = 500,
    output_tokens: int = 300,
    requests_per_hour: float = 30,
    hours: int = 8,
    model: str = "claude-sonnet-4-5",
    ttl: str = "5m",
) -> ApiCacheFigureResult:
    """A request mix and its timing on one API model: cost with and without prompt caching.

    The shared prefix, each request's own tokens and its output, the request rate (evenly spaced:
    the gap is 60 / requests_per_hour minutes) over `hours` hours a day, and for Anthropic the
    cache lifetime ("5m" or "1h"). Numbers are clamped into INPUTS (what was clamped is
    under "clamped"); the model and ttl must be among the choices. Also: every other model under the
    same workload ("compare"), and cost per request against the request rate per vendor ("curve").

    >>> d = api_cache_figure()
    >>> d["view"]["cached_per_day"], d["view"]["uncached_per_day"], d["cost"]["break_even"]["reuses"]
    ('$2.19', '$8.64', 1)
    """
    clamped: dict = {}
    p = INPUTS.check(
        {
            "prefix_tokens": prefix_tokens,
            "unique_tokens": unique_tokens,
            "output_tokens": output_tokens,
            "requests_per_hour": requests_per_hour,
            "hours": hours,
        },
        clamped,
    )
    prefix_tokens, unique_tokens, output_tokens, requests_per_hour, hours = p.values()
    if float(requests_per_hour).is_integer():
        requests_per_hour = int(requests_per_hour)  # 30, not 30.0, in the page's number box
    model = one_of("model", model, [m["id"] for m in api_models()])
    ttl = one_of("ttl", ttl, list(TTL_CHOICES))
    m = api_model(model)
    params = {
        "prefix_tokens": prefix_tokens,
        "unique_tokens": unique_tokens,
        "output_tokens": output_tokens,
        "requests_per_hour": requests_per_hour,
        "hours": hours,
        "model": model,
        "ttl": ttl,
    }
    mix = (prefix_tokens, unique_tokens, output_tokens)
    c = api_cache_cost(*mix, requests_per_hour, hours, model, ttl)
    days = api_price_table()["days_per_month"]

    compare = []
    for other in api_models():
        o = api_cache_cost(*mix, requests_per_hour, hours, other["id"], ttl)
        be = break_even(other, ttl, hours)
        compare.append(
            {
                "model": other["id"],
                "name": other["name"],
                "vendor_name": other["vendor_name"],
                "status": other["status"],
                "mode": other["mode"],
                "cacheable": o["cacheable"],
                "uncached_per_day": o["uncached"]["per_day"],
                "cached_per_day": o["cached"]["per_day"],
                "saving_per_day": o["saving_per_day"],
                "hit_rate": o["hit_rate"],
                "break_even_reuses": be["reuses"],
                "chosen": other["id"] == model,
            }
        )

    # One line per vendor: the chosen model for its vendor, each other vendor's first model.
    series = []
    for vendor in api_price_table()["vendors"]:
        pick = model if vendor["id"] == m["vendor"] else vendor["models"][0]["id"]
        runs = [api_cache_cost(*mix, rate, hours, pick, ttl) for rate in CURVE_RATES]
        series.append(
            {
                "vendor": vendor["id"],
                "name": api_model(pick)["name"],
                "cached": [r["cached"]["per_request"] for r in runs],
                "uncached": [r["uncached"]["per_request"] for r in runs],
            }
        )

    rules = next(v for v in api_price_table()["vendors"] if v["id"] == m["vendor"])["rules"]
    return {
        "params": params,
        "clamped": clamped,
        "limits": INPUTS.ranges(),
        "models": [{"id": o["id"], "label": f"{o['vendor_name']} · {o['name']}"} for o in api_models()],
        "ttls": [{"key": k, "label": TTL_LABELS[k]} for k in TTL_CHOICES],
        "ttl_applies": m["mode"] == "explicit_ttl",
        "model_info": {
            "name": m["name"],
            "vendor_name": m["vendor_name"],
            "status": m["status"],
            "source": m["source"],
            "read": m["read"],
            "rules_source": rules["source"],
            "mode": m["mode"],
            "min_cacheable_tokens": m.get("min_cacheable_tokens"),
            **{
                k: m.get(k)
                for k in (
                    "input_per_mtok",
                    "output_per_mtok",
                    "cache_read_per_mtok",
                    "cache_write_5m_per_mtok",
                    "cache_write_1h_per_mtok",
                    "storage_per_mtok_hour",
                )
            },
        },
        "cost": c,
        "days_per_month": days,
        "compare": compare,
        "curve": {
            "rates": list(CURVE_RATES),
            "rate_labels": [_rate(r) for r in CURVE_RATES],
            "ticks": {"values": list(CURVE_TICKS), "labels": [_rate(r) for r in CURVE_TICKS]},
            "series": series,
        },
    }
