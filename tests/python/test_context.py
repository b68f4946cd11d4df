"""llama.cpp context shift / stop, against an n_past-only reference and invariants."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvlab.reuse.context import run_out_of_context, spans


def expand(span_list):
    return [p for a, b in span_list for p in range(a, b)]


def reference_n_past(prompt_len, n_generate, n_ctx, n_keep):
    """llama.cpp's main loop reduced to its arithmetic: n_past and the n_discard of each shift."""
    n_past, discards = prompt_len, []
    for k in range(1, n_generate + 1):
        if n_past + 1 >= n_ctx:
            n_discard = (n_past - n_keep) // 2
            n_past -= n_discard
            discards.append((k, n_discard))
        n_past += 1
    return n_past, discards


@settings(max_examples=60, deadline=None)
@given(st.integers(4, 40), st.data())
def test_shift_follows_llama_cpp_arithmetic_and_keeps_the_first_n_keep_and_the_latest_tokens(n_ctx, data):
    prompt_len = data.draw(st.integers(1, n_ctx - 1))
    n_keep = data.draw(st.integers(0, min(prompt_len, n_ctx - 3)))
    n_generate = data.draw(st.integers(0, 3 * n_ctx))
    r = run_out_of_context(prompt_len, n_generate, n_ctx, n_keep, "shift")
    n_past, discards = reference_n_past(prompt_len, n_generate, n_ctx, n_keep)
    assert [(s["step"], s["n_discard"]) for s in r["shifts"]] == discards
    assert r["steps"][-1]["n_past_after"] == n_past
    assert r["total_discarded"] == sum(d for _, d in discards)
    text_len = prompt_len + n_generate
    for s in r["steps"]:
        visible = expand(s["visible"])
        assert len(visible) == s["n_past_after"] <= n_ctx - 1
        seen_so_far = prompt_len + s["step"]  # tokens of the text fed so far
        latest = s["n_past_after"] - n_keep
        # the model sees exactly the first n_keep tokens plus the most recent ones
        assert visible == list(range(n_keep)) + list(range(seen_so_far - latest, seen_so_far))
    assert r["tokens_fed"] == n_generate and text_len == prompt_len + r["tokens_fed"]


def test_n_discard_is_half_of_what_follows_n_keep():
    r = run_out_of_context(prompt_len=10, n_generate=30, n_ctx=32, n_keep=5)
    first = r["shifts"][0]
    assert first["n_past_before"] == 31  # shift when n_past + 1 >= n_ctx
    assert first["n_discard"] == (31 - 5) // 2
    assert first["discarded"] == [[5, 5 + (31 - 5) // 2]]


def test_first_n_keep_tokens_survive_every_shift():
    r = run_out_of_context(prompt_len=6, n_generate=200, n_ctx=16, n_keep=3)
    assert len(r["shifts"]) > 3
    for s in r["steps"]:
        assert expand(s["visible"])[:3] == [0, 1, 2]


def test_stop_mode_stops_when_the_next_token_would_fill_the_context():
    prompt_len, n_ctx = 5, 12
    r = run_out_of_context(prompt_len, 50, n_ctx, mode="stop")
    # step k feeds the (prompt_len + k)-th token; it stops at the first k with prompt_len + k - 1 + 1 >= n_ctx
    assert r["stopped_at"] == n_ctx - prompt_len
    assert r["shifts"] == [] and r["total_discarded"] == 0
    assert r["steps"][-1]["n_past_after"] == n_ctx - 1


def test_stop_mode_does_not_stop_if_generation_ends_first():
    r = run_out_of_context(3, 4, 12, mode="stop")
    assert r["stopped_at"] is None and r["tokens_fed"] == 4


def test_negative_n_keep_keeps_the_whole_prompt():
    r = run_out_of_context(prompt_len=4, n_generate=40, n_ctx=16, n_keep=-1)
    assert r["n_keep"] == 4
    assert all(expand(s["visible"])[:4] == [0, 1, 2, 3] for s in r["steps"])


def test_prefill_is_step_zero_with_an_empty_cache_before():
    s0 = run_out_of_context(7, 0, 16)["steps"][0]
    assert (s0["phase"], s0["n_past_before"], s0["n_past_after"], s0["visible"]) == ("prefill", 0, 7, [[0, 7]])


def test_spans_round_trip():
    positions = [0, 1, 5, 6, 7, 9]
    assert expand(spans(positions)) == positions


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"prompt_len": 16, "n_generate": 1, "n_ctx": 16}, "prompt_len"),
        ({"prompt_len": 15, "n_generate": 1, "n_ctx": 16, "n_keep": 14}, "n_keep"),
        ({"prompt_len": 4, "n_generate": 1, "n_ctx": 16, "mode": "truncate"}, "mode"),
        ({"prompt_len": 4, "n_generate": -1, "n_ctx": 16}, "n_generate"),
    ],
)
def test_bad_arguments_are_rejected_by_name(kwargs, match):
    with pytest.raises(ValueError, match=match):
        run_out_of_context(**kwargs)


def test_a_whole_small_run_exactly():
    """Defaults (n_keep=0, mode shift), every field of every step: what the pages and the CLI read."""
    r = run_out_of_context(prompt_len=2, n_generate=3, n_ctx=4)
    assert r == {
        "prompt_len": 2,
        "n_ctx": 4,
        "n_keep": 0,
        "mode": "shift",
        "steps": [
            {
                "step": 0,
                "phase": "prefill",
                "token": None,
                "n_past_before": 0,
                "n_past_after": 2,
                "n_discarded": 0,
                "visible": [[0, 2]],
            },
            {
                "step": 1,
                "phase": "decode",
                "token": 2,
                "n_past_before": 2,
                "n_past_after": 3,
                "n_discarded": 0,
                "visible": [[0, 3]],
            },
            {
                "step": 2,
                "phase": "decode",
                "token": 3,
                "n_past_before": 3,
                "n_past_after": 3,
                "n_discarded": 1,
                "visible": [[1, 4]],
            },
            {
                "step": 3,
                "phase": "decode",
                "token": 4,
                "n_past_before": 3,
                "n_past_after": 3,
                "n_discarded": 1,
                "visible": [[2, 5]],
            },
        ],
        "shifts": [
            {"step": 2, "n_past_before": 3, "n_left": 3, "n_discard": 1, "discarded": [[0, 1]]},
            {"step": 3, "n_past_before": 3, "n_left": 3, "n_discard": 1, "discarded": [[1, 2]]},
        ],
        "stopped_at": None,
        "tokens_fed": 3,
        "total_discarded": 2,
    }


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"prompt_len": 2, "n_generate": 1, "n_ctx": 3}, "n_ctx must be >= 4, got 3"),
        ({"prompt_len": 16, "n_generate": 1, "n_ctx": 16}, "prompt_len must be in [1, n_ctx - 1] = [1, 15], got 16"),
        (
            {"prompt_len": 15, "n_generate": 1, "n_ctx": 16, "n_keep": 14},
            "n_keep (14) must be <= n_ctx - 3 = 13 for a context shift to free space",
        ),
        ({"prompt_len": 4, "n_generate": 1, "n_ctx": 16, "mode": "x"}, "mode must be 'shift' or 'stop', got 'x'"),
        ({"prompt_len": 4, "n_generate": -1, "n_ctx": 16}, "n_generate must be >= 0, got -1"),
    ],
)
def test_error_messages_exactly(kwargs, message):
    with pytest.raises(ValueError) as err:
        run_out_of_context(**kwargs)
    assert str(err.value) == message
