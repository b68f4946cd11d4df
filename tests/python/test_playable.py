"""The functions behind the odometers, the Add-token counters, the
door-code chat, the prefix-cache cases, the llama-server command and the trade-off map."""

from __future__ import annotations

import pytest

import kvlab
from kvlab.widgets.prefix import PREFIX_CASES


@pytest.mark.parametrize("n", [1, 2, 19, 50, 1000])
def test_odometers_burn_the_same_units_and_end_at_both_totals(n):
    race = kvlab.race(n)
    o = kvlab.race_odometers(race["no_cache"]["cumulative"], race["cache"]["cumulative"])
    frames = o["frames"]
    assert frames[0]["units"] == 0 and frames[-1]["units"] == race["totals"]["no_cache"]
    assert frames[-1]["no_cache"]["tokens"] == n and frames[-1]["cache"]["tokens"] == n
    for a, b in zip(frames, frames[1:]):
        assert a["units"] < b["units"] and a["t"] <= b["t"]
        for side in ("no_cache", "cache"):  # odometers never run backwards
            assert a[side]["tokens"] <= b[side]["tokens"] and a[side]["units"] <= b[side]["units"]
    # the frame where the cached model finishes is always there, and the other one is far behind
    done = next(f for f in frames if f["units"] == n)
    assert done["cache"]["done"] and done["no_cache"]["tokens"] == o["cache_done"]["no_cache_tokens"]
    # brute force: tokens paid for at u units = largest t with t(t+1)/2 <= u
    assert o["cache_done"]["no_cache_tokens"] == max(t for t in range(n + 1) if t * (t + 1) // 2 <= n)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 50])
def test_add_token_counters_match_the_sums(n):
    c = kvlab.add_token_counters(n)
    assert c["total"] == {"no_cache": n * (n + 1) // 2, "cache": n}
    assert c["reprocessed"] == {"no_cache": n - 1, "cache": 0}
    assert c["saved"] == n * (n + 1) // 2 - n and c["ratio"] == (n + 1) / 2
    assert kvlab.reprocessing_figure(n)["counters"] == c


def test_door_code_chat_finds_the_code_and_its_tokens():
    d = kvlab.door_code_chat(
        "user: hi.\nbot: hello.\nuser: please remember this. the door has code 7391.\nbot: sure.\n"
    )
    assert d["code"] == "7391" and d["prompt"].endswith(d["question"]) and d["fits"]
    tok = kvlab.load_tokenizer(str(__import__("kvlab.core.tiny", fromlist=["x"]).TINY_DIR / "tokenizer.json"))
    digits = tok.decode([tok.encode(d["prompt"])[p] for p in d["code_positions"]])
    assert "7391" in digits.replace(" ", "")
    none = kvlab.door_code_chat("user: hi.\nbot: hello.\n")
    assert none["code"] is None and "never states a door code" in none["view"]["note"]
    with pytest.raises(ValueError, match="empty"):
        kvlab.door_code_chat("   ")


def test_door_code_score_counts_digits_and_cached_code():
    runs = {
        "full": {"answer": " the door has code 7391.", "cached": None, "prompt_nll": [1.0, 1.0, 1.0]},
        "window": {"answer": " the door has code 7301", "cached": [5, 6, 7], "prompt_nll": [1.0, 2.0, 3.0]},
    }
    s = kvlab.door_code_score("7391", [1, 2], runs, window=8, sinks=0)
    assert s["policies"]["full"]["correct"] and s["policies"]["full"]["code_in_cache"]
    w = s["policies"]["window"]
    assert w["digits_right"] == 3 and not w["correct"] and not w["code_in_cache"] and w["cache_len"] == 3
    assert s["chart"]["window"]["extra_total"] == 3.0
    assert s["code_gone_at"]["window"] == 1 + 8 + 1


@pytest.mark.slow  # the tiny model over whole episodes: left out of `build.py test --fast`
def test_eviction_recall_demo_is_scored_like_the_browser_runs():
    d = kvlab.model_eviction_figure()
    assert d["score"]["loss_tail"] == 100
    assert d["policies"]["full"]["correct"] and d["policies"]["full"]["code_in_cache"]
    assert not d["policies"]["window"]["code_in_cache"]


@pytest.mark.parametrize("case", sorted(PREFIX_CASES))
def test_prefix_cases_three_requests_and_where_reuse_stops(case):
    d = kvlab.prefix_cases_figure(case)
    assert len(d["requests"]) == 3 and d["requests"][0]["radix_reused"] == 0
    for r in d["requests"]:
        assert r["blocks_reused"] <= r["radix_reused"] <= r["n_tokens"]
        assert r["blocks_reused"] % d["params"]["block_size"] == 0
    if case == "instructions_last":
        assert d["totals"]["radix_reused"] == 0
    if case == "multi_turn":  # each prompt is the previous one plus more: all of it is reused
        assert [r["radix_reused"] for r in d["requests"][1:]] == [r["n_tokens"] for r in d["requests"][:-1]]
    if case == "code_template":  # the closing boilerplate comes after the difference: computed again
        last = d["requests"][2]["segments"][-1]
        assert last["label"] == "closing boilerplate" and last["reused"] == 0


def test_llama_server_command_matches_the_kv_calculator():
    c = kvlab.llama_server_command(16384, "q8_0", parallel=4, cache_reuse=256, context_shift=True, keep=16)
    assert c["argv"][:5] == ["llama-server", "-m", "Llama-3.1-8B-Q4_K_M.gguf", "--ctx-size", "16384"]
    assert "--cache-reuse" in c["argv"] and "--context-shift" in c["argv"] and "-fa" in c["argv"]
    kv = kvlab.llamacpp_kv_cache(kvlab.model_architecture("llama-3.1-8b"), 16384, "q8_0", n_seq=4, kv_unified=False)
    assert c["kv"]["total_bytes"] == kv["total_bytes"] and c["kv"]["n_ctx_seq"] == 4096
    assert kvlab.llama_server_command()["command"].splitlines()[-1].strip() == "--parallel 1"
    with pytest.raises(ValueError):
        kvlab.llama_server_command(cache_type_k="q3")


def test_tradeoff_map_follows_the_calculators():
    m = kvlab.tradeoff_map_figure("long", "high", "low")
    assert m["cell"]["helps"] == ["kv_cache", "prefix_cache", "kv_quant", "eviction"]
    assert kvlab.tradeoff_map_figure("short", "low", "high")["cell"]["helps"] == ["kv_cache"]
    assert kvlab.tradeoff_map_figure("long", "low", "medium")["cell"]["numbers"]["fits"] == ["q4_0"]
    assert len(m["grid"]) == 3 and all(len(row) == 3 for row in m["grid"])
    with pytest.raises(ValueError):
        kvlab.tradeoff_map_figure(length="huge")


def test_prefill_decode_sequence_follows_cache_phases():
    s = kvlab.prefill_decode_figure("The cat sat", "on the")
    assert [st["phase"] for st in s["steps"]] == ["prefill", "decode"]
    assert s["steps"][1]["note"] == "Step 1: DECODE · cache 3 → 4"
