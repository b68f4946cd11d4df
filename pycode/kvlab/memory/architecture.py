"""What a model's KV cache is made of: one `LayerSpec` per layer.

Per token, a layer caches `k_values` numbers for keys and `v_values` for
values. Everything the memory calculator needs follows from that list:

    multi-head / grouped-query / multi-query attention (Llama, Mistral, Qwen):
        k_values = v_values = kv_heads * head_dim        (head_dim from config)
    multi-head latent attention (DeepSeek-V2/V3, "mla"):
        k_values = kv_lora_rank + qk_rope_head_dim, v_values = 0
        (one compressed latent per token; keys and values are decompressed
        from it, so nothing separate is kept for V)
    sliding window of W tokens ("sliding"): same widths, but the layer only
        ever holds the last W tokens
    linear attention / Gated DeltaNet / Mamba ("linear"): no per-token cache;
        a fixed state per sequence instead (`state_values`)
    chunked local attention over chunks of C tokens ("chunked": Llama-4's RoPE
        layers, `attention_chunk_size`): token p attends to the tokens of its own
        chunk [C * floor(p / C), p], so the layer never needs more than C tokens
        (https://github.com/ggml-org/llama.cpp/blob/master/src/llama-hparams.cpp
        is_masked_swa, LLAMA_SWA_TYPE_CHUNKED); `window` holds C
    a block with neither attention nor a mixer state ("none": Nemotron-H's
        MLP / MoE-only layers, gemma-3n's KV-shared layers): nothing cached of its own
    the DeepSeek-V3.2 sparse-attention (DSA) lightning indexer: an MLA layer that
        also caches one indexer key of `index_values` (index_head_dim) per token
    attention and a Mamba-2 mixer side by side in one layer (Falcon-H1): a
        "full" layer that also carries a recurrent state (conv_state_values,
        ssm_state_values); llama.cpp keeps both a KV row and a state for it

>>> llama2 = uniform_architecture("demo", n_layers=2, n_heads=4, n_kv_heads=4, head_dim=8)
>>> [layer.k_values for layer in llama2.layers]
[32, 32]
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

FULL = "full"  # attends to every earlier token: cache grows with context
SLIDING = "sliding"  # attends to the last `window` tokens only
LINEAR = "linear"  # recurrent layer (Gated DeltaNet, Mamba): fixed state, no KV
# attends within its chunk of `window` tokens (Llama-4's chunked local attention). Kept out of
# LAYER_KINDS like NONE, so other models' summaries stay as they were; counted where a model has one.
CHUNKED = "chunked"
LAYER_KINDS = (FULL, SLIDING, LINEAR)
# A layer that caches nothing (Nemotron-H's MLP / MoE-only blocks). Kept out of LAYER_KINDS so
# the summaries of every other model stay as they were; counted only where a model has one.
NONE = "none"
ALL_KINDS = LAYER_KINDS + (NONE, CHUNKED)
ATTENTION_KINDS = (FULL, SLIDING, CHUNKED)
BOUNDED_KINDS = (SLIDING, CHUNKED)  # attention layers that never hold more than `window` tokens
# The DSA lightning indexer's key cache, as DeepSeek's reference code and vLLM keep it: fp8 values
# plus one fp32 scale per 128 values ("we use fp8 naive cache, where we store value in fp8 and scale
# in fp32 per quant_block_size element", quant_block_size = 128; head_size = index_head_dim +
# index_head_dim // 128 * 4 = 132 B for index_head_dim 128; vllm/model_executor/models/deepseek_v2.py
# Indexer, https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/models/deepseek_v2.py)
DSA_INDEX_QUANT_BLOCK = 128


def dsa_index_bytes(index_values: int) -> int:
    """Bytes of one token's indexer key in the fp8 + fp32-scale format (132 for index_head_dim 128)."""
    return index_values + index_values // DSA_INDEX_QUANT_BLOCK * 4


@dataclass(frozen=True)
class LayerSpec:
    """The cache of one layer, in values per token (keys, values) or per sequence (state)."""

    kind: str  # FULL | SLIDING | CHUNKED | LINEAR | NONE
    k_values: int = 0  # key values cached per token (kv_heads * head_dim, or MLA latent)
    v_values: int = 0  # value values cached per token (0 for MLA: V comes from the latent)
    window: int | None = None  # SLIDING: tokens kept; CHUNKED: the chunk size (attention_chunk_size)
    kv_heads: int = 0  # KV heads (1 for an MLA latent)
    head_dim_k: int = 0
    head_dim_v: int = 0
    # LINEAR (and a Falcon-H1 FULL layer, which runs a Mamba-2 mixer beside its attention): the
    # recurrent state of one sequence, split the way llama.cpp splits it (r = convolution state,
    # s = the recurrent matrix state)
    conv_state_values: int = 0
    ssm_state_values: int = 0
    # DeepSeek-V3.2 (DSA): the lightning indexer's key per token (one head of index_head_dim values)
    index_values: int = 0
    # a Gated DeltaNet / KDA layer's conv kernel width (0: not known). vLLM keeps conv_kernel - 1 + k rows of
    # the conv state under k speculative tokens (kv_bytes.vllm_speculative_state); not part of equality
    conv_kernel: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in ALL_KINDS:
            raise ValueError(f"layer kind must be one of {ALL_KINDS}, got {self.kind!r}")
        if self.kind == SLIDING and (self.window is None or self.window <= 0):
            raise ValueError("a sliding layer needs a positive window (sliding_window)")
        if self.kind == CHUNKED and (self.window is None or self.window <= 0):
            raise ValueError("a chunked layer needs a positive chunk size (attention_chunk_size)")
        if self.index_values and self.kind != FULL:
            raise ValueError("only a full-attention (MLA) layer carries a DSA indexer key")
        if self.kind in ATTENTION_KINDS and self.k_values <= 0:
            raise ValueError("an attention layer needs k_values > 0")
        if self.kind == NONE and (
            self.k_values or self.v_values or self.conv_state_values or self.ssm_state_values or self.index_values
        ):
            raise ValueError("a layer of kind 'none' caches nothing")
        if self.kind in BOUNDED_KINDS and self.state_values:
            raise ValueError(f"a {self.kind} layer with a recurrent state is not a layer kvlab knows")

    @property
    def state_values(self) -> int:
        """Recurrent state values per sequence (conv + SSM); 0 for a layer without one."""
        return self.conv_state_values + self.ssm_state_values

    @property
    def parallel_hybrid(self) -> bool:
        """Attention and a recurrent mixer in the same layer (Falcon-H1): a KV row and a state."""
        return self.kind == FULL and self.state_values > 0


@dataclass(frozen=True)
class Architecture:
    """A model as far as memory is concerned. Built by `kvlab.memory.hf_config` or by hand."""

    name: str
    family: str  # the config's model_type (decides engine quirks)
    layers: tuple[LayerSpec, ...]
    n_heads: int  # query heads
    hidden_size: int
    attention: str = "gqa"  # "mha" | "gqa" | "mqa" | "mla" (for display)
    vocab_size: int | None = None
    # config.json's tie_word_embeddings: the output projection reuses the token embedding (None: the config does not
    # say; transformers' default differs by model type)
    tied_embeddings: bool | None = None
    intermediate_size: int | None = None
    max_position_embeddings: int | None = None
    params: float | None = None  # total parameters (weights memory)
    active_params: float | None = None  # parameters read per token (MoE); None = params
    expert_params: float | None = None  # parameters in MoE expert FFNs (what MXFP4 covers in gpt-oss)
    # vocab x hidden tables (embedding, lm_head) in the active figure, where its source counts them unlike the total
    # (gpt-oss's card: the unembedding only); None = as params counts them (kvlab.memory.scheduler.vocab_tables)
    active_vocab_tables: int | None = None
    mla_expanded_values: int | None = None  # per layer per token, if MLA heads were cached uncompressed
    # MLA's sizes, where the config gives them: (kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim). The
    # layouts older engines cached (kvlab.memory.llamacpp.llamacpp_mla_architecture) are built from them
    mla_dims: tuple[int, int, int, int] | None = None
    ssm_state_dtype: str | None = None  # config.json's mamba_ssm_dtype ("float32" in Qwen3.5/3.6); None = model dtype
    draft_layers: int = 0  # MTP draft layers the checkpoint ships (mtp_num_hidden_layers / num_nextn_predict_layers)
    # a vision-language wrapper (Gemma 3, Qwen3.5/3.6, LLaVA: text_config beside a vision tower): vLLM profiles its
    # vision encoder at start-up too
    vision: bool = False
    # the vision tower vLLM's profiling pass runs on its largest image, where kvlab knows it (the Qwen3-VL family):
    # (hidden_size, intermediate_size, patches of that image); see kvlab.memory.engines.vllm_vision_profile
    vision_encoder: tuple[int, int, int] | None = None
    # that tower's blocks' parameters (depth x (4 hidden^2 + 2 hidden x intermediate)): what vLLM does not load with
    # --language-model-only (kvlab.memory.weights.without_vision); its patch and position embeddings and merger left out
    vision_block_params: int = 0
    source: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if not self.layers:
            raise ValueError("num_hidden_layers must be at least 1")

    @property
    def n_layers(self) -> int:
        return len(self.layers)

    @property
    def routes_experts(self) -> bool:
        """A mixture of experts as the serving simulation reads it: fewer parameters active per token than in all."""
        return bool(self.active_params) and self.active_params < self.params

    def count(self, kind: str) -> int:
        return sum(1 for layer in self.layers if layer.kind == kind)

    @property
    def state_layers(self) -> tuple[LayerSpec, ...]:
        """Every layer that keeps a recurrent state: the linear ones and Falcon-H1's attention + Mamba ones."""
        return tuple(layer for layer in self.layers if layer.state_values)

    def summary(self) -> dict:
        """Plain data for a page: layer counts per kind and the attention shape."""
        attn = [layer for layer in self.layers if layer.kind in ATTENTION_KINDS]
        windows = sorted({layer.window for layer in self.layers if layer.kind == SLIDING})
        by_kind = {kind: self.count(kind) for kind in LAYER_KINDS}
        if self.count(NONE):
            by_kind[NONE] = self.count(NONE)
        if self.count(CHUNKED):
            by_kind[CHUNKED] = self.count(CHUNKED)
        parallel = sum(1 for layer in self.layers if layer.parallel_hybrid)
        if parallel:  # Falcon-H1: these full layers also keep a recurrent state
            by_kind["full_with_state"] = parallel
        out = {
            "name": self.name,
            "family": self.family,
            "attention": self.attention,
            "n_layers": self.n_layers,
            "layers_by_kind": by_kind,
            "n_heads": self.n_heads,
            "kv_heads": sorted({layer.kv_heads for layer in attn}),
            "head_dim": sorted({layer.head_dim_k for layer in attn}),
            "sliding_windows": windows,
            "k_values_per_layer": sorted({layer.k_values for layer in attn}),
            "v_values_per_layer": sorted({layer.v_values for layer in attn}),
            "params": self.params,
            "active_params": self.active_params,
            "max_position_embeddings": self.max_position_embeddings,
            "source": self.source,
            "notes": list(self.notes),
        }
        chunks = sorted({layer.window for layer in self.layers if layer.kind == CHUNKED})
        if chunks:  # only where a model has chunked layers, so other summaries stay as they were
            out["attention_chunk_sizes"] = chunks
        index = sorted({layer.index_values for layer in self.layers if layer.index_values})
        if index:
            out["dsa_index_values_per_layer"] = index
        return out


def attention_layer(
    kind: str, kv_heads: int, head_dim: int, window: int | None = None, head_dim_v: int | None = None
) -> LayerSpec:
    """A standard (MHA/GQA/MQA) attention layer: K and V each kv_heads * head_dim wide."""
    hv = head_dim if head_dim_v is None else head_dim_v
    return LayerSpec(
        kind=kind,
        k_values=kv_heads * head_dim,
        v_values=kv_heads * hv,
        window=window if kind in BOUNDED_KINDS else None,
        kv_heads=kv_heads,
        head_dim_k=head_dim,
        head_dim_v=hv,
    )


def mla_layer(kv_lora_rank: int, qk_rope_head_dim: int, index_head_dim: int = 0) -> LayerSpec:
    """A DeepSeek MLA layer: one latent of kv_lora_rank + qk_rope_head_dim values per token.

    DeepSeek-V3.2 (DSA) layers also cache the lightning indexer's key: `index_head_dim` values
    per token (one key head shared by the index_n_heads query heads)."""
    width = kv_lora_rank + qk_rope_head_dim
    return LayerSpec(
        kind=FULL, k_values=width, v_values=0, kv_heads=1, head_dim_k=width, head_dim_v=0, index_values=index_head_dim
    )


def linear_layer(
    conv_kernel: int, num_key_heads: int, key_head_dim: int, num_value_heads: int, value_head_dim: int
) -> LayerSpec:
    """A Gated DeltaNet layer (Qwen3-Next, Qwen3.5/3.6): no KV, a fixed state per sequence.

    Sizes follow llama.cpp's llama_hparams::n_embd_r / n_embd_s with the GGUF
    fields convert_hf_to_gguf.py writes for Qwen3-Next (ssm_d_conv = conv
    kernel, ssm_d_state = key head dim, ssm_n_group = key heads, ssm_d_inner =
    value heads * value head dim):
        conv state r = (d_conv - 1) * (d_inner + 2 * n_group * d_state)
        recurrent s  = d_state * d_inner   (one key_dim x value_dim matrix per value head)
    """
    d_inner = num_value_heads * value_head_dim
    conv = (conv_kernel - 1) * (d_inner + 2 * num_key_heads * key_head_dim)
    ssm = key_head_dim * d_inner
    return LayerSpec(kind=LINEAR, conv_state_values=conv, ssm_state_values=ssm, conv_kernel=conv_kernel)


def mamba_layer(d_conv: int, d_inner: int, d_state: int, n_group: int = 0) -> LayerSpec:
    """A Mamba-1 (n_group = 0) or Mamba-2 layer: no KV, a conv state and an SSM state per sequence.

    The sizes are llama.cpp's, in the GGUF hparams convert_hf_to_gguf.py writes
    (ssm_d_conv, ssm_d_inner, ssm_d_state, ssm_n_group), from
    src/llama-hparams.cpp (https://github.com/ggml-org/llama.cpp/blob/master/src/llama-hparams.cpp):
        n_embd_r() = (ssm_d_conv - 1) * (ssm_d_inner + 2 * ssm_n_group * ssm_d_state)
        n_embd_s() = ssm_d_state * ssm_d_inner
    Mamba-1 (Mamba, Jamba) writes no ssm_n_group, so it is 0 there: r = (d_conv - 1) * d_inner.
    src/llama-memory-recurrent.cpp keeps one r and one s row per layer per cell, in f32.
    """
    conv = (d_conv - 1) * (d_inner + 2 * n_group * d_state)
    return LayerSpec(kind=LINEAR, conv_state_values=conv, ssm_state_values=d_state * d_inner)


def parallel_hybrid_layer(kv_heads: int, head_dim: int, mixer: LayerSpec) -> LayerSpec:
    """A Falcon-H1 layer: full attention (kv_heads x head_dim K and V per token) and a Mamba-2 mixer
    beside it, whose state (`mixer`, from mamba_layer) the layer also keeps. llama.cpp
    (src/llama-model.cpp create_memory, LLM_ARCH_FALCON_H1) puts every layer in both the KV cache
    and the recurrent memory."""
    attn = attention_layer(FULL, kv_heads, head_dim)
    return replace(attn, conv_state_values=mixer.conv_state_values, ssm_state_values=mixer.ssm_state_values)


def no_cache_layer() -> LayerSpec:
    """A block with no attention and no mixer state (Nemotron-H's MLP / MoE-only layers)."""
    return LayerSpec(kind=NONE)


def uniform_architecture(
    name: str, n_layers: int, n_heads: int, n_kv_heads: int, head_dim: int, hidden_size: int | None = None, **extra
) -> Architecture:
    """Every layer full attention with the same shape (Llama-2, Llama-3, Mistral-7B-v0.3...)."""
    layer = attention_layer(FULL, n_kv_heads, head_dim)
    if n_kv_heads == n_heads:
        attention = "mha"
    elif n_kv_heads == 1:
        attention = "mqa"
    else:
        attention = "gqa"
    return Architecture(
        name=name,
        family=extra.pop("family", "llama"),
        layers=(layer,) * n_layers,
        n_heads=n_heads,
        hidden_size=hidden_size or n_heads * head_dim,
        attention=attention,
        **extra,
    )
