"""Weights as stored: the bytes a checkpoint's own files hold, read from their headers.

kvlab's estimate elsewhere is parameters x bits per weight (kvlab.memory.weights). A quantized
checkpoint is not that: it keeps some tensors in BF16 (embeddings, the output head, norms, often
the vision tower and the MTP layer), it carries scales, zero points and group indices, and a
4-bit format's overhead depends on its group size. This module counts what the files say.

Three readers, each taking bytes, text or dicts (nothing here opens a file, so it runs in
Pyodide on what a page hands it), and one summary:

safetensors_index   model.safetensors.index.json: metadata.total_size (the bytes of every tensor,
                    summed by the tool that wrote the shards) and the weight_map's tensor names.
                    Names alone carry no sizes, so the parts are counted in tensors, not bytes.
safetensors_header  one shard's header: 8 bytes little-endian u64 N, then N bytes of JSON
                    {name: {dtype, shape, data_offsets}, "__metadata__": {...}}. Every tensor's
                    bytes are data_offsets end - start (the bytes the shard holds), checked against
                    dtype x shape; grouped into parts and dtypes.
gguf_header         a GGUF file's header (magic "GGUF", version 2 or 3, tensor count, key/value
                    metadata, tensor infos): each tensor's bytes from its ggml type's block size
                    and block bytes (llama.cpp ggml/src/ggml.c type_traits), and the model's
                    architecture, block count, context length and head counts from the metadata.
checkpoint_weights_bytes  one plain dict from whichever of these you have (headers first, then
                    the index's total_size, then parameters x bits as a labelled fallback).

read_checkpoint_dir(path) is the thin helper for the command line: a local directory (config.json,
the index, the shards: only each shard's header is read) or a .gguf file (only its header).

Parts, by tensor name (first match wins): "vision" (visual., vision_tower, vision_model,
vision_backbone, multi_modal_projector, mmproj, v.blk), "mtp" (mtp, nextn, or a layer index at or
past the config's num_hidden_layers: DeepSeek-V3 keeps its MTP block as layer 61), "scales"
(weight_scale, weight_scale_inv, weight_scale_2, input_scale, scales, biases of MLX quantization,
qzeros, g_idx, SCB, absmax, quant_map ...), "embeddings" (embed_tokens, lm_head, wte, token_embd,
output.weight ...), "layers" (the numbered transformer blocks) and "other" (final norm, rotary
tables, the rest).

>>> import struct, json
>>> head = json.dumps({"w": {"dtype": "BF16", "shape": [4, 8], "data_offsets": [0, 64]}}).encode()
>>> safetensors_header(struct.pack("<Q", len(head)) + head)["bytes"]
64
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import struct

from kvlab.input_files import read_file_bytes
from kvlab.inputs import short_repr
from kvlab.memory.weights import GIB, weights_bytes

# --- limits: a header is small; anything past these is refused, never allocated -----------------
MAX_SAFETENSORS_HEADER = 100_000_000  # the safetensors library refuses headers over 100 MB too
MAX_INDEX_BYTES = 64 * 2**20  # DeepSeek-V3's index with every expert's scales is 12 MB
MAX_CONFIG_BYTES = 4 * 2**20
MAX_GGUF_HEADER = 256 * 2**20  # a 256k-token vocabulary with scores and merges is tens of MB
MAX_TENSORS = 2_000_000  # DeepSeek-V3 AWQ lists ~370k tensors
MAX_KV = 100_000
MAX_STRING = 64 * 2**20
MAX_TENSOR_BYTES = 2**44  # 16 TiB for one tensor: no real tensor comes near
MAX_TOTAL_BYTES = 2**52
MAX_DIMS_GGUF = 4  # GGML_MAX_DIMS
MAX_SHARDS = 10_000
KEPT_ARRAY = 64  # GGUF metadata arrays longer than this are kept as their length only

# safetensors dtypes -> bits per element (safetensors/src/tensor.rs Dtype; F4 and F6 are packed)
SAFETENSORS_BITS = {
    "F64": 64,
    "F32": 32,
    "F16": 16,
    "BF16": 16,
    "I64": 64,
    "I32": 32,
    "I16": 16,
    "I8": 8,
    "U64": 64,
    "U32": 32,
    "U16": 16,
    "U8": 8,
    "BOOL": 8,
    "F8_E4M3": 8,
    "F8_E5M2": 8,
    "F8_E8M0": 8,
    "F6_E2M3": 6,
    "F6_E3M2": 6,
    "F4": 4,
    "C64": 64,
}

# GGUF tensor types: id -> (name, values per block, bytes per block). From llama.cpp
# ggml/src/ggml.c `type_traits` (blck_size, type_size = sizeof(block_*) of ggml-common.h) at
# commit 00bdaa105cb03380daf899b4fc9f026555745269; the same pairs are gguf-py/gguf/constants.py
# GGML_QUANT_SIZES. Ids 4, 5, 31-33, 36-38 were removed from ggml and are refused.
GGML_TYPES = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 18),
    3: ("Q4_1", 32, 20),
    6: ("Q5_0", 32, 22),
    7: ("Q5_1", 32, 24),
    8: ("Q8_0", 32, 34),
    9: ("Q8_1", 32, 36),
    10: ("Q2_K", 256, 84),
    11: ("Q3_K", 256, 110),
    12: ("Q4_K", 256, 144),
    13: ("Q5_K", 256, 176),
    14: ("Q6_K", 256, 210),
    15: ("Q8_K", 256, 292),
    16: ("IQ2_XXS", 256, 66),
    17: ("IQ2_XS", 256, 74),
    18: ("IQ3_XXS", 256, 98),
    19: ("IQ1_S", 256, 50),
    20: ("IQ4_NL", 32, 18),
    21: ("IQ3_S", 256, 110),
    22: ("IQ2_S", 256, 82),
    23: ("IQ4_XS", 256, 136),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 56),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 54),
    35: ("TQ2_0", 256, 66),
    39: ("MXFP4", 32, 17),
    40: ("NVFP4", 64, 36),
    41: ("Q1_0", 128, 18),
}

PARTS = ("layers", "embeddings", "vision", "mtp", "scales", "other")
SOURCES = ("safetensors headers", "safetensors index total_size", "gguf header", "params x bits (fallback)")

_VISION = re.compile(
    r"(^|\.)(visual|vision_tower|vision_model|vision_backbone|vision_encoder|image_encoder|"
    r"multi_modal_projector|mm_projector|mmproj|audio_tower)(\.|_|$)|^v\.|^mm\."
)
_MTP = re.compile(r"(^|\.)(mtp|mtp_layers|nextn|mtp_block)(\.|_|$)|\.nextn\.")
_SCALE_SUFFIX = (
    "weight_scale",
    "weight_scale_inv",
    "weight_scale_2",
    "input_scale",
    "input_scale_inv",
    "output_scale",
    "k_scale",
    "v_scale",
    "scales",
    "scale_inv",
    "qzeros",
    "zeros",
    "g_idx",
    "SCB",
    "absmax",
    "quant_map",
    "nested_absmax",
    "nested_quant_map",
    "weight_format",
    "weight_zero_point",
    "weight_g_idx",
    "weight_global_scale",
    "input_global_scale",
    "bitsandbytes__nf4",
    "bitsandbytes__fp4",
)
_EMBED = re.compile(
    r"(^|\.)(embed_tokens|lm_head|wte|wpe|word_embeddings|embeddings\.word|tok_embeddings|"
    r"token_embd|output|ff_out|embed_out|shared_head\.head)(\.|$)"
)
_LAYER = re.compile(r"(^|\.)(layers|h|blocks|block|blk|resblocks|layer)\.(\d+)\.")


def tensor_part(name: str, num_hidden_layers: int | None = None, scale_names: bool = True) -> str:
    """The part a tensor belongs to, by its name (see the module docstring)."""
    if _VISION.search(name):
        return "vision"
    if _MTP.search(name):
        return "mtp"
    layer = _LAYER.search(name)
    if num_hidden_layers and layer and int(layer.group(3)) >= num_hidden_layers:
        return "mtp"
    leaf = name.rsplit(".", 1)[-1]
    if scale_names and (
        leaf in _SCALE_SUFFIX
        or leaf.endswith("_scales")  # gpt-oss MXFP4: gate_up_proj_scales (E8M0 exponents)
        or leaf == "biases"  # MLX affine quantization: scales and biases per group (a layer's own is "bias")
        or ".quant_state." in name
    ):
        return "scales"
    if _EMBED.search(name) and not layer:
        return "embeddings"
    if layer:
        return "layers"
    return "other"


def _empty_parts() -> dict:
    return {p: {"bytes": 0, "tensors": 0} for p in PARTS}


def _as_json(source, what: str) -> dict:
    if isinstance(source, dict):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        try:
            source = bytes(source).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{what}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not isinstance(source, str):
        raise ValueError(f"{what}: expected JSON text, bytes or a dict, got {short_repr(source)}")
    try:
        value = json.loads(source)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ValueError(f"{what}: not valid JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(value, dict):
        raise ValueError(f"{what}: the JSON is a {type(value).__name__}, not an object")
    return value


def _count(value, what: str, limit: int = MAX_TOTAL_BYTES) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what}: expected a whole number, got {short_repr(value)}")
    if value < 0 or value > limit:
        raise ValueError(f"{what}: {value} is out of range (0 to {limit:,})")
    return value


# --- safetensors index ----------------------------------------------------------------------------


def safetensors_index(source, num_hidden_layers: int | None = None) -> dict:
    """model.safetensors.index.json (text, bytes or dict): total_size, shards, tensors per part.

    total_size is None when the index has none or says 0 (some tools write 0: it is not a size).
    """
    index = _as_json(source, "safetensors index")
    weight_map = index.get("weight_map")
    if not isinstance(weight_map, dict) or not weight_map:
        raise ValueError("safetensors index: no weight_map (tensor name -> shard file) in it")
    if len(weight_map) > MAX_TENSORS:
        raise ValueError(f"safetensors index: {len(weight_map):,} tensors, more than the {MAX_TENSORS:,} kvlab reads")
    meta = index.get("metadata") or {}
    if not isinstance(meta, dict):
        raise ValueError("safetensors index: metadata is not an object")
    notes = []
    total = meta.get("total_size")
    if total is not None:
        if isinstance(total, float) and total.is_integer():
            total = int(total)
        total = _count(total, "safetensors index metadata.total_size")
        if total == 0:
            notes.append("the index says total_size 0: the tool that wrote it did not count; not used")
            total = None
    else:
        notes.append("the index has no metadata.total_size")
    parts = {p: {"bytes": None, "tensors": 0} for p in PARTS}
    shards = set()
    for name, shard in weight_map.items():
        if not isinstance(shard, str):
            raise ValueError(
                f"safetensors index: tensor {short_repr(name)} maps to {short_repr(shard)}, not a file name"
            )
        shards.add(shard)
        parts[tensor_part(name, num_hidden_layers)]["tensors"] += 1
    params = meta.get("total_parameters")
    return {
        "total_size": total,
        "total_parameters": params if isinstance(params, int) and not isinstance(params, bool) else None,
        "tensors": len(weight_map),
        "shards": sorted(shards),
        "parts": parts,
        "notes": notes,
    }


# --- safetensors header ---------------------------------------------------------------------------


def safetensors_header_length(prefix: bytes) -> int:
    """N from a shard's first 8 bytes (little-endian u64): the length of the JSON header after them."""
    if len(prefix) < 8:
        raise ValueError(f"safetensors header: {len(prefix)} bytes, fewer than the 8 that give its length")
    (n,) = struct.unpack("<Q", bytes(prefix[:8]))
    if n == 0:
        raise ValueError("safetensors header: the length field says 0 bytes of header")
    if n > MAX_SAFETENSORS_HEADER:
        raise ValueError(
            f"safetensors header: the length field says {n:,} bytes, more than the "
            f"{MAX_SAFETENSORS_HEADER:,} a safetensors header may have (not a safetensors file?)"
        )
    return n


def safetensors_header(data, num_hidden_layers: int | None = None, name: str = "shard") -> dict:
    """One shard's header, exactly: bytes per tensor, per part and per dtype.

    `data` is the file's first 8 + N bytes (more is fine: only the header is read). A tensor's
    bytes are its data_offsets end - start (what the shard holds); where that differs from dtype x
    shape (a packed dtype stored as U8, a padded tensor) a note says so and the offsets win.
    """
    data = bytes(data) if isinstance(data, (bytearray, memoryview)) else data
    if not isinstance(data, bytes):
        raise ValueError(f"safetensors header {name}: expected bytes, got {short_repr(data)}")
    n = safetensors_header_length(data)
    if len(data) < 8 + n:
        raise ValueError(
            f"safetensors header {name}: truncated: the length field says {n:,} bytes of JSON, only {len(data) - 8:,} given"
        )
    header = _as_json(data[8 : 8 + n], f"safetensors header {name}")
    parts = _empty_parts()
    dtypes: dict[str, int] = {}
    tensors = {}
    mismatched = []
    total = 0
    end_max = 0
    for tname, info in header.items():
        if tname == "__metadata__":
            continue
        where = f"safetensors header {name}, tensor {short_repr(tname)}"
        if not isinstance(info, dict):
            raise ValueError(f"{where}: not an object with dtype, shape and data_offsets")
        dtype = info.get("dtype")
        if dtype not in SAFETENSORS_BITS:
            raise ValueError(f"{where}: dtype {short_repr(dtype)} unknown; known: {', '.join(SAFETENSORS_BITS)}")
        shape = info.get("shape")
        if not isinstance(shape, list) or len(shape) > 16:
            raise ValueError(f"{where}: shape {short_repr(shape)} is not a list of at most 16 sizes")
        numel = 1
        for dim in shape:
            numel *= _count(dim, f"{where}: shape", limit=MAX_TENSOR_BYTES)
            if numel > MAX_TENSOR_BYTES * 2:
                raise ValueError(f"{where}: shape {short_repr(shape)} is larger than any real tensor")
        expected = math.ceil(numel * SAFETENSORS_BITS[dtype] / 8)
        offsets = info.get("data_offsets")
        if offsets is None:
            nbytes = expected
        else:
            if not isinstance(offsets, list) or len(offsets) != 2:
                raise ValueError(f"{where}: data_offsets {short_repr(offsets)} is not [start, end]")
            start = _count(offsets[0], f"{where}: data_offsets start")
            end = _count(offsets[1], f"{where}: data_offsets end")
            if end < start:
                raise ValueError(f"{where}: data_offsets end {end} before start {start}")
            nbytes = end - start
            end_max = max(end_max, end)
            if nbytes != expected:
                mismatched.append(tname)
        if nbytes > MAX_TENSOR_BYTES:
            raise ValueError(f"{where}: {nbytes:,} bytes, more than any real tensor")
        part = tensor_part(tname, num_hidden_layers)
        parts[part]["bytes"] += nbytes
        parts[part]["tensors"] += 1
        dtypes[dtype] = dtypes.get(dtype, 0) + nbytes
        tensors[tname] = {"dtype": dtype, "shape": shape, "bytes": nbytes, "part": part}
        total += nbytes
        if total > MAX_TOTAL_BYTES:
            raise ValueError(f"safetensors header {name}: its tensors add up past {MAX_TOTAL_BYTES:,} bytes")
    notes = []
    if mismatched:
        notes.append(
            f"{name}: {len(mismatched)} tensor(s) hold other than dtype x shape bytes "
            f"(e.g. {short_repr(mismatched[0])}); counted as stored (data_offsets)"
        )
    meta = header.get("__metadata__")
    return {
        "name": name,
        "header_bytes": 8 + n,
        "bytes": total,
        "data_end": end_max,
        "tensors": tensors,
        "parts": parts,
        "dtypes": dtypes,
        "metadata": meta if isinstance(meta, dict) else {},
        "notes": notes,
    }


# --- GGUF header ----------------------------------------------------------------------------------

# value type -> struct format (GGUF spec, docs/gguf.md gguf_metadata_value_type)
_GGUF_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


class GGUFTruncated(ValueError):
    """The bytes end inside the GGUF header: a caller reading a file may read more and retry."""


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise GGUFTruncated(
                f"gguf header: truncated at byte {self.pos:,} reading {what} ({len(self.data):,} bytes given)"
            )
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str, what: str):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))[0]

    def string(self, what: str) -> str:
        n = self.unpack("<Q", f"{what} length")
        if n > MAX_STRING:
            raise ValueError(f"gguf header: {what} says {n:,} bytes, more than the {MAX_STRING:,} kvlab reads")
        raw = self.take(n, what)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"gguf header: {what} at byte {self.pos - n:,} is not UTF-8") from None

    def value(self, vtype: int, what: str, depth: int = 0):
        if vtype in _GGUF_SCALARS:
            return self.unpack(_GGUF_SCALARS[vtype], what)
        if vtype == _GGUF_STRING:
            return self.string(what)
        if vtype == _GGUF_ARRAY:
            if depth > 2:
                raise ValueError(f"gguf header: {what} nests arrays deeper than kvlab reads")
            etype = self.unpack("<I", f"{what} element type")
            count = self.unpack("<Q", f"{what} length")
            if count > len(self.data) - self.pos:  # every element takes at least one byte
                raise GGUFTruncated(f"gguf header: {what} says {count:,} elements, more than the bytes left")
            if etype in _GGUF_SCALARS and count > KEPT_ARRAY:
                self.take(count * struct.calcsize(_GGUF_SCALARS[etype]), what)
                return {"array_length": count}
            items = [self.value(etype, what, depth + 1) for _ in range(count)]
            return items if count <= KEPT_ARRAY else {"array_length": count}
        raise ValueError(f"gguf header: {what} has value type {vtype}, not a GGUF type (0-12)")


def gguf_header(data, num_hidden_layers: int | None = None) -> dict:
    """A GGUF file's header (its first bytes; more is fine): tensors' bytes by ggml type, and the model.

    Raises GGUFTruncated (a ValueError) when the bytes end inside the header, ValueError naming
    the field for anything else wrong (magic, version, counts, unknown ggml type, a shape that is
    not whole blocks).
    """
    data = bytes(data) if isinstance(data, (bytearray, memoryview)) else data
    if not isinstance(data, bytes):
        raise ValueError(f"gguf header: expected bytes, got {short_repr(data)}")
    r = _Reader(data)
    magic = r.take(4, "magic")
    if magic != b"GGUF":
        raise ValueError(f"gguf header: magic {magic!r}, not b'GGUF' (not a GGUF file)")
    version = r.unpack("<I", "version")
    if version not in (2, 3):
        raise ValueError(f"gguf header: version {version}; kvlab reads GGUF versions 2 and 3")
    n_tensors = r.unpack("<Q", "tensor count")
    n_kv = r.unpack("<Q", "metadata count")
    if n_tensors > MAX_TENSORS:
        raise ValueError(f"gguf header: tensor count {n_tensors:,} is more than the {MAX_TENSORS:,} kvlab reads")
    if n_kv > MAX_KV:
        raise ValueError(f"gguf header: metadata count {n_kv:,} is more than the {MAX_KV:,} kvlab reads")
    meta = {}
    for i in range(n_kv):
        key = r.string(f"metadata key {i}")
        vtype = r.unpack("<I", f"metadata {short_repr(key)} type")
        meta[key] = r.value(vtype, f"metadata {short_repr(key)}")
    arch = meta.get("general.architecture")
    if num_hidden_layers is None and isinstance(arch, str):
        blocks = meta.get(f"{arch}.block_count")
        nextn = meta.get(f"{arch}.nextn_predict_layers")
        if isinstance(blocks, int) and isinstance(nextn, int) and nextn > 0:
            num_hidden_layers = blocks - nextn  # GLM-4.5 GGUFs count the MTP block in block_count
    parts = _empty_parts()
    dtypes: dict[str, int] = {}
    tensors = {}
    total = 0
    for i in range(n_tensors):
        tname = r.string(f"tensor {i} name")
        where = f"gguf header: tensor {short_repr(tname)}"
        n_dims = r.unpack("<I", f"{where} dimension count")
        if n_dims < 1 or n_dims > MAX_DIMS_GGUF:
            raise ValueError(f"{where}: {n_dims} dimensions (ggml allows 1 to {MAX_DIMS_GGUF})")
        dims = [r.unpack("<Q", f"{where} dimension {d}") for d in range(n_dims)]
        ttype = r.unpack("<I", f"{where} type")
        r.unpack("<Q", f"{where} offset")
        if ttype not in GGML_TYPES:
            raise ValueError(f"{where}: ggml type {ttype} unknown (known: {', '.join(str(k) for k in GGML_TYPES)})")
        tname_type, block, block_bytes = GGML_TYPES[ttype]
        numel = 1
        for d in dims:
            numel *= d
            if numel > MAX_TENSOR_BYTES * 2:
                raise ValueError(f"{where}: shape {dims} is larger than any real tensor")
        if dims[0] % block:
            raise ValueError(f"{where}: its rows of {dims[0]} are not whole {tname_type} blocks of {block}")
        nbytes = numel // block * block_bytes
        part = tensor_part(tname, num_hidden_layers, scale_names=False)
        parts[part]["bytes"] += nbytes
        parts[part]["tensors"] += 1
        dtypes[tname_type] = dtypes.get(tname_type, 0) + nbytes
        tensors[tname] = {"dtype": tname_type, "shape": dims, "bytes": nbytes, "part": part}
        total += nbytes
        if total > MAX_TOTAL_BYTES:
            raise ValueError(f"gguf header: its tensors add up past {MAX_TOTAL_BYTES:,} bytes")

    def key(suffix):
        return meta.get(f"{arch}.{suffix}") if isinstance(arch, str) else None

    notes = []
    if isinstance(meta.get("split.count"), int) and meta["split.count"] > 1:
        notes.append(
            f"this file is part {meta.get('split.no', 0) + 1} of {meta['split.count']}: only its own tensors are counted"
        )
    return {
        "version": version,
        "header_bytes": r.pos,
        "bytes": total,
        "tensors": tensors,
        "parts": parts,
        "dtypes": dtypes,
        "model": {
            "architecture": arch,
            "name": meta.get("general.name"),
            "file_type": meta.get("general.file_type"),
            "block_count": key("block_count"),
            "context_length": key("context_length"),
            "embedding_length": key("embedding_length"),
            "head_count": key("attention.head_count"),
            "head_count_kv": key("attention.head_count_kv"),
        },
        "metadata": meta,
        "notes": notes,
    }


# --- the summary ----------------------------------------------------------------------------------


def checkpoint_weights_bytes(
    *,
    index=None,
    safetensors_headers=None,
    gguf=None,
    params: float | None = None,
    fmt: str = "BF16",
    num_hidden_layers: int | None = None,
) -> dict:
    """The bytes a checkpoint stores, as stored, from the best of what is given.

    index                model.safetensors.index.json (text, bytes, dict)
    safetensors_headers  a list of shards' header bytes (each the file's first 8 + N bytes, or more);
                         a dict {shard file name: bytes} lets them be matched against the index
    gguf                 a GGUF file's first bytes (at least its whole header)
    params, fmt          the fallback: params x bits of `fmt` (kvlab.memory.weights)

    Returns {bytes, gib, source, parts {part: {bytes, tensors}}, dtypes {dtype: bytes}, tensors,
    notes, model (GGUF only)}. With only an index, parts carry tensor counts and bytes None: names
    give no sizes.
    """
    notes: list[str] = []
    idx = safetensors_index(index, num_hidden_layers) if index is not None else None
    if idx:
        notes += idx["notes"]
    if safetensors_headers:
        items = (
            list(safetensors_headers.items())
            if isinstance(safetensors_headers, dict)
            else [(f"shard {i + 1}", h) for i, h in enumerate(safetensors_headers)]
        )
        if len(items) > MAX_SHARDS:
            raise ValueError(f"safetensors headers: {len(items):,} shards, more than the {MAX_SHARDS:,} kvlab reads")
        parts, dtypes, count, total = _empty_parts(), {}, 0, 0
        seen = set()
        for shard, raw in items:
            h = safetensors_header(raw, num_hidden_layers, name=str(shard))
            notes += h["notes"]
            for p, v in h["parts"].items():
                parts[p]["bytes"] += v["bytes"]
                parts[p]["tensors"] += v["tensors"]
            for d, b in h["dtypes"].items():
                dtypes[d] = dtypes.get(d, 0) + b
            dup = seen & h["tensors"].keys()
            if dup:
                raise ValueError(f"safetensors headers: tensor {short_repr(next(iter(dup)))} is in two shards")
            seen |= h["tensors"].keys()
            count += len(h["tensors"])
            total += h["bytes"]
        if idx:
            missing = len(idx["shards"]) - len(items)
            if isinstance(safetensors_headers, dict):
                missing = len(set(idx["shards"]) - set(safetensors_headers))
            if missing > 0:
                notes.append(
                    f"headers of {len(items)} of the index's {len(idx['shards'])} shards: the total is partial"
                )
            elif idx["total_size"] is not None and idx["total_size"] != total:
                notes.append(f"the index says total_size {idx['total_size']:,}; the headers add up to {total:,}")
        return _result(total, "safetensors headers", parts, dtypes, count, notes)
    if gguf is not None:
        g = gguf_header(gguf, num_hidden_layers)
        out = _result(g["bytes"], "gguf header", g["parts"], g["dtypes"], len(g["tensors"]), notes + g["notes"])
        out["model"] = g["model"]
        return out
    if idx and idx["total_size"] is not None:
        notes.append(
            "from the index alone: the total is the index's total_size; parts are counted by tensor name "
            "only (their bytes are unknown without the shards' headers)"
        )
        return _result(idx["total_size"], "safetensors index total_size", idx["parts"], {}, idx["tensors"], notes)
    if params is not None:
        w = weights_bytes(params, fmt)
        notes.append(
            f"no checkpoint header or index size: {w['params']:.4g} params x {w['bits_per_weight']:g} bits "
            f"({w['format']}: {w['source']}); quantized checkpoints store more (BF16 embeddings, scales)"
        )
        parts = idx["parts"] if idx else {p: {"bytes": None, "tensors": 0} for p in PARTS}
        return _result(w["bytes"], "params x bits (fallback)", parts, {}, idx["tensors"] if idx else 0, notes)
    raise ValueError(
        "checkpoint weights: nothing to count: give safetensors headers, a GGUF header, an index with "
        "metadata.total_size, or params for the params x bits fallback" + (f" ({'; '.join(notes)})" if notes else "")
    )


def _result(total: int, source: str, parts: dict, dtypes: dict, tensors: int, notes: list[str]) -> dict:
    return {
        "bytes": int(total),
        "gib": total / GIB,
        "source": source,
        "parts": parts,
        "dtypes": dict(sorted(dtypes.items(), key=lambda kv: -kv[1])),
        "tensors": tensors,
        "notes": notes,
    }


# --- local files (the command line; the core above never opens a file) ----------------------------


def _read_prefix(path: str, n: int, what: str) -> bytes:
    """Up to the first `n` bytes of the regular file at `path` (never more)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ValueError(f"{what} {short_repr(path, 200)}: cannot be read ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{what} {short_repr(path, 200)}: not a regular file")
    with open(path, "rb") as f:
        return f.read(n)


def _lfs_pointer(prefix: bytes) -> bool:
    return prefix.startswith(b"version https://git-lfs")


def _shard_header(path: str) -> tuple[bytes, int]:
    """A shard's header bytes (8 + N) and the file's size; a Git LFS pointer is refused by name."""
    first = _read_prefix(path, 32, "safetensors shard")
    if _lfs_pointer(first):
        raise ValueError(f"safetensors shard {short_repr(path, 200)}: a Git LFS pointer, not the shard's data")
    n = safetensors_header_length(first)
    data = _read_prefix(path, 8 + n, "safetensors shard")
    if len(data) < 8 + n:
        raise ValueError(f"safetensors shard {short_repr(path, 200)}: the file ends inside its header")
    return data, os.stat(path).st_size


def _config_layers(directory: str) -> int | None:
    path = os.path.join(directory, "config.json")
    if not os.path.isfile(path):
        return None
    try:
        cfg = _as_json(read_file_bytes(path, MAX_CONFIG_BYTES, "config"), "config.json")
    except ValueError:
        return None
    text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
    n = text.get("num_hidden_layers") or cfg.get("num_hidden_layers")
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def read_gguf_file(path: str, num_hidden_layers: int | None = None) -> dict:
    """A .gguf file's header: read 8 MiB, then twice as much while the header runs on (up to 256 MiB)."""
    size = 8 * 2**20
    while True:
        data = _read_prefix(path, size, "gguf file")
        try:
            return gguf_header(data, num_hidden_layers)
        except GGUFTruncated:
            if len(data) < size or size >= MAX_GGUF_HEADER:
                raise
            size *= 2


def read_checkpoint_dir(path: str) -> dict:
    """Weights as stored for a local checkpoint: a directory (index + shards' headers) or a .gguf file."""
    path = os.path.expanduser(str(path))
    if os.path.isfile(path) and path.lower().endswith(".gguf"):
        g = read_gguf_file(path)
        out = _result(g["bytes"], "gguf header", g["parts"], g["dtypes"], len(g["tensors"]), g["notes"])
        out["model"] = g["model"]
        return out
    if not os.path.isdir(path):
        raise ValueError(f"checkpoint {short_repr(path, 200)}: neither a directory nor a .gguf file")
    layers = _config_layers(path)
    index_path = os.path.join(path, "model.safetensors.index.json")
    index = read_file_bytes(index_path, MAX_INDEX_BYTES, "safetensors index") if os.path.isfile(index_path) else None
    if index is not None:
        shards = safetensors_index(index, layers)["shards"]
    else:
        shards = sorted(f for f in os.listdir(path) if f.endswith(".safetensors"))
        if not shards:
            ggufs = sorted(f for f in os.listdir(path) if f.lower().endswith(".gguf"))
            if len(ggufs) == 1:
                return read_checkpoint_dir(os.path.join(path, ggufs[0]))
            raise ValueError(f"checkpoint {short_repr(path, 200)}: no model.safetensors.index.json, no .safetensors")
    if len(shards) > MAX_SHARDS:
        raise ValueError(f"checkpoint {short_repr(path, 200)}: {len(shards):,} shards, more than kvlab reads")
    headers, problems, short = {}, [], []
    for shard in shards:
        if os.path.basename(shard) != shard:
            problems.append(f"{short_repr(shard)}: a shard name with a folder in it; not read")
            continue
        try:
            headers[shard], size = _shard_header(os.path.join(path, shard))
            if safetensors_header(headers[shard], layers, shard)["data_end"] + len(headers[shard]) > size:
                short.append(shard)
        except ValueError as exc:
            problems.append(str(exc))
    if problems and index is not None:
        out = checkpoint_weights_bytes(index=index, num_hidden_layers=layers)
        out["notes"] = [f"shard headers not read ({len(problems)} of {len(shards)}): {problems[0]}"] + out["notes"]
        return out
    if problems:
        raise ValueError(problems[0])
    out = checkpoint_weights_bytes(index=index, safetensors_headers=headers, num_hidden_layers=layers)
    if short:
        out["notes"].append(
            f"{len(short)} shard file(s) shorter than their headers say (a partial download?): {short[0]}"
        )
    return out


# --- the Hugging Face Hub (the command line, when online; the site never calls this) -------------

HUB_URL = "https://huggingface.co"  # KVLAB_HUB_URL overrides it (tests serve a local copy)
HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}$")
HUB_TIMEOUT_S = 15


def is_hub_id(text: str) -> bool:
    """ "org/name" that is not a local path."""
    return bool(HUB_ID.match(text)) and not os.path.exists(os.path.expanduser(text))


def _hub_get(url: str, limit: int, what: str, byte_range: tuple[int, int] | None = None) -> bytes | None:
    """GET `url` (at most `limit` bytes); None for a 404; a ValueError that says what to do otherwise."""
    import urllib.error
    import urllib.request

    headers = {"User-Agent": "kvlab"}
    if byte_range:
        headers["Range"] = f"bytes={byte_range[0]}-{byte_range[1]}"
    token = os.environ.get("HF_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=HUB_TIMEOUT_S) as r:
            data = r.read(limit + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        if exc.code in (401, 403):
            raise ValueError(
                f"{what}: the Hub says {exc.code} (a gated or private repository): accept its licence and set "
                "HF_TOKEN, or download config.json and model.safetensors.index.json and give their directory"
            ) from None
        raise ValueError(f"{what}: the Hub answered {exc.code}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ValueError(
            f"{what}: the Hub cannot be reached ({short_repr(str(reason), 80)}); offline, give a local directory "
            "with config.json and model.safetensors.index.json instead"
        ) from None
    if len(data) > limit:
        raise ValueError(f"{what}: more than {limit:,} bytes; kvlab reads at most that")
    return data


def hub_plan(repo: str) -> dict:
    """The two files a page fetches from the Hub for a model id (the hosted site; the CLI uses read_hub_checkpoint).

    >>> hub_plan(" Qwen/Qwen3-8B ")["config_url"]
    'https://huggingface.co/Qwen/Qwen3-8B/resolve/main/config.json'
    """
    repo = str(repo).strip()
    if not HUB_ID.match(repo):
        raise ValueError(f"model id {short_repr(repo, 80)}: write it as org/name, as the Hub does (e.g. Qwen/Qwen3-8B)")
    base = f"{HUB_URL}/{repo}/resolve/main"
    return {
        "repo": repo,
        "config_url": f"{base}/config.json",
        "index_url": f"{base}/model.safetensors.index.json",
        "page_url": f"{HUB_URL}/{repo}",
    }


def read_hub_checkpoint(repo_id: str, revision: str = "main") -> dict:
    """Weights as stored for a Hub repository, read without downloading any weights: its config.json (the
    layer count), its model.safetensors.index.json (total_size and tensor names), or for a single-file
    model the header of model.safetensors (two ranged requests: its length, then the header)."""
    if not HUB_ID.match(repo_id):
        raise ValueError(f"checkpoint {short_repr(repo_id)}: not a Hub id (org/name) or a local path")
    base = f"{os.environ.get('KVLAB_HUB_URL', HUB_URL).rstrip('/')}/{repo_id}/resolve/{revision}"
    config = _hub_get(f"{base}/config.json", MAX_CONFIG_BYTES, f"{repo_id} config.json")
    layers = None
    if config is not None:
        cfg = _as_json(config, "config.json")
        text = cfg.get("text_config") if isinstance(cfg.get("text_config"), dict) else cfg
        n = text.get("num_hidden_layers") or cfg.get("num_hidden_layers")
        layers = n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None
    index = _hub_get(f"{base}/model.safetensors.index.json", MAX_INDEX_BYTES, f"{repo_id} safetensors index")
    if index is not None:
        out = checkpoint_weights_bytes(index=index, num_hidden_layers=layers)
    else:
        first = _hub_get(f"{base}/model.safetensors", 8, f"{repo_id} model.safetensors", (0, 7))
        if first is None:
            raise ValueError(f"{repo_id}: no model.safetensors.index.json and no model.safetensors on the Hub")
        n = safetensors_header_length(first)
        header = _hub_get(f"{base}/model.safetensors", 8 + n, f"{repo_id} model.safetensors", (0, 7 + n))
        out = checkpoint_weights_bytes(safetensors_headers={"model.safetensors": header}, num_hidden_layers=layers)
    out["notes"] = [f"read from {base}"] + out["notes"]
    return out
