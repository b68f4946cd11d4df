"""kv-memory's Hub fetch, the Python half: the files the page asks for, and every answer said in words."""

from __future__ import annotations

from pathlib import Path

import pytest

import kvlab
from kvlab.widgets.memory import HUB_MESSAGES

DATA = Path(__file__).parent / "data" / "checkpoints"
CONFIG = (DATA / "devstral-small-2507.config.json").read_text(encoding="utf-8")
INDEX = (DATA / "devstral-small-2507.index.json").read_text(encoding="utf-8")


def test_the_page_asks_the_hub_for_two_files_only():
    plan = kvlab.kv_memory_hub(" mistralai/Devstral-Small-2507 ")
    base = "https://huggingface.co/mistralai/Devstral-Small-2507/resolve/main/"
    assert plan == {
        "repo": "mistralai/Devstral-Small-2507",
        "config_url": base + "config.json",
        "index_url": base + "model.safetensors.index.json",
        "page_url": "https://huggingface.co/mistralai/Devstral-Small-2507",
    }


@pytest.mark.parametrize("repo", ["", "no-slash", "a/b/c", "../etc/passwd", "org/na me", "https://huggingface.co/a/b"])
def test_an_id_that_is_not_org_name_is_refused_by_name(repo):
    with pytest.raises(ValueError, match="model id .*write it as org/name"):
        kvlab.kv_memory_hub(repo)


def test_the_weights_as_stored_sit_beside_the_kv_cache():
    r = kvlab.kv_memory_figure(config=CONFIG, index=INDEX, hub="mistralai/Devstral-Small-2507", hub_status="ok")
    w = r["weights_stored"]
    assert w["bytes"] == 47_144_806_400  # the index's metadata.total_size
    assert w["with_kv"]["bytes"] == w["bytes"] + r["result"]["total"]["bytes"]
    assert r["result"]["model"].startswith("mistralai/Devstral-Small-2507") and r["hub_message"] == ""
    # without an index (or for a catalogue model) nothing is said about weights
    assert kvlab.kv_memory_figure(config=CONFIG)["weights_stored"] is None
    assert kvlab.kv_memory_figure(index=INDEX)["weights_stored"] is None


def test_an_unreadable_index_is_a_sentence_not_an_error():
    data = kvlab.kv_memory_figure(config=CONFIG, index='{"weight_map": {}}')
    assert data["weights_stored"]["bytes"] is None
    assert data["view"]["weights_stored"].startswith("The checkpoint's index could not be read")


@pytest.mark.parametrize("status", [s for s in HUB_MESSAGES if s != "ok"])
def test_every_way_the_fetch_can_end_is_said(status):
    message = kvlab.kv_memory_figure(hub="org/model", hub_status=status)["hub_message"]
    assert message and "{" not in message
    assert "org/model" in message or status == "unreachable"


def test_an_unknown_status_names_the_field():
    with pytest.raises(ValueError, match="hub_status must be one of"):
        kvlab.kv_memory_figure(hub="org/model", hub_status="teapot")
