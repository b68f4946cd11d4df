"""API prompt-caching costs (kvlab.reuse.api_cache_cost, kvlab.api_cache_figure): the closed form
against a request-by-request simulation of the timeline, the break-even against hand arithmetic
on the data file's prices, and bad input refused with the field's name."""

from __future__ import annotations

import json
import math
import typing

import pytest
from typeguard import CollectionCheckStrategy, check_type

import kvlab
from kvlab.bridge import call_json
from kvlab.reuse.api_cache_cost import (
    api_cache_cost,
    api_model,
    api_models,
    api_price_table,
    openai_cached_tokens,
    requests_per_day,
)
from kvlab.widgets import api_cache_types

MTOK = 1_000_000


def simulate(model_id: str, P: int, U: int, O: int, rate: float, hours: float, ttl: str) -> dict:
    """Requests at t = 0, g, 2g, ... (g = 60 / rate minutes) for one day's window; each request is a
    write, a read or uncached, by the vendor's rules applied one request at a time."""
    m = api_model(model_id)
    inp, out, rd = m["input_per_mtok"] / MTOK, m["output_per_mtok"] / MTOK, m["cache_read_per_mtok"] / MTOK
    gap = 60.0 / rate
    times = [k * gap for k in range(requests_per_day(rate, hours))]
    rest = U * inp + O * out
    kinds, total = [], 0.0
    if m["mode"] == "explicit_storage":
        if P >= m["min_cacheable_tokens"]:
            total += P * inp  # create the cache once
            total += P * m["storage_per_mtok_hour"] / MTOK * hours  # keep it all window, hour by hour
            for _ in times:
                kinds.append("read")
                total += P * rd + rest
        else:
            for _ in times:
                kinds.append("uncached")
                total += P * inp + rest
        return {"kinds": kinds, "total": total}
    expires = -math.inf
    if m["mode"] == "explicit_ttl":
        life = 5.0 if ttl == "5m" else 60.0
        w = m["cache_write_5m_per_mtok" if ttl == "5m" else "cache_write_1h_per_mtok"] / MTOK
        cacheable, cached = P >= m["min_cacheable_tokens"], P
    else:
        life, w = 5.0, inp
        cached = 0 if P < 1024 else 1024 + 128 * ((P - 1024) // 128)
        cacheable = cached > 0
    for t in times:
        if not cacheable:
            kinds.append("uncached")
            total += P * inp + rest
        elif t <= expires:  # within the lifetime of the last use: a hit, which refreshes it
            kinds.append("read")
            total += cached * rd + (P - cached) * inp + rest
        else:
            kinds.append("write")
            total += cached * w + (P - cached) * inp + rest
        if cacheable:
            expires = t + life
    return {"kinds": kinds, "total": total}


WORKLOADS = [
    (P, U, O, rate, hours)
    for P in (0, 900, 1024, 1200, 2048, 4095, 4096, 10_000, 150_000)
    for U, O in ((0, 0), (500, 300))
    for rate in (0.5, 1, 4.5, 11.9, 12, 13, 30, 600)
    for hours in (1, 8, 24)
]


@pytest.mark.parametrize("model_id", [m["id"] for m in api_models()])
@pytest.mark.parametrize("ttl", ["5m", "1h"])
def test_closed_form_equals_the_simulated_timeline(model_id, ttl):
    for P, U, O, rate, hours in WORKLOADS:
        c = api_cache_cost(P, U, O, rate, hours, model_id, ttl)
        s = simulate(model_id, P, U, O, rate, hours, ttl)
        where = (model_id, ttl, P, U, O, rate, hours)
        assert c["cached"]["per_day"] == pytest.approx(s["total"], rel=1e-12, abs=1e-15), where
        assert c["reads_per_day"] == s["kinds"].count("read"), where
        if api_model(model_id)["mode"] != "explicit_storage":
            assert c["writes_per_day"] == s["kinds"].count("write"), where
        assert c["hit_rate"] == pytest.approx(s["kinds"].count("read") / len(s["kinds"])), where
        n = len(s["kinds"])
        assert c["uncached"]["per_day"] == pytest.approx(n * c["prices"]["uncached"]), where
        assert c["cached"]["per_month"] == pytest.approx(30 * c["cached"]["per_day"]), where


def test_min_requests_per_hour_is_where_caching_starts_to_pay():
    """Sweep the request rate finely: caching is cheaper exactly from the closed-form rate on."""
    rates = [r / 8 for r in range(1, 8 * 100)]
    for m in api_models():
        for ttl in ("5m", "1h"):
            for hours in (1, 8, 24):
                c0 = api_cache_cost(10_000, 500, 300, 30, hours, m["id"], ttl)
                need = c0["min_requests_per_hour"]
                for rate in rates:
                    c = api_cache_cost(10_000, 500, 300, rate, hours, m["id"], ttl)
                    pays = c["cached"]["per_day"] < c["uncached"]["per_day"] - 1e-15
                    assert pays == (rate >= need - 1e-9), (m["id"], ttl, hours, rate, need)


def test_break_even_by_hand_from_the_data_file():
    prices = {m["id"]: m for m in api_price_table()["vendors"][0]["models"]}
    sonnet = prices["claude-sonnet-4-5"]
    # 5-minute entry: write 3.75 vs input 3 (1.25x), read 0.30 (0.1x): k > 0.25 / 0.9 = 0.28 -> 1 reuse
    assert sonnet["cache_write_5m_per_mtok"] / sonnet["input_per_mtok"] == 1.25
    assert sonnet["cache_read_per_mtok"] / sonnet["input_per_mtok"] == pytest.approx(0.1)
    c = api_cache_cost(10_000, 0, 0, 30, 8, "claude-sonnet-4-5", "5m")
    assert c["break_even"]["reuses"] == 1 and c["break_even"]["threshold"] == pytest.approx(0.25 / 0.9)
    # one write + one read (3.75 + 0.30 = 4.05) beats two full prices (6.00); a write alone (3.75) does not beat 3.00
    assert 3.75 + 0.30 < 2 * 3.0 and 3.75 > 3.0
    # 1-hour entry: write 6 (2x): k > 1 / 0.9 = 1.11 -> 2 reuses; 6 + 0.3 = 6.3 > 6 but 6 + 0.6 = 6.6 < 9
    c = api_cache_cost(10_000, 0, 0, 30, 8, "claude-sonnet-4-5", "1h")
    assert c["break_even"]["reuses"] == 2
    assert 6.0 + 0.3 > 2 * 3.0 and 6.0 + 0.6 < 3 * 3.0
    # Gemini 2.5 Pro, 8 hours: storage 4.50 x 8 = 36 per M tokens, creation 1.25, each read saves 1.25 - 0.125
    c = api_cache_cost(10_000, 0, 0, 30, 8, "gemini-2.5-pro", "5m")
    assert c["break_even"]["reuses"] == math.floor((1.25 + 36) / (1.25 - 0.125)) + 1 == 34
    # OpenAI: 10,000 shared tokens -> 1,024 + 128 * 70 = 9,984 cached on a hit
    assert openai_cached_tokens(10_000) == 9_984
    c = api_cache_cost(10_000, 0, 0, 30, 8, "gpt-5.4", "5m")
    assert c["prices"]["read"] == pytest.approx((9_984 * 0.25 + 16 * 2.5) / MTOK)
    assert c["prices"]["write"] == c["prices"]["uncached"]  # no write surcharge


def test_a_gap_beyond_the_lifetime_makes_every_request_a_write():
    c = api_cache_cost(10_000, 500, 300, 6, 8, "claude-sonnet-4-5", "5m")  # a request every 10 minutes
    assert (c["writes_per_day"], c["reads_per_day"], c["hit_rate"]) == (48, 0, 0.0)
    assert c["cached"]["per_day"] > c["uncached"]["per_day"]  # 1.25x on every prefix
    c = api_cache_cost(10_000, 500, 300, 6, 8, "claude-sonnet-4-5", "1h")
    assert (c["writes_per_day"], c["reads_per_day"]) == (1, 47)


def test_every_figure_has_a_source_a_date_and_a_status():
    table = api_price_table()
    assert table["read_on"] == "2026-12-03"
    for vendor in table["vendors"]:
        assert vendor["rules"]["source"].startswith("https://") and vendor["rules"]["status"] in {"vendor", "quoted"}
        for m in vendor["models"]:
            assert m["source"].startswith("https://") and m["read"] == "2026-12-03"
            assert m["status"] in {"vendor", "quoted", "unconfirmed"}
            assert 0 < m["cache_read_per_mtok"] < m["input_per_mtok"] < m["output_per_mtok"]
    unconfirmed = {m["id"] for m in api_models() if m["status"] == "unconfirmed"}
    assert unconfirmed == {"gpt-5.4", "gpt-5.4-mini", "gemini-2.5-flash"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"prefix_tokens": "lots"}, "prefix_tokens"),
        ({"unique_tokens": float("nan")}, "unique_tokens"),
        ({"output_tokens": None}, "output_tokens"),
        ({"requests_per_hour": "fast"}, "requests_per_hour"),
        ({"requests_per_hour": float("inf")}, "requests_per_hour"),
        ({"hours": [1]}, "hours"),
        ({"model": "gpt-9"}, "model"),
        ({"ttl": "2h"}, "ttl"),
    ],
)
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field} "):
        kvlab.api_cache_figure(**kwargs)
    reply = json.loads(call_json("api_cache_figure", json.dumps(kwargs, allow_nan=True)))
    assert reply["error"].startswith(f"ValueError: {field} ")


def test_out_of_range_is_clamped_and_said():
    d = kvlab.api_cache_figure(prefix_tokens=-5, requests_per_hour=10**6, hours=99)
    assert d["params"]["prefix_tokens"] == 0 and d["params"]["requests_per_hour"] == 3600 and d["params"]["hours"] == 24
    assert set(d["clamped"]) == {"prefix_tokens", "requests_per_hour", "hours"}
    assert "shorter than" in d["view"]["verdict"]


def check(value, hint):
    check_type(value, hint, collection_check_strategy=CollectionCheckStrategy.ALL_ITEMS)


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"model": "gpt-5.4", "requests_per_hour": 4},
        {"model": "gemini-2.5-flash", "requests_per_hour": 2, "hours": 24},
        {"model": "claude-haiku-4-5", "ttl": "1h", "prefix_tokens": 100},
        {"prefix_tokens": 10**9, "unique_tokens": 2.5, "requests_per_hour": 0},
    ],
)
def test_result_matches_its_typed_dict(kwargs):
    hint = typing.get_type_hints(kvlab.api_cache_figure, localns=vars(api_cache_types))["return"]
    assert hint is api_cache_types.ApiCacheFigureResult
    check(kvlab.api_cache_figure(**kwargs), hint)


def test_the_static_text_is_the_closed_form():
    d = kvlab.api_cache_figure()
    c = api_cache_cost(10_000, 500, 300, 30, 8, "claude-sonnet-4-5", "5m")
    assert d["cost"]["cached"]["per_day"] == c["cached"]["per_day"]
    assert d["view"]["cached_per_day"] == "$2.19" and d["view"]["uncached_per_day"] == "$8.64"
    assert d["view"]["hit_rate"] == "99.6%" and d["view"]["requests_per_day"] == "240"
