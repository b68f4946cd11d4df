"""What an engine does with a GPU's memory: the defaults it picks for the card, the
memory it sees, the weights as it loads them, and what it keeps for itself.

The figures live in kvlab/data/engines.json, each with its source: vLLM's batch
defaults (vllm/engine/arg_utils.py), the memory the CUDA driver reports per card
(read off real start-up logs), and the reserve vLLM's profiling run takes besides
the weights, fitted by `bench/engine_calibration.py` on the real start-up logs in
tests/python/data/engine_logs/ (calibration.json lists each with its URL).

vLLM's own rule (vllm/v1/worker/gpu_worker.py, determine_available_memory):

    available KV = total_memory x gpu_memory_utilization - weights - (activation peak + non-torch memory)

`total_memory` is what `torch.cuda.mem_get_info` returns (79.2 GiB on an 80 GB H100,
not 80), the weights are what the loader allocated ("Model loading took"), and the
last term is measured by a profiling forward pass of max_num_batched_tokens tokens and
a sampler pass over max_num_seqs sequences. kvlab cannot run that pass, so it models
it with three terms fitted on real logs and says how far off the fit was on them.

>>> vllm_batch_defaults({"id": "h100-sxm", "name": "NVIDIA H100 SXM 80GB", "memory_gib": 80})["max_num_seqs"]
1024
>>> vllm_batch_defaults({"id": "a100-80gb", "name": "NVIDIA A100 80GB", "memory_gib": 80})["max_num_batched_tokens"]
2048
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from dataclasses import replace

from kvlab.memory.architecture import ATTENTION_KINDS, Architecture, attention_layer
from kvlab.memory.drafters import drafter_profile_bytes, drafter_weights
from kvlab.inputs import short_repr

# Cards whose tensor cores compute in FP4 (NVIDIA Blackwell: https://www.nvidia.com/en-us/data-center/technologies/blackwell-architecture/).
# On the others vLLM keeps MXFP4 weights packed and dequantizes them inside the GEMM ("Your GPU does not have
# native support for FP4 computation but FP4 quantization is being used. Weight-only FP4 compression will be used
# leveraging the Marlin kernel. This may degrade performance for compute-heavy workloads.", vLLM's log in
# https://github.com/vllm-project/vllm/issues/23278), so prefill reaches a share of the BF16 peak of its own.
NATIVE_FP4_CARDS = ("b200", "rtx-5090")
# CUDA compute capability of the catalogue's NVIDIA cards (NVIDIA's table, https://developer.nvidia.com/cuda-gpus:
# A100 8.0; RTX 3090 and RTX A5000 8.6; L40S, L4 and RTX 4090 (D) 8.9; H100 and H200 9.0; B200 10.0; RTX 5090 12.0).
CUDA_COMPUTE_CAPABILITY = {
    "a100-80gb": (8, 0),
    "a100-40gb": (8, 0),
    "rtx-3090": (8, 6),
    "rtx-a5000": (8, 6),
    "l40s": (8, 9),
    "l4": (8, 9),
    "rtx-4090": (8, 9),
    "rtx-4090-d": (8, 9),
    "h100-sxm": (9, 0),
    "h100-pcie": (9, 0),
    "h200": (9, 0),
    "b200": (10, 0),
    "rtx-5090": (12, 0),
}
ROCM_CARDS = ("mi300x",)
# vLLM's MXFP4 MoE kernel when FlashInfer's is not used (get_mxfp4_backend, VLLM_MXFP4_BACKEND_SOURCE): CUDA cards below
# compute capability 9.0 run Marlin (weight-only FP4, dequantized in the GEMM); 9.x runs OpenAI's Triton kernels
# (triton_kernels matmul_ogs); ROCm runs the Triton kernels too. Each path has its own fitted prefill efficiency.
VLLM_MXFP4_BACKEND_SOURCE = (
    "get_mxfp4_backend, vllm/model_executor/layers/quantization/mxfp4.py: without FlashInfer's MXFP4 MoE (opt-in on "
    "SM90: VLLM_USE_FLASHINFER_MOE_MXFP4_BF16), 'if envs.VLLM_MXFP4_USE_MARLIN or "
    "current_platform.get_device_capability()[0] < 9 or not has_triton_kernels() or not "
    'is_torch_equal_or_newer("2.8.0"): ... return Mxfp4Backend.MARLIN else: ... return Mxfp4Backend.TRITON\', and on '
    "ROCm with triton_kernels, TRITON "
    "(https://github.com/vllm-project/vllm/blob/afdb4a4ff429377d0fcfac3752e814ffc36ea41d/vllm/model_executor/layers/"
    "quantization/mxfp4.py#L89-L153)"
)


def mxfp4_kernel(card: dict) -> str:
    """vLLM's MXFP4 MoE kernel path on `card` (a gpus.json entry): "native", "marlin" or "triton".

    "native": a card with FP4 tensor cores (NATIVE_FP4_CARDS). Otherwise as vLLM's get_mxfp4_backend chooses when
    FlashInfer's MXFP4 kernels are not in use (VLLM_MXFP4_BACKEND_SOURCE): on CUDA, compute capability below 9.0
    (CUDA_COMPUTE_CAPABILITY) runs Marlin, 9.x OpenAI's Triton kernels (triton_kernels matmul_ogs); on ROCm
    (ROCM_CARDS), Triton. A card whose compute capability kvlab does not know keeps the Marlin constant."""
    cid = card.get("id")
    if cid in NATIVE_FP4_CARDS:
        return "native"
    if cid in ROCM_CARDS:
        return "triton"
    cc = CUDA_COMPUTE_CAPABILITY.get(cid)
    if cc is not None and (9, 0) <= cc < (10, 0):
        return "triton"
    return "marlin"


# Weight-only quantized linear layers: vLLM dequantizes each weight tile inside the GEMM (Marlin) and multiplies on
# the BF16/FP16 tensor cores, the same kernel family as MXFP4 below compute capability 9.0. AWQ and GPTQ (INT4) run
# Marlin on CUDA cards of compute capability 8.0 and up (awq_marlin / gptq_marlin, get_min_capability 80: "Marlin
# requires Ampere or newer GPUs"; is_awq_marlin_compatible is CUDA only); FP8 checkpoints run as weight-only W8A16
# through FP8 Marlin below 8.9, where there are no FP8 tensor cores.
WEIGHT_ONLY_MARLIN_SOURCE = (
    "https://docs.vllm.ai/en/stable/features/quantization/fp8/ ('Turing/Ampere GPUs are supported for W8A16 "
    "(weight-only FP8) utilizing Marlin kernels'; 'FP8 computation is supported on NVIDIA GPUs with compute "
    "capability >= 8.9'), https://github.com/vllm-project/vllm/pull/5975 (FP8 Marlin: 'a fast fused dequantization "
    "kernel for FP8 to BF16/FP16 conversion'), https://docs.vllm.ai/en/v0.9.2/features/quantization/supported_hardware.html "
    "('Marlin (GPTQ/AWQ/FP8)': Ampere, Ada, Hopper), vllm/model_executor/layers/quantization/awq_marlin.py "
    "(AWQMarlinConfig.get_min_capability 80, is_awq_marlin_compatible: CUDA only)"
)


def weight_only_kernel(card: dict, weights_format: str) -> str | None:
    """The weight-only kernel path of `weights_format` (a kvlab.memory.weights format name) on `card`: "marlin" where
    vLLM runs it as weight-only quantization through Marlin (WEIGHT_ONLY_MARLIN_SOURCE): INT4 (AWQ, GPTQ) from compute
    capability 8.0, FP8 from 8.0 to below 8.9; MXFP4 follows `mxfp4_kernel`. None otherwise: BF16, FP8 on its own
    tensor cores, ROCm and cards whose compute capability kvlab does not know."""
    if weights_format == "MXFP4":
        return mxfp4_kernel(card)
    cc = CUDA_COMPUTE_CAPABILITY.get(card.get("id"))
    if cc is None or cc < (8, 0):
        return None
    if weights_format == "INT4" or (weights_format == "FP8" and cc < (8, 9)):
        return "marlin"
    return None


GIB = 2**30
DATA = Path(__file__).resolve().parents[1] / "data" / "engines.json"


@cache
def engine_data() -> dict:
    """kvlab/data/engines.json: every engine figure kvlab uses, with its source."""
    return json.loads(DATA.read_text(encoding="utf-8"))


def vllm_data() -> dict:
    return engine_data()["vllm"]


def vllm_version() -> str:
    """The vLLM versions the model follows, in words."""
    return vllm_data()["version"]


def vllm_batch_defaults(card: dict | None) -> dict:
    """vLLM's OpenAI-server defaults for max_num_batched_tokens and max_num_seqs on this card.

    vLLM picks them from the device's total memory and name (EngineArgs' batch
    defaults): a card of 70 GiB or more that is not an A100 gets the large tier.
    `card` None (a memory size given by hand) gets the small tier, as vLLM does
    when it cannot query the device.
    """
    d = vllm_data()["batch_defaults"]
    large = d["large"]
    if card is not None:
        memory = driver_memory(card)["bytes"] / GIB
        name = f"{card.get('id', '')} {card.get('name', '')}".lower()
        if memory >= large["min_memory_gib"] and not any(word in name for word in large["not_named"]):
            return {
                "max_num_batched_tokens": large["max_num_batched_tokens"],
                "max_num_seqs": large["max_num_seqs"],
                "tier": "large",
                "how": large["why"],
                "source": d["source"],
            }
    small = d["small"]
    return {
        "max_num_batched_tokens": small["max_num_batched_tokens"],
        "max_num_seqs": small["max_num_seqs"],
        "tier": "small",
        "how": small["why"],
        "source": d["source"],
    }


# A vLLM log line's "[file.py:LINE]" tag: the line numbers move from release to release, so a log that prints no
# version is placed by them (engines.json vllm.log_tags: each tag the stored logs that state their version print)
VLLM_LOG_TAG = re.compile(r"\[((?:gpu_worker|gpu_model_runner|kv_cache_utils)\.py:\d+)\]")
_RELEASE = re.compile(r"(\d+)\.(\d+)(?:\.\d+)?(?:rc\d+)?$")


def vllm_release(version: str | None) -> str | None:
    """A stated vLLM version as its release ('0.20.2rc1.dev9+g01d4d1ad3' -> '0.20.2rc1'); None for a fork's tag."""
    text = str(version or "").split("+")[0].strip()
    text = re.sub(r"\.dev\d+$", "", text)
    return text if _RELEASE.fullmatch(text) else None


def release_minor(release: str) -> tuple[int, int]:
    """(major, minor) of a release as vllm_release gives it: '0.20.2rc1' -> (0, 20)."""
    major, minor = _RELEASE.fullmatch(release).groups()
    return int(major), int(minor)


def vllm_version_from_tags(text: str, table: dict | None = None) -> dict | None:
    """The vLLM release(s) a log's line tags belong to, when it prints no version; None when none is known or
    the tags disagree (a fork or a patched build). `table`: tag -> releases, engines.json's vllm.log_tags unless
    given (the leave-one-out check gives the others' tags).

    `value` is the earliest (major, minor) of the releases every known tag in the log was seen in.

    >>> vllm_version_from_tags("(Worker pid=1) INFO [gpu_worker.py:538] Available KV cache memory: 5.24 GiB")["value"]
    (0, 25)
    """
    table = vllm_data()["log_tags"]["tags"] if table is None else table
    found = list(dict.fromkeys(t for t in VLLM_LOG_TAG.findall(text) if t in table))
    if not found:
        return None
    releases = set.intersection(*(set(table[t]) for t in found))
    if not releases:
        return None
    return {"value": min(release_minor(r) for r in releases), "releases": sorted(releases), "tags": found}


VLLM_VERSIONS = ("v1", "v0", "0.20+", "v0-pre-mla")
VLLM_RECENT = "0.20+"  # the range whose start-up subtracts the CUDA graph estimate (kvlab/data/engines.json)
# former names of a range, still accepted (a share link or script that says "0.21+" means "0.20+")
VLLM_VERSION_ALIASES = {"0.21+": VLLM_RECENT}


def vllm_version_id(version: str) -> str:
    """The range id `version` names: itself, or the range a former name (VLLM_VERSION_ALIASES) now is."""
    return VLLM_VERSION_ALIASES.get(version, version)


VLLM_PRE_MLA = "v0-pre-mla"  # V0 before MLA caching (0.4-0.7.0): DeepSeek's heads cached in full
V0_RULES = ("v0", VLLM_PRE_MLA)  # the versions whose batch and profile follow V0's scheduler


def vllm_pre_mla_architecture(arch: Architecture) -> Architecture:
    """`arch` as vLLM before MLA caching (0.4-0.7.0) cached it: every MLA layer as num_heads K and V heads of 256.

    DeepseekV2Attention ran the heads through the ordinary Attention layer with head_size 256 (q, k and v
    zero-padded), so a layer cached num_heads x 256 K values and as many V values per token, about 90 times
    the latent MLA caches (kvlab/data/engines.json, versions.v0-pre-mla, with the log that shows it). Other
    models are returned as they are.
    """
    if arch.attention != "mla":
        return arch
    rule = vllm_data()["versions"][VLLM_PRE_MLA]
    head = rule["padded_head_size"]
    layers = tuple(
        attention_layer(layer.kind, arch.n_heads, head)
        if layer.kind in ATTENTION_KINDS and not layer.v_values
        else layer
        for layer in arch.layers
    )
    note = (
        f"vLLM before MLA caching (0.4-0.7.0): each layer caches {arch.n_heads} K and V heads of {head} values "
        f"(padded), not the MLA latent ({rule['source'].split(' ')[0]})"
    )
    return replace(arch, layers=layers, attention="mha", notes=(*arch.notes, note))


def vllm_cuda_graph_estimate(n_gpus: int = 1) -> dict:
    """What vLLM 0.20+ subtracts from the KV budget for CUDA graphs, per GPU, with its error band.

    vLLM measures it (vllm/v1/worker/gpu_model_runner.py, profile_cudagraph_memory: the largest and the
    second-largest capture of each graph mode, the rest extrapolated) and subtracts it in
    determine_available_memory (vllm/v1/worker/gpu_worker.py). kvlab cannot capture graphs, so it uses the
    constant `bench/engine_calibration.py --write` fits on the real logs that print the estimate, and says
    how far off it was on the logs it held out. `n_gpus` is accepted for the day the fit depends on it.
    """
    cg = vllm_data()["versions"][VLLM_RECENT]["cuda_graphs"]
    gib, band = cg["gib"], cg["band_gib"]
    held = cg.get("held_out", [])
    worst = max((abs(h["error_gib"]) for h in held), default=band)
    return {
        "bytes": int(gib * GIB),
        "gib": gib,
        "band_bytes": int(max(band, worst) * GIB),
        "band_gib": max(band, worst),
        "how": (
            f"+ {gib:.2f} GiB of CUDA graphs, which vLLM 0.20+ profiles and subtracts from the KV budget by default "
            f"(estimate: the median of {len(cg['fitted_on'])} logged estimates, off by up to {max(band, worst):.2f} "
            f"GiB on {len(held)} held-out log(s); it grows with the captured batch sizes and the layers per GPU)"
        ),
        "source": cg["source"],
    }


def vllm_mamba_blocks(available_bytes: int, layout: dict) -> int | None:
    """vLLM 0.20+'s "available Mamba cache blocks" for a hybrid layout: the pool's blocks less the null block.

    None for a layout without a recurrent state (the check does not apply)."""
    if not any(t["kind"] == "linear" for t in layout["types"]):
        return None
    return max(0, int(max(0, available_bytes) // layout["memory_per_block"]) - 1)


def vllm_mamba_refusal(max_num_seqs: int, blocks: int) -> str:
    """vLLM's refusal when max_num_seqs exceeds the Mamba cache blocks, worded as vLLM prints it."""
    return vllm_data()["versions"][VLLM_RECENT]["mamba_check"]["message"].format(seqs=max_num_seqs, blocks=blocks)


def vllm_v0_batched_tokens(max_model_len: int) -> int:
    """V0's max_num_batched_tokens: the whole prompt at once (at least 2048), or chunks of 2048 above 32K."""
    v0 = vllm_data()["versions"]["v0"]
    if max_model_len > v0["chunked_above"]:
        return v0["chunked_batched_tokens"]
    return max(max_model_len, v0["min_batched_tokens"])


def driver_memory(card: dict) -> dict:
    """The memory the CUDA driver reports for `card` (what vLLM multiplies by gpu_memory_utilization).

    Read off real logs where the catalogue has it (`driver_total_gib` with its
    source); otherwise the nominal size scaled by the H100's measured ratio, and
    said to be an estimate.
    """
    seen = vllm_data()["driver_memory"].get(card.get("id") or "")
    if seen:
        return {
            "bytes": int(seen["gib"] * GIB),
            "exact": True,
            "how": f"{seen['gib']:g} GiB as the CUDA driver reports it (vLLM logs: {', '.join(seen['sources'])})",
        }
    ratio = vllm_data()["driver_ratio"]
    nominal = card.get("gpu_usable_gib") or card["memory_gib"]
    return {
        "bytes": int(nominal * ratio["value"] * GIB),
        "exact": False,
        "how": f"{nominal:g} GiB nominal x {ratio['value']:.4f} (estimate: {ratio['why']})",
    }


def _activation_width(arch: Architecture) -> int:
    """Values per token live at the profiling pass's peak: the MLP's gate/up output and the residual."""
    inter = arch.intermediate_size or 4 * arch.hidden_size
    return 2 * inter + 4 * arch.hidden_size


def reserve_features(arch: Architecture, max_num_batched_tokens: int, max_num_seqs: int, n_gpus: int = 1) -> dict:
    """The measurable drivers of vLLM's non-KV, non-weight memory, in GiB: `sampler` is L, the sampler warm-up's
    logits in f32 (min(max_num_seqs, max_num_batched_tokens) rows, as _dummy_run gives the sampler), `activations`
    the forward's peak."""
    vocab = arch.vocab_size or 32000
    return {
        "sampler": min(max_num_seqs, max_num_batched_tokens) * vocab * 4 / GIB,
        "activations": max_num_batched_tokens * _activation_width(arch) * 2 / n_gpus / GIB,  # bf16
    }


VLLM_SAMPLERS = ("native", "triton", "flashinfer")


def vllm_sampler(version: str, release: str | None = None) -> str:
    """The top-k/top-p path vLLM's sampler warm-up takes (engines.json vllm.sampler_warmup): a stated `release`'s
    (a pip install's default: native up to 0.16, Triton 0.17-0.20, FlashInfer from 0.21), else the version label's."""
    data = vllm_data()["sampler_warmup"]
    rel = vllm_release(release) if release else None
    if rel:
        minor = release_minor(rel)
        for r in data["releases"]:
            if r["through"] is None or minor <= release_minor(r["through"]):
                return r["path"]
    return data["by_version"][vllm_version_id(version)]


def published_sampler(run: dict) -> str:
    """The sampler warm-up's path for a published run, benchmark point or log entry: its install's where it says
    (`sampler`, with its `sampler_why`), else its vLLM release's pip default (a release not stated: V1's); another
    engine's run borrows vLLM's accounting with FlashInfer's path (no sort: its sampler keeps no sorted copy)."""
    if run.get("sampler"):
        return run["sampler"]
    if run.get("engine", "vllm") != "vllm":
        return "flashinfer"
    return vllm_sampler("v1", run.get("engine_version"))


def sampler_peak(feats: dict, sampler: str | None) -> tuple[float, str]:
    """The profile's peak besides the fixed term, GiB, and how it was counted: the larger of the forward's
    activations and the sampler warm-up (multiple x L for `sampler`'s path: the forward's tensors are freed
    first); `sampler` None: the f32 logits alone beside the activations (TensorRT-LLM's proxy, no warm-up)."""
    L, act = feats["sampler"], feats["activations"]
    if sampler is None:
        return L + act, f"sampler logits {L:.2f} GiB + activations {act:.2f} GiB"
    path = vllm_data()["sampler_warmup"]["paths"][sampler]
    warm = path["multiple"] * L
    larger = "the warm-up" if warm >= act else "the activations"
    return max(warm, act), (
        f"the larger of the activations ({act:.2f} GiB) and the sampler warm-up on {path['label']} "
        f"({path['multiple']:g} x {L:.2f} GiB of f32 logits = {warm:.2f} GiB): {larger}"
    )


# Cards whose GPUs talk over PCIe in the deployments kvlab models: no NVLink on the L4, L40S, RTX 4090 (D) and RTX 5090
# (NVIDIA's data sheets); the RTX 3090 and RTX A5000 take an optional 2-way bridge, not assumed (the consumer and
# workstation boots kvlab scores run without one). vLLM allocates no custom all-reduce buffers there.
PCIE_ONLY_CARDS = ("l4", "l40s", "rtx-3090", "rtx-4090", "rtx-4090-d", "rtx-5090", "rtx-a5000")


#: Why a pipeline stage at tensor parallel 1 carries no custom all-reduce reserve.
PIPELINE_ONLY_WHY = (
    "vLLM builds custom all-reduce and symmetric-memory buffers for the tensor-parallel group alone "
    "(vllm/distributed/device_communicators/cuda_communicator.py, v0.14.1-v0.16.0: 'custom allreduce or torch symm "
    "mem can be used only by tp'), so the pipeline group has NCCL only, counted as a PCIe group's"
)


def has_nvlink(card: dict | None) -> bool:
    """False for PCIE_ONLY_CARDS; True otherwise (NVLink or Infinity Fabric data-centre cards, and a memory size
    given by hand: the larger tensor-parallel reserve, as before cards were told apart)."""
    return card is None or card.get("id") not in PCIE_ONLY_CARDS


def vllm_reserve(
    arch: Architecture,
    max_num_batched_tokens: int,
    max_num_seqs: int,
    n_gpus: int = 1,
    pp: int = 1,
    card: dict | None = None,
    sampler: str | None = None,
    custom_all_reduce: bool = True,
) -> dict:
    """An estimate of what vLLM's profiling run keeps besides the weights and KV, with its error band.

    reserve = fixed + the larger of the activations and the sampler warm-up on `sampler`'s path (VLLM_SAMPLERS;
    None: the logits alone added to the activations, TensorRT-LLM's proxy) (+ the tensor-parallel
    extra for NCCL and custom all-reduce buffers when n_gpus > 1: an NVLink pair's, or a PCIe pair's, by `card`;
    + the pipeline group's NCCL alone when pp > 1 at tensor parallel 1: PIPELINE_ONLY_WHY; `custom_all_reduce` False,
    vLLM's --disable-custom-all-reduce or a group that spans nodes: NCCL alone, as on PCIe), the fixed term fitted
    on real logs.
    `n_gpus` is the tensor-parallel size (it shards the activations); under `pp`-way
    pipeline parallel this is the last stage's reserve, the only one with a sampler
    pass (`stage_bytes` is every other stage's).
    """
    fit = vllm_data()["reserve_fit"]
    feats = reserve_features(arch, max_num_batched_tokens, max_num_seqs, n_gpus)
    peak, peak_how = sampler_peak(feats, sampler)
    parts = {"fixed": fit["coefficients"]["fixed"], "peak": peak}
    nccl_alone = fit["tensor_parallel_extra_pcie_gib"]  # NCCL without custom all-reduce buffers
    if n_gpus > 1:
        if not has_nvlink(card):
            parts["tensor_parallel"], why = nccl_alone, " (GPUs on PCIe, no custom all-reduce buffers)"
        elif not custom_all_reduce:
            parts["tensor_parallel"], why = nccl_alone, " (custom all-reduce off: NCCL alone)"
        else:
            parts["tensor_parallel"], why = fit["tensor_parallel_extra_gib"], ""
        extra_how = f" + {parts['tensor_parallel']:g} GiB for NCCL buffers{why}"
    elif pp > 1:
        parts["pipeline_parallel"] = nccl_alone
        extra_how = f" + {nccl_alone:g} GiB for the pipeline group's NCCL ({PIPELINE_ONLY_WHY})"
    else:
        extra_how = ""
    gib = sum(parts.values())
    stage = gib - peak + feats["activations"]  # a stage before the last: no sampler pass
    return {
        "bytes": int(gib * GIB),
        "gib": gib,
        "stage_bytes": int(stage * GIB),
        "parts_gib": parts,
        "band_bytes": int(fit["band_gib"] * GIB),
        "band_gib": fit["band_gib"],
        "how": (
            f"estimate: {parts['fixed']:.2f} GiB + {peak_how} "
            f"({min(max_num_seqs, max_num_batched_tokens)} rows x vocab x 4 B; {max_num_batched_tokens} tokens, bf16)"
            + extra_how
            + ("; stages before the last run no sampler pass" if pp > 1 else "")
            + f"; fitted on {fit['n_logs']} real vLLM logs, off by up to {fit['band_gib']:.2f} GiB on them"
        ),
    }


def vllm_vision_profile(
    arch: Architecture, max_num_batched_tokens: int, max_num_seqs: int, n_gpus: int = 1, sampler: str | None = None
) -> dict | None:
    """What vLLM's profiling pass adds to the reserve for a vision-language model's encoder, an ESTIMATE.

    Before the text model's dummy run, vLLM's profile_run runs the vision encoder on its largest image ("Encoder
    cache will be initialized with a budget of 16384 tokens, and profiled with 1 image items of the maximum feature
    size"); torch's peak is the larger of the two runs. The encoder's peak is counted as one block's four live
    tensors at its widest point, in bf16: the block's input and its norm (patches x hidden each) and the MLP's fc1
    output and activation (patches x intermediate each, split over the tensor-parallel GPUs as vLLM shards the MLP).
    What it adds is that peak less the text run's (kvlab's peak term: sampler_peak), where it is larger. Not
    fitted: of the eleven held-out Qwen3.5/3.6 start-ups it applies to, it brings ten within 5 %
    (bench/results/2026-12-06-engines-session14.md). None where kvlab does not know the tower."""
    if not arch.vision_encoder:
        return None
    hidden, inter, patches = arch.vision_encoder
    peak = patches * (2 * hidden + 2 * inter / n_gpus) * 2
    text = reserve_features(arch, max_num_batched_tokens, max_num_seqs, n_gpus)
    text_bytes = sampler_peak(text, sampler)[0] * GIB
    extra = max(0, int(peak - text_bytes))
    return {
        "bytes": extra,
        "gib": extra / GIB,
        "encoder_peak_bytes": int(peak),
        "text_peak_bytes": int(text_bytes),
        "how": f"the vision encoder's profile run on its largest image ({patches:,} patches): about "
        f"{peak / GIB:.2f} GiB at its widest (2 x hidden {hidden:,} + 2 x MLP {inter:,}"
        + (f" / {n_gpus} GPUs" if n_gpus > 1 else "")
        + f", bf16), {extra / GIB:.2f} GiB above the text model's run (an estimate, not fitted)",
    }


MXFP4_BACKENDS = ("triton", "marlin")


def mxfp4_path(card: dict | None, w: dict, given: str | None = None) -> str | None:
    """The MXFP4 MoE kernel path vLLM loads these weights for: the one given (vllm serve's environment decides it:
    VLLM_MXFP4_USE_MARLIN, an install without triton_kernels), else `mxfp4_kernel`'s for the card (Marlin for a
    memory size given by hand: no compute capability known). None for weights that are not MXFP4."""
    if w.get("format") != "MXFP4":
        return None
    return given or (mxfp4_kernel(card) if card else "marlin")


def _same_path(entry: dict, kernel: str | None) -> bool:
    """A measured entry keyed by kernel path applies on that path only; one without a path applies on any."""
    return entry.get("kernel") in (None, kernel)


def vllm_loaded_weights(arch: Architecture, w: dict, kernel: str | None = None) -> dict:
    """The weights as vLLM's loader allocates them: the formula's bytes, or a measured load where kvlab has one.
    MXFP4: the load measured on the same kernel path (Marlin and Triton repack the experts differently), else the
    one measured on another path, said so."""
    entries = [e for e in vllm_data()["loaded_weights"] if e["model"] == arch.name and e["format"] == w["format"]]
    entry = next((e for e in entries if _same_path(e, kernel)), None) or next(iter(entries), None)
    if entry is None:
        return dict(w, formula_bytes=w["bytes"])
    nbytes = int(entry["gib"] * GIB)
    other = entry.get("kernel") not in (None, kernel)
    return dict(
        w,
        bytes=nbytes,
        gib=nbytes / GIB,
        how=f"{entry['gib']:g} GiB as vLLM loads it ({entry['why']}; {entry['source']})"
        + (
            f"; measured on the {entry['kernel'].capitalize()} MXFP4 path, none on {kernel.capitalize()}"
            if other
            else ""
        ),
        formula_bytes=w["bytes"],
    )


def _measured_reserve(arch: Architecture, fmt: str, n_gpus: int, kernel: str | None = None) -> dict | None:
    for entry in vllm_data()["measured_reserve"]:
        if (
            entry["model"] == arch.name
            and entry["format"] == fmt
            and entry["n_gpus"] == n_gpus
            and _same_path(entry, kernel)
        ):
            return entry
    return None


def vllm_setup(
    card: dict | None,
    memory_bytes: int,
    w: dict,
    arch: Architecture,
    n_gpus: int = 1,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    version: str = "v1",
    max_model_len: int | None = None,
    pp: int = 1,
    mxfp4_backend: str | None = None,
    multimodal: bool = True,
    drafter: dict | None = None,
    sampler: str | None = None,
    custom_all_reduce: bool = True,
) -> dict:
    """Everything the vLLM model needs besides the KV cache, for one card (or a memory size given by hand).

    The memory vLLM multiplies by gpu_memory_utilization, its batch defaults for
    the card, the weights as loaded and the reserve (measured on a real log of
    this model where kvlab has one, else the fitted estimate), each with how it
    was counted. `n_gpus` is the tensor-parallel size, `pp` the pipeline stages.
    Under V0 the batch (and so the reserve) depends on `max_model_len`:
    `context_dependent` says so, and the caller asks again per context.
    `version` "0.20+" ("0.21+", its former name, is accepted) is V1's rule plus what 0.20 and later do at start-up: `cuda_graphs` (the estimate
    subtracted from the budget), `null_block` and `mamba_check` (see vllm_mamba_blocks).
    MXFP4 weights: the measured load and reserve of their kernel path (`mxfp4_path`; `mxfp4_backend` given, or the
    card's), reported as `mxfp4_kernel`.
    A separate `drafter` (kvlab.memory.drafters) adds its weights to the load and its profile run to the reserve.
    `sampler`: the top-k/top-p path of the profile's sampler warm-up (VLLM_SAMPLERS), else the version's
    (vllm_sampler). `custom_all_reduce` False: the tensor-parallel group keeps NCCL's memory alone (vllm_reserve).
    """
    version = vllm_version_id(version)
    if version not in VLLM_VERSIONS:
        raise ValueError(f"engine_version must be one of {', '.join(VLLM_VERSIONS)}, got {short_repr(version)}")
    sampler = sampler or vllm_sampler(version)
    defaults = vllm_batch_defaults(card)
    if version in V0_RULES:
        v0 = vllm_data()["versions"]["v0"]
        defaults = dict(
            defaults,
            max_num_batched_tokens=vllm_v0_batched_tokens(max_model_len or 2048),
            max_num_seqs=v0["max_num_seqs"],
            how=v0["why"],
            source=v0["source"],
        )
    if max_num_batched_tokens is not None:
        defaults = dict(defaults, max_num_batched_tokens=max_num_batched_tokens, how="--max-num-batched-tokens given")
    if max_num_seqs is not None:
        defaults = dict(defaults, max_num_seqs=max_num_seqs, how=defaults["how"] + "; --max-num-seqs given")
    if card is None:
        usable = {"bytes": memory_bytes, "exact": True, "how": "the memory given"}
    else:
        usable = driver_memory(card)
    kernel = mxfp4_path(card, w, mxfp4_backend)
    measured = _measured_reserve(arch, w["format"], n_gpus, kernel) if pp == 1 else None
    if measured:
        fit = vllm_data()["reserve_fit"]
        fitted = vllm_reserve(
            arch,
            defaults["max_num_batched_tokens"],
            defaults["max_num_seqs"],
            n_gpus,
            card=card,
            sampler=sampler,
            custom_all_reduce=custom_all_reduce,
        )
        gib = fitted["gib"] + measured["extra_gib"]
        reserve = {
            "bytes": int(gib * GIB),
            "gib": gib,
            "band_bytes": int(measured["band_gib"] * GIB),
            "band_gib": measured["band_gib"],
            "how": f"{fitted['gib']:.2f} GiB fitted at these batch settings ({fitted['how']}) + "
            f"{measured['extra_gib']:g} GiB measured "
            + (f"on vLLM's {kernel.capitalize()} MXFP4 path " if measured.get("kernel") else "")
            + f"for this model ({measured['why']}; {', '.join(measured['sources'])})",
            "fitted_gib": fitted["gib"],
            "fit_logs": fit["n_logs"],
        }
        reserve["stage_bytes"] = reserve["bytes"]
    else:
        reserve = vllm_reserve(
            arch,
            defaults["max_num_batched_tokens"],
            defaults["max_num_seqs"],
            n_gpus,
            pp,
            card,
            sampler,
            custom_all_reduce,
        )
    # a vision-language model's encoder profile (multimodal False: --language-model-only, or every modality at 0 in
    # --limit-mm-per-prompt); under pipeline parallel it runs on the first stage, not counted here
    vision = (
        vllm_vision_profile(arch, defaults["max_num_batched_tokens"], defaults["max_num_seqs"], n_gpus, sampler)
        if multimodal and pp == 1
        else None
    )
    if vision and vision["bytes"]:
        reserve = dict(
            reserve,
            bytes=reserve["bytes"] + vision["bytes"],
            gib=reserve["gib"] + vision["gib"],
            stage_bytes=reserve.get("stage_bytes", reserve["bytes"]) + vision["bytes"],
            how=f"{reserve['how']}; + {vision['how']}",
        )
    loaded = vllm_loaded_weights(arch, w, kernel)
    if drafter:
        dw = drafter_weights(drafter, n_gpus)
        extra = dw["bytes_per_gpu"] * n_gpus  # the weights are the model's over its GPUs; each GPU holds its share
        loaded = dict(loaded, bytes=loaded["bytes"] + extra, gib=(loaded["bytes"] + extra) / GIB)
        loaded["how"] = f"{loaded['how']}; {dw['how']}"
        profile = drafter_profile_bytes(drafter, defaults["max_num_batched_tokens"])
        reserve = dict(
            reserve,
            bytes=reserve["bytes"] + profile["bytes"],
            gib=reserve["gib"] + profile["bytes"] / GIB,
            stage_bytes=reserve.get("stage_bytes", reserve["bytes"]) + profile["bytes"],
            how=f"{reserve['how']}; + {profile['how']}",
        )
    recent = version == VLLM_RECENT
    return {
        "engine": "vllm",
        "version_id": version,
        # vLLM 0.20+: the CUDA graph estimate comes off the budget, the null block off the pool, and a hybrid
        # model's max_num_seqs is checked against its Mamba cache blocks (kvlab/data/engines.json, each with its source)
        "cuda_graphs": vllm_cuda_graph_estimate(n_gpus) if recent else None,
        "null_block": recent,
        "mamba_check": recent,
        "version": vllm_data()["versions"][version]["label"],
        "context_dependent": version in V0_RULES and max_num_batched_tokens is None,
        "usable_bytes": usable["bytes"],
        "usable_exact": usable["exact"],
        "usable_how": usable["how"],
        "max_num_batched_tokens": defaults["max_num_batched_tokens"],
        "max_num_seqs": defaults["max_num_seqs"],
        "defaults_how": f"{defaults['how']} ({defaults['source']})",
        "weights": loaded,
        "reserve": reserve,
        "vision_profile": vision,
        "mxfp4_kernel": kernel,
        "sampler": sampler,
    }
