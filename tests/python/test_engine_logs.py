"""Engine logs explained: real llama.cpp and vLLM start-up logs, each with
the URL it was copied from, rebuilt term by term from the model's config.

Each file in data/engine_logs/ starts with a header (`# source:`, `# model:` a catalogue id or
`config` with a `# config:` line, `# engine:`, optional `# stated:` JSON of settings the log
does not show, `# note:`) followed by the log lines as published.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kvlab.cli import main
from kvlab.memory.catalogue import engine_log_examples, model_architecture
from kvlab.memory.engine_logs import MAX_LOG_CHARS, explain_engine_log, parse_engine_log
from kvlab.memory.kv_bytes import llamacpp_kv_cache
from kvlab.widgets.engine_log import engine_log_figure

LOGS = Path(__file__).resolve().parent / "data" / "engine_logs"
HEADER = re.compile(r"# (source|model|engine|note|config|config_source|stated): ?(.*)$")

# The figures that do not come out the same, and why that is expected (the rest must all match).
EXPECTED_DIFFERENCES = {
    # the log hides max_num_batched_tokens, which sizes the sliding-window layers' share
    "vllm_gpt_oss_120b_h100_error.txt": {"KV memory one max-length request needs"},
}


def read_log(path: Path) -> tuple[dict, str]:
    head, body = {}, []
    for line in path.read_text(encoding="utf-8").splitlines():
        m = HEADER.match(line)
        if m and not body:
            head[m.group(1)] = m.group(2)
            continue
        body.append(line)
    return head, "\n".join(body)


def explain_file(path: Path) -> dict:
    head, body = read_log(path)
    model = head["config"] if head["model"] == "config" else head["model"]
    return explain_engine_log(body, model, **json.loads(head.get("stated", "{}")))


FILES = sorted(LOGS.glob("*.txt"))


def test_at_least_ten_real_logs_from_six_families_each_with_its_url():
    assert len(FILES) >= 10
    families = set()
    for path in FILES:
        head, body = read_log(path)
        assert head["source"].startswith("https://"), path.name
        assert head["engine"] in ("llama.cpp", "vllm"), path.name
        assert body.strip(), path.name
        model = head["config"] if head["model"] == "config" else head["model"]
        families.add(model_architecture(model).family)
    assert len(families) >= 6, families
    assert {read_log(p)[0]["engine"] for p in FILES} == {"llama.cpp", "vllm"}


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_every_real_log_is_rebuilt_or_the_difference_is_explained(path):
    head, _ = read_log(path)
    r = explain_file(path)
    assert r["engine"] == head["engine"]
    compared = [c for c in r["checks"] if c["status"] in ("exact", "consistent", "differs")]
    differs = {c["figure"] for c in compared if c["status"] == "differs"}
    assert differs == EXPECTED_DIFFERENCES.get(path.name, set())
    for c in r["checks"]:
        if c["status"] == "differs":
            assert c["why"], c
    # every setting says where it came from
    assert all(s["from"] for s in r["settings"])
    json.dumps(r)  # plain data


def checks(path_name: str) -> dict:
    return {c["figure"]: c for c in explain_file(LOGS / path_name)["checks"]}


def test_phi3_old_format_is_the_exact_f16_cache_of_131328_cells():
    c = checks("llamacpp_phi3_mini_131k_f16.txt")["KV cache (older 'KV self size' line)"]
    assert c["status"] == "exact"
    terms = {t["term"]: t for t in c["terms"]}
    assert terms["total"]["rebuilt"] == "49248.00 MiB"  # 131,328 x 32 layers x 3072 x 2 (K,V) x 2 B
    assert terms["K (f16)"]["rebuilt"] == "24624.00 MiB"


def test_gpt_oss_swa_cache_is_window_plus_ubatch_padded():
    r = explain_file(LOGS / "llamacpp_gpt_oss_20b_swa_metal.txt")
    swa = next(c for c in r["checks"] if c["figure"].startswith("SWA"))
    cells = next(t for t in swa["terms"] if t["term"] == "cells")
    assert cells["logged"] == cells["rebuilt"] == "768"
    assert "n_swa 128" in cells["how"] and "n_ubatch 512" in cells["how"]
    # the full-attention cache is not in the excerpt: shown as what llama.cpp would print
    missing = next(c for c in r["checks"] if c["status"] == "not in the log")
    assert "4096 cells" in missing["rebuilt"]


def test_deepseek_mla_latent_in_q8_0():
    c = checks("llamacpp_deepseek_r1_mla_q8_0.txt")
    kv = c["KV cache (older 'KV self size' line)"]
    assert kv["status"] == "exact"
    assert {t["term"]: t["rebuilt"] for t in kv["terms"]}["V"] == "0.00 MiB"
    # the device buffer is the tensors plus alignment: consistent, not equal
    assert c["KV buffers per device"]["status"] == "consistent"


def test_vllm_v0_profile_blocks_and_concurrency():
    c = checks("vllm_llama31_8b_rtx3090_20k.txt")
    assert c["KV cache memory from the block count"]["rebuilt"] == "3.81 GiB"  # 1952 x 16 x 128 KiB
    assert c["maximum concurrency"]["rebuilt"] == "1.56x"  # 31,232 / 20,000
    assert c["KV budget from the memory profile"]["status"] == "consistent"  # 23.58 x 0.9 - 17.06 - 0.35
    assert c["model weights"]["status"] == "consistent"  # 14.9888 GiB logged, 8.03e9 x 2 B = 14.96 GiB
    assert "0.2% more than kvlab's count of BF16 weights" in c["model weights"]["why"]
    r = explain_file(LOGS / "vllm_llama31_8b_rtx3090_29k_error.txt")
    assert any("1,813 blocks" in n and "23,648 tokens" in n for n in r["notes"])


def test_the_hidden_setting_is_found_when_it_explains_the_difference():
    c = checks("vllm_gpt_oss_120b_h100_error.txt")["KV memory one max-length request needs"]
    assert c["logged"] == "4.54 GiB" and c["rebuilt"] == "4.58 GiB"
    assert "max_num_batched_tokens from 896 to 1,152" in c["why"]
    assert "full-attention layers need 4.50 GiB" in c["why"]
    # stating it makes the figure exact
    head, body = read_log(LOGS / "vllm_gpt_oss_120b_h100_error.txt")
    r = explain_engine_log(body, "gpt-oss-120b", max_num_batched_tokens=1024)
    assert [x["status"] for x in r["checks"]] == ["exact"]


def test_hybrid_tokens_and_concurrency_come_from_vllms_layer_groups():
    """Qwen3.5-27B on an H20: 290,864 tokens and 33.04x, which do not multiply back (290,864 / 32,768 = 8.88).

    By hand: 16 full-attention and 48 Gated DeltaNet layers make groups of 16 (1 full + 3 state). A state
    is 48 x 128 x 128 f32 (mamba_ssm_dtype) + 3 x (2 x 16 x 128 + 48 x 128) bf16 = 3,207,168 B; an attention
    token is 2 x 4 x 256 x 2 = 4,096 B per layer, so the block grows to 16 x ceil(3,207,168 / (16 x 4,096))
    = 784 tokens. tokens = blocks // 4 x 784 -> 1,484-1,487 blocks; a 32,768-token request takes
    ceil(32,768 / 784) = 42 blocks + 3 state blocks = 45; 1,487 / 45 = 33.04.
    """
    state = 48 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 48 * 128) * 2
    block = 16 * -(-state // (16 * 2 * 4 * 256 * 2))
    assert (state, block) == (3_207_168, 784)
    c = checks("vllm_qwen35_27b_h20.txt")
    assert c["KV cache size in tokens"]["status"] == "consistent"
    assert c["KV cache size in tokens"]["rebuilt"] == f"{290864 // block * 4:,} to {290864 // block * 4 + 3:,} blocks"
    conc = c["maximum concurrency"]
    assert conc["status"] == "consistent" and conc["rebuilt"] == f"{1484 / 45:.2f}x to {1487 / 45:.2f}x"
    assert "45 blocks per 32,768-token request" in conc["terms"][0]["how"]


def test_v1_tokens_from_available_memory_within_rounding():
    c = checks("vllm_qwen3_14b.txt")
    assert c["KV cache size in tokens"]["status"] == "consistent"  # 6.51 GiB / 2.5 MiB per 16-token block
    assert c["maximum concurrency"]["status"] == "exact"


@pytest.mark.parametrize(
    "model, n_ctx, kv, n_seq, unified",
    [
        ("llama-3.1-8b", 8192, "f16", 1, True),
        ("qwen3-8b", 40960, "q8_0", 4, False),
        ("gemma-3-27b-it", 16384, "f16", 2, False),
        ("gpt-oss-120b", 131072, "q8_0", 1, True),
        ("qwen3-next-80b-a3b", 32768, "q4_0", 2, True),
        ("deepseek-v2-lite", 4096, "f16", 1, True),
    ],
)
def test_kvlabs_own_log_lines_come_back_exact(model, n_ctx, kv, n_seq, unified):
    """What the memory widget prints for some settings, pasted back, is rebuilt exactly (iSWA labels included)."""
    arch = model_architecture(model)
    r = llamacpp_kv_cache(arch, n_ctx, kv, n_seq=n_seq, kv_unified=unified)
    lines = [
        f"llama_context: n_ctx = {r['n_ctx']}",
        f"llama_context: n_seq_max = {n_seq}",
        f"llama_context: kv_unified = {'true' if unified else 'false'}",
    ]
    for c in r["caches"]:
        if c["cache"] in ("non-SWA", "SWA"):
            lines.append(f"llama_kv_cache_iswa: creating {c['cache']:>7s} KV cache, size = {c['cells']} cells")
        lines.append(c["log_line"])
    out = explain_engine_log("\n".join(lines), model)
    assert [c["status"] for c in out["checks"]] == ["exact"] * len(r["caches"])


def test_a_changed_number_names_the_term():
    arch = model_architecture("llama-3.1-8b")
    line = llamacpp_kv_cache(arch, 8192)["log_lines"][0]
    # cells: the log says 8192 cells but the context line says 4096
    out = explain_engine_log("llama_context: n_ctx = 4096\n" + line, "llama-3.1-8b")
    bad = out["checks"][0]
    assert bad["status"] == "differs" and bad["why"].startswith("cells:")
    # bytes: the same line explained with Llama-2-7B (32 KV heads, not 8)
    out = explain_engine_log(line, "llama-2-7b")
    assert out["checks"][0]["why"].startswith("bytes:")
    assert "1,024 f16 values" in out["checks"][0]["why"] and "32 KV heads x 128 head_dim" in out["checks"][0]["why"]
    # layers: a 48-layer line against a 32-layer config
    out = explain_engine_log(line.replace(" 32 layers", " 48 layers"), "llama-3.1-8b")
    assert out["checks"][0]["why"].startswith("layers:")


def test_context_per_sequence_line_is_checked():
    arch = model_architecture("qwen3-8b")
    r = llamacpp_kv_cache(arch, 32768, n_seq=4, kv_unified=False)
    log = "\n".join(
        [
            "llama_context: n_seq_max     = 4",
            "llama_context: n_ctx         = 32768",
            "llama_context: n_ctx_per_seq = 8192",
            "llama_context: kv_unified    = false",
        ]
        + r["log_lines"]
    )
    out = {c["figure"]: c for c in explain_engine_log(log, "qwen3-8b")["checks"]}
    assert out["context per sequence (n_ctx_per_seq)"]["status"] == "exact"
    assert out["KV cache"]["status"] == "exact" and "4 streams" in out["KV cache"]["terms"][2]["how"]


def test_stated_settings_fill_what_the_log_lacks_and_the_log_wins_over_them():
    line = "llama_kv_cache: size =   18.00 MiB (   768 cells,  12 layers,  1/1 seqs), K (f16):    9.00 MiB, V (f16):    9.00 MiB"
    out = explain_engine_log(
        "llama_kv_cache_iswa: creating     SWA KV cache, size = 768 cells\n" + line, "gpt-oss-20b", n_ctx=4096
    )
    assert out["checks"][0]["status"] == "exact"
    assert {s["name"]: s["from"] for s in out["settings"]}["context (-c, n_ctx)"] == "you"
    out = explain_engine_log("llama_context: n_ctx = 4096\n" + line, "gpt-oss-20b", n_ctx=8192)
    source = {s["name"]: s["from"] for s in out["settings"]}["context (-c, n_ctx)"]
    assert source.startswith("log line 1") and "you said 8192" in source


def test_nothing_recognised_and_bad_input():
    out = explain_engine_log("hello\nworld", "llama-3.1-8b")
    assert out["engine"] is None and out["checks"] == [] and "paste the start-up log" in out["notes"][0]
    with pytest.raises(ValueError, match="at most"):
        parse_engine_log("x" * (MAX_LOG_CHARS + 1))
    with pytest.raises(ValueError, match="unknown setting 'n_context'"):
        explain_engine_log("", "llama-3.1-8b", n_context=4096)
    with pytest.raises(ValueError, match="engine must be one of"):
        explain_engine_log("", "llama-3.1-8b", engine="tgi")
    for bad in ({"n_ctx": "abc"}, {"n_ctx": 0}, {"n_ctx": 1e30}, {"swa_full": 1}, {"gpu_memory_gib": float("nan")}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            explain_engine_log("llama_context: n_ctx = 4096", "llama-3.1-8b", **bad)


def test_widget_default_and_examples_carry_their_sources():
    data = engine_log_figure()
    assert data["params"]["source"] == "example" and data["example"]["source"].startswith("https://")
    assert data["summary"] == "4 of 4 figures rebuilt from the config"
    for e in engine_log_examples():
        r = engine_log_figure(example=e["id"])
        assert r["example"]["source"].startswith("https://")
        assert r["log"] == e["log"]


def test_widget_paste_uses_the_model_or_the_config_and_reports_errors_as_data():
    line = "llama_kv_cache: size =  512.00 MiB (  4096 cells,  32 layers,  1/1 seqs), K (f16):  256.00 MiB, V (f16):  256.00 MiB"
    r = engine_log_figure(log=line, model="mistral-7b-v0.3")
    assert r["params"]["source"] == "catalogue" and r["checks"][0]["status"] == "exact"
    r = engine_log_figure(log=line, config="{bad")
    assert r["view"]["error"].startswith("Could not explain this log: config") and r["params"]["source"] == "example"
    with pytest.raises(ValueError, match="example must be one of"):
        engine_log_figure(example="nope")
    # settings the log hides, stated in the box
    refused = (LOGS / "vllm_gpt_oss_120b_h100_error.txt").read_text().splitlines()[-1]
    r = engine_log_figure(log=refused, model="gpt-oss-120b", settings="max_num_batched_tokens=1024")
    assert [c["status"] for c in r["checks"]] == ["exact"]
    for bad in ("bogus=1", "n_ctx", "n_ctx=nan", "n_ctx=abc"):
        r = engine_log_figure(log=refused, model="gpt-oss-120b", settings=bad)
        assert r["view"]["error"].startswith("Could not explain this log") and r["params"]["source"] == "example"


def test_cli_explain_log(tmp_path, capsys):
    head, body = read_log(LOGS / "vllm_llama31_8b_rtx3090_20k.txt")
    log = tmp_path / "server.log"
    log.write_text(body)
    assert main(["explain-log", str(log), "--model", "llama-3.1-8b"]) == 0
    out = capsys.readouterr().out
    assert "3 of 3 figures rebuilt from the config" in out and "[exact] maximum concurrency" in out
    assert main(["explain-log", str(log), "--model", "llama-3.1-8b", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == "vllm"
    assert main(["explain-log", str(log), "--model", "no-such-model"]) == 2


def test_recurrent_line_prints_every_layer_and_plain_seqs():
    """llama.cpp's llama_memory_recurrent line prints n_layer (all layers) and "N seqs"; newer builds
    add "R rs_seq" (src/llama-memory-recurrent.cpp). A Mamba-2 hybrid's line, in both forms, is rebuilt."""
    cfg = json.loads((Path(__file__).resolve().parent / "data" / "state_space_configs.json").read_text())
    nemotron = cfg["configs"]["nemotron-h-8b"]["config"]
    r = llamacpp_kv_cache(model_architecture(nemotron), 8192)
    line = r["log_lines"][1]
    assert "(     1 cells,  52 layers,  1 seqs), R (f32):    2.81 MiB, S (f32):   96.00 MiB" in line
    for text in (line, line.replace("1 seqs)", "1 seqs  0 rs_seq)")):
        out = explain_engine_log("llama_context: n_ctx = 8192\n" + r["log_lines"][0] + "\n" + text, nemotron)
        rec = next(c for c in out["checks"] if c["figure"] == "recurrent state")
        assert rec["status"] == "exact", rec
        layers = next(t for t in rec["terms"] if t["term"] == "layers")
        assert layers["rebuilt"] == "52" and "24 of them keep a state" in layers["how"]


def test_what_the_log_runs_is_counted_or_named():
    """A club-3090 Qwen3.6-27B log runs MTP speculative decoding with prefix caching: kvlab counts both (the MTP
    layer's K and V, the state blocks per request) and says so; a drafter that is a separate model is named as
    not modelled (calibration.json has the log's URL)."""
    log = (LOGS / "calibration" / "vllm_qwen36_27b_int4_rtx3090_tp2_mtp.txt").read_text(encoding="utf-8")
    out = explain_engine_log(log, "qwen3.6-27b")
    assert not [n for n in out["notes"] if n.startswith("not modelled: ")]
    spec = next(n for n in out["notes"] if n.startswith("speculative decoding (mtp, 3 tokens; log line 3)"))
    assert "MTP layer caches K and V" in spec and "(both counted)" in spec
    assert any(n.startswith("prefix caching on a model with recurrent layers (log line 3)") for n in out["notes"])
    conc = next(c for c in out["checks"] if c["figure"] == "maximum concurrency")
    # 179 blocks per request: the MTP tokens' conv-state rows enlarge the block to 1,600 tokens
    # (kv_bytes.vllm_speculative_state), so the logged 2.37x is rebuilt
    assert conc["status"] == "consistent" and "/ 179 =" in conc["rebuilt"], conc
    # a separate draft model (eagle3) is named, and the figure that differs says so
    eagle = log.replace("'method': 'mtp'", "'method': 'eagle3'")
    assert eagle != log
    out = explain_engine_log(eagle, "qwen3.6-27b")
    (note,) = [n for n in out["notes"] if n.startswith("not modelled: ")]
    assert note.startswith("not modelled: a separate draft model (eagle3, 3 tokens; log line 3)")
    conc = next(c for c in out["checks"] if c["figure"] == "maximum concurrency")
    # the 3 speculative tokens still add conv rows and state blocks (any method), without the MTP layer: groups
    # of 16, 179 blocks per request; where a figure differs it names the separate draft model
    assert conc["rebuilt"].startswith("424 blocks / 179 = 2.37x"), conc
    assert conc["status"] != "differs" or conc["why"].endswith("; or what kvlab does not model: a separate draft model")
    # a stock log says nothing of the kind
    plain = explain_engine_log((LOGS / "vllm_qwen35_27b_h20.txt").read_text(encoding="utf-8"), "qwen3.6-27b")
    assert not [n for n in plain["notes"] if n.startswith(("not modelled", "speculative", "prefix caching"))]


def test_speculative_decoding_and_prefix_caching_can_be_stated():
    """An excerpt without vLLM's args line (club-3090 PR 594's three lines): the settings stated change the
    blocks per request as the args line would."""
    log = calibration_log("vllm_qwen36_27b_fp8_tp2_dualmax.txt")
    base = {"kv_cache_dtype": "fp8", "tensor_parallel_size": 2, "max_num_batched_tokens": 8192}
    plain = check(explain_engine_log(log, "qwen3.6-27b", **base), "maximum concurrency")["rebuilt"]
    stated = explain_engine_log(
        log,
        "qwen3.6-27b",
        **base,
        enable_prefix_caching=True,
        num_speculative_tokens=3,
        speculative_method="mtp",
    )
    assert "/ 171 =" in plain
    # 5.33 GiB // (1,600 tokens x 1,024 B x 17 layers) = 205 blocks over 179 per request: the logged 1.15x
    conc = check(stated, "maximum concurrency")
    assert conc["rebuilt"].startswith("205 blocks / 179 = 1.15x, 300,220 tokens") and conc["status"] == "consistent"
    assert any(n.startswith("speculative decoding (mtp, 3 tokens; stated)") for n in stated["notes"])
    with pytest.raises(ValueError, match="enable_prefix_caching must be true or false"):
        explain_engine_log(log, "qwen3.6-27b", enable_prefix_caching="yes")


def test_int8_per_token_head_is_rebuilt_with_its_scales():
    """club-3090 #602, the same dual-max compose with --kv-cache-dtype int8_per_token_head (its args line shows the
    dtype, TP 2 and prefix caching; MTP 3 and 8,192 batched tokens are the compose's, stated). One GPU's attention
    token per layer: 2 KV heads x 2 (K, V) x (256 + 4) B = 1,040 B (fp8: 1,024), so the block that holds a state
    page is 1,584 tokens (fp8: 1,600), a request takes 166 + 3 x 5 = 181 blocks, and 5.23 GiB holds 200 blocks of
    17 layers x 1,584 x 1,040 B: 1.10x, 289,661 tokens, as logged."""
    log = calibration_log("vllm_qwen36_27b_fp8_rtx3090_3090ti_tp2_int8kv.txt")
    out = explain_engine_log(
        log, "qwen3.6-27b", max_num_batched_tokens=8192, num_speculative_tokens=3, speculative_method="mtp"
    )
    assert not [n for n in out["notes"] if n.startswith("not modelled")]
    conc = check(out, "maximum concurrency")
    assert conc["rebuilt"].startswith("200 blocks / 181 = 1.10x, 289,661 tokens") and conc["status"] == "consistent"
    assert "blocks of 1584 tokens" in conc["terms"][0]["how"]
    assert check(out, "KV cache size in tokens")["status"] == "consistent"
    # llama.cpp has no such type: stated for a llama.cpp log that does not print its types, it is refused by name
    lines = read_log(LOGS / "llamacpp_phi3_mini_131k_f16.txt")[1].splitlines()
    no_types = "\n".join(line for line in lines if "n_ctx" in line or "KV buffer size" in line)
    with pytest.raises(ValueError, match="type_k='int8_per_token_head' is a vLLM cache type; llama.cpp accepts"):
        explain_engine_log(no_types, "phi-3-mini-4k", type_k="int8_per_token_head")
    # nor SGLang: a stated kv_cache_dtype is refused, not counted at 1 B a value
    with pytest.raises(ValueError, match="is a vLLM cache type; SGLang and TensorRT-LLM take"):
        explain_engine_log(calibration_log("sglang_gemma3_tp1_h200.txt"), None, kv_cache_dtype="int8_per_token_head")


@pytest.mark.parametrize(
    ("line", "spec", "caching"),
    [
        ("non-default args: {'speculative_config': {'method': 'mtp', 'num_speculative_tokens': 3}}", ("mtp", 3), None),
        (
            """vllm serve m --speculative-config '{"method": "eagle3", "num_speculative_tokens": 2}' --no-enable-prefix-caching""",
            ("eagle3", 2),
            False,
        ),
        ("non-default args: {'enable_prefix_caching': True}", None, True),
        ("vllm serve m --enable-prefix-caching", None, True),
    ],
)
def test_speculative_decoding_and_prefix_caching_are_read_from_args_and_commands(line, spec, caching):
    v = parse_engine_log(line)["vllm"]
    assert (None if "speculative" not in v else (v["speculative"]["method"], v["speculative"]["tokens"])) == spec
    assert (v["prefix_caching"]["value"] if "prefix_caching" in v else None) == caching


def _coloured(log: str, esc: str = "\x1b") -> str:
    """A log as vLLM's logger colours it on a terminal: each line's process prefix in cyan, INFO in green."""
    return "".join(
        f"{esc}[1;36m(EngineCore_DP0 pid=4242){esc}[0;0m " + line.replace("INFO", f"{esc}[32mINFO{esc}[0m") + "\n"
        for line in log.splitlines()
    )


@pytest.mark.parametrize("esc", ["\x1b", ""], ids=["escape", "escape-lost-in-a-paste"])
@pytest.mark.parametrize("example", [e for e in engine_log_examples() if e["engine"] == "vllm"], ids=lambda e: e["id"])
def test_a_coloured_log_reads_as_the_plain_one(example, esc):
    """Terminal colour codes (kept in a copied terminal, or left as "[1;36m" in an issue) change nothing:
    the parser searches each line, so the codes around a figure do not hide it (the widget refused
    such a log before it reached Python: tests/browser/test_engine_log_widget.py)."""
    plain = engine_log_figure(log=example["log"], model=example["model"], config=example.get("config") or "")
    coloured = engine_log_figure(
        log=_coloured(example["log"], esc), model=example["model"], config=example.get("config") or ""
    )
    assert not coloured["error"]
    assert coloured["checks"] == plain["checks"] and coloured["summary"] == plain["summary"]


# --- issue 39 item 5: the formats explain-log did not read (each test names its log in tests/python/data/engine_logs/)
CALIBRATION_LOGS = LOGS / "calibration"


def calibration_log(name: str) -> str:
    lines = (CALIBRATION_LOGS / name).read_text(encoding="utf-8").splitlines()
    return "\n".join(line for line in lines if not line.startswith("# "))


def check(result: dict, figure: str) -> dict:
    return next(c for c in result["checks"] if c["figure"] == figure)


def test_vllm_0202_token_line_is_concurrency_times_max_model_len():
    """vllm_qwen36_27b_int4_rtx3090_tp2_util088.txt: 619,202 tokens = int(2.36x x 262,144), not blocks x block size."""
    log = calibration_log("vllm_qwen36_27b_int4_rtx3090_tp2_util088.txt")
    r = explain_engine_log(log, "qwen3.6-27b", kv_cache_dtype="fp8_e5m2", tensor_parallel_size=2)
    tokens = check(r, "KV cache size in tokens")
    assert tokens["status"] == "consistent" and "int(maximum concurrency x max_model_len)" in tokens["terms"][0]["how"]
    # the concurrency is rebuilt from the memory line's blocks, not from a misread token count
    conc = check(r, "maximum concurrency")
    assert "411 blocks / 171 = 2.40x" in conc["rebuilt"]


def test_vllm_mtp_concurrency_is_not_rebuilt_from_a_misread_token_count():
    """vllm_qwen36_27b_int4_rtx3090_tp2_mtp.txt: the old reading took 620,944 tokens for blocks and gave 9.27x
    against the logged 2.37x; the token line is the concurrency line. With MTP 3 and prefix caching one request
    takes 179 blocks (the block is 1,600 tokens once the conv state holds the speculative tokens' rows), and
    620,944 = int(424 / 179 x 262,144)."""
    log = calibration_log("vllm_qwen36_27b_int4_rtx3090_tp2_mtp.txt")
    r = explain_engine_log(
        log, "qwen3.6-27b", kv_cache_dtype="fp8_e5m2", tensor_parallel_size=2, max_num_batched_tokens=8192
    )
    assert check(r, "KV cache size in tokens")["status"] == "consistent"
    conc = check(r, "maximum concurrency")
    assert conc["status"] == "consistent" and "9." not in conc["rebuilt"]
    assert conc["rebuilt"].startswith("424 blocks / 179 = 2.37x, 620,944 tokens")


def test_vllm_024_token_count_without_a_length_is_read_not_called_a_mismatch():
    """vllm_qwen36_27b_rtx3090_tp4_v0240.txt (vLLM 0.24.0): 1,774,963 tokens is no whole number of blocks."""
    r = explain_engine_log(
        calibration_log("vllm_qwen36_27b_rtx3090_tp4_v0240.txt"), "qwen3.6-27b", tensor_parallel_size=4
    )
    assert not [c for c in r["checks"] if c["status"] == "differs"]
    assert any("1,774,963 tokens is no whole number of blocks" in n for n in r["notes"])


def test_vllm_cuda_graph_estimate_and_equivalent_utilization_are_read():
    """vllm_qwen36_27b_int4_rtx3090_tp4_cgprofile.txt: 0.92 - 0.17 GiB / 23.58 GiB = 0.9128 (logged 0.9129);
    vllm_unnamed_model_tp2_v0271_cgprofile.txt: the card's memory follows from the two lines;
    vllm_unnamed_hybrid_mamba_util070_cgprofile.txt: before 0.19 the estimate is not subtracted."""
    r = explain_engine_log(
        calibration_log("vllm_qwen36_27b_int4_rtx3090_tp4_cgprofile.txt"),
        "qwen3.6-27b",
        tensor_parallel_size=4,
        gpu_memory_gib=23.58,
    )
    c = check(r, "gpu_memory_utilization without the CUDA graph estimate")
    assert c["status"] == "consistent" and c["logged"] == "0.9129" and c["terms"][0]["logged"] == "0.17 GiB"
    assert any("subtracts its CUDA graph estimate (0.17 GiB)" in n for n in r["notes"])
    r = explain_engine_log(
        calibration_log("vllm_unnamed_model_tp2_v0271_cgprofile.txt"), "llama-3.1-8b", max_model_len=8192
    )
    assert any("the card has about 23.7 GiB" in n for n in r["notes"])
    r = explain_engine_log(
        calibration_log("vllm_unnamed_hybrid_mamba_util070_cgprofile.txt"), "qwen3-next-80b-a3b", max_model_len=131072
    )
    assert any("does not subtract them" in n for n in r["notes"])


def test_vllm_null_block_is_held_back():
    """vllm_qwen36_27b_int4_rtx3090_tp4_cgprofile.txt: V1's block pool keeps block 0 (the null block) back."""
    r = explain_engine_log(
        calibration_log("vllm_qwen36_27b_int4_rtx3090_tp4_cgprofile.txt"),
        "qwen3.6-27b",
        tensor_parallel_size=4,
    )
    # 1,212 blocks of 17 layers x 1,600 tokens x 512 B (the MTP layer and the 3 speculative tokens' conv rows
    # counted since its own args line asks for them)
    assert any("null block" in n and "requests share 1,211" in n for n in r["notes"])


def test_llamacpp_excerpt_cut_before_a_caches_size_line():
    """llamacpp_gpt_oss_120b_rocm_2seq.txt: the SWA cache's 90.00 MiB buffer line is there, its size line is not."""
    r = explain_engine_log(calibration_log("llamacpp_gpt_oss_120b_rocm_2seq.txt"), "gpt-oss-120b")
    c = check(r, "KV buffers per device")
    assert c["status"] == "consistent" and "90.00 MiB (SWA cache, rebuilt)" in c["rebuilt"]


QWEN3_235B = {  # Qwen/Qwen3-235B-A22B config.json, the attention shape
    "architectures": ["Qwen3MoeForCausalLM"],
    "model_type": "qwen3_moe",
    "num_hidden_layers": 94,
    "num_attention_heads": 64,
    "num_key_value_heads": 4,
    "head_dim": 128,
    "hidden_size": 4096,
    "max_position_embeddings": 40960,
    "vocab_size": 151936,
}


@pytest.mark.parametrize(
    "name, model, stated, per_token",
    [
        ("sglang_gemma3_tp1_h200.txt", "gemma-3-4b-it", {}, "139,264"),
        ("sglang_qwen3_moe_amd_aiter.txt", "qwen3-30b-a3b", {}, "98,304"),
        ("sglang_qwen3_235b_a22b_fp8_h100_tp4.txt", QWEN3_235B, {"tensor_parallel_size": 4}, "48,128"),
    ],
)
def test_sglang_pool_per_token_is_rebuilt_from_the_model(name, model, stated, per_token):
    """SGLang's 'KV Cache is allocated. #tokens: N, K size: X GB, V size: Y GB': (N + 1) rows of K and V per layer."""
    r = explain_engine_log(calibration_log(name), model, **stated)
    assert r["engine"] == "sglang"
    c = check(r, "KV pool per token (K size + V size / #tokens)")
    assert c["status"] == "exact" and c["rebuilt"] == f"{per_token} B per token"
    assert any("not modelled yet: SGLang's budget rule" in n for n in r["notes"])


def test_sglang_without_a_model_and_its_refusal_are_read():
    """sglang_qwen3_235b_a22b_fp8_h100_tp4.txt read alone; sglang_deepseek_v4_pro_fp8_h200_tp8_error.txt refuses."""
    r = explain_engine_log(calibration_log("sglang_qwen3_235b_a22b_fp8_h100_tp4.txt"), None)
    assert r["engine"] == "sglang" and r["model"] is None
    assert any("48,104 B per token" in n for n in r["notes"])
    r = explain_engine_log(calibration_log("sglang_deepseek_v4_pro_fp8_h200_tp8_error.txt"), None)
    assert any("refused to start" in n and "--mem-fraction-static=0.88" in n for n in r["notes"])
    assert ("mem_fraction_static", 0.88) in {(s["name"], s["value"]) for s in r["settings"]}
    # a vLLM log without a model is read against itself (nothing rebuilt from layers); llama.cpp still needs one
    r = explain_engine_log(calibration_log("vllm_qwen36_27b_rtx3090_tp4_v0240.txt"), None)
    assert r["engine"] == "vllm" and r["model"] is None and any("no model given" in n for n in r["notes"])
    with pytest.raises(ValueError, match="model"):
        explain_engine_log(calibration_log("llamacpp_gpt_oss_120b_rocm_2seq.txt"), None)


def test_tensorrt_llm_bytes_per_token_and_block_arithmetic():
    """trtllm_mistral_7b_a10g_triton_error.txt (tp 4), trtllm_smoothquant_a100_v08_tokens.txt (a Llama-2-7B shape),
    trtllm_unnamed_model_triton_78gib_kv.txt (no model: the log's own block arithmetic)."""
    r = explain_engine_log(
        calibration_log("trtllm_mistral_7b_a10g_triton_error.txt"), "mistral-7b-v0.3", tensor_parallel_size=4
    )
    assert r["engine"] == "tensorrt-llm"
    c = check(r, "KV cache memory from the token count")
    assert c["status"] == "exact" and c["rebuilt"] == "956,301,312 B"
    assert any("needs beam 1 x 128 tokens per block x 272 blocks = 34,816" in n for n in r["notes"])
    r = explain_engine_log(calibration_log("trtllm_smoothquant_a100_v08_tokens.txt"), "llama-2-7b", engine="trtllm")
    assert check(r, "KV cache memory from the token count")["status"] == "exact"
    r = explain_engine_log(calibration_log("trtllm_unnamed_model_triton_78gib_kv.txt"), None)
    assert check(r, "tokens in the primary pool")["status"] == "exact"
    assert check(r, "KV cache blocks per sequence")["rebuilt"] == "65"
    assert any("not modelled yet: TensorRT-LLM's budget rule" in n for n in r["notes"])


# --------------------------------------------------------------- issue 39 items 5-6: the logs added after the fit
def _figure(r: dict, figure: str) -> dict:
    return next(c for c in r["checks"] if c["figure"] == figure)


def _changed(name: str, old: str, new: str) -> str:
    text = calibration_log(name)
    assert old in text, old
    return text.replace(old, new, 1)


def test_vllm_banner_version_and_a_kv_dtype_kvlab_does_not_model():
    """vllm#49011 (0.25.1, printed only in the start-up banner), --kv-cache-dtype nvfp4: the version is read, the
    token line is checked against the concurrency line, and the unmodelled dtype is named instead of a crash."""
    name = "vllm_qwen36_27b_nvfp4_kvnvfp4_1m_v0251.txt"
    v = parse_engine_log(calibration_log(name))["vllm"]
    assert v["version"]["value"] == (0, 25)
    r = explain_engine_log(calibration_log(name), "qwen3.6-27b")
    c = _figure(r, "KV cache size in tokens")
    assert c["status"] == "consistent" and c["rebuilt"] == "1.74x x 1,048,576 = 1,819,279 to 1,829,765 tokens"
    assert any("not modelled: KV cache dtype 'nvfp4'" in n for n in r["notes"])
    assert r["summary"].endswith("from the log's own figures")
    r = explain_engine_log(_changed(name, "1,823,372 tokens", "1,853,372 tokens"), "qwen3.6-27b")
    assert _figure(r, "KV cache size in tokens")["status"] != "consistent"


def test_vllm_free_memory_line_is_rebuilt_from_its_own_terms():
    """club-3090 PR 1139: requested = util x total; --kv-cache-memory advices = requested (or free) - consumed -
    peak activation - CUDA graphs - 150 MiB; in use = requested - consumed - peak activation; the graph pool line."""
    name = "vllm_qwen38_27b_fp8_24gb_tp2_kvsuggestion.txt"
    r = explain_engine_log(calibration_log(name), None)
    assert r["engine"] == "vllm" and r["lines_read"] == 2
    figures = {c["figure"]: c for c in r["checks"]}
    assert all(c["status"] == "consistent" for c in figures.values()), figures
    assert figures["--kv-cache-memory to fit into requested memory"]["rebuilt"] == "4.47 GiB"
    assert figures["--kv-cache-memory to fully utilize GPU memory"]["rebuilt"] == "5.95 GiB"
    assert figures["KV cache memory in use"]["rebuilt"] == "4.76 GiB"
    assert figures["CUDA graph pool: estimated - actual"]["rebuilt"] == "0.06 GiB"
    for old, new, figure in (
        ("`--kv-cache-memory=6390038016` (5.95 GiB)", "`--kv-cache-memory=6390038016` (6.15 GiB)", "fully utilize"),
        ("(5.95 GiB)", "(5.85 GiB)", "fully utilize"),
        ("in use is 4.76 GiB", "in use is 4.96 GiB", "in use"),
        ("`--kv-cache-memory=4805904446`", "`--kv-cache-memory=4905904446`", "fit into"),
        ("0.06 GiB (47.1%)", "0.16 GiB (47.1%)", "CUDA graph pool"),
    ):
        r = explain_engine_log(_changed(name, old, new), None)
        c = next(c for c in r["checks"] if figure in c["figure"])
        assert c["status"] == "differs", (old, new)


def test_vllm_cuda_graph_opt_out_line_of_021():
    """wtdcode/vllm-backport#34: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0 on 0.21+ ('increasing ... from 0.9350 to
    0.9595.'): read as not subtracted, the estimate checked against the two utilizations on a 23.56 GiB card."""
    name = "vllm_fork_backport_dsv4_flash_rtx3090_pp2_tp4_cgoptout.txt"
    eq = parse_engine_log(calibration_log(name))["vllm"]["equivalent_util"]
    assert (eq["util"], eq["with"], eq["subtracted"], eq.get("opt_out")) == ("0.9350", "0.9595", False, True)
    r = explain_engine_log(calibration_log(name), None, gpu_memory_gib=23.56)
    c = _figure(r, "gpu_memory_utilization with the CUDA graph estimate")
    assert c["status"] == "consistent" and c["logged"] == "0.9595"
    assert any("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0" in n and "opt-in" not in n for n in r["notes"])
    r = explain_engine_log(_changed(name, "0.58 GiB total", "0.78 GiB total"), None, gpu_memory_gib=23.56)
    assert _figure(r, "gpu_memory_utilization with the CUDA graph estimate")["status"] == "differs"


def test_vllm_negative_kv_memory_is_a_refusal_not_a_prediction():
    """intel/llm-scaler#672 (a fork on XPU): 'Available KV cache memory: -0.61 GiB' + 'No available memory for the
    cache blocks' is named as the refusal; no block count is predicted from a negative budget."""
    r = explain_engine_log(calibration_log("vllm_fork_llmscaler_qwen38_27b_b70_tp2_error.txt"), "qwen3.6-27b")
    assert not r["checks"]
    assert any("refused to start" in n and "0.61 GiB more" in n for n in r["notes"])
    assert not any("null block" in n for n in r["notes"])


def test_sglang_mamba_pool_and_a_drafts_second_pool_are_read():
    """ktransformers#1870 (Qwen3.5-397B, SGLang 0.5.9): the Mamba pool line; club-3090#1261 (SGLang 0.5.19, dflash2):
    the drafter's second pool is kept apart, and the target pool is Qwen3.6-27B's 16 full-attention layers."""
    r = explain_engine_log(calibration_log("sglang_qwen35_397b_fp8_rtx4090_tp2_ktransformers.txt"), None)
    assert r["lines_read"] == 5
    assert any("82 request slots" in n and "SSM states 7.29 GiB = 7.42 GiB" in n for n in r["notes"])
    name = "sglang_qwen38_27b_nvfp4_rtx5090_tp2_dflash2.txt"
    r = explain_engine_log(calibration_log(name), "qwen3.6-27b", tensor_parallel_size=2)
    assert _figure(r, "KV pool per token (K size + V size / #tokens)")["status"] == "exact"
    assert any("second KV pool" in n and "K 1.08 GB + V 1.08 GB" in n for n in r["notes"])
    assert any("16 full-attention layers only" in n for n in r["notes"])
    r = explain_engine_log(_changed(name, "K size: 3.46 GB", "K size: 3.56 GB"), "qwen3.6-27b", tensor_parallel_size=2)
    assert _figure(r, "KV pool per token (K size + V size / #tokens)")["status"] == "differs"


def test_vllm_engine_init_line_gives_the_kv_dtype_and_length():
    """SergiioB/intel-arc-pro-b70-inference-cookbook#4 (vLLM 0.27.2rc1 on XPU): 'kv_cache_dtype=fp8' and
    'max_seq_len=100000' are read off the engine-init line; the refusal and the budget the user set
    (kv_cache_memory_bytes, no profiling) are named without a model."""
    name = "vllm_xpu_b70_gptq_mtp4_100k_v0272_error.txt"
    v = parse_engine_log(calibration_log(name))["vllm"]
    assert (v["kv_cache_dtype"]["value"], v["max_model_len"]["value"], v["version"]["value"]) == (
        "fp8",
        100000,
        (0, 27),
    )
    r = explain_engine_log(calibration_log(name), None)
    assert any("100,000-token request needs 4.26 GiB" in n and "4.25 GiB is available" in n for n in r["notes"])
    assert any("budget is 4.25 GiB as set by --kv-cache-memory-bytes" in n for n in r["notes"])
    v = parse_engine_log(_changed(name, "kv_cache_dtype=fp8,", "kv_cache_dtype=auto,"))["vllm"]
    assert v["kv_cache_dtype"]["value"] == "auto"


@pytest.mark.parametrize(
    ("file", "kernel"),
    [
        ("calibration/vllm_gpt_oss_120b_h100_negative_kv_error.txt", "marlin"),
        ("calibration/vllm_gpt_oss_120b_h100_v0141_weights.txt", "triton"),
    ],
)
def test_explain_log_names_the_mxfp4_kernel_path_the_log_prints(file, kernel):
    text = (LOGS / file).read_text(encoding="utf-8")
    r = explain_engine_log(text, "gpt-oss-120b")
    setting = next(s for s in r["settings"] if "MXFP4" in s["name"])
    assert setting["value"] == kernel and setting["from"].startswith("log line")
    bare = re.sub(r".*(Marlin kernel|Using Triton backend).*\n", "", text)
    assert not any("MXFP4" in s["name"] for s in explain_engine_log(bare, "gpt-oss-120b")["settings"])


def test_llamacpp_mla_layouts_are_the_three_a_build_or_gguf_has_cached():
    """DeepSeek-V3 per layer and token: the latent alone (since PR 19067), the latent in K and again in V (PR 12801 to
    PR 19067: GGUF key_length 576, value_length 512), every head's K and V (before PR 12801: 128 x 192 and 128 x 128)."""
    from kvlab.memory.llamacpp import llamacpp_mla_architecture

    ds = model_architecture("deepseek-v3")
    per_layer = {}
    for layout in ("latent", "latent+v", "per-head"):
        kv = llamacpp_kv_cache(ds, 4096, "f16", mla_cache=layout)
        per_layer[layout] = kv["total_bytes"] // (4096 * ds.n_layers)
    assert per_layer == {"latent": 576 * 2, "latent+v": (576 + 512) * 2, "per-head": 128 * (192 + 128) * 2}
    assert llamacpp_mla_architecture(model_architecture("llama-3.1-8b"), "per-head") == model_architecture(
        "llama-3.1-8b"
    )  # not MLA: unchanged
    with pytest.raises(ValueError, match="mla_cache must be one of latent, latent\\+v, per-head"):
        llamacpp_kv_cache(ds, 4096, mla_cache="full")
    with pytest.raises(ValueError, match="mla_cache must be one of"):
        explain_engine_log("llama_kv_cache_init: kv_size = 4096", "deepseek-v3", mla_cache="old")


def test_explain_log_finds_the_per_head_mla_layout_in_an_old_log():
    """ggml-org/llama.cpp#9390: an old log (no cache size line) whose per-device KV buffers are whole layers of
    DeepSeek's per-head cache. explain-log, told nothing of the layout, tries today's latent first, finds the buffers
    are not whole layers of it, and shows the layout that does give them; stated, the latent is kept and differs."""
    log = (LOGS / "calibration" / "llamacpp_deepseek_61l_8gpu_8slots_q4_0k.txt").read_text()
    found = explain_engine_log(log, "deepseek-v3")
    check = next(c for c in found["checks"] if c["figure"].startswith("KV buffers per device"))
    assert check["status"] == "exact" and check["rebuilt"].startswith("8 x 728.00 MiB + 8 x 728.00 MiB")
    assert "(31 of 61 layers)" in check["rebuilt"]
    assert "'per-head' MLA layout" in found["notes"][0]
    setting = next(s for s in found["settings"] if s["name"].startswith("MLA cache layout"))
    assert setting["value"] == "per-head" and "log's KV figures" in setting["from"]
    latent = explain_engine_log(log, "deepseek-v3", mla_cache="latent")
    check = next(c for c in latent["checks"] if c["figure"].startswith("KV buffers per device"))
    assert check["status"] == "differs" and "5.06 MiB" in check["why"]
