"""One deployment: the model, its weights, the GPUs, the engine with its version and settings.

Every question kvlab answers about memory ("does it start, how many tokens, how many chats")
is asked of one `Deployment`. `deployment(...)` builds it and is the one place that checks the
inputs, each refusal naming the field; the verdict (kvlab.memory.verdict), the four engines'
budgets (kvlab.memory.compare), the serving model and the widgets take the value it returns.

One vocabulary:

    engine    "llamacpp", "vllm", "sglang" or "trtllm" (ENGINES)
    version   the engine's version range modelled: vLLM "v0-pre-mla" (0.4-0.7.0), "v0", "v1" or "0.20+"
    tp, pp    tensor-parallel GPUs, pipeline stages (vLLM only); tp x pp GPUs in all
    kv        the cache type in kvlab's names (f16, bf16, fp8; vLLM's int8_per_token_head ...; llama.cpp's q8_0,
              q4_0 ...)
    weights   the weights as counted: format, bytes, and how they were counted

>>> d = deployment("llama-3.1-8b", weights="BF16", gpu="h100-sxm", engine="vllm", version="0.20+")
>>> d.engine_name, d.tp, d.memory_bytes // 2**30, d.weights["format"]
('vLLM', 1, 80, 'BF16')
>>> deployment("llama-3.1-8b", gpu="h100-sxm", engine="vllm", kv="q8_0")
Traceback (most recent call last):
    ...
ValueError: kv q8_0 is a llama.cpp cache type; vLLM takes f16, bf16, fp8, int8_per_token_head, fp8_per_token_head
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kvlab.dtypes import GIB, HEAD_SCALE_BYTES, LLAMACPP_KV_TYPES, VLLM_KV_TYPES, kv_type
from kvlab.inputs import finite_number, short_repr
from kvlab.memory.architecture import ATTENTION_KINDS, Architecture
from kvlab.memory.catalogue import get_gpu, gpu_memory_bytes, model_architecture
from kvlab.memory.drafters import check_drafter, get_drafter
from kvlab.memory.engine_budget import engine_kv_dtype
from kvlab.memory.engines import (
    MXFP4_BACKENDS,
    VLLM_SAMPLERS,
    VLLM_PRE_MLA,
    VLLM_RECENT,
    V0_RULES,
    VLLM_VERSIONS,
    vllm_pre_mla_architecture,
    vllm_version_id,
)
from kvlab.memory.kv_bytes import (
    VLLM_BLOCK_SIZE,
    VLLM_BLOCK_SIZES,
    VLLM_GPU_MEMORY_UTILIZATION,
    VLLM_GPU_MEMORY_UTILIZATION_RECENT,
)
from kvlab.memory.weights import model_weights_bytes, stored_weights, without_mtp, without_vision
from kvlab.wording import human_bytes, plural

ENGINES = ("llamacpp", "vllm", "sglang", "trtllm")
ENGINE_NAMES = {"llamacpp": "llama.cpp", "vllm": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
VERDICT_ENGINES = ("llamacpp", "vllm")  # the engines kvlab.memory.verdict answers for, term by term
TENSOR_PARALLEL = (1, 2, 4, 8)
PIPELINE_STAGES = (1, 2, 4, 8)  # the choices the widgets offer; any count up to MAX_PIPELINE_STAGES is taken
MAX_PIPELINE_STAGES = 16
LLAMACPP_VERSION = "llama.cpp b6000 and later (KV cache with streams, -np, --kv-unified; --fit on by default since b7407, read at b10309)"


class Refused(ValueError):
    """The engine would refuse to start with these settings: not a bad input, an answer.

    `field` names the setting that decides it, `reason` says why in the engine's words (or kvlab's, said so).
    A ValueError, so code that reports bad input still reports it; code that draws a refusal tells it apart.
    """

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


@dataclass(frozen=True)
class Deployment:
    """What runs, where, under which engine: the value every memory calculator takes."""

    arch: Architecture
    weights: dict  # kvlab.memory.weights.model_weights_bytes: format, bytes, how
    kv: str
    device: dict  # id, name, memory_bytes, how, unified_memory, card
    engine: str = "llamacpp"
    version: str = "v1"
    tp: int = 1
    pp: int = 1
    gpu_memory_utilization: float = VLLM_GPU_MEMORY_UTILIZATION
    block_size: int = VLLM_BLOCK_SIZE
    n_ubatch: int = 512
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    allow_long_context: bool = False
    max_model_len_auto: bool = False
    prefix_caching: bool = (
        False  # vLLM --enable-prefix-caching: a recurrent state's pages per request (vllm_state_blocks)
    )
    speculative_tokens: int = 0  # vLLM num_speculative_tokens
    mtp: bool = False  # the drafter is the checkpoint's own MTP layers, which cache K and V in the same pool
    mxfp4_backend: str | None = None  # vLLM's MXFP4 MoE kernel path, where it is not the card's (engines.mxfp4_path)
    # vLLM runs a vision-language model's vision tower (False: --language-model-only, or every modality at 0 in
    # --limit-mm-per-prompt): its profile run adds to the reserve (engines.vllm_vision_profile)
    multimodal: bool = True
    # a separate draft model under speculative decoding (kvlab.memory.drafters: DFlash): its weights and KV layers
    drafter: dict | None = None
    # the top-k/top-p path of vLLM's sampler warm-up (engines.VLLM_SAMPLERS), where it is not the version's default
    sampler: str | None = None
    # vLLM's custom all-reduce for the tensor-parallel group (False: --disable-custom-all-reduce, or a group that spans
    # nodes, where vLLM turns it off itself): its buffers leave the reserve (engines.vllm_reserve)
    custom_all_reduce: bool = True

    @property
    def engine_name(self) -> str:
        return ENGINE_NAMES[self.engine]

    @property
    def memory_bytes(self) -> int:
        """Memory of one GPU the engine can use."""
        return self.device["memory_bytes"]

    @property
    def card(self) -> dict | None:
        """The catalogue card, or None for a memory size given by hand."""
        return self.device["card"]

    @property
    def gpus(self) -> int:
        return self.tp * self.pp

    def where(self) -> str:
        """'H100 SXM', '4 x H100 SXM (2 pipeline stages of 2 tensor-parallel GPUs)'."""
        name = self.device["name"]
        text = name if self.gpus == 1 else f"{self.gpus} x {name}"
        if self.pp > 1:
            text += f" ({self.pp} pipeline stages" + (f" of {self.tp} tensor-parallel GPUs)" if self.tp > 1 else ")")
        return text


def device(gpu, memory_gib, n_gpus: int = 1) -> dict:
    """A catalogue card (id or dict) or a memory size in GiB: exactly one of them."""
    if (gpu is None) == (memory_gib is None):
        raise ValueError("give exactly one of gpu (catalogue id) or memory_gib")
    if gpu is not None:
        card = get_gpu(gpu) if isinstance(gpu, str) else dict(gpu)
        if card.get("unified_memory") and n_gpus != 1:
            raise ValueError(f"n_gpus: {card['name']} is one chip with unified memory; use n_gpus=1")
        memory = gpu_memory_bytes(card)
        if card.get("gpu_usable_gib") and card.get("unified_memory"):
            how = (
                f"{human_bytes(memory)} usable by the GPU of {card['memory_gib']} GiB unified memory "
                f"({card.get('gpu_usable_source', 'see the catalogue note')})"
            )
        elif card.get("gpu_usable_gib"):
            how = (
                f"{human_bytes(memory)} per GPU visible of its {card['memory_gib']} GiB "
                f"({card.get('gpu_usable_source', 'see the catalogue note')})"
            )
        else:
            how = f"{card['memory_gib']} GiB per GPU (source: {card.get('spec_source', 'the catalogue')})"
        return {
            "id": card.get("id"),
            "name": card.get("name", "custom"),
            "memory_bytes": memory,
            "how": how,
            "unified_memory": bool(card.get("unified_memory")),
            "card": card,
        }
    gib = finite_number("memory_gib", memory_gib, minimum=1 / 1024, maximum=2**20)
    return {
        "id": None,
        "name": f"{gib:g} GiB",
        "memory_bytes": int(gib * GIB),
        "how": f"{gib:g} GiB given",
        "unified_memory": False,
        "card": None,
    }


def check_tensor_parallel(arch: Architecture, tp: int, engine: str) -> None:
    """vLLM splits attention heads evenly over the tensor-parallel GPUs and KV heads evenly or by replicas."""
    if engine != "vllm" or tp == 1:
        return
    if arch.n_heads % tp:
        raise ValueError(
            f"n_gpus: vLLM's tensor parallelism needs the {arch.n_heads} attention heads to split evenly over {tp} GPUs"
        )
    heads = [layer.kv_heads for layer in arch.layers if layer.kind in ATTENTION_KINDS and arch.attention != "mla"]
    for h in set(heads):
        if h % tp and tp % h:
            raise ValueError(f"n_gpus: {plural(h, 'KV head')} cannot be split over {tp} GPUs, nor replicated evenly")


def default_gpu_memory_utilization(engine: str = "vllm", version: str = "v1") -> float:
    """vLLM's --gpu-memory-utilization when it is not given: 0.92 from 0.20 (VLLM_RECENT), 0.9 before."""
    return (
        VLLM_GPU_MEMORY_UTILIZATION_RECENT
        if engine == "vllm" and vllm_version_id(version) == VLLM_RECENT
        else VLLM_GPU_MEMORY_UTILIZATION
    )


def check_auto_len(max_model_len_auto: bool, engine: str, version: str) -> None:
    if max_model_len_auto and (engine != "vllm" or vllm_version_id(version) != VLLM_RECENT):
        raise ValueError(f"max_model_len_auto: --max-model-len auto is vLLM {VLLM_RECENT}'s (engine_version)")


def deployment(
    model,
    *,
    weights: str = "Q4_K_M",
    kv: str = "f16",
    gpu=None,
    memory_gib: float | None = None,
    tp: int = 1,
    pp: int = 1,
    engine: str = "llamacpp",
    version: str = "v1",
    params: float | None = None,
    checkpoint: dict | None = None,
    gpu_memory_utilization: float | None = None,
    block_size: int = VLLM_BLOCK_SIZE,
    n_ubatch: int = 512,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    allow_long_context: bool = False,
    max_model_len_auto: bool = False,
    prefix_caching: bool = False,
    speculative_tokens: int = 0,
    mtp: bool = False,
    mxfp4_backend: str | None = None,
    multimodal: bool = True,
    drafter: str | dict | None = None,
    sampler: str | None = None,
    custom_all_reduce: bool = True,
) -> Deployment:
    """A checked Deployment: every input validated here, a refusal naming its field.

    `model`: a catalogue id, a Hugging Face id in the catalogue, a config (path, dict, JSON text) or an
    Architecture; `params` for a config outside the catalogue. `checkpoint` (kvlab.memory.checkpoint's result:
    bytes, source) counts the weights as stored, in the format `weights` names; without it they are params x
    bits of `weights`. `gpu` (a catalogue id or card dict) or
    `memory_gib`. `engine` any of ENGINES (the verdict answers for llama.cpp and vLLM; SGLang and TensorRT-LLM
    have their budgets, kvlab.memory.sglang and .trtllm). `tp` GPUs in tensor parallel (for llama.cpp: GPUs in its layer split), `pp` vLLM's pipeline
    stages. `version`: vLLM's "v1" (0.8-0.19), "v0" (0.6-0.10 with the V0 engine), "0.20+" ("0.21+" accepted), or "v0-pre-mla"
    (0.4-0.7.0: V0 before MLA caching, where DeepSeek-V2/V3 cached every head's K and V).
    vLLM's `prefix_caching` and `speculative_tokens` change what a recurrent state takes per request; `mtp` says the
    drafter is the checkpoint's own MTP layers (their K and V are cached too; refused for a model without them).
    `mxfp4_backend` ("triton" or "marlin"): the kernel path vLLM takes for MXFP4 weights when it is not the one
    get_mxfp4_backend picks for the card with triton_kernels installed (an install without them runs Marlin).
    `drafter`: a separate draft model's Hugging Face id (kvlab.memory.drafters, vLLM only, with speculative_tokens):
    its weights load beside the model's and its attention layers cache K and V in the same pool.
    `sampler` ("native", "triton" or "flashinfer"): the top-k/top-p path of vLLM's sampler warm-up, where it is
    not the version's default (engines.vllm_sampler: a release's, or VLLM_USE_FLASHINFER_SAMPLER set).
    `custom_all_reduce` False: vLLM's --disable-custom-all-reduce, or a tensor-parallel group across nodes (vLLM's
    custom_all_reduce.py turns it off there): the group keeps NCCL's memory alone.
    """
    arch = model_architecture(model, params)
    version = vllm_version_id(version)  # a former name of a range ("0.21+") is the range it now is
    check_auto_len(max_model_len_auto, engine, version)
    tp = finite_number("n_gpus", tp, minimum=1, integer=True)
    if tp not in TENSOR_PARALLEL:
        raise ValueError(f"n_gpus must be one of {', '.join(map(str, TENSOR_PARALLEL))}, got {tp}")
    if gpu_memory_utilization is None:  # the version's own default: 0.92 from 0.20, 0.9 before
        gpu_memory_utilization = default_gpu_memory_utilization(engine, version)
    utilization = finite_number("gpu_memory_utilization", gpu_memory_utilization, minimum=0.01, maximum=1)
    n_ubatch = finite_number("n_ubatch", n_ubatch, minimum=1, maximum=1 << 20, integer=True)
    block_size = finite_number("block_size", block_size, minimum=1, integer=True)
    if block_size not in VLLM_BLOCK_SIZES:
        raise ValueError(f"block_size must be one of {', '.join(map(str, VLLM_BLOCK_SIZES))}, got {block_size}")
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {short_repr(engine)}")
    if engine == "vllm" and version not in VLLM_VERSIONS:
        raise ValueError(f"engine_version must be one of {', '.join(VLLM_VERSIONS)}, got {short_repr(version)}")
    k = engine_kv_dtype(kv) if engine in ("sglang", "trtllm") else kv_type(kv)
    if engine == "vllm" and k not in VLLM_KV_TYPES:
        raise ValueError(f"kv {k} is a llama.cpp cache type; vLLM takes f16, bf16, fp8, {', '.join(HEAD_SCALE_BYTES)}")
    if engine == "vllm" and k in HEAD_SCALE_BYTES and version in V0_RULES:
        # KVQuantMode (vllm/v1/kv_cache_interface.py) and its Triton kernels are V1-only (vllm#38378, 2026)
        raise ValueError(f"kv {k}: vLLM's per-token-head KV types are V1-engine only; give engine_version v1 or 0.20+")
    if engine == "llamacpp" and k not in LLAMACPP_KV_TYPES:
        raise ValueError(f"kv {k} is a vLLM cache type; llama.cpp takes f16, bf16, q8_0, q4_0 ...")
    if engine == "vllm" and version == VLLM_PRE_MLA:
        arch = vllm_pre_mla_architecture(arch)  # before MLA caching, DeepSeek's heads were cached in full
    check_tensor_parallel(arch, tp, engine)
    pp = finite_number("pipeline_parallel", pp, minimum=1, maximum=MAX_PIPELINE_STAGES, integer=True)
    if pp > 1 and engine == "llamacpp":
        raise ValueError(
            "pipeline_parallel: llama.cpp already splits whole layers over its GPUs (--split-mode layer); "
            "give the GPUs as n_gpus"
        )
    if pp > 1 and engine != "vllm":
        raise ValueError(f"pipeline_parallel: kvlab models pipeline stages for vLLM only, not {ENGINE_NAMES[engine]}")
    if pp > arch.n_layers:
        raise ValueError(f"pipeline_parallel: {pp} stages for {plural(arch.n_layers, 'layer')}")
    where = device(gpu, memory_gib, tp * pp)
    w = (
        stored_weights(checkpoint, weights, checkpoint.get("name", ""))
        if checkpoint
        else model_weights_bytes(arch, weights)
    )
    if engine == "vllm" and not mtp:
        w = without_mtp(w)  # the checkpoint's MTP head is loaded by an MTP drafter only
    if engine == "vllm" and not multimodal:
        w = without_vision(w, arch)  # --language-model-only: the vision tower is not loaded
    if engine == "vllm":
        if max_num_batched_tokens is not None:
            max_num_batched_tokens = finite_number(
                "max_num_batched_tokens", max_num_batched_tokens, minimum=1, maximum=1 << 24, integer=True
            )
        if max_num_seqs is not None:
            max_num_seqs = finite_number("max_num_seqs", max_num_seqs, minimum=1, maximum=1 << 20, integer=True)
    speculative_tokens = finite_number("speculative_tokens", speculative_tokens, minimum=0, maximum=64, integer=True)
    if (prefix_caching or speculative_tokens or mtp) and engine != "vllm":
        raise ValueError(
            "prefix_caching, speculative_tokens and mtp are vLLM settings here; llama.cpp sizes its cache by -c"
        )
    if mxfp4_backend is not None:
        if mxfp4_backend not in MXFP4_BACKENDS:
            raise ValueError(
                f"mxfp4_backend must be one of {', '.join(MXFP4_BACKENDS)}, got {short_repr(mxfp4_backend)}"
            )
        if engine != "vllm" or w["format"] != "MXFP4":
            raise ValueError("mxfp4_backend: vLLM's kernel path for MXFP4 weights (weights MXFP4, engine vllm)")
    if sampler is not None:
        if sampler not in VLLM_SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(VLLM_SAMPLERS)}, got {short_repr(sampler)}")
        if engine != "vllm":
            raise ValueError("sampler: the path of vLLM's sampler warm-up (engine vllm)")
    if not isinstance(custom_all_reduce, (bool, np.bool_)):
        raise ValueError(f"custom_all_reduce must be true or false, got {short_repr(custom_all_reduce)}")
    if not custom_all_reduce and engine != "vllm":
        raise ValueError("custom_all_reduce: vLLM's custom all-reduce (engine vllm)")
    if drafter is not None:
        drafter = get_drafter(drafter)
        if engine != "vllm":
            raise ValueError("drafter: kvlab models a separate draft model under vLLM only")
        if mtp:
            raise ValueError("drafter: give a separate drafter or mtp, not both")
        if not speculative_tokens:
            raise ValueError("drafter: give speculative_tokens too (vLLM's num_speculative_tokens)")
        if pp > 1:
            raise ValueError("drafter: kvlab models a separate drafter without pipeline parallel")
        check_drafter(drafter, arch)
    if mtp and not speculative_tokens:
        raise ValueError("mtp: give speculative_tokens too (vLLM's num_speculative_tokens)")
    if mtp and not arch.draft_layers:
        raise ValueError(
            f"mtp: {arch.name}'s config has no MTP layers (mtp_num_hidden_layers / num_nextn_predict_layers)"
        )
    return Deployment(
        arch=arch,
        weights=w,
        kv=k,
        device=where,
        engine=engine,
        version=version,
        tp=tp,
        pp=pp,
        gpu_memory_utilization=utilization,
        block_size=block_size,
        n_ubatch=n_ubatch,
        max_num_batched_tokens=max_num_batched_tokens,
        max_num_seqs=max_num_seqs,
        allow_long_context=bool(allow_long_context),
        max_model_len_auto=bool(max_model_len_auto),
        prefix_caching=bool(prefix_caching),
        speculative_tokens=speculative_tokens,
        mtp=bool(mtp),
        mxfp4_backend=mxfp4_backend,
        multimodal=bool(multimodal),
        drafter=drafter,
        sampler=sampler,
        custom_all_reduce=bool(custom_all_reduce),
    )
