"""Cache formats (kvlab.core.kv_quant) against their bit-exact definitions, and the numpy
reference generating with a quantized cache (kvlab.widgets.kv_quant)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from kvlab.core import kv_quant, tiny
from kvlab.core.kv_quant import FORMATS, bytes_per_token, bytes_per_vector, dequantize, quantize
from kvlab.memory.architecture import uniform_architecture
from kvlab.memory.kv_bytes import kv_bytes_per_token
from kvlab.widgets.kv_quant import kv_quant_table, score_answer

F = np.float32


# ---------------------------------------------------------------- ggml's loops, line by line


def fp16(d) -> bytes:  # GGML_FP32_TO_FP16: IEEE half, round to nearest even
    return struct.pack("<e", float(d))


def roundf(x) -> int:  # C roundf: halves away from zero
    x = float(x)
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


def ggml_q8_0_ref(x) -> bytes:
    """quantize_row_q8_0_ref (ggml-quants.c), float32 scalar by scalar."""
    out = b""
    for i in range(len(x) // 32):
        amax = F(0)
        for j in range(32):
            amax = max(amax, F(abs(x[i * 32 + j])))
        d = F(amax / F(127))
        inv = F(F(1) / d) if d else F(0)
        out += fp16(d)
        for j in range(32):
            out += struct.pack("<b", roundf(F(x[i * 32 + j] * inv)))
    return out


def ggml_q4_0_ref(x) -> bytes:
    """quantize_row_q4_0_ref (ggml-quants.c), float32 scalar by scalar."""
    out = b""
    for i in range(len(x) // 32):
        amax, mx = F(0), F(0)
        for j in range(32):
            v = F(x[i * 32 + j])
            if amax < abs(v):
                amax, mx = F(abs(v)), v
        d = F(mx / F(-8))
        inv = F(F(1) / d) if d else F(0)
        out += fp16(d)
        for j in range(16):
            x0 = F(x[i * 32 + j] * inv)
            x1 = F(x[i * 32 + 16 + j] * inv)
            xi0 = min(15, math.trunc(float(F(x0 + F(8.5)))))
            xi1 = min(15, math.trunc(float(F(x1 + F(8.5)))))
            out += bytes([xi0 | (xi1 << 4)])
    return out


def int8_ref(x) -> bytes:
    """Our int8: float32 s = amax / 127, then q = roundf(x / s) clamped to ±127, per vector."""
    amax = F(max(abs(F(v)) for v in x))
    s = F(amax / F(127))
    q = [max(-127, min(127, roundf(F(F(v) / s)))) if s else 0 for v in x]
    return struct.pack("<f", s) + struct.pack(f"<{len(x)}b", *q)


def tricky_vectors() -> list[np.ndarray]:
    """Random scales from subnormal to large, zeros, ± ties for q4_0's max, exact .5 ties."""
    rng = np.random.default_rng(7)
    out = [rng.standard_normal(64).astype(F) * F(s) for s in (1, 1e-3, 1e-6, 1e-9, 3e-8, 40)]
    out.append(np.zeros(64, F))
    for a, b in ((-2, 2), (2, -2)):
        t = np.zeros(64, F)
        t[3], t[7], t[40] = a, b, 1e-3
        out.append(t)
    out.append(((np.arange(64, dtype=F) - 32) / F(16)) * F(127 / 4))  # x / d lands on .5
    out.append((np.arange(64, dtype=F) - 32) / F(4))  # q4_0: x / d + 8.5 on whole numbers
    return out


@pytest.mark.parametrize("vec", range(len(tricky_vectors())))
@pytest.mark.parametrize("fmt,ref", [("q8_0", ggml_q8_0_ref), ("q4_0", ggml_q4_0_ref)])
def test_block_formats_are_ggmls_reference_quantizers_byte_for_byte(fmt, ref, vec):
    x = tricky_vectors()[vec]
    assert quantize(x, fmt).tobytes() == ref(x)


@pytest.mark.parametrize("vec", range(len(tricky_vectors())))
def test_int8_is_absmax_per_vector_with_a_float32_scale(vec):
    x = tricky_vectors()[vec].reshape(2, 32)
    assert quantize(x, "int8").tobytes() == int8_ref(x[0]) + int8_ref(x[1])


def test_q8_0_block_layout_scale_first_then_32_int8():
    x = np.zeros(32, F)
    x[0], x[1] = 1.0, -0.5
    b = quantize(x, "q8_0")
    assert b.shape == (34,)
    assert struct.unpack("<e", b[:2].tobytes())[0] == np.float16(F(1) / F(127))  # d = amax / 127, fp16
    assert b[2:].view(np.int8)[:3].tolist() == [127, -64, 0]  # -63.5 rounds away from zero


def test_q4_0_block_layout_low_nibbles_first_half_high_nibbles_second_half():
    x = np.zeros(32, F)
    x[0], x[16], x[1] = -8.0, 4.0, 7.0  # max = -8 (largest magnitude, signed) -> d = 1
    b = quantize(x, "q4_0")
    assert b.shape == (18,)
    assert struct.unpack("<e", b[:2].tobytes())[0] == 1.0
    assert b[2] & 0x0F == 0 and b[2] >> 4 == 12  # x0 = -8 -> q 0; x16 = 4 -> q 12
    assert b[3] & 0x0F == 15  # 7 + 8.5 = 15.5 -> 15
    y = dequantize(b, "q4_0", 32)
    assert y[0] == -8 and y[16] == 4 and y[1] == 7 and y[5] == 0


def test_q4_0_takes_the_first_of_two_equal_magnitudes_as_max():
    x = np.zeros(32, F)
    x[2], x[9] = 3.0, -3.0
    assert struct.unpack("<e", quantize(x, "q4_0")[:2].tobytes())[0] == np.float16(-3 / 8)
    x[2], x[9] = -3.0, 3.0
    assert struct.unpack("<e", quantize(x, "q4_0")[:2].tobytes())[0] == np.float16(3 / 8)


def test_the_stored_scale_is_rounded_to_fp16_and_dequantizing_uses_it():
    x = np.full(32, F(0.3))
    b = quantize(x, "q8_0")
    d16 = F(np.float16(F(0.3) / F(127)))
    assert np.array_equal(dequantize(b, "q8_0", 32), np.full(32, F(127) * d16))
    assert d16 != F(0.3) / F(127)


@pytest.mark.parametrize("fmt", FORMATS)
def test_round_trip_error_is_bounded_by_the_format(fmt):
    x = np.random.default_rng(0).standard_normal((3, 4, 5, 64)).astype(F)
    y = kv_quant.round_trip(x, fmt)
    assert y.shape == x.shape and y.dtype == F
    err = np.abs(y - x).max()
    bound = {
        "fp32": 0,
        "fp16": 2**-10 * np.abs(x).max(),
        "int8": np.abs(x).max() / 127,
        "q8_0": np.abs(x).max() / 127,
        "q4_0": np.abs(x).max() / 8 * 1.01,
    }[fmt]
    assert err <= bound


def test_fp16_and_fp32_are_ieee_little_endian():
    x = np.array([1.0, -2.5, 65504.0, 1e-7] * 8, F)
    assert quantize(x, "fp32").tobytes() == x.astype("<f4").tobytes()
    assert quantize(x, "fp16").tobytes() == x.astype("<f2").tobytes()


def test_bytes_per_token_comes_from_the_memory_code_for_ggml_types():
    arch = uniform_architecture("tiny", 4, 4, 4, 32)
    for fmt, ggml in (("fp32", "f32"), ("fp16", "f16"), ("q8_0", "q8_0"), ("q4_0", "q4_0")):
        assert bytes_per_token(fmt, 4, 4, 32) == kv_bytes_per_token(arch, ggml)["bytes_per_token"]
    assert bytes_per_token("q8_0", 4, 4, 32) == 4 * 2 * 4 * 34  # 34 B per 32 values
    assert bytes_per_token("int8", 4, 4, 32) == 4 * 2 * 4 * 36
    assert [bytes_per_vector(f, 64) for f in FORMATS] == [256, 128, 68, 68, 36]


def test_unknown_formats_and_ragged_blocks_are_refused():
    with pytest.raises(ValueError, match="unknown"):
        quantize(np.zeros(32, F), "q2_k")
    with pytest.raises(ValueError, match="divisible by 32"):
        quantize(np.zeros(48, F), "q4_0")


# ---------------------------------------------------------------- generation with a stored cache


def dims(model) -> tuple[int, int, int]:
    return model.config.n_layer, model.config.n_head, model.config.head_dim


@pytest.fixture(scope="module")
def model_ids():
    model, tok = tiny.model_and_tokenizer()
    return model, tok.encode(tiny.DEFAULT_PROMPT)


def test_fp32_storage_is_the_plain_cache(model_ids):
    model, ids = model_ids
    run = kv_quant.generate_stored(model, ids, 12, "fp32")
    assert run["tokens"] == model.generate(ids, 12)
    assert run["cache_len"] == len(ids) + 11
    assert run["cache_bytes"] == run["cache_len"] * bytes_per_token("fp32", *dims(model))


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_cache_holds_exactly_the_stored_bytes(model_ids, fmt):
    model, ids = model_ids
    run = kv_quant.generate_stored(model, ids, 6, fmt)
    assert run["cache_bytes"] == (len(ids) + 5) * bytes_per_token(fmt, *dims(model))


def test_the_cache_is_read_back_quantized(model_ids):
    """After the prefill, the next step's logits are those of the dequantized cache."""
    model, ids = model_ids
    logits, present = model.forward(np.array([ids]), None)
    nxt = int(np.argmax(logits[0, -1]))
    rt = [tuple(kv_quant.round_trip(t, "q4_0") for t in kv) for kv in present]
    want, _ = model.forward(np.array([[nxt]]), rt)
    run = kv_quant.generate_stored(model, ids, 2, "q4_0")
    assert np.array_equal(run["logits"][1], want[0, -1].astype(F))


def test_score_answer_follows_evaluate():
    assert score_answer("the door has code 1234.", "1234")["correct"]
    assert score_answer("the door has code 1243.", "1234")["digits_right"] == 2
    assert not score_answer("1234", "1234")["correct"]  # the form "code NNNN" is required


def test_table_from_measurements():
    ref = [[0.0, 1.0, 0.5], [2.0, 0.0, 1.0], [0.0, 0.0, 3.0]]
    q = [[0.0, 1.1, 0.5], [0.0, 2.5, 1.0], [0.0, 0.0, 2.0]]
    m = {
        "config": {"n_layer": 4, "n_head": 4, "n_embd": 128},
        "prompt_len": 5,
        "generation": {"fp32": {"logits": ref, "cache_bytes": 7 * 4096}, "q4_0": {"logits": q, "cache_bytes": 7 * 576}},
        "recall": [{"code": "1234", "distance": 250, "answers": {"fp32": " code 1234.", "q4_0": " code 1235."}}],
    }
    t = kv_quant_table(m)
    fp32, q4 = t["rows"]
    assert (fp32["format"], fp32["max_abs_dlogit"], fp32["first_divergence"]) == ("fp32", 0.0, None)
    assert q4["max_abs_dlogit"] == 2.5
    assert q4["top1_agreement"] == round(2 / 3, 4)
    assert q4["first_divergence"] == 2
    assert q4["bytes_per_token"] == 576 and q4["vs_fp32"] == 0.1406
    assert [r["correct"] for r in fp32["recall"]] == [True] and q4["recall"][0]["digits_right"] == 3
    assert t["distances"] == [250]


@pytest.mark.parametrize(
    "bad,msg",
    [
        ({}, "config"),
        ({"config": {"n_layer": 4, "n_head": 4, "n_embd": 128}, "generation": {}}, "fp32"),
        (
            {
                "config": {"n_layer": 4, "n_head": 4, "n_embd": 128},
                "generation": {
                    "fp32": {"logits": [[0.0]], "cache_bytes": 0},
                    "q3": {"logits": [[0.0]], "cache_bytes": 0},
                },
            },
            "unknown",
        ),
        (
            {
                "config": {"n_layer": 4, "n_head": 4, "n_embd": 128},
                "generation": {
                    "fp32": {"logits": [[0.0]], "cache_bytes": 0},
                    "q8_0": {"logits": [[0.0, 1.0]], "cache_bytes": 0},
                },
            },
            "shaped",
        ),
    ],
)
def test_table_refuses_malformed_measurements(bad, msg):
    with pytest.raises(ValueError, match=msg):
        kv_quant_table(bad)


def test_the_model_cards_table_is_the_cards_data_written_by_the_script():
    """models/README.md's kv-quant table is what models/kv_quant_eval.py writes from card.json
    (nobody edits it by hand), and the card's rows are the widget's numpy table."""
    import json
    import sys
    from pathlib import Path

    models = Path(__file__).resolve().parents[2] / "models"
    sys.path.insert(0, str(models))
    try:
        import kv_quant_eval
    finally:
        sys.path.remove(str(models))
    full = json.loads((models / "tiny" / "card.json").read_text(encoding="utf-8"))
    card, cfg = full["kv_quant"], full["config"]
    assert kv_quant_eval.markdown_table(card) in (models / "README.md").read_text(encoding="utf-8")
    assert [r["format"] for r in card["rows"]] == list(FORMATS)
    dims = (cfg["n_layer"], cfg["n_head"], cfg["n_embd"] // cfg["n_head"])
    assert [r["bytes_per_token"] for r in card["rows"]] == [bytes_per_token(f, *dims) for f in FORMATS]
    assert set(card["recall_by_distance"]["formats"]) == set(FORMATS)
