"""kv-memory's "every way of building the cache" table (kv_memory_figure()["kinds"]):
each row is the example model's cache under the reader's settings, number of sequences
included, not a one-sequence figure."""

from __future__ import annotations

import pytest

from kvlab.widgets.memory import KIND_EXAMPLES, kv_memory_figure
from kvlab.memory.kv_bytes import memory_report


@pytest.mark.parametrize("mode,kv", [("exact", "f16"), ("llamacpp", "q8_0"), ("vllm", "f16")])
@pytest.mark.parametrize("n_seq", [1, 4])
def test_each_kind_row_is_memory_report_at_the_readers_settings(mode, kv, n_seq):
    fig = kv_memory_figure(context=32768, kv=kv, mode=mode, n_seq=n_seq, references="")
    assert [row["id"] for row in fig["kinds"]] == list(KIND_EXAMPLES)
    for row in fig["kinds"]:
        # llama.cpp holds n_seq sequences of 32768 tokens as -c 32768*n_seq -np n_seq, one stream each
        llama = mode == "llamacpp"
        r = memory_report(
            row["id"],
            32768 * n_seq if llama else 32768,
            kv=kv,
            mode=mode,
            n_seq=n_seq,
            kv_unified=not llama or n_seq == 1,
        )
        assert row["total"]["bytes"] == r["total_bytes"], row["id"]
        assert row["per_token"]["bytes"] == r["bytes_per_token"], row["id"]


def test_the_kinds_table_grows_with_the_number_of_sequences():
    one = kv_memory_figure(context=8192, mode="exact", n_seq=1, references="")["kinds"]
    four = kv_memory_figure(context=8192, mode="exact", n_seq=4, references="")["kinds"]
    for a, b in zip(one, four):
        assert b["total"]["bytes"] == 4 * a["total"]["bytes"], a["id"]  # exact: no padding, n_seq copies
        assert b["per_token"] == a["per_token"]  # bytes per token are per sequence


def test_growth_text_speaks_of_windows_only_where_there_are_windows():
    """A hybrid with recurrent state and no sliding window grows per token from the first one."""
    no_windows = kv_memory_figure(model="qwen3-next-80b-a3b")["view"]["head"]["text"]
    assert no_windows.startswith("per token, plus ") and "window" not in no_windows
    windows = kv_memory_figure(model="gemma-2-9b")["view"]["head"]["text"]
    assert windows.startswith("per token beyond the windows, plus ")


def test_a_config_of_ten_thousand_layers_draws_a_bounded_map_and_counts_every_layer():
    """A pasted config.json with 10,000 layer_types (under the paste limit) drew 20,000 bars in the
    browser, a 1 s task on the page (issue 38): the map draws the first 256, the sums count all."""
    import json

    from kvlab.widgets.memory import MAX_DRAWN_LAYERS, kv_memory_figure

    cfg = {
        "model_type": "gemma3_text",
        "num_hidden_layers": 10_000,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "hidden_size": 1024,
        "head_dim": 128,
        "max_position_embeddings": 32768,
        "sliding_window": 512,
        "layer_types": (["sliding_attention"] * 5 + ["full_attention"]) * 1666 + ["sliding_attention"] * 4,
    }
    text = json.dumps(cfg)
    assert len(text.encode()) < 256 * 1024  # under the paste limit: it reaches Python
    data = kv_memory_figure(config=text)
    lm, lm_text = data["layer_map"], data["view"]["layer_map_text"]
    assert len(lm["layers"]) == len(lm["plot"]["x"]) == MAX_DRAWN_LAYERS
    assert {k["kind"]: k["layers"] for k in lm["kinds"]} == {"full": 1666, "sliding": 8334}
    assert lm_text.startswith("10,000 layers") and lm_text.endswith(f"the map draws the first {MAX_DRAWN_LAYERS}")
