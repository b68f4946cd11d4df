"""`python -m kvlab` against hostile input, run as a subprocess: every file it reads is bounded
(no endless read, no hang on a FIFO), and every bad input is one line that names what is wrong:
exit status 2, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PYCODE = Path(__file__).resolve().parents[2] / "pycode"
LOG = Path(__file__).resolve().parent / "data" / "engine_logs" / "vllm_llama31_8b_rtx3090_20k.txt"
CONFIG = {
    "model_type": "llama",
    "num_hidden_layers": 32,
    "hidden_size": 4096,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 8192,
}


def kvlab(*args: str, stdin=None) -> subprocess.CompletedProcess:
    """Run the CLI with a timeout: a hang fails the test instead of stalling the run.
    `stdin`: bytes to send, or an open file to read from."""
    return subprocess.run(
        [sys.executable, "-m", "kvlab", *args],
        **({"input": stdin} if isinstance(stdin, bytes) else {"stdin": stdin or subprocess.DEVNULL}),
        capture_output=True,
        timeout=20,
        env={**os.environ, "PYTHONPATH": str(PYCODE)},
    )


def reading(command: str, path) -> list[str]:
    """A command that reads `path`: memory's --model config.json, or explain-log's log."""
    if command == "memory":
        return ["memory", "--model", str(path), "--context", "4096"]
    return ["explain-log", str(path), "--model", "llama-3.1-8b"]


def refused(result: subprocess.CompletedProcess, *words: str) -> str:
    """The one-line error of a refused command, checked: exit 2, no traceback, each of `words` in it."""
    err = result.stderr.decode(errors="replace")
    assert result.returncode == 2, (result.returncode, err[-2000:])
    assert "Traceback" not in err, err[-2000:]
    line = err.strip().splitlines()[-1]
    assert line.startswith(("error: ", "usage: ", "python -m kvlab")), err[-2000:]
    for word in words:
        assert word in line, (word, line)
    assert len(line) < 600, line
    return line


def write_config(tmp_path: Path, text: str | bytes, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


# ---------------------------------------------------------------------------- 1. bounded reads


@pytest.mark.parametrize("command", ["memory", "explain-log"])
def test_a_device_that_never_ends_is_refused_before_it_is_read(command):
    refused(kvlab(*reading(command, "/dev/zero")), "/dev/zero", "not a regular file")


@pytest.mark.parametrize("command", ["memory", "explain-log"])
def test_a_fifo_with_no_writer_is_refused_not_waited_on(tmp_path, command):
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    refused(kvlab(*reading(command, fifo)), str(fifo), "not a regular file")


def test_files_over_the_limit_are_refused_by_size(tmp_path):
    from kvlab.memory.engine_logs import MAX_LOG_BYTES
    from kvlab.memory.hf_config import MAX_CONFIG_BYTES

    big = write_config(tmp_path, "{" + " " * MAX_CONFIG_BYTES + "}")
    refused(kvlab("memory", "--model", str(big), "--context", "4096"), str(big), "larger than")
    log = tmp_path / "server.log"
    log.write_bytes(b"x" * (MAX_LOG_BYTES + 1))
    refused(kvlab("explain-log", str(log), "--model", "llama-3.1-8b"), str(log), "larger than")


def test_stdin_is_read_up_to_the_limit_and_no_further():
    from kvlab.memory.engine_logs import MAX_LOG_BYTES

    refused(kvlab("explain-log", "-", "--model", "llama-3.1-8b", stdin=b"x" * (3 * MAX_LOG_BYTES)), "larger than")
    with open("/dev/zero", "rb") as zero:  # standard input that never ends
        refused(kvlab("explain-log", "-", "--model", "llama-3.1-8b", stdin=zero), "standard input", "larger than")
    ok = kvlab("explain-log", "-", "--model", "llama-3.1-8b", stdin=LOG.read_bytes())
    assert ok.returncode == 0, ok.stderr.decode()
    assert b"figures rebuilt from the config" in ok.stdout


# ---------------------------------------------------------------------------- 2. tracebacks become one line


def test_a_deeply_nested_config_is_one_line(tmp_path):
    deep = write_config(tmp_path, "[" * 100_000)
    refused(kvlab("memory", "--model", str(deep), "--context", "4096"), str(deep), "nested")


def test_explain_log_on_a_directory_is_one_line(tmp_path):
    refused(kvlab(*reading("explain-log", tmp_path)), str(tmp_path), "directory")


def test_explain_log_on_a_missing_file_is_one_line(tmp_path):
    missing = tmp_path / "server.log"
    refused(kvlab(*reading("explain-log", missing)), str(missing), "does not exist")


# ---------------------------------------------------------------------------- 3. one limit per input


def test_memory_caps_the_context_as_fit_does():
    from kvlab.memory.kv_bytes import MAX_CONTEXT

    too_long = str(MAX_CONTEXT + 1)
    memory = refused(kvlab("memory", "--model", "llama-3.1-8b", "--context", str(2**63)), "context", "at most")
    fit = refused(kvlab("fit", "--model", "llama-3.1-8b", "--context", too_long, "--gpu", "h100-sxm"), "context")
    assert f"{MAX_CONTEXT:,}" in memory and f"{MAX_CONTEXT:,}" in fit
    assert kvlab("memory", "--model", "llama-3.1-8b", "--context", str(MAX_CONTEXT)).returncode == 0


@pytest.mark.parametrize("command", ["memory", "fit", "serve"])
def test_the_batch_is_capped_alike_everywhere(command):
    from kvlab.memory.kv_bytes import MAX_SEQUENCES

    gpu = [] if command == "memory" else ["--gpu", "h100-sxm"]
    args = [command, "--model", "llama-3.1-8b", "--context", "4096", "--batch", str(2**40), *gpu]
    refused(kvlab(*args), "--batch", f"at most {MAX_SEQUENCES:,}")


@pytest.mark.parametrize("params", ["nan", "inf", "-1", "0"])
def test_a_parameter_count_must_be_positive_and_finite(params):
    refused(kvlab("memory", "--model", "llama-3.1-8b", "--context", "4096", "--params", params), "params")


def test_a_config_without_a_maximum_context_says_so(tmp_path):
    config = write_config(tmp_path, json.dumps({k: v for k, v in CONFIG.items() if k != "max_position_embeddings"}))
    out = kvlab("memory", "--model", str(config), "--context", "4096", "--params", "8e9")
    assert out.returncode == 0, out.stderr.decode()
    assert "note: the config gives no maximum context" in out.stdout.decode()


def test_context_error_names_the_n_ctx_the_user_gave():
    line = refused(kvlab("context", "--n-ctx", "0"), "n_ctx (0")
    assert "n_ctx (4)" not in line


# ---------------------------------------------------------------------------- 4. messages


def test_a_missing_config_path_is_a_missing_file_not_a_catalogue_miss(tmp_path):
    missing = tmp_path / "config.json"
    line = refused(kvlab("memory", "--model", str(missing), "--context", "4096"), str(missing), "does not exist")
    assert "catalogue" not in line


def test_a_config_with_a_byte_order_mark_is_read(tmp_path):
    config = write_config(tmp_path, "\ufeff" + json.dumps(CONFIG))
    out = kvlab("memory", "--model", str(config), "--context", "4096", "--params", "8e9")
    assert out.returncode == 0, out.stderr.decode()
    assert "512.00 MiB" in out.stdout.decode()


def test_a_utf16_config_names_the_file_and_says_it_is_not_utf8(tmp_path):
    config = write_config(tmp_path, json.dumps(CONFIG).encode("utf-16"))
    refused(kvlab("memory", "--model", str(config), "--context", "4096"), str(config), "not UTF-8")


@pytest.mark.parametrize(
    "args",
    [
        ["memory", "--model", "llama-3.1-8b", "--context", "9" * 5000],
        ["memory", "--model", "llama-3.1-8b", "--context", "4096", "--kv-type", "q" * 5000],
        ["memory", "--model", "m" * 5000, "--context", "4096"],
        ["memory", "--model", "{" + "9" * 5000, "--context", "4096"],
        ["context", "--n-ctx", "9" * 5000],
        ["explain-log", "x" * 5000, "--model", "llama-3.1-8b"],
    ],
    ids=["int", "choice", "model", "config-text", "n-ctx", "log-path"],
)
def test_an_error_never_repeats_a_long_value_in_full(args):
    refused(kvlab(*args))  # the line is under 600 characters: the 5,000 are shortened


def test_memory_says_what_llama_server_allocates_without_np(capsys):
    """llama-server's default is 4 slots over one unified cache: the same cells for a dense model, a sliding-window
    cache 4 windows deep for Gemma 3 (llama_server.AUTO_SLOTS; kvlab.memory.kv_bytes.llamacpp_kv_cache)."""
    from kvlab.cli import main
    from kvlab.memory.catalogue import model_architecture
    from kvlab.memory.kv_bytes import llamacpp_kv_cache
    from kvlab.wording import human_bytes

    assert main(["memory", "--model", "qwen3-8b", "--context", "32768"]) == 0
    assert "4 slots sharing these 32,768 cells (--kv-unified): 4.50 GiB (the same" in capsys.readouterr().out
    assert main(["memory", "--model", "gemma-3-27b-it", "--context", "32768"]) == 0
    out = capsys.readouterr().out
    four = llamacpp_kv_cache(model_architecture("gemma-3-27b-it"), 32768, n_seq=4, kv_unified=True)["total_bytes"]
    one = llamacpp_kv_cache(model_architecture("gemma-3-27b-it"), 32768)["total_bytes"]
    assert four > one and f"(--kv-unified): {human_bytes(four)}\n" in out
