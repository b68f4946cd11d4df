"""explain-log reads llama.cpp's --fit lines (issue 39 item 5): before, a log of only --fit lines was
'nothing recognised'. The logs are real (tests/python/data/engine_logs/calibration.json has each URL)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlab.memory.engine_logs import explain_engine_log, parse_engine_log

CAL = Path(__file__).parent / "data" / "engine_logs" / "calibration"
FIT_LOGS = sorted(p.name for p in CAL.glob("llamacpp_*fit*.txt"))


def test_there_are_at_least_five_fit_logs():
    assert len(FIT_LOGS) >= 5


@pytest.mark.parametrize("name", FIT_LOGS)
def test_every_fit_log_is_read_as_llamacpp(name):
    r = explain_engine_log((CAL / name).read_text(encoding="utf-8"), "qwen3.6-27b")
    assert r["engine"] == "llama.cpp"
    assert r["lines_read"] >= 2
    assert any("--fit" in n for n in r["notes"])


def test_fit_projection_margin_and_context_are_read_with_their_numbers():
    fit = parse_engine_log((CAL / "llamacpp_unnamed_model_fit_rocm_3gpu.txt").read_text(encoding="utf-8"))
    fit = fit["llamacpp"]["fit"]
    assert fit["projected"]["mib"] == "158641" and fit["projected"]["free"] == "65424"
    assert "of_free" not in fit["projected"]  # 'vs. a total of', not free memory
    assert fit["margin"]["margin"] == "1024" and fit["margin"]["less"] == "97337"
    assert (fit["context"]["from"], fit["context"]["to"]) == ("65536", "4096")
    assert [d["device"] for d in fit["initial_devices"]] == ["ROCm0", "ROCm1", "ROCm2"]
    assert fit["initial_devices"][2]["name"] == "AMD Instinct MI60 / MI50"
    assert fit["initial_devices"][2]["deficit_mib"] == 43626


def test_final_placement_line_with_parentheses_in_the_device_name():
    text = (CAL / "llamacpp_qwen3_vl_235b_q8_0_fit_5gpu_b7474.txt").read_text(encoding="utf-8")
    fit = parse_engine_log(text)["llamacpp"]["fit"]
    (d,) = fit["final_devices"]
    assert (d["device"], d["layers"], d["overflowing"], d["used_mib"], d["free_mib"]) == ("CUDA4", 35, 0, 94327, 2360)
    assert fit["result"]["word"] == "successfully fit"


def test_leave_check_uses_the_logged_free_memory_and_can_fail():
    text = (CAL / "llamacpp_qwen25_omni_3b_fit_nochange.txt").read_text(encoding="utf-8")
    (check,) = explain_engine_log(text, "qwen3.6-27b")["checks"]
    assert check["status"] == "consistent"  # 110100 - 3287 = 106813 vs 106812 logged
    wrong = text.replace("will leave 106812", "will leave 100000")
    (check,) = explain_engine_log(wrong, "qwen3.6-27b")["checks"]
    assert check["status"] == "differs"


def test_memory_breakdown_sums_within_rounding_and_a_wrong_sum_differs():
    text = (CAL / "llamacpp_qwen36_27b_rtx5090_fit_mtp.txt").read_text(encoding="utf-8")
    checks = [c for c in explain_engine_log(text, "qwen3.6-27b")["checks"] if "breakdown" in c["figure"]]
    assert [c["status"] for c in checks] == ["consistent", "consistent"]  # 33974 vs 33975: three floors
    wrong = text.replace("(33975 = 16386", "(35975 = 16386")
    checks = [c for c in explain_engine_log(wrong, "qwen3.6-27b")["checks"] if "breakdown" in c["figure"]]
    assert [c["status"] for c in checks] == ["consistent", "differs"]
