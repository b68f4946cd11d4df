"""`kvlab checkpoint`: a local directory, and a Hub id read over HTTP without downloading weights.

The Hub is played by a local server (KVLAB_HUB_URL) that serves real files from
tests/python/data/checkpoints/ under the Hub's /{org}/{name}/resolve/{revision}/ paths, answers
ranged requests as the Hub does, and counts the bytes it sends: reading a single-file model costs
its header, not its weights."""

from __future__ import annotations

import json
import struct
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from kvlab.cli import main

DATA = Path(__file__).parent / "data" / "checkpoints"


def safetensors_file(tensors: dict[str, tuple[str, list[int], int]]) -> bytes:
    """A real safetensors layout: 8-byte header length, JSON header, then the data (zeros)."""
    header, offset = {}, 0
    for name, (dtype, shape, nbytes) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


ONE_FILE = safetensors_file(
    {
        "model.embed_tokens.weight": ("BF16", [1000, 64], 1000 * 64 * 2),
        "model.layers.0.self_attn.q_proj.weight": ("BF16", [64, 64], 64 * 64 * 2),
        "model.layers.0.mlp.down_proj.weight": ("F8_E4M3", [64, 256], 64 * 256),
        "model.layers.0.mlp.down_proj.weight_scale": ("F32", [64], 64 * 4),
    }
)
FILES = {
    "/meta/llama-int8/resolve/main/config.json": (DATA / "llama-3.1-8b-instruct-bnb-int8.config.json").read_bytes(),
    "/meta/llama-int8/resolve/main/model.safetensors.index.json": (
        DATA / "llama-3.1-8b-instruct-bnb-int8.index.json"
    ).read_bytes(),
    "/tiny/one-file/resolve/main/config.json": json.dumps({"num_hidden_layers": 1}).encode(),
    "/tiny/one-file/resolve/main/model.safetensors": ONE_FILE,
}
GATED = {"/gated/model/resolve/main/config.json"}


@pytest.fixture
def hub(monkeypatch):
    sent = {"bytes": 0}

    class Hub(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            if self.path in GATED:
                self.send_error(403)
                return
            body = FILES.get(self.path)
            if body is None:
                self.send_error(404)
                return
            status = 200
            if rng := self.headers.get("Range"):
                lo, hi = (int(x) for x in rng.removeprefix("bytes=").split("-"))
                body, status = body[lo : hi + 1], 206
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            sent["bytes"] += len(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("KVLAB_HUB_URL", f"http://127.0.0.1:{server.server_port}")
    yield sent
    server.shutdown()


def run(capsys, *argv):
    code = main(list(argv))
    return code, capsys.readouterr()


def test_a_hub_id_reads_the_index_total(hub, capsys):
    code, out = run(capsys, "checkpoint", "meta/llama-int8", "--json")
    assert code == 0, out.err
    r = json.loads(out.out)
    want = json.loads(FILES["/meta/llama-int8/resolve/main/model.safetensors.index.json"])["metadata"]["total_size"]
    assert r["bytes"] == want and r["source"] == "safetensors index total_size"
    assert r["parts"]["scales"]["tensors"] > 0 and any("read from http://127.0.0.1" in n for n in r["notes"])


def test_a_single_file_model_costs_its_header_not_its_weights(hub, capsys):
    code, out = run(capsys, "checkpoint", "tiny/one-file", "--json")
    assert code == 0, out.err
    r = json.loads(out.out)
    assert r["source"] == "safetensors headers"
    assert r["bytes"] == 1000 * 64 * 2 + 64 * 64 * 2 + 64 * 256 + 64 * 4
    assert r["dtypes"]["F8_E4M3"] == 64 * 256 and r["parts"]["scales"]["bytes"] == 64 * 4
    header = struct.unpack("<Q", ONE_FILE[:8])[0] + 8
    assert hub["bytes"] < header + 200 < len(ONE_FILE), "only the config and the header went over the wire"


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("gated/model", "gated or private"),
        ("nobody/nothing", "no model.safetensors.index.json and no model.safetensors"),
    ],
)
def test_the_hub_refusals_say_what_to_do(hub, capsys, source, says):
    code, out = run(capsys, "checkpoint", source)
    assert code == 2 and says in out.err and "Traceback" not in out.err


def test_an_unreachable_hub_says_to_give_a_directory(monkeypatch, capsys):
    monkeypatch.setenv("KVLAB_HUB_URL", "http://127.0.0.1:9")  # the discard port: nothing listens
    code, out = run(capsys, "checkpoint", "meta/llama-int8")
    assert code == 2 and "cannot be reached" in out.err and "local directory" in out.err


def test_a_local_directory_prints_the_parts(tmp_path, capsys):
    (tmp_path / "model.safetensors").write_bytes(ONE_FILE)
    (tmp_path / "config.json").write_text(json.dumps({"num_hidden_layers": 1}))
    code, out = run(capsys, "checkpoint", str(tmp_path))
    assert code == 0, out.err
    assert "as stored, from the safetensors headers" in out.out and "F8_E4M3" in out.out
    assert "vision" not in out.out  # parts with no tensors are left out


@pytest.mark.parametrize("engine", ["vllm", "llamacpp", "sglang", "trtllm"])
def test_fit_counts_the_weights_as_the_checkpoint_stores_them(tmp_path, capsys, engine):
    """fit --checkpoint DIR: every engine's weights are the index's total_size (9.087 GB for the int8 Llama; params
    x 8 bits with the embedding and lm_head at 16 bits says 9.081 GB), and the sentence says where the bytes came
    from."""
    (tmp_path / "config.json").write_bytes((DATA / "llama-3.1-8b-instruct-bnb-int8.config.json").read_bytes())
    index = (DATA / "llama-3.1-8b-instruct-bnb-int8.index.json").read_bytes()
    (tmp_path / "model.safetensors.index.json").write_bytes(index)
    stored = json.loads(index)["metadata"]["total_size"]
    argv = ["fit", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--context", "4096", "--weights", "INT8"]
    argv += ["--engine", engine, "--json"]
    results = {}
    for extra in ([], ["--checkpoint", str(tmp_path)]):
        assert main(argv + extra) == 0
        results[bool(extra)] = json.loads(capsys.readouterr().out)
    for checkpoint, r in results.items():
        if engine in ("vllm", "llamacpp"):
            weights = next(c for c in r["components"] if c["name"] == "weights")
            nbytes, how = weights["bytes"], weights["how"]
        else:
            step = next(s for s in r["steps"] if s["label"] == "weights per GPU")
            nbytes, how = step["bytes"], step["how"]
        if checkpoint:
            assert nbytes == stored and "as the checkpoint stores them" in how and str(tmp_path) in how
        else:
            assert nbytes != stored and abs(nbytes / stored - 1) < 0.002 and "params x 8 bits" in how
            assert "16 bits" in how and "as the checkpoint stores them" not in how
