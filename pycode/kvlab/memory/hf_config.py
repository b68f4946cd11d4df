"""Read a Hugging Face config.json into an `Architecture`.

Accepts a path, a dict, or pasted JSON text. Families handled (by model_type):
llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, phi3 (standard
attention, maybe one sliding window); gemma2, gemma3, gemma3_text, gpt_oss
(interleaved sliding/full); gemma4, gemma4_text (interleaved, the full layers wider); qwen3_next, qwen3_5, qwen3_5_text, qwen3_5_moe
(Gated DeltaNet + full attention hybrids); deepseek_v2, deepseek_v3 (MLA);
jamba, nemotron_h, granitemoehybrid (Mamba + attention hybrids: each layer is
attention or Mamba, plus Nemotron-H's MLP-only layers that cache nothing);
falcon_h1 (attention and a Mamba-2 mixer side by side in every layer); mamba,
falcon_mamba, mamba2 (no attention: every layer a Mamba state).
Falcon and GPT-BigCode (`n_layer`, `n_head`, `multi_query`) are read too.
Multimodal configs that nest the language model in `text_config` (Gemma 3,
Qwen3.5/3.6, LLaVA) are read from there, with a note that the vision encoder
is not counted. Any other model_type is refused with a message that says
what is missing (Zamba, Bamba and LFM2 by name, with the piece kvlab lacks
for each): never a silent guess.

A missing or contradictory field is a ValueError that names the field; the
reader never fills in a number of its own. The one derived value is head_dim
= hidden_size / num_attention_heads when a config has no head_dim (that is
how transformers defines it for these families), and it is recorded in notes.

>>> arch = parse_hf_config('{"model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,'
...                        ' "num_attention_heads": 32, "num_key_value_heads": 8}')
>>> arch.attention, arch.layers[0].k_values
('gqa', 1024)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from kvlab.input_files import read_text
from kvlab.inputs import short_repr

from kvlab.memory.architecture import (
    CHUNKED,
    FULL,
    LINEAR,
    NONE,
    SLIDING,
    Architecture,
    attention_layer,
    linear_layer,
    mamba_layer,
    mla_layer,
    no_cache_layer,
    parallel_hybrid_layer,
)

# olmo2, cohere (Command-R), smollm3, glm4_moe (GLM-4.5) and minimax_m2: every layer full attention
# (transformers modeling_olmo2 / modeling_cohere / modeling_smollm3 / modeling_glm4_moe and vLLM's
# minimax_m2.py build one standard K/V attention per layer; SmolLM3's NoPE layers and GLM-4.5's partial
# RoPE change positions, not the cache)
STANDARD = (
    "llama",
    "mistral",
    "mixtral",
    "qwen2",
    "qwen2_moe",
    "qwen3",
    "qwen3_moe",
    "phi3",
    "olmo2",
    "cohere",
    "smollm3",
    "glm4_moe",
    "minimax_m2",
)
INTERLEAVED = ("gemma2", "gemma3", "gemma3_text", "gpt_oss", "gemma3n", "gemma3n_text")
GEMMA4 = ("gemma4", "gemma4_text")  # sliding and full layers of different widths (head_dim / global_head_dim)
CHUNKED_FAMILIES = ("llama4", "llama4_text")  # Llama-4: chunked local attention on the RoPE layers, full on NoPE
HYBRID = ("qwen3_next", "qwen3_5", "qwen3_5_text", "qwen3_5_moe", "qwen3_5_moe_text")
MLA = ("deepseek_v2", "deepseek_v3", "deepseek_v32")  # deepseek_v32: MLA + the DSA indexer's key cache
KDA_HYBRID = ("kimi_linear",)  # Kimi-Linear: Kimi Delta Attention (linear) layers + MLA full layers
MULTI_QUERY = ("falcon", "gpt_bigcode")  # n_layer / n_head names; multi_query: true = one KV head
MAMBA_HYBRID = ("jamba", "nemotron_h", "granitemoehybrid")  # each layer attention, Mamba or (Nemotron-H) MLP only
PARALLEL_HYBRID = ("falcon_h1",)  # attention and a Mamba-2 mixer in every layer
PURE_MAMBA = ("mamba", "falcon_mamba", "mamba2")  # no attention at all
KNOWN_FAMILIES = (
    STANDARD
    + INTERLEAVED
    + GEMMA4
    + CHUNKED_FAMILIES
    + HYBRID
    + MLA
    + KDA_HYBRID
    + MULTI_QUERY
    + MAMBA_HYBRID
    + PARALLEL_HYBRID
    + PURE_MAMBA
)
# State-space families kvlab still refuses, each with the piece it lacks (never a guess).
STATE_SPACE = {
    "zamba": ("Zamba", "its shared attention block and how llama.cpp would cache it are not read by kvlab"),
    "zamba2": ("Zamba2", "its shared attention blocks and how llama.cpp would cache them are not read by kvlab"),
    "bamba": ("Bamba", "kvlab has not checked its config fields against a real Bamba config"),
    "lfm2": ("LFM2", "its short-convolution layers (llama.cpp n_shortconv_l_cache) are not read by kvlab"),
}
# Older or GPT-2 style names for the fields kvlab reads (transformers maps them the same way).
FIELD_ALIASES = {
    "num_hidden_layers": ("n_layer",),
    "num_attention_heads": ("n_head",),
    "hidden_size": ("n_embd",),
    "max_position_embeddings": ("n_positions",),
}
LAYER_TYPE_NAMES = {
    "full_attention": FULL,
    "sliding_attention": SLIDING,
    "linear_attention": LINEAR,
    "chunked_attention": CHUNKED,  # transformers' Llama-4 layer_types
}


MAX_CONFIG_BYTES = 256 * 1024  # a config.json is a few KB; the site takes pastes up to 256 KiB (bridge.js LIMITS)


def load_config(source) -> dict:
    """A config as a dict, from a dict, a path to config.json (or its folder), or JSON text.

    A file is read by kvlab.input_files (a regular file, at most MAX_CONFIG_BYTES, UTF-8 with or
    without a byte-order mark); pasted text is held to the same size."""
    if isinstance(source, dict):
        return source
    if isinstance(source, Path):
        return _json(read_text(source, MAX_CONFIG_BYTES, "config"), str(source))
    if isinstance(source, str):
        text = source.strip().lstrip("\ufeff")  # a byte-order mark pasted with the text
        if text.startswith("{"):
            if len(text) > MAX_CONFIG_BYTES:
                raise ValueError(f"config: the pasted config is {len(text):,} characters; at most {MAX_CONFIG_BYTES:,}")
            return _json(text, "pasted config")
        path = os.path.join(text, "config.json") if os.path.isdir(text) else text
        if not os.path.lexists(path):
            raise ValueError(f"config: {short_repr(text)} is neither JSON text nor an existing file")
        return _json(read_text(path, MAX_CONFIG_BYTES, "config"), path)
    raise ValueError(f"config: expected a dict, a path or JSON text, got {type(source).__name__}")


def _json(text: str, where: str) -> dict:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"config: {where} is not valid JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise ValueError(f"config: {where} is nested too deeply to be a config.json (a few levels is usual)") from None
    if not isinstance(data, dict):
        raise ValueError(f"config: {where} must be a JSON object")
    return data


# The largest value each field may take: far above any real model, low enough that no
# arithmetic downstream overflows (1e30 layers is a message, not a traceback).
FIELD_MAX = {
    "num_hidden_layers": 10_000,
    "num_attention_heads": 100_000,
    "num_key_value_heads": 100_000,
    "hidden_size": 1 << 20,
    "head_dim": 1 << 16,
    "intermediate_size": 1 << 24,
}
DEFAULT_MAX = 1 << 32


def _int(cfg: dict, key: str, minimum: int = 1) -> int:
    if key not in cfg or cfg[key] is None:
        raise ValueError(f"config field {key!r} is missing")
    value = cfg[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"config field {key!r} must be an integer, got {short_repr(value)}")
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"config field {key!r} must be a finite integer, got {short_repr(value)}")
    if int(value) != value:
        raise ValueError(f"config field {key!r} must be an integer, got {short_repr(value)}")
    if value < minimum:
        raise ValueError(f"config field {key!r} must be >= {minimum}, got {short_repr(value)}")
    top = FIELD_MAX.get(key, DEFAULT_MAX)
    if value > top:
        raise ValueError(f"config field {key!r} = {short_repr(value)} is beyond any real model (at most {top:,})")
    return int(value)


def _tied(cfg: dict, raw: dict) -> bool | None:
    """tie_word_embeddings as the config states it (the text config's, else the top level's); None if neither says."""
    for c in (cfg, raw):
        value = c.get("tie_word_embeddings") if isinstance(c, dict) else None
        if isinstance(value, bool):
            return value
    return None


def _vision_language(raw: dict) -> bool:
    """A vision-language wrapper: its language model in text_config, beside a vision_config or under a
    *ForConditionalGeneration architecture (the catalogue keeps the text_config and the architecture only)."""
    if not isinstance(raw.get("text_config"), dict):
        return False
    names = raw.get("architectures") or []
    return isinstance(raw.get("vision_config"), dict) or any(str(n).endswith("ForConditionalGeneration") for n in names)


# The Qwen3-VL image processor's largest image: longest_edge 16,777,216 pixels, 16 x 16 patches, so 65,536 patches
# (16,384 tokens after its 2 x 2 merge): vLLM logs "Encoder cache will be initialized with a budget of 16384 tokens,
# and profiled with 1 image items of the maximum feature size" for Qwen3.6-35B-A3B
# (tests/python/data/engine_logs/calibration/vllm_qwen36_35b_a3b_nvfp4_gb10_mtp3_v0251.txt)
QWEN3_VL_MAX_PIXELS = 16_777_216
QWEN3_VL_WRAPPERS = ("qwen3_5", "qwen3_5_moe", "qwen3_vl", "qwen3_vl_moe")


def _vision_tower(raw: dict, notes: list[str]) -> tuple[tuple[int, int, int] | None, int]:
    """A Qwen3-VL-family vision tower, from the config's vision_config: (hidden_size, intermediate_size, patches of
    the largest image), and its blocks' weights, depth x (attention 4 hidden^2 + MLP 2 hidden x intermediate) (0
    when the config does not give the depth); (None, 0) for other towers (their largest image is not read here)."""
    vision = raw.get("vision_config")
    if not isinstance(vision, dict) or raw.get("model_type") not in QWEN3_VL_WRAPPERS:
        return None, 0
    try:
        hidden, inter, patch = (_int(vision, k) for k in ("hidden_size", "intermediate_size", "patch_size"))
    except ValueError:
        return None, 0
    patches = QWEN3_VL_MAX_PIXELS // (patch * patch)
    notes.append(
        f"vision tower: hidden {hidden:,}, MLP {inter:,}; its largest image is {patches:,} patches of {patch} x "
        f"{patch} ({QWEN3_VL_MAX_PIXELS:,} pixels, the Qwen3-VL processor's longest_edge)"
    )
    depth = _opt_int(vision, "depth") or 0
    return (hidden, inter, patches), depth * (4 * hidden * hidden + 2 * hidden * inter)


def _opt_int(cfg: dict, key: str) -> int | None:
    return None if cfg.get(key) is None else _int(cfg, key)


def _text_config(cfg: dict) -> tuple[dict, list[str]]:
    """Multimodal wrappers (Gemma 3, Qwen3.5/3.6, LLaVA) keep the language model in text_config."""
    inner = cfg.get("text_config")
    if isinstance(inner, dict) and "num_hidden_layers" not in cfg:
        merged = dict(inner)
        if "model_type" not in merged and "model_type" in cfg:
            merged["model_type"] = cfg["model_type"]
        notes = [f"read text_config of the {cfg.get('model_type', 'multimodal')} wrapper"]
        if isinstance(cfg.get("vision_config"), dict) or "vision" in str(cfg.get("model_type", "")):
            notes.append(
                "vision-language model: only the language model's cache is counted here; the vision "
                "encoder's weights are not in kvlab's parameter count unless the catalogue says so, and "
                "image tokens take cache like any other token"
            )
        return merged, notes
    return cfg, []


def _aliases(cfg: dict) -> dict:
    """Falcon / GPT-2 style names (n_layer, n_head, n_embd) as the names kvlab reads."""
    out = dict(cfg)
    for key, names in FIELD_ALIASES.items():
        if out.get(key) is None:
            for name in names:
                if out.get(name) is not None:
                    out[key] = out[name]
                    break
    return out


def _layer_kinds_from_types(cfg: dict, n_layers: int) -> list[str]:
    types = cfg["layer_types"]
    if not isinstance(types, list) or len(types) != n_layers:
        got = len(types) if isinstance(types, list) else type(types).__name__
        raise ValueError(f"config field 'layer_types' has {got} entries but num_hidden_layers is {n_layers}")
    kinds = []
    for i, name in enumerate(types):
        if name not in LAYER_TYPE_NAMES:
            raise ValueError(
                f"config field 'layer_types'[{i}] = {short_repr(name)} is not one of {sorted(LAYER_TYPE_NAMES)}"
            )
        kinds.append(LAYER_TYPE_NAMES[name])
    return kinds


def _layer_kinds(cfg: dict, family: str, n_layers: int, notes: list[str]) -> list[str]:
    """Which layers are full, sliding or linear, per the family's rule in transformers."""
    if cfg.get("layer_types") is not None:
        return _layer_kinds_from_types(cfg, n_layers)
    if family in HYBRID:
        interval = _int(cfg, "full_attention_interval")
        notes.append(
            f"one layer in {interval} is full attention (the last of every {interval}), the others linear "
            f"(full_attention_interval = {interval})"
        )
        return [FULL if (i + 1) % interval == 0 else LINEAR for i in range(n_layers)]
    if family == "gemma2":
        notes.append("Gemma 2: even layers sliding, odd layers full (transformers Gemma2)")
        return [SLIDING if i % 2 == 0 else FULL for i in range(n_layers)]
    if family in ("gemma3", "gemma3_text"):
        if cfg.get("sliding_window_pattern") is None:
            raise ValueError(
                "config fields 'layer_types' and 'sliding_window_pattern' are both missing "
                "(Gemma 3 needs one to know which layers slide)"
            )
        pattern = _int(cfg, "sliding_window_pattern")
        notes.append(
            f"one layer in {pattern} is full attention (the last of every {pattern}), the others slide "
            f"(sliding_window_pattern = {pattern})"
        )
        return [FULL if (i + 1) % pattern == 0 else SLIDING for i in range(n_layers)]
    if family == "gpt_oss":
        raise ValueError("config field 'layer_types' is missing (gpt-oss alternates sliding/full by layer_types)")
    if family in ("gemma3n", "gemma3n_text"):
        raise ValueError("config field 'layer_types' is missing (gemma-3n lists its sliding and full layers there)")
    if family in CHUNKED_FAMILIES:
        return _llama4_kinds(cfg, n_layers, notes)
    if family in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe"):
        if cfg.get("use_sliding_window"):
            start = _int(cfg, "max_window_layers", minimum=0)
            notes.append(
                f"layers {start} and up slide, counting from 0 (use_sliding_window, max_window_layers = {start})"
            )
            return [SLIDING if i >= start else FULL for i in range(n_layers)]
        if cfg.get("sliding_window") is not None:
            notes.append("sliding_window ignored: use_sliding_window is false")
        return [FULL] * n_layers
    if family in ("mistral", "mixtral", "phi3") and cfg.get("sliding_window") is not None:
        notes.append(f"{family}: sliding_window set, so every layer slides (transformers semantics)")
        return [SLIDING] * n_layers
    return [FULL] * n_layers


def _llama4_kinds(cfg: dict, n_layers: int, notes: list[str]) -> list[str]:
    """Llama-4: the RoPE layers attend within chunks of attention_chunk_size, the NoPE layers to everything.

    transformers Llama4TextConfig: no_rope_layers[i] = 1 for a RoPE layer, 0 for NoPE; an empty or missing
    list defaults to int((i + 1) % no_rope_layer_interval != 0), no_rope_layer_interval = 4
    (https://github.com/huggingface/transformers/blob/main/src/transformers/models/llama4/configuration_llama4.py);
    vLLM's llama4.py uses chunked local attention where the layer is not NoPE and attention_chunk_size is set.
    """
    flags = cfg.get("no_rope_layers")
    if isinstance(flags, list) and flags:
        if len(flags) != n_layers or any(f not in (0, 1) for f in flags):
            raise ValueError(
                f"config field 'no_rope_layers' must list 0 or 1 for each of the {n_layers} layers, got {short_repr(flags)}"
            )
        where = "no_rope_layers"
    else:
        interval = _int(cfg, "no_rope_layer_interval") if cfg.get("no_rope_layer_interval") is not None else 4
        flags = [int((i + 1) % interval != 0) for i in range(n_layers)]
        where = f"no_rope_layer_interval = {interval} (transformers' default when no_rope_layers is empty)"
    chunk = _opt_int(cfg, "attention_chunk_size")
    if chunk is None:
        notes.append("Llama-4 without attention_chunk_size: every layer is full attention")
        return [FULL] * n_layers
    kinds = [CHUNKED if flag else FULL for flag in flags]
    notes.append(
        f"Llama-4: {kinds.count(CHUNKED)} RoPE layers attend within chunks of attention_chunk_size = {chunk:,} "
        f"tokens, {kinds.count(FULL)} NoPE layers attend to every token ({where})"
    )
    return kinds


# vLLM's derived max_model_len (vllm/config/model.py _get_and_verify_max_len,
# https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py): the smallest of these keys,
# then model_max_length overrides it (Command-R), then the RoPE scaling factor multiplies it.
CONTEXT_KEYS = (
    "max_position_embeddings",
    "n_positions",
    "max_seq_len",
    "seq_length",
    "model_max_length",
    "max_target_positions",
    "max_sequence_length",
    "max_seq_length",
    "seq_len",
)
ROPE_TYPES_NOT_SCALED = ("su", "longrope", "llama3")  # their max_position_embeddings is already the scaled length


def _context_limit(cfg: dict, family: str, notes: list[str]) -> int | None:
    """The longest context vLLM accepts for this config (its derived max_model_len), with a note when
    rope_scaling or model_max_length makes it differ from max_position_embeddings."""
    found = {key: _int(cfg, key) for key in CONTEXT_KEYS if cfg.get(key) is not None}
    if not found:
        notes.append(
            "the config gives no maximum context (max_position_embeddings or the like): no context is "
            "taken as too long for the model"
        )
        return None
    key = min(found, key=lambda k: found[k])
    limit = found[key]
    if found.get("model_max_length"):
        key, limit = "model_max_length", found["model_max_length"]
    base = limit
    rope = cfg.get("rope_parameters") or cfg.get("rope_scaling")
    if isinstance(rope, dict) and rope and "gemma3" not in family:
        # transformers v5 may key rope_parameters by layer type; vLLM then uses every entry's factor
        layered = all(isinstance(v, dict) for v in rope.values())
        entries = list(rope.values()) if layered else [rope]
        factor, how = 1.0, None
        for rp in entries:
            rope_type = str(rp.get("rope_type") or rp.get("type") or "default")
            if rope_type in ROPE_TYPES_NOT_SCALED or rp.get("factor") is None:
                continue
            if not isinstance(rp["factor"], (int, float)) or isinstance(rp["factor"], bool) or rp["factor"] <= 0:
                raise ValueError(
                    f"config field 'rope_scaling.factor' must be a positive number, got {short_repr(rp['factor'])}"
                )
            factor = float(rp["factor"])
            how = rope_type
            if rope_type == "yarn":
                if rp.get("original_max_position_embeddings") is None:
                    raise ValueError(
                        "config field 'rope_scaling.original_max_position_embeddings' is missing (YaRN scales it)"
                    )
                base = _int(rp, "original_max_position_embeddings")
                key = "original_max_position_embeddings"
        if how is not None:
            limit = int(base * factor)
            notes.append(
                f"context limit {limit:,} = {key} {base:,} x rope_scaling factor {factor:g} ({how}), as vLLM "
                "derives max_model_len (vllm/config/model.py _get_and_verify_max_len)"
                + (
                    f"; the config's max_position_embeddings is {found['max_position_embeddings']:,}"
                    if found.get("max_position_embeddings") not in (None, limit)
                    else ""
                )
            )
            return limit
    if key != "max_position_embeddings" and found.get("max_position_embeddings") not in (None, limit):
        notes.append(
            f"context limit {limit:,} from {key} (vLLM's max_model_len rule), not max_position_embeddings "
            f"{found['max_position_embeddings']:,}"
        )
    return limit


@dataclass
class ConfigContext:
    """What every family reader starts from: the config (aliases applied), its family and name, the layer count,
    the notes said so far, and the parameter counts the caller gave; `build` makes the Architecture."""

    cfg: dict
    raw: dict
    family: str
    name: str | None
    n_layers: int
    notes: list[str]
    params: float | None
    active_params: float | None

    @property
    def label(self) -> str:
        return self.name or self.raw.get("_name_or_path") or self.family

    @property
    def n_heads(self) -> int:
        return _int(self.cfg, "num_attention_heads")

    @property
    def hidden(self) -> int:
        return _int(self.cfg, "hidden_size")

    def build(self, layers: tuple, attention: str, n_heads: int, hidden: int, **extra) -> Architecture:
        """The Architecture, with the fields every family fills the same way."""
        tower = _vision_tower(self.raw, self.notes)
        return Architecture(
            name=self.label,
            family=self.family,
            layers=layers,
            n_heads=n_heads,
            hidden_size=hidden,
            attention=attention,
            vocab_size=_opt_int(self.cfg, "vocab_size"),
            tied_embeddings=_tied(self.cfg, self.raw),
            intermediate_size=extra.pop("intermediate_size", _opt_int(self.cfg, "intermediate_size")),
            max_position_embeddings=_context_limit(self.cfg, self.family, self.notes),
            params=self.params,
            active_params=self.active_params,
            source=str(self.raw.get("_source", "")),
            notes=tuple(self.notes),
            # MTP draft layers (Qwen3.5/3.6, Qwen3-Next: mtp_num_hidden_layers; DeepSeek-V3, GLM-4.5: num_nextn_predict_layers)
            draft_layers=_opt_int(self.cfg, "mtp_num_hidden_layers")
            or _opt_int(self.cfg, "num_nextn_predict_layers")
            or 0,
            vision=_vision_language(self.raw),
            vision_encoder=tower[0],
            vision_block_params=tower[1],
            **extra,
        )


def parse_hf_config(
    source, name: str | None = None, params: float | None = None, active_params: float | None = None
) -> Architecture:
    """An Architecture from a Hugging Face config (path, dict or JSON text)."""
    raw = load_config(source)
    cfg, notes = _text_config(raw)
    family = str(cfg.get("model_type") or raw.get("model_type") or "")
    if not family:
        raise ValueError("config field 'model_type' is missing")
    if family in STATE_SPACE:
        title, missing = STATE_SPACE[family]
        raise ValueError(
            f"config: model_type {short_repr(family)} ({title}) is not read yet: {missing}; its numbers would be "
            "guesses, so none are given"
        )
    if family not in KNOWN_FAMILIES:
        raise ValueError(
            f"config: model_type {short_repr(family)} is not one kvlab reads yet: kvlab has not checked this family's "
            "code (transformers, vLLM, llama.cpp) for which of its layers keep a KV cache and how wide, so "
            "it gives no numbers; known: " + ", ".join(KNOWN_FAMILIES)
        )
    cfg = _aliases(cfg)
    ctx = ConfigContext(cfg, raw, family, name, _int(cfg, "num_hidden_layers"), notes, params, active_params)
    return READERS.get(family, _parse_attention)(ctx)


def _parse_attention(ctx: ConfigContext) -> Architecture:
    """Every family whose layers are attention (full, sliding, chunked), maybe beside linear or Mamba layers."""
    cfg, family, n_layers, notes = ctx.cfg, ctx.family, ctx.n_layers, ctx.notes
    n_heads, hidden = ctx.n_heads, ctx.hidden
    if cfg.get("num_key_value_heads") is None and family in MULTI_QUERY:
        cfg = dict(cfg)
        if cfg.get("new_decoder_architecture"):
            cfg["num_key_value_heads"] = _int(cfg, "num_kv_heads")
            notes.append("new_decoder_architecture: num_kv_heads KV heads (Falcon-40B/180B)")
        elif cfg.get("multi_query"):
            cfg["num_key_value_heads"] = 1
            notes.append("multi_query: true, so one KV head shared by every query head (MQA)")
        elif "multi_query" in cfg:
            cfg["num_key_value_heads"] = n_heads
            notes.append("multi_query: false, so one KV head per query head (MHA)")
        else:
            raise ValueError("config fields 'num_key_value_heads' and 'multi_query' are both missing")
    if cfg.get("num_key_value_heads") is None:
        # transformers' configs (LlamaConfig, Qwen2Config, ...: "if num_key_value_heads is None:
        # num_key_value_heads = num_attention_heads"), vLLM's ModelConfig.get_total_num_kv_heads (falls back to
        # num_attention_heads) and llama.cpp (head_count_kv defaults to head_count) all do this
        cfg = dict(cfg, num_key_value_heads=n_heads)
        notes.append(
            f"num_key_value_heads not given: one KV head per attention head ({n_heads}), as transformers, vLLM "
            "and llama.cpp default it"
        )
    n_kv = _int(cfg, "num_key_value_heads")
    if n_heads % n_kv:
        raise ValueError(
            f"config fields 'num_attention_heads' ({n_heads}) and 'num_key_value_heads' ({n_kv}) "
            "disagree: query heads must be a multiple of KV heads"
        )
    if family in PARALLEL_HYBRID and cfg.get("head_dim") is None:
        raise ValueError(
            "config field 'head_dim' is missing (convert_hf_to_gguf.py's FalconH1Model writes it as the "
            "attention key and value length)"
        )
    head_dim = _opt_int(cfg, "head_dim")
    if head_dim is None and family == "nemotron_h" and cfg.get("attention_head_dim") is not None:
        # convert_hf_to_gguf.py NemotronHModel: head_dim = hparams.get("head_dim", hparams.get("attention_head_dim"))
        head_dim = _int(cfg, "attention_head_dim")
        notes.append(f"head_dim from attention_head_dim ({head_dim}), as convert_hf_to_gguf.py reads Nemotron-H")
    if head_dim is None:
        if hidden % n_heads:
            raise ValueError(
                "config field 'head_dim' is missing and hidden_size is not a multiple of num_attention_heads"
            )
        head_dim = hidden // n_heads
        notes.append(f"head size not given: hidden size ÷ attention heads = {hidden:,} ÷ {n_heads} = {head_dim}")
    elif head_dim * n_heads != hidden:
        notes.append(
            f"head size {head_dim} × {n_heads} heads = {head_dim * n_heads:,}, not the hidden size {hidden:,}: "
            "the config's head_dim is used, as the model does"
        )

    if family in PARALLEL_HYBRID:
        kinds, mamba = [FULL] * n_layers, _falcon_h1_mixer(cfg, notes)
    elif family in MAMBA_HYBRID:
        kinds, mamba = _mamba_hybrid(cfg, family, n_layers, hidden, notes)
    else:
        kinds, mamba = _layer_kinds(cfg, family, n_layers, notes), None
    window = None
    if SLIDING in kinds:
        window = _opt_int(cfg, "sliding_window")
        if window is None:
            raise ValueError("config field 'sliding_window' is missing but some layers are sliding_attention")
    chunk = None
    if CHUNKED in kinds:
        chunk = _opt_int(cfg, "attention_chunk_size")
        if chunk is None:
            raise ValueError("config field 'attention_chunk_size' is missing but some layers are chunked_attention")
    for fixup in FIXUPS.get(family, ()):
        kinds = fixup(cfg, kinds, notes)
    linear = None
    if LINEAR in kinds and family not in MAMBA_HYBRID:
        linear = linear_layer(
            conv_kernel=_int(cfg, "linear_conv_kernel_dim"),
            num_key_heads=_int(cfg, "linear_num_key_heads"),
            key_head_dim=_int(cfg, "linear_key_head_dim"),
            num_value_heads=_int(cfg, "linear_num_value_heads"),
            value_head_dim=_int(cfg, "linear_value_head_dim"),
        )
    if mamba is not None:
        linear = mamba
    if family in PARALLEL_HYBRID:
        layers = (parallel_hybrid_layer(n_kv, head_dim, mamba),) * n_layers
    else:
        layers = tuple(
            linear
            if kind == LINEAR
            else no_cache_layer()
            if kind == NONE
            else attention_layer(kind, n_kv, head_dim, chunk if kind == CHUNKED else window)
            for kind in kinds
        )
    attention = "mha" if n_kv == n_heads else ("mqa" if n_kv == 1 else "gqa")
    return ctx.build(
        layers,
        attention,
        n_heads,
        hidden,
        ssm_state_dtype=cfg.get("mamba_ssm_dtype") if isinstance(cfg.get("mamba_ssm_dtype"), str) else None,
    )


def _minimax_attention_only(cfg: dict, kinds: list[str], notes: list[str]) -> list[str]:
    """MiniMax-M2 lists each layer's kind in attn_type_list: kvlab reads softmax attention (1) only."""
    if cfg.get("attn_type_list") is None:
        return kinds
    types = cfg["attn_type_list"]
    if not isinstance(types, list) or len(types) != len(kinds):
        raise ValueError(
            f"config field 'attn_type_list' must list each of the {len(kinds)} layers, got {short_repr(types)}"
        )
    if any(t != 1 for t in types):
        # MiniMax's attn_type_list: 1 = softmax attention, 0 = lightning (linear) attention (MiniMax-Text-01 / M1)
        raise ValueError(
            "config field 'attn_type_list' marks lightning-attention layers (0): kvlab does not read "
            "MiniMax's lightning attention state, so it gives no numbers"
        )
    return kinds


def _gemma3n_shared(cfg: dict, kinds: list[str], notes: list[str]) -> list[str]:
    """gemma-3n: the last num_kv_shared_layers layers reuse the K/V of an earlier layer of their kind and
    keep no cache of their own (transformers Gemma3nTextAttention.is_kv_shared_layer; vLLM passes
    kv_sharing_target_layer_name, so no KV spec is made for them; llama.cpp's LLM_ARCH_GEMMA3N sets
    n_layer_kv_from_start = 20, the same 20 layers for E2B and E4B)."""
    if cfg.get("num_kv_shared_layers") is None:
        raise ValueError(
            "config field 'num_kv_shared_layers' is missing (gemma-3n's last layers reuse earlier layers' K/V)"
        )
    shared = _int(cfg, "num_kv_shared_layers", minimum=0)
    if shared >= len(kinds):
        raise ValueError(
            f"config field 'num_kv_shared_layers' ({shared}) leaves no layer of the {len(kinds)} with a cache"
        )
    if shared:
        notes.append(
            f"gemma-3n: the last {shared} layers (num_kv_shared_layers) reuse the K/V of earlier layers and keep "
            "no cache of their own"
        )
    return kinds[: len(kinds) - shared] + [NONE] * shared


def _parse_gemma4(ctx: ConfigContext) -> Architecture:
    """Gemma 4: layer_types interleaves sliding and full layers, and the full ("global") layers are wider: head size
    global_head_dim, and where attention_k_eq_v is set num_global_key_value_heads KV heads. K and V are still both
    cached: the one projection feeds K (k_norm, RoPE) and V (v_norm) apart, and vLLM's Gemma4Attention hands both to
    its Attention layer (https://github.com/vllm-project/vllm/blob/001cabc1be16a59a70d720ed61a13b678c060a18/
    vllm/model_executor/models/gemma4.py). The last num_kv_shared_layers layers reuse an earlier layer's K and V
    (the E2B/E4B models), as gemma-3n's do."""
    cfg, n_layers, notes = ctx.cfg, ctx.n_layers, ctx.notes
    n_heads, hidden = ctx.n_heads, ctx.hidden
    if cfg.get("layer_types") is None:
        raise ValueError("config field 'layer_types' is missing (Gemma 4 lists its sliding and full layers there)")
    kinds = _layer_kinds_from_types(cfg, n_layers)
    if cfg.get("num_kv_shared_layers"):
        kinds = _gemma3n_shared(cfg, kinds, notes)
    n_kv = _int(cfg, "num_key_value_heads")
    head_dim = _int(cfg, "head_dim")
    global_dim = _opt_int(cfg, "global_head_dim") or head_dim
    global_kv = n_kv
    if cfg.get("attention_k_eq_v") and cfg.get("num_global_key_value_heads") is not None:
        global_kv = _int(cfg, "num_global_key_value_heads")
    for heads, what in ((n_kv, "num_key_value_heads"), (global_kv, "num_global_key_value_heads")):
        if n_heads % heads:
            raise ValueError(
                f"config fields 'num_attention_heads' ({n_heads}) and '{what}' ({heads}) disagree: query heads "
                "must be a multiple of KV heads"
            )
    window = _int(cfg, "sliding_window") if SLIDING in kinds else None
    sliding = attention_layer(SLIDING, n_kv, head_dim, window)
    full = attention_layer(FULL, global_kv, global_dim)
    layers = tuple(sliding if kind == SLIDING else full if kind == FULL else no_cache_layer() for kind in kinds)
    notes.append(
        f"Gemma 4: {kinds.count(SLIDING)} sliding layers cache {n_kv} KV heads x {head_dim} over the last "
        f"{window or 0:,} tokens; {kinds.count(FULL)} full layers cache {global_kv} KV heads x {global_dim} "
        "(global_head_dim"
        + (
            ", num_global_key_value_heads: attention_k_eq_v shares the projection, K and V are both cached)"
            if global_kv != n_kv
            else ")"
        )
    )
    return ctx.build(layers, "gqa", n_heads, hidden)


def _parse_mla(ctx: ConfigContext) -> Architecture:
    cfg, family, n_layers, notes = ctx.cfg, ctx.family, ctx.n_layers, ctx.notes
    n_heads, hidden = ctx.n_heads, ctx.hidden
    rank = _int(cfg, "kv_lora_rank")
    rope = _int(cfg, "qk_rope_head_dim")
    nope = _opt_int(cfg, "qk_nope_head_dim")
    v_dim = _opt_int(cfg, "v_head_dim")
    expanded = dims = None
    if nope is not None and v_dim is not None:
        # the same heads cached without compression: K = heads x (nope + rope), V = heads x v_head_dim
        expanded = n_heads * (nope + rope + v_dim)
        dims = (rank, rope, nope, v_dim)
    notes.append(f"MLA: caches kv_lora_rank + qk_rope_head_dim = {rank} + {rope} values per layer per token")
    index_dim = 0
    if family == "deepseek_v32":
        # DeepSeek-V3.2's sparse attention (DSA): a lightning indexer per layer scores every earlier token with
        # index_n_heads query heads against ONE cached key of index_head_dim values, then picks index_topk tokens
        # (vllm/model_executor/models/deepseek_v2.py Indexer; DeepseekV32IndexerCache: num_kv_heads = 1)
        index_dim = _int(cfg, "index_head_dim")
        index_heads = _int(cfg, "index_n_heads")
        topk = _int(cfg, "index_topk")
        notes.append(
            f"DSA lightning indexer: one key of index_head_dim = {index_dim} values per layer per token is cached "
            f"beside the latent (index_n_heads = {index_heads} query heads share it; each token attends to "
            f"index_topk = {topk:,} chosen tokens); vLLM and DeepSeek's code keep it in fp8 with an fp32 scale "
            "per 128 values"
        )
    return ctx.build(
        (mla_layer(rank, rope, index_dim),) * n_layers,
        "mla",
        n_heads,
        hidden,
        mla_expanded_values=expanded,
        mla_dims=dims,
    )


# ---------------------------------------------------------------------------
# Mamba + attention hybrids, read the way llama.cpp's convert_hf_to_gguf.py reads them
# (https://github.com/ggml-org/llama.cpp/blob/master/convert_hf_to_gguf.py: JambaModel,
# GraniteHybridModel, NemotronHModel), then sized by llama.cpp's n_embd_r / n_embd_s
# (architecture.mamba_layer). The converter falls back to defaults for some missing Mamba
# fields (d_conv 4, d_state 16 ...); kvlab refuses instead, naming the field.
# ---------------------------------------------------------------------------


def _find(cfg: dict, keys: tuple[str, ...], prefix: str | None = None) -> tuple[str, int]:
    """The first of `keys` (then `prefix`_key) the config has, as convert_hf_to_gguf.py's find_hparam."""
    names = list(keys) + ([f"{prefix}_{k}" for k in keys] if prefix else [])
    for name in names:
        if cfg.get(name) is not None:
            return name, _int(cfg, name)
    raise ValueError(f"config field {names[0]!r} is missing (looked for {', '.join(repr(n) for n in names)})")


def _mamba_hybrid(cfg: dict, family: str, n_layers: int, hidden: int, notes: list[str]):
    """Layer kinds (FULL attention, LINEAR Mamba, NONE) and the Mamba layer of a Jamba / Granite-4 / Nemotron-H config."""
    if family == "jamba":
        # JambaModel.set_gguf_parameters: head_count_kv is n_kv for i >= offset with (i - offset) % period == 0
        offset = _int(cfg, "attn_layer_offset", minimum=0)
        period = _int(cfg, "attn_layer_period")
        kinds = [FULL if i >= offset and (i - offset) % period == 0 else LINEAR for i in range(n_layers)]
        notes.append(
            f"Jamba: layer i is attention when i >= attn_layer_offset ({offset}) and (i - offset) % "
            f"attn_layer_period ({period}) == 0, else Mamba-1"
        )
    elif family == "granitemoehybrid":
        # GraniteHybridModel.get_attn_layers: layer_types "attention" vs the rest (Mamba-2)
        types = cfg.get("layer_types")
        if not isinstance(types, list):
            raise ValueError("config field 'layer_types' is missing (Granite-4 hybrids list 'mamba' / 'attention')")
        if len(types) != n_layers:
            raise ValueError(f"config field 'layer_types' has {len(types)} entries but num_hidden_layers is {n_layers}")
        for i, name in enumerate(types):
            if name not in ("mamba", "attention"):
                raise ValueError(f"config field 'layer_types'[{i}] = {short_repr(name)} is not 'mamba' or 'attention'")
        kinds = [FULL if name == "attention" else LINEAR for name in types]
    else:  # nemotron_h
        pattern = cfg.get("hybrid_override_pattern") or cfg.get("layers_block_type")
        if pattern is None:
            raise ValueError(
                "config fields 'hybrid_override_pattern' and 'layers_block_type' are both missing "
                "(Nemotron-H needs one to know which layers are Mamba, attention or MLP)"
            )
        if len(pattern) != n_layers:
            raise ValueError(
                f"config field 'hybrid_override_pattern' has {len(pattern)} entries but num_hidden_layers is {n_layers}"
            )
        names = {"M": LINEAR, "*": FULL, "-": NONE, "E": NONE, "mamba": LINEAR, "attention": FULL}
        names.update({"mlp": NONE, "moe": NONE})
        kinds = []
        for i, name in enumerate(pattern):
            if name not in names:
                raise ValueError(
                    f"config field 'hybrid_override_pattern'[{i}] = {short_repr(name)} is not M (Mamba-2), * (attention), "
                    "- (MLP) or E (MoE)"
                )
            kinds.append(names[name])
        if NONE in kinds:
            notes.append(
                f"Nemotron-H: {kinds.count(NONE)} MLP / MoE-only layers keep no cache (llama.cpp "
                "create_memory filters them out of both the KV cache and the recurrent state)"
            )
    if FULL not in kinds:
        raise ValueError(f"config: {family} with no attention layer is not one kvlab reads (no KV cache to size)")
    if LINEAR not in kinds:
        notes.append(
            f"{family}: every layer is attention, so no Mamba state (convert_hf_to_gguf.py makes it non-hybrid)"
        )
        return kinds, None
    if family == "jamba":
        # JambaModel.set_gguf_parameters: d_inner = mamba_expand x d_model; no ssm_n_group (Mamba-1: 0)
        d_conv = _int(cfg, "mamba_d_conv")
        d_state = _int(cfg, "mamba_d_state")
        d_inner, n_group = _int(cfg, "mamba_expand") * hidden, 0
        notes.append(f"Jamba: d_inner = mamba_expand x hidden_size = {d_inner}")
    else:
        # GraniteHybridModel.__init__ / set_gguf_parameters (NemotronHModel inherits them; prefix "mamba"):
        # d_model = mamba_head_dim | hidden_size; d_inner = (expand | num_heads) x d_model, and Nemotron-H
        # d_inner = num_heads x d_model
        _, d_model = _find(cfg, ("mamba_head_dim", "hidden_size", "d_model"))
        _, d_conv = _find(cfg, ("conv_kernel", "d_conv"), "mamba")
        _, d_state = _find(cfg, ("state_size", "d_state", "state_dim", "ssm_state_size"), "mamba")
        _, n_group = _find(cfg, ("n_groups", "num_groups"), "mamba")
        key, mult = _find(cfg, ("num_heads",) if family == "nemotron_h" else ("expand", "num_heads"), "mamba")
        d_inner = mult * d_model
        notes.append(f"{family}: d_inner = {key} x {d_model} = {d_inner} (as convert_hf_to_gguf.py reads it)")
    layer = mamba_layer(d_conv, d_inner, d_state, n_group)
    notes.append(
        f"Mamba state per layer per sequence (llama.cpp n_embd_r / n_embd_s, f32): conv (d_conv - 1) x (d_inner + "
        f"2 x n_group x d_state) = {layer.conv_state_values:,}, SSM d_state x d_inner = {layer.ssm_state_values:,}"
    )
    return kinds, layer


# ---------------------------------------------------------------------------
# Falcon-H1 and pure Mamba / Mamba-2, read as convert_hf_to_gguf.py reads them (FalconH1Model,
# MambaModel, Mamba2Model) and sized by llama.cpp's n_embd_r / n_embd_s (architecture.mamba_layer).
# llama.cpp's load (src/llama-model.cpp): LLM_ARCH_FALCON_H1 marks every layer recurrent, and
# create_memory's hybrid filters (filter_attn, filter_recr) both accept every layer, so each
# Falcon-H1 layer gets a KV row per cell AND a recurrent state; LLM_ARCH_MAMBA / MAMBA2 are
# recurrent-only (llm_arch_is_recurrent): one llama_memory_recurrent, no KV cache at all.
# ---------------------------------------------------------------------------


def _falcon_h1_mixer(cfg: dict, notes: list[str]):
    """The Mamba-2 mixer of every Falcon-H1 layer (FalconH1Model: hparam prefix "mamba")."""
    # FalconH1Model.__init__: d_inner = find_hparam(["mamba_d_ssm"]) (required); n_group =
    # find_hparam(["n_groups"]) with the "mamba" prefix; Mamba2Model.set_gguf_parameters: d_conv from
    # conv_kernel | d_conv, d_state from state_size | d_state (each also with the "mamba_" prefix)
    _, d_inner = _find(cfg, ("mamba_d_ssm",))
    _, d_conv = _find(cfg, ("conv_kernel", "d_conv"), "mamba")
    _, d_state = _find(cfg, ("state_size", "d_state"), "mamba")
    _, n_group = _find(cfg, ("n_groups",), "mamba")
    layer = mamba_layer(d_conv, d_inner, d_state, n_group)
    notes.append(
        "Falcon-H1: every layer runs attention and a Mamba-2 mixer side by side, so llama.cpp keeps a KV row "
        "per token AND a recurrent state in every layer (create_memory: filter_attn and filter_recr accept "
        "all layers)"
    )
    notes.append(
        f"Mamba-2 state per layer per sequence (llama.cpp n_embd_r / n_embd_s, f32): conv (d_conv - 1) x "
        f"(mamba_d_ssm + 2 x n_groups x d_state) = {layer.conv_state_values:,}, SSM d_state x mamba_d_ssm = "
        f"{layer.ssm_state_values:,}"
    )
    return layer


def _parse_pure_mamba(ctx: ConfigContext) -> Architecture:
    """Mamba (MambaModel: Mamba, Falcon-Mamba) or Mamba-2 (Mamba2Model): no attention, a state per layer."""
    cfg, family, n_layers, notes = ctx.cfg, ctx.family, ctx.n_layers, ctx.notes
    _, hidden = _find(cfg, ("hidden_size", "d_model"))
    _, d_conv = _find(cfg, ("conv_kernel", "d_conv"))
    _, d_state = _find(cfg, ("state_size", "d_state"))
    inner_keys = (
        ("intermediate_size", "d_inner") if family != "mamba2" else ("mamba_d_ssm", "intermediate_size", "d_inner")
    )
    found = [key for key in inner_keys if cfg.get(key) is not None]
    if found:
        key, d_inner = found[0], _int(cfg, found[0])
    elif cfg.get("expand") is not None:
        # transformers' Mamba / Mamba-2 mixers: intermediate_size = expand x hidden_size
        key, d_inner = "expand x hidden_size", _int(cfg, "expand") * hidden
    else:
        raise ValueError(f"config field {inner_keys[0]!r} is missing (and no 'expand' to derive it from)")
    if family == "mamba2":
        _, n_group = _find(cfg, ("n_groups",))
        title = "Mamba-2"
    else:
        n_group = 0  # MambaModel writes no ssm_group_count: llama.cpp's ssm_n_group stays 0
        title = "Falcon-Mamba" if family == "falcon_mamba" else "Mamba"
    if d_inner != 2 * hidden:
        notes.append(
            f"d_inner {d_inner:,} is not 2 x hidden_size ({2 * hidden:,}): llama.cpp's convert_hf_to_gguf.py "
            "asserts it is, so such a model would not convert"
        )
    layer = mamba_layer(d_conv, d_inner, d_state, n_group)
    notes.append(
        f"{title}: no attention layer, so no KV cache: llama.cpp keeps one recurrent state per layer per "
        "sequence (llama_memory_recurrent), the same at any context length"
    )
    notes.append(
        f"state per layer per sequence (llama.cpp n_embd_r / n_embd_s, f32): conv (d_conv - 1) x (d_inner + "
        f"2 x n_group x d_state) = {layer.conv_state_values:,}, SSM d_state x d_inner = {layer.ssm_state_values:,} "
        f"(d_inner = {d_inner:,} from {key}; n_group = {n_group})"
    )
    return ctx.build((layer,) * n_layers, "none", 0, hidden, intermediate_size=None)


# ---------------------------------------------------------------------------
# Kimi-Linear: Kimi Delta Attention (KDA) linear layers and MLA full layers, listed 1-based in
# linear_attn_config (vllm/transformers_utils/configs/kimi_linear.py is_kda_layer,
# https://github.com/vllm-project/vllm/blob/main/vllm/transformers_utils/configs/kimi_linear.py).
# KDA state per layer per sequence, from vLLM's MambaStateShapeCalculator.kda_state_shape
# (vllm/model_executor/layers/mamba/mamba_utils.py): short convolutions on q, k and v of
# (conv_kernel - 1) x num_heads x head_dim values each, and a recurrent state of num_heads x head_dim x
# head_dim; that is architecture.linear_layer with key heads = value heads = num_heads.
# ---------------------------------------------------------------------------


def _parse_kimi_linear(ctx: ConfigContext) -> Architecture:
    cfg, n_layers, notes = ctx.cfg, ctx.n_layers, ctx.notes
    n_heads, hidden = ctx.n_heads, ctx.hidden
    lin = cfg.get("linear_attn_config")
    if not isinstance(lin, dict):
        raise ValueError(
            "config field 'linear_attn_config' is missing (Kimi-Linear lists its KDA and MLA layers there)"
        )
    lists = {}
    for key in ("full_attn_layers", "kda_layers"):
        ids = lin.get(key)
        if not isinstance(ids, list) or any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
            raise ValueError(f"config field 'linear_attn_config.{key}' is missing or not a list of layer numbers")
        lists[key] = ids
    full, kda = set(lists["full_attn_layers"]), set(lists["kda_layers"])
    if full & kda or full | kda != set(range(1, n_layers + 1)):
        raise ValueError(
            "config fields 'linear_attn_config.full_attn_layers' and 'kda_layers' must split layers 1.."
            f"{n_layers} between them (1-based), each layer once"
        )
    heads = _int(lin, "num_heads")
    head_dim = _int(lin, "head_dim")
    conv = _int(lin, "short_conv_kernel_size")
    rank = _int(cfg, "kv_lora_rank")
    rope = _int(cfg, "qk_rope_head_dim")
    kda_layer = linear_layer(
        conv_kernel=conv, num_key_heads=heads, key_head_dim=head_dim, num_value_heads=heads, value_head_dim=head_dim
    )
    layers = tuple(mla_layer(rank, rope) if i + 1 in full else kda_layer for i in range(n_layers))
    notes.append(
        f"Kimi-Linear: {len(full)} MLA layers cache kv_lora_rank + qk_rope_head_dim = {rank} + {rope} values per "
        f"token; {len(kda)} KDA layers keep a state per sequence: conv (short_conv_kernel_size - 1) x 3 x "
        f"num_heads x head_dim = {kda_layer.conv_state_values:,}, recurrent num_heads x head_dim x head_dim = "
        f"{kda_layer.ssm_state_values:,} values (vLLM kda_state_shape)"
    )
    return ctx.build(layers, "mla", n_heads, hidden)


# ---------------------------------------------------------------------------
# The registry: which reader reads each family (every other known family is _parse_attention), and the
# per-family fixups that run on its layer kinds. A new family is a name in its group above (or a reader
# here), its fixups, and one test (tests/python/test_families.py).
# ---------------------------------------------------------------------------

READERS = {
    family: reader
    for group, reader in (
        (PURE_MAMBA, _parse_pure_mamba),
        (MLA, _parse_mla),
        (KDA_HYBRID, _parse_kimi_linear),
        (GEMMA4, _parse_gemma4),
    )
    for family in group
}
FIXUPS = {
    "gemma3n": (_gemma3n_shared,),
    "gemma3n_text": (_gemma3n_shared,),
    "minimax_m2": (_minimax_attention_only,),
}
