"""A serving benchmark, simulated: vLLM V1's scheduler over a stream of requests, timed by the roofline.

`simulate` plays what `vllm bench serve` does against `vllm serve`: requests are sent at a
rate (or a fixed number at a time), the engine schedules them step by step, and the client
measures each one's time to first token, time per output token and inter-token latencies.
The result has the numbers `vllm bench serve` prints ("Serving Benchmark Result"), plus what a
benchmark cannot show: preemptions, KV cache use and the queue over time, each request's life.

What a step is
--------------
One call of vLLM's `Scheduler.schedule()` and one forward pass. vLLM V1 has no prefill or
decode phase: each request has `num_tokens` (prompt + generated) and `num_computed_tokens`,
and a step gives tokens to requests so the second catches up with the first
(vllm/v1/core/sched/scheduler.py, Scheduler.schedule and _preempt_request, read at commit
00024d314514900f361ad072af6931e403b7f589 of vllm-project/vllm, a 2026 main-branch snapshot;
vllm/v1/core/kv_cache_manager.py, allocate_slots and get_computed_blocks, at commit
003df2961dd8830c317a61f9745ccd557da9fa06. Not diffed against release tags: the rules below are
the V1 scheduler's since vLLM 0.8 as far as kvlab knows, but unverified per release):

1. The running requests, in the order they were admitted: each gets
   min(num_tokens - num_computed_tokens, token budget left) tokens (a decode: 1; a prompt not
   yet finished: the next chunk, "chunked prefill"), the budget being max_num_batched_tokens per
   step. Each needs KV blocks for the tokens it will hold (`kv_cache_manager.allocate_slots`);
   when the free pool is short, the request admitted last is preempted (`self.running.pop()`,
   `_preempt_request`): its blocks are freed, num_computed_tokens goes back to 0 and it returns
   to the FRONT of the waiting queue, so it must prefill its prompt and the tokens it had
   generated again (recompute). If the request being scheduled is itself the last, it is the
   one preempted and the running loop stops.
2. Only if nothing was preempted in this step: the waiting requests, in arrival order
   (preempted ones first), while the token budget lasts, fewer than max_num_seqs run, and the
   pool has the blocks for the first chunk; the first that does not fit stops admission (no
   skipping ahead). With prefix caching, the blocks of a cached shared prefix are taken from
   the cache (at most num_tokens - 1 tokens: the last one is always computed, for its logits;
   vllm/v1/core/kv_cache_manager.py, get_computed_blocks) and not prefilled again. Prefix
   caching is on by default in V1, and it also keeps a preempted request's work: its freed
   blocks keep their hashes at the back of the free queue (`KVCacheManager.free` frees them in
   reverse order, "so that the tail blocks are evicted first"; `BlockPool.free_blocks`), and new
   blocks are taken from the front, so its readmission finds them unless as many blocks as were
   free before it have been allocated since. A request whose chunk then does not fit waits,
   without recomputing what it had.
3. The forward pass: a request whose computed tokens reach its num_tokens samples one token (its
   first token when that ends its prompt); one that reaches its output length finishes and
   frees its blocks.

The block pool is the one the fit verdict sizes for this deployment
(`kvlab.memory.verdict.verdict` at --max-model-len, one sequence): gpu_memory_utilization x
memory - weights - activation reserve, divided into blocks of `block_size` tokens of every
layer (`kvlab.memory.kv_bytes.vllm_kv_cache` layout, `vllm_blocks`). A request holds
cdiv(tokens, block_size) blocks per full-attention group (a sliding group only the blocks its window
still covers, as vLLM frees the others before each allocation: `RequestBlocks`; a chunked group at most what its
chunk needs, a recurrent state one block).

Time of a step: the roofline of `kvlab.memory.serving`, applied to what the step really does,
plus what the roofline leaves out. Bytes read = weights (once per step; an MoE reads the experts its
tokens touch: with routing spread evenly a token uses a share s = experts per token / experts of the
catalogue config, so T tokens touch 1 - (1 - s)^T of the expert weights, the rest of the model every
step) + each scheduled request's KV cache at its current length (`kv_cache_bytes`; under tensor parallelism x the
copies the GPUs read, `kv_read_replication`: an MLA latent is read by every GPU); FLOPs = 2 x
active params per token scheduled, less the vocabulary's tables (the embedding is a gather), + the lm_head once per
request in the step (vLLM computes logits at one position per scheduled request, not at every prompt token:
`vocab_tables`; session 26) + attention of every token over its context (`attention_flops`,
summed over a prefill chunk's positions, as `prefill_flops`) + for an MoE, moe_half_rows rows' worth of each touched
expert's FLOPs (its GEMM, one per expert, at efficiency x m / (m + moe_half_rows) with m = T s rows each: the rows a
step gives each expert are few, so its weight tiles, pipeline and block padding are not amortised). The step takes

    max(bytes / bandwidth / bandwidth_efficiency, FLOPs / peak / compute_efficiency)
    + step_overhead_ms + requests in the step x request_overhead_us
    + (tensor parallel) 2 x layers x (2 (n - 1) x allreduce_latency_us + tokens x hidden_size x 2 bytes
      x 2 (n - 1) / n / allreduce_gb_s)

(with --async-scheduling the CPU's part overlaps the GPU's, and the step takes the longer of the two instead of
their sum: `step_time`. Under vLLM the overlapping part is step_overhead_ms and a share of requests x
request_overhead_us, `async_hidden_share`, the rest staying in the step; SGLang's overlap scheduler hides all of
it),

and requests reach the engine through the API server one after another, frontend_ms each (plus
chat_template_ms where the engine parses a chat template per request); requests sent at the same instant are taken
in together.

- bandwidth_efficiency: the share of HBM bandwidth a decode step reaches (weights and KV reads);
- compute_efficiency: the share of the dense BF16 peak a prefill chunk reaches;
- moe_half_rows: the rows per expert at which an MoE's expert GEMMs reach half that share (session 24,
  bench/results/2026-12-07-serving-session24.md);
- weight_only_fp4_compute_efficiency: the same for MXFP4 weights on a card without FP4 tensor cores
  (NATIVE_FP4_CARDS), where vLLM dequantizes the packed weights inside each GEMM, on vLLM's Marlin path (CUDA
  compute capability below 9.0: A100, L40S, RTX 4090, ...);
- weight_only_compute_efficiency: the same for the other weight-only formats vLLM runs through Marlin
  (`kvlab.memory.engines.weight_only_kernel`: INT4 AWQ/GPTQ, and FP8 below compute capability 8.9), all of whose
  linear layers are quantized, each GEMM at the batch's full row count (until session 25 these ran at the MXFP4
  Marlin constant; bench/results/2026-12-07-serving-session25.md);
- weight_only_fp4_triton_compute_efficiency: the same on vLLM's Triton path (OpenAI's triton_kernels matmul_ogs:
  compute capability 9.x, H100 and H200, and ROCm), `kvlab.memory.engines.mxfp4_kernel`;
- moe_compute_efficiency: the share of the dense BF16 peak reached by an MoE's routed experts on no weight-only
  path, which vLLM runs through its fused-MoE kernels (BF16 experts, and FP8 or FP4 on cards with tensor cores for
  them), the rest of the model's FLOPs at compute_efficiency (session 26: one constant for both had dense prefill on an A100 too slow and MoE prefill too
  fast; fitted at 0.118 against compute_efficiency 0.433, bench/results/2026-12-07-serving-session26.md);
- attention FLOPs of a prefill chunk in an MLA model (DeepSeek) count the expanded heads vLLM prefills with
  (qk_nope + qk_rope and v_head_dim per head), a decode token's the absorbed latent form;
- frontend_ms: the API server's time per request (HTTP, request validation, tokenization) before the engine's
  queue sees it. The server takes requests in turn, each waiting for its own: a request that finds it idle enters
  frontend_ms after it was sent. Requests sent at the same instant (all at once, or a closed loop's first slots) enter
  together, k x frontend_ms after the server is free: vLLM's API server is one asyncio event loop, whose FIFO ready
  queue runs each waiting handler's next step in turn, so k handlers ready at once finish their intake together
  (asyncio.BaseEventLoop._run_once runs the callbacks ready at the start of each pass; published runs of 1,000
  four-token chats on vLLM 0.11.0 have their median TTFT near the end of the run, 18-21 s of 22-33 s, on A100, H100
  and H200 alike: bench/results/2026-12-07-serving-session22.md);
- chat_template_ms: the API server's extra time per request to parse the model's chat template, which vLLM 0.11.0
  does on every chat request for every model but gpt-oss (`chat_template_ms()`, measured by
  bench/chat_template_cost.py); 0 for completions and for engines that cache it;
- step_overhead_ms: a fixed time per step (vLLM's CPU side: scheduling, input preparation, launches);
- request_overhead_us: a time per request in the step (sampling, output processing, detokenization:
  vLLM's per-request CPU work, and whatever else grows with the batch that the roofline misses);
- async_hidden_share: the share of that per-request time that vLLM's --async-scheduling hides under the GPU's
  (the rest is GPU work or stays serial); fitted apart, on the runs of pages that ran one workload with and without
  the flag (`async_scheduling_fit()`, bench/serving_async_calibration.py), since no run of the main fit uses it;
- all-reduces: tensor parallelism sums each layer's attention and MLP outputs over the GPUs (2 per
  layer; a ring moves 2 (n - 1) / n of the activations over each GPU's link, `allreduce_gb_s`
  defaulting to the card's interconnect in kvlab/data/gpus.json, else PCIe 5 from interconnects.json),
  in 2 (n - 1) steps each paying allreduce_latency_us (the ring's alpha-beta cost: Thakur, Rabenseifner
  and Gropp, "Optimization of Collective Communication Operations in MPICH", 2005,
  https://doi.org/10.1177/1094342005051521), so 2 GPUs pay 2 latencies per all-reduce and 8 pay 14.

Every default is fitted on published `vllm bench serve` runs (tests/python/data/serving_runs.json,
the runs bench/serving_validation.py's USED_FOR_CALIBRATION names; the other vLLM runs are held
out) by bench/serving_sim_calibration.py, and stored with those runs in
kvlab/data/serving_benchmarks.json ("simulation"; `simulation_constants()`). They are effective
values: the fitted all-reduce latency, for one, also carries whatever else tensor-parallel steps cost
(expert routing across GPUs, synchronisation), and the per-request time what grows with the batch.

Speed: steps in which every running request decodes and nothing can be admitted (the queue is
empty, or max_num_seqs, the token budget or the pool stops its head) repeat with the same
requests, so they are taken together: up to the next event (a request finishes, a block runs
short, a request arrives that could be admitted), the step times of that stretch are computed
at once, each request's context growing by one per step. The cost is then per event (a stretch, or a
step that admits or preempts). A numpy call costs a few microseconds in Pyodide whatever the array's
size, more than the arithmetic on a few requests, so a small running batch (SMALL_BATCH requests or
fewer, as at a few requests per second) is simulated in Python ints and floats, in lists in running
order, and a large one with numpy, in arrays indexed by request (the ids as np.intp; the loop keeps
numpy calls few: send times are read from a list, and what a step changes is checked only where it can
change). Both give the same bits: the same floating-point operations in the same order on the same
numbers (a sum whose order is numpy's own, pairwise, is left to numpy).

The client (vllm/benchmarks/serve.py and vllm/benchmarks/datasets.py): requests are sent with
gaps drawn from a gamma distribution of shape `burstiness` (1: Poisson) and mean 1 / rate, all
at once at rate inf; --max-concurrency holds at most that many in flight (a request waits for
a slot, and its clock starts when it is sent). `burstiness` inf sends them evenly spaced, 1 / rate apart (the
gamma's limit as its shape grows), as guidellm's `constant` profile does (AsyncConstantStrategy.next_request_time:
start + index / rate, https://github.com/vllm-project/guidellm/blob/v0.5.3/src/guidellm/scheduler/strategies.py);
guidellm also holds at most 512 requests in flight unless told otherwise (settings.max_concurrency, v0.4-v0.6), and
times TTFT from the send (request_stats.time_to_first_token_ms), so a guidellm constant-rate run is this client with
burstiness inf and max_concurrency=512. (bench/serving_validation.py still simulates GPUStack's guidellm runs with
vllm bench serve's client: session 26 tried theirs and, by the rule written before, did not store it;
bench/results/2026-12-07-serving-session26.md.) TTFT = first token - send; TPOT = (latency -
TTFT) / (output tokens - 1); ITL = every gap between two tokens of a request; the benchmark's
duration runs from the first send to the last token. The "random" dataset draws lengths
uniformly in [floor(L x (1 - r)), ceil(L x (1 + r))] (output at least 1) after a shared prefix
of `prefix_len` tokens (--random-prefix-len), and ignores EOS, so every request generates its
output length exactly.

SGLang
------
`engine="sglang"` plays SGLang's scheduler instead (sgl-project/sglang,
python/sglang/srt/managers/scheduler.py get_next_batch_to_run / get_new_batch_prefill /
update_running_batch at commit d51c1c21d1ac; schedule_policy.py PrefillAdder at 00550cd11b35;
schedule_batch.py retract_decode; defaults from environ.py and server_args.py). Where it differs
from vLLM V1:

1. Prefill first, alone. Each iteration first tries to form a prefill batch from the waiting queue
   (and the request part-way through chunked prefill, which goes first); if it can, that batch
   runs by itself and the running requests do not decode in it (enable_mixed_chunk is off by
   default). Only when no prefill can be formed do all running requests decode one token.
2. Admission reserves the future. A waiting request is admitted if the free tokens (evictable
   cache included), less every running request's remaining answer (capped at 4,096) x
   new_token_ratio, exceed its prompt plus its whole answer (capped at 4,096). new_token_ratio
   starts at 0.7 x schedule_conservativeness, falls by (0.7 - 0.098) / 600 each decode step to
   0.098, and resets on idle. The first request that does not fit marks the batch "full", and no
   prefill is tried again until a request leaves the running batch.
3. Budgets of a prefill batch: chunked_prefill_size tokens (the card's tier, kvlab.memory.sglang),
   max_prefill_tokens (16,384), max_running_requests; a prompt longer than the chunk left is cut,
   and only one request is part-way at a time.
4. Retraction instead of preemption: when a decode step's tokens do not fit, requests are retracted
   (their tokens freed, back of the queue, recomputed later) in order of fewest tokens generated,
   then longest prompt, until 20 decode steps of the rest fit; new_token_ratio becomes
   (tokens generated + 20 x running) / their answer lengths.
5. The pool is SGLang's token pool (max_total_num_tokens, page size 1), as kvlab.memory.sglang
   sizes it; the overlap scheduler is on (CPU time overlaps GPU time); decode batches above
   cuda_graph_max_bs pay the eager launch cost.

The step's time is the same roofline with the constants fitted on vLLM runs, used as they are: every
SGLang run in the validation is held out.

Not modelled: speculative decoding, CUDA-graph padding of batch sizes, the prefill-token threshold for long prompts
(long_prefill_token_threshold), priority scheduling, LoRA, multimodal encoders, KV offloading or
transfer, the free-block watermark and full-sequence admission checks of recent vLLM
(allocate_slots' `watermark_blocks`, `full_sequence_must_fit`), the prefix cache's hits on a
preempted request's own freed blocks where the layout has recurrent or chunked-local layers or the
run has a shared prefix, blocks of a chunked-local
group freed as the chunk moves (held up to the group's need instead), pipeline parallelism,
network and detokenization time, the tokenizer's special tokens, requests that stop early.
"""

from __future__ import annotations

import json
import math
from bisect import bisect_left, bisect_right
from collections import deque
from functools import cache
from itertools import accumulate

import numpy as np

from kvlab.memory.architecture import CHUNKED, FULL, LINEAR, NONE, SLIDING, Architecture
from kvlab.memory.catalogue import DATA_DIR, get_gpu, get_model, model_architecture
from kvlab.memory.kv_bytes import (
    MAX_CONTEXT,
    VLLM_BLOCK_SIZE,
    VLLM_GPU_MEMORY_UTILIZATION,
    gpu_stages,
    kv_cache_bytes,
    vllm_blocks,
    vllm_kv_cache,
)
from kvlab.memory.serving import attention_flops, linear_flops, serving_benchmarks, vocab_tables
from kvlab.memory.weights import PARTIAL_FORMATS, embedding_table_bytes, weights_bytes
from kvlab.memory import sglang
from kvlab.memory.deployment import Refused, deployment
from kvlab.memory.engines import driver_memory, mxfp4_kernel, weight_only_kernel
from kvlab.memory.verdict import verdict as verdict_of
from kvlab.inputs import finite_number, one_of, short_repr

DATASETS = ("fixed", "random", "sharegpt-like")
MAX_PROMPTS = 100_000
MAX_TIMELINE_ROWS = 200
MAX_POINTS = 200
# "sharegpt-like": lognormal lengths whose mean is the input_len / output_len asked for. The spreads
# (sigma of the log) are kvlab's assumption for a long-tailed chat workload, not fitted on the
# ShareGPT file; lengths are kept to [4, 8 x the mean], as vLLM's ShareGPT sampler drops sequences
# under 4 tokens and caps long ones (vllm/benchmarks/datasets.py, is_valid_sequence).
SHAREGPT_SIGMA_INPUT = 1.0
SHAREGPT_SIGMA_OUTPUT = 0.9
SHAREGPT_MIN_TOKENS = 4
SHAREGPT_MAX_FACTOR = 8
JUMP_STEPS = 256  # the most identical decode steps taken together (bounds the arrays of one stretch)
# A running batch of at most SMALL_BATCH requests is simulated in Python ints and floats (lists in running order), a
# larger one with numpy (arrays indexed by request): numpy's fixed cost per call outweighs its speed on a few
# requests. The batch moves to numpy above SMALL_BATCH and back at SMALL_BATCH_BACK or fewer. The step times of a
# stretch longer than SMALL_STEPS come from numpy either way. Both give the same bits: the same operations, in the same
# order, on the same numbers.
SMALL_BATCH = 48
SMALL_BATCH_BACK = 32
SMALL_STEPS = 64
ACTIVATION_BYTES = 2  # a token's activations cross an all-reduce in BF16/FP16: hidden_size x 2 bytes
SIMULATION_KEYS = (
    "bandwidth_efficiency",
    "compute_efficiency",
    "step_overhead_ms",
    "request_overhead_us",
    "allreduce_latency_us",
    "frontend_ms",
    "weight_only_fp4_compute_efficiency",
    "weight_only_fp4_triton_compute_efficiency",
    "moe_half_rows",
    "weight_only_compute_efficiency",
    "moe_compute_efficiency",
)
MXFP4_KERNEL_CONSTANT = {
    "marlin": "weight_only_fp4_compute_efficiency",
    "triton": "weight_only_fp4_triton_compute_efficiency",
}
# FP8 weights on a card without FP8 tensor cores and INT4 (AWQ, GPTQ) run weight-only through Marlin too
# (`weight_only_kernel`), at a constant of their own: Marlin's kernel for them dequantizes every weight of every linear
# layer inside the GEMM, and at a large batch it is slower than the BF16 GEMM it replaces (Marlin's README: near-ideal
# speedups to batch 16-32, falling off beyond; GPUStack measured weight-only AWQ, GPTQ and GPTQ-Int8 slower than BF16
# at 1,000 ShareGPT prompts on an A100 and an H100: docs/performance-lab/references/
# the-impact-of-quantization-on-vllm-inference-performance.md at gpustack/gpustack 1f37f1b8), where MXFP4's path is
# fitted on gpt-oss, whose experts alone are quantized
WEIGHT_ONLY_CONSTANT = "weight_only_compute_efficiency"
# an MoE's routed experts on no weight-only path run through vLLM's fused-MoE kernels (BF16, or FP8/FP4 on cards with
# tensor cores for them), at a constant of their own (session 26, candidate A3)
MOE_CONSTANT = "moe_compute_efficiency"
KERNEL_CONSTANTS = (*MXFP4_KERNEL_CONSTANT.values(), WEIGHT_ONLY_CONSTANT, MOE_CONSTANT)


def kernel_constant(kernel: str | None, weights_format: str) -> str | None:
    """The fitted constant a weight-only kernel path runs at (None: none, the BF16 compute_efficiency)."""
    if kernel == "marlin" and weights_format != "MXFP4":
        return WEIGHT_ONLY_CONSTANT
    return MXFP4_KERNEL_CONSTANT.get(kernel)


OVERHEAD_KEYS = ("step_overhead_ms", "request_overhead_us", "allreduce_latency_us", "frontend_ms")
# --enforce-eager: no CUDA graphs (and in V1 no torch.compile), so every step launches each layer's kernels from
# Python; the cost adds to the step's GPU time, per layer. Not fitted: measured outside kvlab's runs, on vLLM V1
# (vllm-omni, the vLLM project's omni-modal serving), Qwen2.5-Omni-7B's thinker (Qwen2.5-7B: 28 layers) on an
# A800 80GB, one request, the same deployment with enforce_eager true and false, TPOT ~22 -> ~13 ms (audio) and
# ~23 -> ~13 ms (text): 9-10 ms / 28 layers = 0.32-0.36 ms, the middle taken
# (https://github.com/vllm-project/vllm-omni/issues/7960, comment of 2026-09-22; the pair run with the GPUs alone).
# The cost is the host's (Python and launches), so it moves with the CPU, not the card; it is additive, not a
# bound beside the GPU's time: the pair's GPU time (13 ms) is above its eager cost (9.5 ms), yet the step grew
# by the whole cost.
EAGER_LAYER_MS = 0.34
EAGER_SOURCE = "https://github.com/vllm-project/vllm-omni/issues/7960"
# SGLang's scheduler (engine="sglang"), as read in sgl-project/sglang: python/sglang/srt/managers/scheduler.py
# (get_next_batch_to_run, get_new_batch_prefill, update_running_batch) at commit d51c1c21d1ac,
# python/sglang/srt/managers/schedule_policy.py (PrefillAdder.add_one_req, add_chunked_req, budget_state) at
# 00550cd11b35, python/sglang/srt/managers/schedule_batch.py (retract_decode) and the defaults of
# python/sglang/srt/environ.py (SGLANG_INIT_NEW_TOKEN_RATIO 0.7, SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR 0.14,
# SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS 600, SGLANG_RETRACT_DECODE_STEPS 20, SGLANG_CLIP_MAX_NEW_TOKENS_ESTIMATION 4096)
# and server_args.py (max_prefill_tokens 16384, schedule_policy "fcfs", enable_mixed_chunk False, the overlap
# scheduler on). Module docstring, "SGLang".
SGLANG_SOURCES = (
    "sgl-project/sglang python/sglang/srt/managers/scheduler.py@d51c1c21d1ac, "
    "python/sglang/srt/managers/schedule_policy.py@00550cd11b35, python/sglang/srt/environ.py"
)
SGLANG_INIT_NEW_TOKEN_RATIO = 0.7
SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR = 0.14
SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS = 600
SGLANG_RETRACT_DECODE_STEPS = 20
SGLANG_CLIP_MAX_NEW_TOKENS = 4096
SGLANG_MAX_PREFILL_TOKENS = 16384
ENGINES = ("vllm", "sglang")


@cache
def interconnects() -> dict:
    """kvlab/data/interconnects.json (the links a KV cache or an all-reduce travels over)."""
    return json.loads((DATA_DIR / "interconnects.json").read_text(encoding="utf-8"))


def simulation_constants() -> dict:
    """The step-time constants fitted on published vllm bench serve runs, with the runs they came from.

    kvlab/data/serving_benchmarks.json, key "simulation", written by bench/serving_sim_calibration.py --write.
    """
    fit = serving_benchmarks().get("simulation")
    if not fit or any(k not in fit.get("constants", {}) for k in SIMULATION_KEYS):
        raise ValueError(
            "serving_benchmarks.json has no fitted simulation constants: run bench/serving_sim_calibration.py --write"
        )
    return {**fit["constants"], "runs": fit.get("runs", [])}


def async_scheduling_fit() -> dict:
    """vLLM's --async-scheduling: the share of the per-request time it hides (`hidden_share`), with the runs it came
    from. kvlab/data/serving_benchmarks.json, key "async_scheduling", written by
    bench/serving_async_calibration.py --write."""
    fit = serving_benchmarks().get("async_scheduling")
    if not fit or "hidden_share" not in fit:
        raise ValueError(
            "serving_benchmarks.json has no fitted async scheduling share: run bench/serving_async_calibration.py --write"
        )
    return fit


# vLLM releases whose chat endpoint parses the chat template on every request (resolve_chat_template_kwargs, read in
# the 0.11.0 wheel; 0.11.1, 0.11.2 and 0.12.0 cache it). Earlier releases were not read, so they are not listed.
PARSES_CHAT_TEMPLATE_PER_REQUEST = frozenset({"0.11.0"})


def chat_template_ms(engine: str, version: str | None, model_hf: str | None, endpoint: str | None) -> tuple[float, str]:
    """The API server's time per request to parse the model's chat template, and how it was found (simulate's
    `chat_template_ms`): the median bench/chat_template_cost.py measured for the model's template (kvlab/data/
    serving_benchmarks.json, "chat_template") on vLLM 0.11.0's chat endpoint; 0 for completions, for gpt-oss (rendered
    by openai_harmony, vllm/entrypoints/openai/serving_chat.py: use_harmony), for releases that cache it, and for a
    model whose template was not measured."""
    if engine != "vllm" or endpoint != "chat":
        return 0.0, f"not parsed per request ({engine}, endpoint {endpoint})"
    if version not in PARSES_CHAT_TEMPLATE_PER_REQUEST:
        return 0.0, f"vLLM {version}: not a release read to parse its chat template per request"
    for key, t in (serving_benchmarks().get("chat_template") or {}).get("templates", {}).items():
        if model_hf in t["models"]:
            return float(t["parse_ms"]), f"vLLM {version} parses {key}'s chat template per request (measured)"
    return 0.0, f"{model_hf}: template not measured (gpt-oss is rendered by openai_harmony)"


def allreduce_link(card: dict, given_gb_s: float | None = None) -> dict:
    """GB/s one way per GPU for tensor-parallel all-reduces: given, the card's interconnect, else PCIe 5."""
    if given_gb_s is not None:
        return {"gb_s": float(given_gb_s), "how": "given"}
    if card.get("interconnect_gb_s"):
        return {
            "gb_s": float(card["interconnect_gb_s"]),
            "how": f"{card.get('interconnect', 'GPU interconnect')} ({card.get('interconnect_source', 'gpus.json')})",
        }
    pcie = next(link for link in interconnects()["links"] if link["id"] == "pcie-5")
    return {"gb_s": float(pcie["gb_per_s"]), "how": f"{pcie['name']}: no GPU-to-GPU link listed for the card"}


SGLANG_MODELLED = [
    "SGLang's scheduler loop (get_next_batch_to_run): a prefill batch whenever one can be formed, run alone; "
    "otherwise one decode step of every running request (enable_mixed_chunk off, its default)",
    "admission (PrefillAdder, schedule_policy fcfs): waiting requests in order while free tokens, less each running "
    "request's remaining answer (at most 4,096) x new_token_ratio, hold the prompt plus its whole answer (at most "
    "4,096); the first that does not fit marks the batch full and no prefill is tried until a request leaves",
    "new_token_ratio: 0.7 at start and when idle, down by (0.7 - 0.098) / 600 each decode step to 0.098; after a "
    "retraction (generated + 20 x running) / their answer lengths",
    "chunked prefill: one request at a time is cut at chunked_prefill_size (by the card's memory: kvlab.memory.sglang)"
    " and continues first in the next prefill batch; at most max_prefill_tokens (16,384) prompt tokens a batch",
    "max_running_requests (SGLang's default from its pool) requests running at most",
    "retraction when a decode step's tokens do not fit: the request with the fewest tokens generated (then the "
    "longest prompt) first, until 20 steps of the rest fit; it frees its tokens and goes to the back of the queue",
    "the token pool SGLang sizes (max_total_num_tokens, page size 1): kvlab.memory.sglang, as kvlab fit gives it",
    "the radix cache (on by default): a shared prefix (--random-prefix-len) is neither prefilled nor allocated again",
    "the overlap scheduler (on by default): the CPU's time per step overlaps the GPU's",
    "decode batches larger than cuda_graph_max_bs run without CUDA graphs "
    f"({EAGER_LAYER_MS:g} ms per layer added, the --enforce-eager measurement)",
    "step time as for vLLM: the roofline and overheads with the constants fitted on vLLM runs, used as they are",
]
SGLANG_NOT_MODELLED = [
    "SGLang's own CPU time per step and per request (vLLM's fitted values stand in)",
    "SGLang's kernels (its attention backends, MoE kernels and MXFP4 paths): vLLM's efficiencies stand in",
    "a separate sliding-window pool (every token is kept for every layer, as kvlab's SGLang memory rule does)",
    "mixed chunked prefill (--enable-mixed-chunk), priority scheduling, DP attention, speculative decoding, "
    "hierarchical cache, PD disaggregation",
    "requests that stop before their output length (EOS)",
]
MODELLED = [
    "vLLM V1 schedule(): running requests first in admission order, then waiting ones in arrival order",
    "one token budget per step (max_num_batched_tokens) shared by decodes and chunked prefills",
    "max_num_seqs requests running at most",
    "KV blocks from the pool the fit verdict sizes; admission stops at the first waiting request "
    "whose chunk does not fit (no skipping)",
    "preemption by recompute: the request admitted last loses its blocks and goes back to the front "
    "of the queue; no admission in a step that preempted",
    "prefix caching of a shared prefix (--random-prefix-len): cached blocks are neither prefilled nor "
    "allocated again, at most num_tokens - 1 tokens hit",
    "prefix caching (vLLM V1's default) after a preemption: the request's freed blocks stay cached at the back of "
    "the free queue and its readmission hits them, unless as many blocks as were free before it have been "
    "allocated since (its tail blocks go first: KVCacheManager.free frees in reverse order); full-attention and "
    "sliding-window layouts, in runs without a shared prefix",
    "step time: weights once per step (MoE: the experts the step's tokens touch) + each request's KV at its "
    "current length over bandwidth, FLOPs of prefill and decode tokens incl. attention over peak compute, each "
    "bound over its efficiency (an MoE's expert GEMMs less efficient the fewer rows a step gives each expert: a "
    "fitted half-efficiency row count); plus a fixed time per step, a time per request, and tensor parallelism's "
    "all-reduces (2 per layer, each a ring of 2 (n - 1) steps: latencies + bytes over the interconnect), "
    "fitted on published vllm bench serve runs",
    "--async-scheduling: the engine's CPU time per step overlaps the GPU's (a step takes the longer of the two); "
    "under vLLM only a fitted share of the time per request does, the rest stays in the step",
    f"--enforce-eager: no CUDA graphs, every step launches each layer's kernels from Python: {EAGER_LAYER_MS:g} ms "
    f"per layer added to each step, measured on vLLM V1 with and without CUDA graphs ({EAGER_SOURCE}), not fitted",
    "sliding-window groups free the blocks that fall out of the window before each allocation "
    "(SlidingWindowManager.remove_skipped_blocks)",
    "MLA (DeepSeek) prefill chunks computed in the expanded multi-head form, decodes in the absorbed latent form",
    "tensor parallelism: every GPU reads the whole MLA latent (and a KV head replicated below one per GPU) in a step "
    "(ModelConfig.get_num_kv_heads)",
    "MXFP4 weights on a card without FP4 tensor cores: prefill at a compute efficiency of its own (weight-only "
    "FP4, dequantized in the GEMM), one per vLLM kernel path: Marlin below SM90, Triton matmul_ogs on SM90 and ROCm "
    "(get_mxfp4_backend); the model's BF16 parts (attention, router, embeddings, lm_head) at the BF16 efficiency",
    "INT4 (AWQ, GPTQ) weights, and FP8 weights on a card without FP8 tensor cores (below SM89): weight-only through "
    "Marlin, every linear layer at the Marlin constant of MXFP4 (the same dequantize-in-the-GEMM kernel family); "
    "attention over the context at the BF16 efficiency",
    "the API server: a fitted time per request, each waiting for its own turn; requests sent together are taken in "
    "together and reach the engine together (one asyncio event loop); on vLLM 0.11.0's chat endpoint, the chat "
    "template's parse, which that release repeats for every request (measured, not fitted)",
    "the client of vllm bench serve: gamma/Poisson arrivals or --max-concurrency, ignore_eos lengths, "
    "TTFT/TPOT/ITL as it measures them",
]
NOT_MODELLED = [
    "speculative decoding",
    "the network; the API server's work beyond its time per request (streaming the tokens out; the fitted per-step "
    "and per-request times stand for the engine's own CPU work)",
    "Machete (vLLM's Hopper kernel for some INT4 checkpoints) apart from Marlin; INT4 on ROCm (Triton AWQ kernels)",
    "FlashInfer's MXFP4 MoE kernels on SM90 (opt-in: VLLM_USE_FLASHINFER_MOE_MXFP4_BF16) and VLLM_MXFP4_USE_MARLIN; "
    "a Hopper install without triton_kernels (vLLM then falls back to Marlin)",
    # measured: the four A100 gpt-oss runs at 32K come out 1.9-2.1x fast (bench/results/2026-12-07-serving-session21.md)
    "vLLM's attention backends apart: attention runs at the BF16 efficiency whatever the backend, though "
    "TRITON_ATTN, which vLLM 0.11 takes for gpt-oss (attention sinks) and for an FP8 KV cache off Hopper and "
    "Blackwell, prefills in smaller tiles, so long gpt-oss prompts on an A100 run slower than simulated",
    "CUDA-graph batch padding",
    "long_prefill_token_threshold / max_num_partial_prefills",
    "priority scheduling, LoRA, multimodal encoders",
    "recent vLLM's free-block watermark and full-sequence admission check",
    "prefix-cache hits on a preempted request's own freed blocks for models with recurrent (Mamba) or "
    "chunked-local layers, or in a run with a shared prefix",
    "chunked-local-attention blocks freed as the chunk moves (a chunked group holds its cap)",
    "KV offloading, disaggregated prefill, pipeline parallelism, expert parallelism (--enable-expert-parallel: whole "
    "experts per GPU and all-to-all, where the simulation slices every expert and all-reduces)",
    "requests that stop before their output length (EOS)",
]


# ---------------------------------------------------------------------------
# costs that are piecewise linear in the context
# ---------------------------------------------------------------------------


def _sum(values: list) -> float:
    """numpy's sum of the float64 `values` (its pairwise order, not Python's left to right), as a Python float. One
    value is itself (numpy adds it to 0.0; the values summed here are positive)."""
    if len(values) == 1:
        return values[0]
    return float(np.add.reduce(np.array(values, dtype=np.float64)))  # (what .sum() calls, without its wrapper)


class _Piecewise:
    """f(c) = const + slope x c - sum over windows w of drop_w x max(c - w, 0), for c >= 1.

    The KV bytes of one sequence and its attention FLOPs per token have this shape: full layers
    grow with the context, sliding ones stop at their window, recurrent states are constant. The
    coefficients are read off the function itself (kv_cache_bytes, attention_flops), so there is
    one source for each number.
    """

    def __init__(self, fn, windows):
        ws = sorted({int(w) for w in windows if w and w >= 2})
        f1, f2 = float(fn(1)), float(fn(2))
        self.slope = f2 - f1
        self.const = f1 - self.slope
        self.windows = np.array(ws, dtype=np.float64)
        self.drops = np.array([(fn(w) - fn(w - 1)) - (fn(w + 1) - fn(w)) for w in ws], dtype=np.float64)
        keep = self.drops != 0
        self.windows, self.drops = self.windows[keep], self.drops[keep]
        self.pairs = list(zip(self.windows.tolist(), self.drops.tolist()))  # the same numbers, as Python floats

    def at(self, c):
        """f at each context (array or number)."""
        if not isinstance(c, np.ndarray):
            c = np.asarray(c, dtype=np.float64)
        out = self.const + self.slope * c
        for w, d in zip(self.windows, self.drops):
            out = out - d * np.maximum(c - w, 0.0)
        return out

    def total(self, c: np.ndarray) -> float:
        """Sum of f over the contexts c."""
        if not len(self.windows):
            return len(c) * self.const + self.slope * float(c.sum())
        return float(self.at(c).sum())

    def totals_ahead(
        self, c: np.ndarray, steps: np.ndarray, c_sum: float, sums: np.ndarray | None = None
    ) -> np.ndarray:
        """For each j in `steps`: the sum over i of f(c_i + j) (c_sum: the sum of c), without an n x steps array.

        sums: c_sum + n x steps (the contexts' sum at each step), if the caller has it: every function of the same
        requests shares it."""
        n = len(c)
        out = n * self.const + self.slope * (c_sum + n * steps if sums is None else sums)
        if len(self.windows):
            cs = np.sort(c.astype(np.float64))
            suffix = np.concatenate([cs[::-1].cumsum()[::-1], [0.0]])
            for w, d in zip(self.windows, self.drops):
                first = cs.searchsorted(w - steps, side="right")  # the c_i with c_i + j > w
                m = n - first
                out = out - d * (suffix[first] + m * (steps - w))
        return out

    def at_one(self, c: int) -> float:
        """`at` of one context (an int), in Python floats: the same operations on the same numbers."""
        x = float(c)
        out = self.const + self.slope * x
        for w, d in self.pairs:
            v = x - w
            out = out - d * (v if v > 0.0 else 0.0)
        return out

    def total_of(self, c: list) -> float:
        """`total` of contexts given as a list of ints."""
        if not self.pairs:
            return len(c) * self.const + self.slope * float(sum(c))
        return _sum([self.at_one(x) for x in c])

    def span_one(self, a: int, b: int) -> float:
        """`span` of one chunk (ints), in Python floats: the same operations on the same numbers."""
        c = b - a
        out = c * self.const + self.slope * (c * (a + b + 1)) / 2
        for w, d in self.pairs:
            hi, lo = b - w, a - w
            hi, lo = (hi if hi > 0.0 else 0.0), (lo if lo > 0.0 else 0.0)
            out = out - d * (hi * (hi + 1) - lo * (lo + 1)) / 2
        return out

    def span(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Sum of f(t) for t = a+1 .. b, per element (a prefill chunk's positions)."""
        c = b - a
        # the sum of t over a+1 .. b is (b (b + 1) - a (a + 1)) / 2, and b (b + 1) - a (a + 1) = c (a + b + 1)
        out = c * self.const + self.slope * (c * (a + b + 1)) / 2
        for w, d in zip(self.windows, self.drops):
            hi = np.maximum(b - w, 0.0)
            lo = np.maximum(a - w, 0.0)
            out = out - d * (hi * (hi + 1) - lo * (lo + 1)) / 2
        return out


def _windows(arch: Architecture) -> list[int]:
    return [layer.window for layer in arch.layers if layer.kind in (SLIDING, CHUNKED) and layer.window]


class RequestBlocks:
    """How many blocks of the pool a request holding `t` tokens takes (vLLM's layout, all groups).

    A sliding-window group holds only the blocks its window still needs: before allocating a step's slots, vLLM
    frees a request's blocks whose tokens all lie before num_computed_tokens - sliding_window + 1 (replaced by the
    null block; vllm/v1/core/single_type_kv_cache_manager.py, SlidingWindowManager.remove_skipped_blocks, called
    from KVCacheManager.allocate_slots with request.num_computed_tokens, at commit
    002f34915134cfd1a7d6ed777edd67dcc2289466 of vllm-project/vllm). So with `c` tokens computed and `t` tokens
    allocated a sliding group holds cdiv(t, block) - max(0, (c - window + 1) // block) blocks: a decoding gpt-oss
    request holds about window / block + 1 of them, not its whole context. Chunked-local groups keep the memory
    estimate's cap (their freeing is not modelled).
    """

    def __init__(self, layout: dict, max_model_len: int, max_num_batched_tokens: int):
        self.block = layout["block_size"]
        self.state = 0
        # (groups, cap in blocks or None, sliding window or None)
        self.groups: list[tuple[int, int | None, int | None]] = []
        for t in layout["types"]:
            g = t["groups"]
            if t["kind"] == LINEAR:
                self.state += g
            elif t["kind"] == FULL:
                self.groups.append((g, None, None))
            elif t["kind"] == SLIDING:
                cap = -(-min(t["window"] - 1 + max_num_batched_tokens, max_model_len) // self.block) + 1
                self.groups.append((g, cap, int(t["window"])))
            else:  # chunked
                cap = -(-min(t["window"] + max_num_batched_tokens, max_model_len) // self.block)
                self.groups.append((g, cap, None))
        self.full_only = all(cap is None for _, cap, _ in self.groups)
        self.plain = self.full_only and not self.state  # blocks = full groups x cdiv(t, block)
        self.chunked = any(cap is not None and window is None for _, cap, window in self.groups)
        self.sliding = any(window is not None for _, _, window in self.groups)  # the only groups `c` matters to
        self.full_groups = sum(g for g, cap, _ in self.groups if cap is None)
        self.n_groups = sum(g for g, _, _ in self.groups)
        self.sliding_slack = 2 * sum(g for g, _, window in self.groups if window is not None)

    def of(self, t, c=None):
        """Blocks for t tokens allocated with c of them computed (array or int; 0 tokens hold none).

        c None: the memory estimate's cap for sliding groups (every block of the window plus a full chunk)."""
        if self.full_only and not self.state:
            n = (t + (self.block - 1)) // self.block  # cdiv(t, block), two array operations
            return n if self.full_groups == 1 else self.full_groups * n
        t = np.asarray(t, dtype=np.int64)
        n = -(-t // self.block)
        out = np.where(t > 0, self.state, 0)
        for g, cap, window in self.groups:
            if cap is None:
                out = out + g * n
            elif window is not None and c is not None:
                skipped = np.maximum((np.asarray(c, dtype=np.int64) - window + 1) // self.block, 0)
                out = out + g * np.maximum(n - skipped, 0)
            else:
                out = out + g * np.minimum(n, cap)
        return out

    def decoded(self, t):
        """`of(t, t - 1)`: the blocks once the decode step that brings a request to t tokens has allocated its slot
        (t - 1 computed when it allocates; only a sliding group reads that)."""
        return self.of(t, t - 1 if self.sliding else None)

    def decoded_after(self, ctx: list, k: int) -> list:
        """`decoded` of requests at ctx + k tokens, for contexts given as a list (ints)."""
        if self.plain:  # full groups x cdiv(c + k, block)
            up, block, groups = k + self.block - 1, self.block, self.full_groups
            return [(c + up) // block for c in ctx] if groups == 1 else [groups * ((c + up) // block) for c in ctx]
        return [self.one(c + k, c + k - 1 if self.sliding else None) for c in ctx]

    def most_in(self, steps: int) -> int:
        """The most blocks one request can add in `steps` decode steps."""
        return self.n_groups * (-(-steps // self.block) + 1)

    def one(self, t: int, c: int | None = None) -> int:
        """`of` for one request (ints)."""
        t = int(t)
        if t <= 0:
            return 0
        n = -(-t // self.block)
        out = self.state
        for g, cap, window in self.groups:
            if cap is None:
                out += g * n
            elif window is not None and c is not None:
                out += g * max(n - max((int(c) - window + 1) // self.block, 0), 0)
            else:
                out += g * min(n, cap)
        return out


# ---------------------------------------------------------------------------
# inputs
# ---------------------------------------------------------------------------


def _rate(value) -> float:
    """request_rate: a positive number, or inf (None, "inf" and float inf: all requests at once)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("inf", "infinity")):
        return math.inf
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return math.inf
    rate = finite_number("request_rate", value)
    if not rate > 0:
        raise ValueError(f"request_rate must be positive (requests per second) or inf, got {short_repr(value)}")
    return rate


def _lengths(rng, dataset: str, n: int, input_len: int, output_len: int, ratio: float, max_total: int):
    """Prompt (without the shared prefix) and output lengths of the n requests."""
    if dataset == "fixed":
        return np.full(n, input_len, dtype=np.int64), np.full(n, output_len, dtype=np.int64)
    if dataset == "random":  # vllm/benchmarks/datasets.py, RandomDataset: [floor(L(1-r)), ceil(L(1+r))]
        in_lo, in_hi = math.floor(input_len * (1 - ratio)), math.ceil(input_len * (1 + ratio))
        out_lo, out_hi = max(1, math.floor(output_len * (1 - ratio))), math.ceil(output_len * (1 + ratio))
        inp = rng.integers(max(1, in_lo), max(1, in_hi) + 1, size=n)
        out = rng.integers(out_lo, out_hi + 1, size=n)
        return inp.astype(np.int64), out.astype(np.int64)
    # sharegpt-like: lognormal around the means asked for, long tail, clipped (see the constants)
    lo = SHAREGPT_MIN_TOKENS

    def draw(mean: int, sigma: float) -> np.ndarray:
        mu = math.log(mean) - sigma * sigma / 2
        x = np.rint(rng.lognormal(mu, sigma, size=n)).astype(np.int64)
        return np.clip(x, min(lo, mean), max(mean, SHAREGPT_MAX_FACTOR * mean))

    inp = draw(input_len, SHAREGPT_SIGMA_INPUT)
    out = draw(output_len, SHAREGPT_SIGMA_OUTPUT)
    return inp, np.maximum(1, np.minimum(out, max_total - inp))


# ---------------------------------------------------------------------------
# the simulation
# ---------------------------------------------------------------------------


def _percentiles(x: np.ndarray) -> dict:
    if not len(x):
        return {"mean": None, "median": None, "p99": None}
    return {
        "mean": float(np.mean(x)) * 1000,
        "median": float(np.median(x)) * 1000,
        "p99": float(np.percentile(x, 99)) * 1000,
    }


def _weighted(values: np.ndarray, weights: np.ndarray) -> dict:
    """Mean, median and p99 (ms) of values each repeated `weights` times (inverted-CDF quantiles)."""
    if not len(values) or not weights.sum():
        return {"mean": None, "median": None, "p99": None}
    order = np.argsort(values, kind="stable")
    v, w = values[order], weights[order]
    cum = np.cumsum(w)
    total = cum[-1]

    def q(p: float) -> float:
        return float(v[min(len(v) - 1, np.searchsorted(cum, p * total, side="left"))]) * 1000

    return {"mean": float((v * w).sum() / total) * 1000, "median": q(0.5), "p99": q(0.99)}


def _downsample(n: int, most: int) -> np.ndarray:
    if n <= most:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, most).round().astype(np.int64))


def simulate(
    model,
    gpu,
    *,
    weights_format: str = "BF16",
    kv: str = "f16",
    n_gpus: int = 1,
    engine: str = "vllm",
    gpu_memory_utilization: float = VLLM_GPU_MEMORY_UTILIZATION,
    block_size: int = VLLM_BLOCK_SIZE,
    max_model_len: int | None = None,
    max_num_seqs: int | None = None,
    max_num_batched_tokens: int | None = None,
    enable_prefix_caching: bool | None = None,
    request_rate=math.inf,
    max_concurrency: int | None = None,
    burstiness: float = 1.0,
    num_prompts: int = 1000,
    input_len: int = 1024,
    output_len: int = 128,
    dataset: str = "random",
    random_range_ratio: float = 0.0,
    prefix_len: int = 0,
    seed: int = 0,
    bandwidth_efficiency: float | None = None,
    compute_efficiency: float | None = None,
    weight_only_fp4_compute_efficiency: float | None = None,
    weight_only_fp4_triton_compute_efficiency: float | None = None,
    moe_half_rows: float | None = None,
    weight_only_compute_efficiency: float | None = None,
    moe_compute_efficiency: float | None = None,
    step_overhead_ms: float | None = None,
    request_overhead_us: float | None = None,
    allreduce_latency_us: float | None = None,
    frontend_ms: float | None = None,
    chat_template_ms: float = 0.0,
    allreduce_gb_s: float | None = None,
    async_scheduling: bool | None = None,
    async_hidden_share: float | None = None,
    enforce_eager: bool = False,
    chunked_prefill_size: int | None = None,
    max_running_requests: int | None = None,
    max_prefill_tokens: int = SGLANG_MAX_PREFILL_TOKENS,
    mem_fraction_static: float | None = None,
    schedule_conservativeness: float = 1.0,
    mxfp4_backend: str | None = None,
    sampler: str | None = None,
    custom_all_reduce: bool = True,
    price_per_hour: float | None = None,
    max_timeline_rows: int = MAX_TIMELINE_ROWS,
    max_points: int = MAX_POINTS,
    trace: bool = False,
) -> dict:
    """Simulate `vllm bench serve` against `vllm serve model` on `n_gpus` x `gpu` (tensor parallel).

    Engine settings as vllm serve names them (max_model_len defaults to the model's trained context;
    max_num_seqs and max_num_batched_tokens to vLLM's defaults for the card, as the fit verdict
    gives them); the workload as vllm bench serve names it: `request_rate` (requests/s, inf: all at
    once), `max_concurrency`, `burstiness`, `num_prompts`, `input_len`, `output_len`, `dataset`
    ("fixed", "random" with `random_range_ratio`, "sharegpt-like": see the module constants),
    `prefix_len` (a prefix every prompt shares, as --random-prefix-len), `seed` (numpy Generator: the
    same seed, the same run). The step's time (module docstring, "Time of a step"):
    `bandwidth_efficiency` / `compute_efficiency`, the share of each roofline bound reached
    (`weight_only_fp4_compute_efficiency` instead of compute_efficiency for MXFP4 weights on a card without
    FP4 tensor cores on vLLM's Marlin path, `weight_only_fp4_triton_compute_efficiency` on its Triton path:
    `mxfp4_kernel`; `weight_only_compute_efficiency` for FP8 and INT4 weights through Marlin);
    `moe_half_rows`, the rows per expert at which an MoE's expert GEMMs reach half the compute constant;
    `step_overhead_ms`, a fixed time per step; `request_overhead_us`, a time per request in the step;
    `allreduce_latency_us`, a time per step of a tensor-parallel ring all-reduce (2 (n_gpus - 1) steps, 2
    all-reduces per layer, n_gpus > 1 only) on top
    of its bytes over `allreduce_gb_s` (GB/s one way per GPU; default: the card's `interconnect_gb_s`,
    else PCIe 5); `frontend_ms`, the API server's time per request before the engine sees it (requests
    reach the engine's queue one after another, each after its own frontend_ms; those sent at the same instant
    together, after all of theirs); `chat_template_ms`, the API server's time per request on top of it to parse a
    chat template (`chat_template_ms()`: vLLM 0.11.0's chat endpoint; default 0). `async_scheduling`
    (vllm serve --async-scheduling): the CPU's time per step overlaps the GPU's (under vLLM the per-step part and
    `async_hidden_share` of the per-request part: given, else `async_scheduling_fit()`). `enforce_eager` (vllm serve
    --enforce-eager): no CUDA graphs, EAGER_LAYER_MS per layer added to every step (measured, not fitted).
    `mxfp4_backend` ("triton" or
    "marlin"): vLLM's MXFP4 kernel path where it is not the card's (kvlab.memory.engines.mxfp4_path): its weights,
    reserve and prefill efficiency. `sampler` ("native", "triton", "flashinfer"): the path of vLLM's sampler
    warm-up where it is not V1's default (kvlab.memory.engines.vllm_sampler): the reserve. `custom_all_reduce`
    False: vllm serve --disable-custom-all-reduce, the tensor-parallel reserve without custom all-reduce buffers
    (kvlab.memory.engines.vllm_reserve), so a larger pool. Each defaults to the value fitted on published vllm bench serve runs
    (`simulation_constants()`, kvlab/data/serving_benchmarks.json "simulation"). `price_per_hour`
    defaults to the catalogue's price of the card x n_gpus. `trace` adds every step (or stretch of
    identical decode steps) for tests. The module docstring says what a step is and what is modelled.
    """
    arch = model_architecture(model)
    card = get_gpu(gpu) if isinstance(gpu, str) else dict(gpu)
    engine = one_of("engine", engine, list(ENGINES))
    sglang_run = engine == "sglang"
    _engine_flags_apply(
        engine,
        vllm={
            "gpu_memory_utilization": gpu_memory_utilization != VLLM_GPU_MEMORY_UTILIZATION,
            "block_size": block_size != VLLM_BLOCK_SIZE,
            "max_num_seqs": max_num_seqs is not None,
            "max_num_batched_tokens": max_num_batched_tokens is not None,
            "enforce_eager": bool(enforce_eager),
            "mxfp4_backend": mxfp4_backend is not None,
            "custom_all_reduce": custom_all_reduce is not True,
            "async_hidden_share": async_hidden_share is not None,
        },
        sglang={
            "chunked_prefill_size": chunked_prefill_size is not None,
            "max_running_requests": max_running_requests is not None,
            "max_prefill_tokens": max_prefill_tokens != SGLANG_MAX_PREFILL_TOKENS,
            "mem_fraction_static": mem_fraction_static is not None,
            "schedule_conservativeness": schedule_conservativeness != 1.0,
        },
    )
    n_gpus = finite_number("n_gpus", n_gpus, minimum=1, maximum=8, integer=True)
    n = finite_number("num_prompts", num_prompts, minimum=1, maximum=MAX_PROMPTS, integer=True)
    input_len = finite_number("input_len", input_len, minimum=1, maximum=MAX_CONTEXT, integer=True)
    output_len = finite_number("output_len", output_len, minimum=1, maximum=MAX_CONTEXT, integer=True)
    prefix_len = finite_number("prefix_len", prefix_len, minimum=0, maximum=MAX_CONTEXT, integer=True)
    dataset = one_of("dataset", dataset, list(DATASETS))
    ratio = finite_number("random_range_ratio", random_range_ratio, minimum=0)
    if not ratio < 1:
        raise ValueError(f"random_range_ratio must be in [0, 1), got {short_repr(random_range_ratio)}")
    if dataset != "random" and ratio:
        raise ValueError(f"random_range_ratio applies to the random dataset only, not {dataset!r}")
    rate = _rate(request_rate)
    # inf: evenly spaced sends (guidellm's constant profile); else the gamma shape of vllm bench serve's gaps
    burst = math.inf if burstiness == math.inf else finite_number("burstiness", burstiness, minimum=1e-3, maximum=1e3)
    concurrency = None
    if max_concurrency is not None:
        concurrency = finite_number("max_concurrency", max_concurrency, minimum=1, maximum=MAX_PROMPTS, integer=True)
    seed = finite_number("seed", seed, minimum=0, maximum=2**63 - 1, integer=True)
    if async_scheduling is None:  # vLLM: off unless --async-scheduling; SGLang: its overlap scheduler, on by default
        async_scheduling = sglang_run
    if async_hidden_share is not None:
        async_hidden_share = finite_number("async_hidden_share", async_hidden_share, minimum=0, maximum=1)
    if not isinstance(async_scheduling, (bool, np.bool_)):
        raise ValueError(f"async_scheduling must be true or false, got {short_repr(async_scheduling)}")
    max_prefill_tokens = finite_number(
        "max_prefill_tokens", max_prefill_tokens, minimum=1, maximum=1 << 20, integer=True
    )
    conservativeness = finite_number("schedule_conservativeness", schedule_conservativeness, minimum=0.01, maximum=100)
    if not isinstance(enforce_eager, (bool, np.bool_)):
        raise ValueError(f"enforce_eager must be true or false, got {short_repr(enforce_eager)}")
    eff_bw_given = eff_c_given = None
    if bandwidth_efficiency is not None:
        eff_bw_given = finite_number("bandwidth_efficiency", bandwidth_efficiency, minimum=0.01, maximum=1)
    if compute_efficiency is not None:
        eff_c_given = finite_number("compute_efficiency", compute_efficiency, minimum=0.01, maximum=1)
    fp4_eff_given = {
        name: finite_number(name, value, minimum=0.01, maximum=1)
        for name, value in (
            ("weight_only_fp4_compute_efficiency", weight_only_fp4_compute_efficiency),
            ("weight_only_fp4_triton_compute_efficiency", weight_only_fp4_triton_compute_efficiency),
            (WEIGHT_ONLY_CONSTANT, weight_only_compute_efficiency),
            (MOE_CONSTANT, moe_compute_efficiency),
        )
        if value is not None
    }
    fitted = simulation_constants()
    if moe_half_rows is not None:
        moe_half_rows = finite_number("moe_half_rows", moe_half_rows, minimum=0, maximum=1e6)
    overhead_given = {
        name: finite_number(name, value, minimum=0, maximum=1e6)
        for name, value in (
            ("step_overhead_ms", step_overhead_ms),
            ("request_overhead_us", request_overhead_us),
            ("allreduce_latency_us", allreduce_latency_us),
            ("frontend_ms", frontend_ms),
        )
        if value is not None
    }
    chat_template_ms = finite_number("chat_template_ms", chat_template_ms, minimum=0, maximum=1e4)
    if allreduce_gb_s is not None:
        allreduce_gb_s = finite_number("allreduce_gb_s", allreduce_gb_s, minimum=0.1, maximum=1e5)
    if price_per_hour is not None:
        price_per_hour = finite_number("price_per_hour", price_per_hour, minimum=0)
    rows_cap = finite_number("max_timeline_rows", max_timeline_rows, minimum=0, maximum=MAX_PROMPTS, integer=True)
    points_cap = finite_number("max_points", max_points, minimum=2, maximum=100_000, integer=True)

    # --- the deployment: the fit verdict's budget, vLLM's defaults, the block pool ----------------
    trained = arch.max_position_embeddings
    if max_model_len is None:
        need = prefix_len + math.ceil(input_len * (1 + ratio)) + math.ceil(output_len * (1 + ratio))
        max_model_len = trained or need
    max_model_len = finite_number("max_model_len", max_model_len, minimum=1, maximum=MAX_CONTEXT, integer=True)
    if sglang_run:
        sg = _sglang_pool(
            arch,
            card,
            weights_format=weights_format,
            kv=kv,
            n_gpus=n_gpus,
            max_model_len=max_model_len,
            chunked_prefill_size=chunked_prefill_size,
            max_running_requests=max_running_requests,
            mem_fraction_static=mem_fraction_static,
        )
        dep, kv_type, kernel = sg["deployment"], sg["kv_type"], sg["mxfp4_kernel"]
        num_blocks = sg["tokens"]  # SGLang's pool is tokens (page_size 1): a "block" here is one token
        bs = 1
        budget, seqs_cap = sg["chunked_prefill_size"], sg["max_running_requests"]
        available, close_call = sg["kv_bytes"], None
        blocks = None
        full_only = all(la.kind == FULL for la in arch.layers)
    else:
        dep = deployment(
            arch,
            weights=weights_format,
            kv=kv,
            gpu=card,
            tp=n_gpus,
            engine="vllm",
            gpu_memory_utilization=gpu_memory_utilization,
            block_size=block_size,
            max_num_batched_tokens=max_num_batched_tokens,
            max_num_seqs=max_num_seqs,
            mxfp4_backend=mxfp4_backend,
            sampler=sampler,
            custom_all_reduce=custom_all_reduce,
        )
        verdict = verdict_of(dep, max_model_len, n_seq=1, solve=False)
        parts = {c["name"]: c["bytes"] for c in verdict["components"]}
        available = verdict["budget_bytes"] - parts["weights"] - parts["activation_reserve"]
        close_call = None
        if not verdict["fits"]:
            # a refusal inside the reserve estimate's error (evidence that disagrees, as for gpt-oss-120b on one
            # H100): simulated as if vLLM starts with the KV the estimate's optimistic edge leaves, and said so
            edge = available + verdict["error_band_bytes"]
            one = parts["kv_cache"]  # the KV of one max_model_len sequence, which vLLM needs to start
            if verdict["confidence"] != "low" or verdict["binding"] not in ("reserve", "kv_cache") or edge < one:
                raise Refused(
                    "max_model_len", f"vLLM would not start with --max-model-len {max_model_len}: {verdict['headline']}"
                )
            available = edge
            close_call = (
                f"close call: kvlab expects vLLM to refuse this ({verdict['headline']}), but that is within the reserve "
                f"estimate's error ({verdict['error_band_bytes'] / 2**30:.2f} GiB); simulated as if it starts with "
                f"{edge / 2**30:.2f} GiB of KV cache, the estimate's optimistic edge"
            )
        setup = verdict["engine_model"]
        budget = setup["max_num_batched_tokens"]
        seqs_cap = setup["max_num_seqs"]
        if budget < seqs_cap:
            raise ValueError(
                f"max_num_batched_tokens ({budget}) must be at least max_num_seqs ({seqs_cap}), as vLLM requires"
            )
        dtype = "auto" if verdict["kv_type"] in ("f16", "bf16") else verdict["kv_type"]
        layout_kv = vllm_kv_cache(
            arch, max_model_len, dtype, block_size=block_size, max_num_batched_tokens=budget, tp=n_gpus
        )
        layout = gpu_stages(layout_kv)[0]["layout"]
        pool = vllm_blocks(layout, available)
        num_blocks = pool["blocks"]
        blocks = RequestBlocks(layout, max_model_len, budget)
        bs = blocks.block
        kv_type, kernel = verdict["kv_type"], verdict["engine_model"].get("mxfp4_kernel")
        full_only = blocks.full_only
    caching_default = enable_prefix_caching is None
    if caching_default:
        enable_prefix_caching = True  # the default of both: vLLM V1's prefix caching, SGLang's radix cache
    elif not isinstance(enable_prefix_caching, (bool, np.bool_)):
        raise ValueError(f"enable_prefix_caching must be true or false, got {short_repr(enable_prefix_caching)}")
    enable_prefix_caching = bool(enable_prefix_caching)
    if not caching_default and enable_prefix_caching and prefix_len and not full_only:
        raise ValueError(
            "enable_prefix_caching: the simulation caches a shared prefix for full-attention models only "
            f"({arch.name} has sliding, chunked or recurrent layers)"
        )

    # --- the workload ---------------------------------------------------------------------------
    rng = np.random.default_rng(seed)
    inp, out = _lengths(rng, dataset, n, input_len, output_len, ratio, max_model_len - prefix_len)
    prompt = inp + prefix_len
    longest = int((prompt + out).max())
    if longest > max_model_len:
        which = "input_len" if int(prompt.max()) >= max_model_len else "output_len"
        raise ValueError(
            f"{which}: requests of up to {longest:,} tokens (prefix + input + output) exceed max_model_len "
            f"{max_model_len:,}"
        )
    if sglang_run and longest > num_blocks:
        # SGLang starts with a pool shorter than the context, but rejects a request longer than it
        # (max_req_input_len = min(context_len - 1, max_total_num_tokens - 1))
        which = "input_len" if int(prompt.max()) >= num_blocks else "output_len"
        raise Refused(
            which,
            f"SGLang would reject requests of up to {longest:,} tokens (prompt + answer): SGLang's whole KV pool holds "
            f"{num_blocks:,} tokens on this deployment",
        )
    if rate == math.inf:
        planned = np.zeros(n)
    elif burst == math.inf:  # evenly spaced, 1 / rate apart (guidellm's constant profile)
        planned = np.arange(n) / rate
    else:  # vllm bench serve: gamma gaps of shape burstiness, mean 1 / rate; the first request at 0
        gaps = rng.gamma(shape=burst, scale=1.0 / (rate * burst), size=n - 1)
        planned = np.concatenate([[0.0], np.cumsum(gaps)])

    # --- the costs ------------------------------------------------------------------------------
    # bytes the GPUs read together for one request's KV: x the heads' replication under tensor parallelism
    # (`kv_read_replication`: an MLA latent or a KV head is read in full by every GPU that holds it)
    kv_copies = kv_read_replication(arch, n_gpus)
    kv_fn = _Piecewise(
        lambda c: kv_copies * kv_cache_bytes(arch, c, kv_type, state_type="bf16")["total_bytes"],
        _windows(arch),
    )
    attn_fn = _Piecewise(lambda c: attention_flops(arch, c), _windows(arch))
    # MLA prefills in the expanded ("compute friendly") form, decodes in the absorbed one: prefill chunks have
    # their own attention FLOPs (module docstring, "Time of a step")
    attn_prefill_fn = (
        _Piecewise(lambda c: _mla_prefill_attention_flops(arch, c), _windows(arch)) if _is_mla(arch) else attn_fn
    )
    bandwidth = card["bandwidth_gb_s"] * 1e9 * n_gpus
    peak = card.get("bf16_dense_tflops")
    peak = peak * 1e12 * n_gpus if peak else None
    weights_memo: dict[int, float] = {}

    # the deployment's weights, as vLLM loads them (a checkpoint's MTP head stays on disk: no drafter here)
    weights_total = float(dep.weights["bytes"])
    # a step gathers one row of the token embedding per token; an untied table is otherwise not read
    # (weights.embedding_table_bytes), so it comes off what every step reads
    embedding_skip = float(min(embedding_table_bytes(arch, dep.weights), weights_total))
    moe = arch.routes_experts
    rest_params = 0.0  # an MoE's parameters outside the routed experts (attention, router, embeddings, shared)
    if moe and getattr(arch, "expert_params", None):  # shared part read every step, experts as routed
        rest_params = arch.params - arch.expert_params
        shared_bytes = (
            float(weights_bytes(rest_params, "BF16")["bytes"])
            if weights_format == "MXFP4"
            else (weights_total * rest_params / arch.params)
        )
        expert_share = max(0.0, arch.active_params - rest_params) / arch.expert_params
    else:
        shared_bytes, expert_share = 0.0, (arch.active_params / arch.params if moe else 1.0)
    routing = _routing(arch) if moe else None
    routed = routing[0] / routing[1] if routing else None
    if routed is not None:  # experts per token / experts, from the catalogue's config (MoE layers only)
        expert_share = routed
        if not shared_bytes:  # active = rest + routed x experts, params = rest + experts: solve for the rest
            rest_params = (arch.active_params - arch.params * routed) / (1.0 - routed)
            shared_bytes = weights_total * min(max(0.0, rest_params), arch.params) / arch.params
    if moe:
        embedding_skip = min(embedding_skip, shared_bytes)  # the embedding is in the shared part
        shared_bytes -= embedding_skip

    def weights_at(tokens: int) -> float:
        """Bytes of weights a step of `tokens` tokens reads: dense, all; MoE, the experts its tokens touch.

        With routing spread evenly, a token touches a share s of the experts, and T tokens touch
        1 - (1 - s)^T of them on average (the shared part, where known, every step)."""
        w = weights_memo.get(tokens)
        if w is None:
            if not moe:
                w = weights_total - embedding_skip
            else:
                touched = 1.0 - (1.0 - expert_share) ** max(1, tokens)
                w = shared_bytes + (weights_total - embedding_skip - shared_bytes) * touched
            weights_memo[tokens] = w
        return w

    eb = eff_bw_given if eff_bw_given is not None else fitted["bandwidth_efficiency"]
    # `kernel`: the MXFP4 path the memory was sized for (the verdict's for vLLM, the card's for SGLang); INT4 (AWQ,
    # GPTQ) and FP8 on a card without FP8 tensor cores run weight-only through Marlin too (`weight_only_kernel`),
    # every linear layer quantized, so at the Marlin constant
    fmt = dep.weights.get("format")
    if kernel is None:
        kernel = weight_only_kernel(card, fmt)
    kernel_key = kernel_constant(kernel, fmt)
    weight_only = kernel_key is not None  # dequantized inside the GEMM: a kernel path's own constant
    # an MoE on no weight-only path: its routed experts through vLLM's fused-MoE kernels, at MOE_CONSTANT, the rest of
    # its FLOPs at compute_efficiency (the `dense_scale` rule below)
    fused_moe = bool(moe) and not weight_only
    if fused_moe:
        kernel_key = MOE_CONSTANT
    # why the compute efficiency is a weight-only kernel's constant, in words (None: the BF16 one)
    compute_path = (
        f"{fmt} weights dequantized inside each GEMM: vLLM's {kernel.capitalize()} path" if weight_only else None
    )
    # MXFP4 on a card without FP4 tensor cores: weight_only_fp4_compute_efficiency when given, even beside a given
    # compute_efficiency. bench/serving_sim_calibration.py passes every constant; until session 6 the given
    # compute_efficiency won here, so the fit never ran the FP4 constant it stored (0.324 was the simplex's, never
    # tested against a run) while simulate's defaults ran the A100/H100 MXFP4 runs with it. A compute_efficiency
    # given alone still sets both (a plain roofline).
    # The constant is the kernel path's (`mxfp4_kernel`): Marlin below SM90, Triton on SM90 and ROCm.
    if (weight_only or fused_moe) and fp4_eff_given.get(kernel_key) is not None:
        ec = fp4_eff_given[kernel_key]
    elif eff_c_given is not None:
        ec = eff_c_given
    elif weight_only or fused_moe:
        ec = fitted[kernel_key]
    else:
        ec = fitted["compute_efficiency"]
    # An MXFP4 checkpoint quantizes the experts only: vLLM runs its other linear layers unquantized (BF16) and never
    # quantizes attention (Mxfp4Config.get_quant_method: LinearBase in ignored_layers -> UnquantizedLinearMethod,
    # FusedMoE -> Mxfp4MoEMethod, Attention not quantized:
    # https://github.com/vllm-project/vllm/blob/afdb4a4ff429377d0fcfac3752e814ffc36ea41d/vllm/model_executor/layers/quantization/mxfp4.py#L181-L201;
    # gpt-oss's quantization_config lists attention, router, embeddings and lm_head in modules_to_not_convert). So on
    # the weight-only FP4 path the experts' FLOPs run at the kernel path's efficiency (ec) and the rest, attention
    # over the context included, at the BF16 compute_efficiency: step_time divides FLOPs by ec, so the dense part's
    # FLOPs are scaled by ec / compute_efficiency (`dense_scale`) and the active parameters become `active_flops`.
    ec_dense = eff_c_given if eff_c_given is not None else fitted["compute_efficiency"]
    dense_scale = ec / ec_dense if (weight_only or fused_moe) else 1.0
    if fused_moe:
        compute_path = f"the routed experts through vLLM's fused-MoE kernels; the rest at {ec_dense:.3g}"
    # The vocabulary's tables do not cost 2 FLOPs per parameter per token: the token embedding is a gather, and the
    # output projection (lm_head) runs at one position per scheduled request, where vLLM V1 samples (`logits_indices`,
    # the last scheduled token of each request; a partial prefill's sample is discarded: vllm/v1/worker/
    # gpu_model_runner.py, _prepare_inputs), not at every prompt token of a chunk. So a step's linear FLOPs are
    # 2 x `active_flops` x tokens (the parameters outside the tables) + `head_flops` x requests (`vocab_tables`). On
    # the weight-only paths the lm_head is BF16 in every checkpoint kvlab runs there, so it runs at the BF16 constant.
    # (Until session 26 every token counted 2 x active params, the tables' included: session 23's candidate A, not kept
    # then; bench/results/2026-12-07-serving-session26.md.)
    body2, head2 = linear_flops(arch)  # the closed form's count, per token and per lm_head row
    body = body2 / 2.0  # the active parameters outside the vocab tables (x 2 and / 2 are exact)
    rest_body = max(0.0, rest_params - vocab_tables(arch)[0] * (head2 / 2.0))  # head2 / 2: one table's parameters
    rest_active = min(rest_body, body) if (fused_moe or (weight_only and moe and fmt in PARTIAL_FORMATS)) else 0.0
    active_flops = (body - rest_active) + rest_active * dense_scale
    head_flops = head2 * dense_scale
    decode_flops = 2.0 * active_flops + head_flops  # a decode token is its request's one sampled position
    # An MoE's routed experts run as one small GEMM per expert: with T tokens in a step, k experts per token and E
    # experts, an expert gets m = T k / E rows, and its GEMM reaches efficiency x m / (m + m_half) (its weight tiles
    # used by few rows, its pipeline and its block padding not amortised). The FLOPs of the experts' T k rows at that
    # efficiency are their FLOPs at `ec` plus m_half rows' worth per expert the step touches: a fixed amount per
    # touched expert, 2 x (routed active params / k) x m_half, over E (1 - (1 - k/E)^T) experts.
    half_rows = moe_half_rows if moe_half_rows is not None else fitted.get("moe_half_rows", 0.0)
    # the routed experts' active parameters: the active count less the parameters outside the experts, both without
    # the vocab tables (gpt-oss's active figure holds one table where its total holds two: `vocab_tables`)
    expert_active = max(0.0, body - min(rest_body, body)) if moe else 0.0
    expert_rows_memo: dict[int, float] = {}
    share_text = f"{routing[0]} of {routing[1]} experts" if routing else f"{expert_share:.3g} of the experts"

    def expert_rows(tokens: int) -> float:
        """The FLOPs a step of `tokens` tokens adds for its experts' unfilled rows (0.0 for a dense model)."""
        x = expert_rows_memo.get(tokens)
        if x is None:
            if not (moe and half_rows and expert_active and expert_share):
                x = 0.0
            else:
                x = 2.0 * expert_active / expert_share * half_rows * (1.0 - (1.0 - expert_share) ** max(1, tokens))
            expert_rows_memo[tokens] = x
        return x

    def prefill_linear_flops(tokens: int, requests: int) -> float:
        """A prefill step's FLOPs outside attention: its tokens through the layers outside the vocab tables, one
        lm_head row per request in the step, and the experts' unfilled rows."""
        return 2.0 * active_flops * tokens + head_flops * requests + expert_rows(tokens)

    step_fixed_s = overhead_given.get("step_overhead_ms", fitted["step_overhead_ms"]) / 1e3
    per_request_s = overhead_given.get("request_overhead_us", fitted["request_overhead_us"]) / 1e6
    ar_latency_s = overhead_given.get("allreduce_latency_us", fitted["allreduce_latency_us"]) / 1e6
    frontend_ms = overhead_given.get("frontend_ms", fitted["frontend_ms"])
    frontend_s = (frontend_ms + chat_template_ms) / 1e3  # the API server's time per request (module docstring)
    # --async-scheduling: vLLM hides the per-step time and this share of the per-request time under the GPU's; the
    # rest of the per-request time stays in the step. SGLang's overlap scheduler hides all of it ("zero-overhead batch
    # scheduler": https://lmsys.org/blog/2024-12-04-sglang-v0-4/)
    if sglang_run or not async_scheduling:
        hidden_share = 1.0
    elif async_hidden_share is not None:
        hidden_share = async_hidden_share
    else:
        hidden_share = float(async_scheduling_fit()["hidden_share"])

    def async_split(batch: int) -> tuple[float, float]:
        """(serial, hidden): under async scheduling, the CPU time a step of `batch` requests adds to the GPU's, and
        the CPU time that overlaps it (the step takes max(GPU + serial, hidden)). With all of it hidden these are 0.0
        and the sum the sequential step adds, to the bit (1.0 x t is t, x + 0.0 is x)."""
        return (1.0 - hidden_share) * per_request_s * batch, step_fixed_s + hidden_share * per_request_s * batch

    link = allreduce_link(card, allreduce_gb_s)
    n_allreduce = 2 * arch.n_layers if n_gpus > 1 else 0
    # ring all-reduce of each token's activations (hidden_size x 2 bytes): 2 (n - 1) / n of them cross each link
    ar_bytes_per_token = arch.hidden_size * ACTIVATION_BYTES * 2 * (n_gpus - 1) / n_gpus if n_gpus > 1 else 0.0
    # a ring all-reduce is 2 (n - 1) steps (reduce-scatter, then all-gather), each paying the link's latency
    ar_hops = 2 * (n_gpus - 1)
    ar_fixed_s = n_allreduce * ar_hops * ar_latency_s
    ar_per_token_s = n_allreduce * ar_bytes_per_token / (link["gb_s"] * 1e9)
    eager_s = arch.n_layers * EAGER_LAYER_MS / 1e3 if enforce_eager else 0.0  # launches of every layer, every step

    def step_time(tokens: int, batch: int, kv_bytes, flops):
        """Seconds of one step (floats) or of many (arrays), and whether compute binds.

        The GPU's part: the roofline and the all-reduces; the CPU's: step_overhead + requests x request_overhead.
        vLLM runs them one after the other, unless --async-scheduling: then the engine schedules step n + 1 while
        the GPU runs step n ("If set to True, perform async scheduling. This helps to avoid gaps in GPU
        utilization", vLLM's engine arguments, https://docs.vllm.ai/en/latest/configuration/engine_args.html;
        EngineCore.step_with_batch_queue in vllm/v1/engine/core.py keeps two batches in flight), and a step
        takes the longer of the two."""
        memory = (weights_at(tokens) + kv_bytes) / bandwidth / eb
        gpu_extra = ar_fixed_s + ar_per_token_s * tokens + eager_s
        cpu = step_fixed_s + per_request_s * batch
        many = isinstance(memory, np.ndarray)
        if peak is None:
            gpu, bound = memory, (memory < 0) if many else False
        else:
            compute = flops / peak / ec
            gpu = np.maximum(memory, compute) if many else max(memory, compute)
            bound = compute > memory
        if gpu_extra:  # all-reduces, eager launches (none on one GPU with CUDA graphs: nothing to add)
            gpu = gpu + gpu_extra
        if not async_scheduling:
            return gpu + cpu, bound
        serial, hidden = async_split(batch)
        gpu = gpu + serial
        return (np.maximum(gpu, hidden) if many else max(gpu, hidden)), bound

    def decode_steps(ctx: np.ndarray, k: int):
        """`step_time` of the next k decode steps of requests at contexts ctx (each one token longer a step): the KV
        each step reads and its attention FLOPs, summed over the requests (`_Piecewise.totals_ahead`)."""
        n_run = len(ctx)
        js = np.arange(1, k + 1, dtype=np.float64)
        c_sum = float(ctx.sum())
        sums = c_sum + n_run * js  # the requests' contexts summed, at each step
        kv_read = kv_fn.totals_ahead(ctx, js, c_sum, sums)
        flops = (decode_flops * n_run + expert_rows(n_run)) + dense_scale * attn_fn.totals_ahead(ctx, js, c_sum, sums)
        return step_time(n_run, n_run, kv_read, flops)

    kv_pairs, attn_pairs = kv_fn.pairs, attn_fn.pairs

    def decode_steps_small(ctx: list, k: int, t0: float, add: float = 0.0) -> tuple[list, list, list]:
        """`decode_steps` of requests whose contexts are a list, as lists, with `add` seconds added to each step and
        the steps' end times from t0 (t0 + the cumulative sum, as numpy's cumsum adds). For a few steps, one step at a
        time in Python floats: the same operations in the same order on the same numbers as numpy's, so the same
        bits, without numpy's fixed cost per call; a long stretch with numpy."""
        if k > SMALL_STEPS:
            dts, cbound = decode_steps(np.array(ctx, dtype=np.int64), k)
            if add:
                dts = dts + add
            return dts.tolist(), cbound.tolist(), (t0 + dts.cumsum()).tolist()
        n_run = len(ctx)
        c_sum = float(sum(ctx))
        kv0, kv_slope = n_run * kv_fn.const, kv_fn.slope
        attn0, attn_slope = n_run * attn_fn.const, attn_fn.slope
        flops0 = decode_flops * n_run + expert_rows(n_run)
        weights = weights_at(n_run)
        # n_run x j for the steps j = 1 .. k, exact integers (numpy's float n_run x float j): the contexts' sum at step j
        # is c_sum + n_run x j
        grow = range(n_run, n_run * k + 1, n_run)
        if kv_pairs or attn_pairs:  # windows: `totals_ahead` on the sorted contexts and their suffix sums
            cs = sorted(float(x) for x in ctx)
            suffix = [0.0] * (n_run + 1)
            acc = cs[-1]  # numpy's reversed cumsum
            suffix[n_run - 1] = acc
            for i in range(n_run - 2, -1, -1):
                acc = acc + cs[i]
                suffix[i] = acc
            kv_read = [kv0 + kv_slope * (c_sum + x) for x in grow]
            attn = [attn0 + attn_slope * (c_sum + x) for x in grow]
            for pairs, values in ((kv_pairs, kv_read), (attn_pairs, attn)):
                for w, d in pairs:
                    for i in range(k):
                        first = bisect_right(cs, w - (i + 1))
                        values[i] = values[i] - d * (suffix[first] + (n_run - first) * ((i + 1) - w))
            memory = [(weights + x) / bandwidth / eb for x in kv_read]
            compute = [(flops0 + dense_scale * x) / peak / ec for x in attn] if peak is not None else None
        elif peak is None or (
            kv_slope >= 0
            and attn_slope >= 0
            and dense_scale >= 0
            and (flops0 + dense_scale * (attn0 + attn_slope * (c_sum + n_run * k))) / peak / ec
            <= (weights + (kv0 + kv_slope * (c_sum + n_run))) / bandwidth / eb
        ):
            # memory binds at every step: the last step's compute time is at most the first step's memory time, and
            # both grow with j (each operation rounds monotonically, the slopes are not negative), so compute_j <=
            # compute_k <= memory_1 <= memory_j, and np.maximum gives memory_j (with no peak: memory alone)
            gpu_extra = ar_fixed_s + ar_per_token_s * n_run + eager_s
            cpu = step_fixed_s + per_request_s * n_run
            if not gpu_extra and not add:  # (the common case, in one pass)
                if async_scheduling:  # max(memory + serial, hidden)
                    serial, hidden = async_split(n_run)
                    dts = [
                        m
                        if (m := (weights + (kv0 + kv_slope * (c_sum + x))) / bandwidth / eb + serial) >= hidden
                        else hidden
                        for x in grow
                    ]
                else:
                    dts = [(weights + (kv0 + kv_slope * (c_sum + x))) / bandwidth / eb + cpu for x in grow]
                return dts, [False] * k, [t0 + x for x in accumulate(dts)]
            memory = [(weights + (kv0 + kv_slope * (c_sum + x))) / bandwidth / eb for x in grow]
            compute = None
        else:
            memory = [(weights + (kv0 + kv_slope * (c_sum + x))) / bandwidth / eb for x in grow]
            compute = [(flops0 + dense_scale * (attn0 + attn_slope * (c_sum + x))) / peak / ec for x in grow]
        gpu_extra = ar_fixed_s + ar_per_token_s * n_run + eager_s
        cpu = step_fixed_s + per_request_s * n_run
        if compute is None:
            gpu, cbound = memory, [False] * k
        else:
            cbound = [c > m for m, c in zip(memory, compute)]
            if not gpu_extra and not add:  # (the common case, in one pass)
                if async_scheduling:  # max(max(memory, compute) + serial, hidden)
                    serial, hidden = async_split(n_run)
                    dts = [
                        g if (g := (m if m >= c else c) + serial) >= hidden else hidden for m, c in zip(memory, compute)
                    ]
                else:
                    dts = [(m if m >= c else c) + cpu for m, c in zip(memory, compute)]
                return dts, cbound, [t0 + x for x in accumulate(dts)]  # (accumulate: numpy's cumsum, left to right)
            gpu = [m if m >= c else c for m, c in zip(memory, compute)]  # np.maximum
        if gpu_extra:
            gpu = [x + gpu_extra for x in gpu]
        if async_scheduling:
            serial, hidden = async_split(n_run)
            dts = [g if (g := x + serial) >= hidden else hidden for x in gpu]
        else:
            dts = [x + cpu for x in gpu]
        if add:
            dts = [x + add for x in dts]
        return dts, cbound, [t0 + x for x in accumulate(dts)]

    # --- per-request state ----------------------------------------------------------------------
    # send and enter times are written once per request, in order, and read one at a time: plain lists while the
    # loop runs (a numpy scalar costs more to read, in Pyodide most of all), arrays for the results
    planned_s = planned.tolist()
    send: list[float] = []
    enter: list[float] = []  # when the API server hands the request to the engine (send + the frontend's queue)
    computed = np.zeros(n, dtype=np.int64)
    generated = np.zeros(n, dtype=np.int64)
    held = np.zeros(n, dtype=np.int64)  # own blocks
    shared = np.zeros(n, dtype=np.int64)  # blocks of the cached prefix it references
    first_sched = np.full(n, np.nan)
    first_tok = np.full(n, np.nan)
    last_tok = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    preempts = np.zeros(n, dtype=np.int64)

    slots = concurrency or n
    assigned = 0  # requests with a send time
    visible = 0  # requests the engine has seen (in its queue or further)
    in_flight = 0

    last_enter = -math.inf

    def assign(now: float) -> None:
        nonlocal assigned, in_flight, last_enter
        first = assigned
        while assigned < n and in_flight < slots:
            send.append(max(planned_s[assigned], now))
            assigned += 1
            in_flight += 1
        # the API server takes requests in turn, frontend_s each (tokenization, chat template), each waiting for its
        # own; those sent at the same instant enter together, after all of theirs (module docstring, frontend_ms)
        i = first
        while i < assigned:
            j, at = i + 1, send[i]
            while j < assigned and send[j] == at:
                j += 1
            last_enter = max(at, last_enter) + (j - i) * frontend_s
            enter.extend([last_enter] * (j - i))
            i = j

    assign(0.0)
    waiting: deque[int] = deque()
    # request ids that index the per-request arrays are np.intp, numpy's index type (int32 in Pyodide's wasm32: an
    # int64 index array is converted at every use, which costs several times the indexing itself there)
    run = np.zeros(0, dtype=np.intp)
    free = num_blocks
    pb = (prefix_len // bs) if enable_prefix_caching and full_only else 0  # the shared prefix's cached blocks
    # a preempted request's own freed blocks, still cached (prefix caching; layouts whose hit is a block count:
    # full attention and sliding windows, not recurrent state or chunked-local groups; not beside a shared prefix)
    # (SGLang frees a retracted request's tokens past its matched prefix: no such hits)
    own_hits = not sglang_run and enable_prefix_caching and not blocks.state and not blocks.chunked and not pb
    kept = np.zeros(n, dtype=np.int64)  # tokens of its own blocks a preempted request left in the cache
    kept_until = np.zeros(n, dtype=np.int64)  # `taken` after which those blocks start being reused
    taken = 0  # blocks allocated from the free queue so far (new blocks come from its front)
    prefix_cached = False
    prefix_refs = 0

    t = 0.0
    done = 0
    steps = 0
    preemption_events = 0
    max_running = 0
    compute_bound_s = 0.0
    busy_s = 0.0
    # inter-token latencies, as (value, how many) pairs: single gaps, and runs of equal steps
    itl_one: list[float] = []
    itl_one_n: list[int] = []
    itl_runs: list[np.ndarray] = []
    itl_runs_n: list[int] = []
    itl_odd: list[np.ndarray] = []
    samples: list[tuple[float, int, int, int]] = [(0.0, 0, 0, 0)]
    step_trace: list[dict] = []

    def arrivals(now: float) -> None:
        nonlocal visible
        while visible < assigned and enter[visible] <= now:
            waiting.append(visible)
            visible += 1

    def release(ids: np.ndarray, now: float) -> None:
        """Requests that finished at `now`: their blocks back, their client slots to the next ones."""
        nonlocal free, done, in_flight, prefix_refs
        finish[ids] = now
        free += int(held[ids].sum())
        held[ids] = 0
        if pb:  # (without a shared prefix no request references one)
            refs = int((shared[ids] > 0).sum())
            if refs:
                prefix_refs -= refs
                if prefix_refs == 0:
                    free += pb  # still cached, but evictable: counted as free
            shared[ids] = 0
        done += len(ids)
        in_flight -= len(ids)
        assign(now)

    def emit(ids: np.ndarray, now: float, dt: float, t0: float, latest: float | None = None) -> None:
        """Requests `ids` get a token at `now`, at the end of a step of dt begun at t0; `latest`: the time of their
        last token when more follow in the same stretch (default: this one)."""
        last = last_tok[ids]  # their previous tokens' times (NaN: none yet)
        regular = last == t0  # a token at the end of the step before: a gap of dt
        n_regular = int(regular.sum())
        if n_regular:
            itl_one.append(dt)
            itl_one_n.append(n_regular)
        if n_regular < len(ids):  # first tokens, and gaps longer than one step
            first = np.isnan(last)
            n_first = int(first.sum())
            if n_first:
                first_tok[ids[first]] = now
            if n_regular + n_first < len(ids):
                odd = ~(regular | first) if n_first else ~regular  # neither a gap of dt nor a first token
                itl_odd.append(now - last[odd])
        last_tok[ids] = now if latest is None else latest

    def evict(victim: int) -> None:
        """A running request preempted (vLLM) or retracted (SGLang): its blocks back to the pool (the shared prefix's
        once no one references it), its computed tokens to recompute."""
        nonlocal free, prefix_refs
        free += int(held[victim])
        held[victim] = 0
        if shared[victim]:
            shared[victim] = 0
            prefix_refs -= 1
            if prefix_refs == 0:
                free += pb
        computed[victim] = 0
        preempts[victim] += 1

    def run_chunks(ids: np.ndarray, a: np.ndarray, c: np.ndarray, b: np.ndarray, tokens: int) -> float:
        """One step in which requests `ids` go from a to b = a + c computed tokens (`tokens` in all): its seconds,
        counted; the first request through a shared prefix leaves its blocks cached as the shared copy."""
        nonlocal steps, busy_s, compute_bound_s, prefix_cached, prefix_refs
        if attn_prefill_fn is attn_fn:
            attn = float(attn_fn.span(a, b).sum())
        else:  # MLA: chunks of more than one token take the prefill path, single tokens the decode path
            pre = c > 1
            attn = float(attn_fn.span(a[~pre], b[~pre]).sum()) + float(attn_prefill_fn.span(a[pre], b[pre]).sum())
        flops = prefill_linear_flops(tokens, len(ids)) + dense_scale * attn
        dt, cb = step_time(tokens, len(ids), kv_fn.total(b), flops)
        steps += 1
        busy_s += dt
        if bool(cb):
            compute_bound_s += dt
        if pb and not prefix_cached and bool((b >= pb * bs).any()):
            prefix_cached = True
            owner = int(ids[np.argmax(b >= pb * bs)])
            held[owner] -= pb
            shared[owner] = pb
            prefix_refs += 1
        return dt

    def trace_row(t0: float, k: int, per_step: int, prefill: int, running: int, preempted: int) -> None:
        """One trace row: k steps from t0 of per_step tokens each (prefill of them prompt tokens)."""
        step_trace.append(
            {
                "t": t0,
                "steps": k,
                "tokens_per_step": per_step,
                "prefill_tokens": prefill,
                "running": running,
                "free_blocks": free,
                "preempted": preempted,
            }
        )

    def record_stretch(ids: np.ndarray, t0: float, t_end: float, dts: np.ndarray, cbound, preempted: int) -> None:
        """A stretch of len(dts) identical decode steps of requests `ids` from t0 to t_end: their tokens (the first
        step's gap per request, then k - 1 regular gaps each), the counters and the trace."""
        nonlocal steps, busy_s, compute_bound_s, max_running
        k, n_ids, dt0 = len(dts), len(ids), float(dts[0])
        emit(ids, t0 + dt0, dt0, t0, latest=t_end if k > 1 else None)
        if k > 1:
            itl_runs.append(dts[1:])
            itl_runs_n.append(n_ids)
        steps += k
        busy_s += t_end - t0
        if peak is not None and cbound.any():
            compute_bound_s += float(dts[cbound].sum())
        max_running = max(max_running, n_ids)
        if trace:
            trace_row(t0, k, n_ids, 0, n_ids, preempted)

    # The running batch in Python (SMALL_BATCH): lists in running order of the requests' ids, computed tokens, generated
    # tokens, own blocks, shared-prefix blocks and last token times. There these are what counts; the arrays indexed by
    # request hold them for the requests not running (a request's values go back to the arrays when it is preempted,
    # or when the batch moves to numpy; a finished request's are not needed again).

    def emit_small(ids: list, last: list, now: float, dt: float, t0: float) -> None:
        """`emit` for requests `ids` whose last token times are `last`; the caller sets their new last times."""
        n_regular = last.count(t0)  # (t0 is a number: a NaN does not count)
        if n_regular:
            itl_one.append(dt)
            itl_one_n.append(n_regular)
        if n_regular < len(last):  # first tokens, and gaps longer than one step
            odd = []
            for r, x in zip(ids, last):
                if x == t0:
                    continue
                if x != x:  # NaN: its first token
                    first_tok[r] = now
                else:
                    odd.append(now - x)
            if odd:
                itl_odd.append(odd)

    def record_stretch_small(
        ids: list, last: list, t0: float, t_end: float, dts: list, cbound: list, preempted: int
    ) -> None:
        """`record_stretch` for a batch in Python; the caller sets the last token times to t_end."""
        nonlocal steps, busy_s, compute_bound_s, max_running
        k, n_ids, dt0 = len(dts), len(ids), dts[0]
        emit_small(ids, last, t0 + dt0, dt0, t0)
        if k > 1:
            itl_runs.append(dts[1:])
            itl_runs_n.append(n_ids)
        steps += k
        busy_s += t_end - t0
        if peak is not None and True in cbound:
            compute_bound_s += _sum([dt for dt, bound in zip(dts, cbound) if bound])
        max_running = max(max_running, n_ids)
        if trace:
            trace_row(t0, k, n_ids, 0, n_ids, preempted)

    def release_small(fin: list, now: float, batch: tuple) -> None:
        """`release` of the requests at places `fin` (ascending) of a batch in Python, which loses them."""
        nonlocal free, done, in_flight, prefix_refs
        ids, _, _, own, in_prefix, _ = batch
        refs = 0
        for i in fin:
            finish[ids[i]] = now
            free += own[i]
            refs += in_prefix[i] > 0
        if refs:
            prefix_refs -= refs
            if prefix_refs == 0:
                free += pb
        for i in reversed(fin):
            for col in batch:
                del col[i]
        done += len(fin)
        in_flight -= len(fin)
        assign(now)

    def run_chunks_small(ids: list, a: list, c: list, b: list, tokens: int) -> tuple[float, int]:
        """`run_chunks` for chunks given as lists: the step's seconds, and the place in `ids` of the request that
        leaves the shared prefix cached (-1: none), whose blocks the caller moves."""
        nonlocal steps, busy_s, compute_bound_s, prefix_cached, prefix_refs
        if attn_prefill_fn is attn_fn and not attn_pairs:  # `span` without windows, inline
            const, slope = attn_fn.const, attn_fn.slope
            attn = _sum([(y - x) * const + slope * ((y - x) * (x + y + 1)) / 2 for x, y in zip(a, b)])
        elif attn_prefill_fn is attn_fn:
            attn = _sum([attn_fn.span_one(x, y) for x, y in zip(a, b)])
        else:
            attn = _sum([attn_fn.span_one(x, y) for x, y, z in zip(a, b, c) if z <= 1]) + _sum(
                [attn_prefill_fn.span_one(x, y) for x, y, z in zip(a, b, c) if z > 1]
            )
        flops = prefill_linear_flops(tokens, len(ids)) + dense_scale * attn
        dt, cb = step_time(tokens, len(ids), kv_fn.total_of(b), flops)
        steps += 1
        busy_s += dt
        if cb:
            compute_bound_s += dt
        owner = -1
        if pb and not prefix_cached:
            owner = next((i for i, x in enumerate(b) if x >= pb * bs), -1)
            if owner >= 0:
                prefix_cached = True
                prefix_refs += 1
        return dt, owner

    def hit_of(r: int, total: int) -> tuple[int, bool]:
        """Tokens waiting request r (of `total` tokens) takes from the prefix cache, and whether they are the shared
        prefix."""
        if kept[r]:
            hit = int(kept[r])
            gone = taken - int(kept_until[r])  # its blocks reused since it was preempted, tail first
            if gone > 0:
                # full attention: the head of its chain survives; a sliding window needs its last blocks: none
                hit = max(0, hit - bs * -(-gone // blocks.full_groups)) if blocks.full_only else 0
            return min(hit, (total - 1) // bs * bs), False
        return _hit(pb, bs, prefix_cached, computed[r], total), True

    def admission(r: int, room: int) -> tuple[int, bool, int, int, int]:
        """Admitting waiting request r with `room` tokens of the step's budget: its cache hit, whether that is the
        shared prefix, the chunk it computes, the blocks it then holds, and the shared prefix's blocks it takes off
        `free` with them (a preempted request's own cached blocks are counted in `free`: it takes them back)."""
        total = prompt_l[r] + int(generated[r])
        hit, is_shared = hit_of(r, total)
        chunk = min(total - hit, room)
        if is_shared:
            return hit, True, chunk, blocks.one(hit + chunk, hit) - hit // bs, pb if hit and prefix_refs == 0 else 0
        return hit, False, chunk, blocks.one(hit + chunk, hit), 0

    def queued(now: float) -> int:
        """Requests sent by `now` and not running: in the engine's queue, or joining it at the next step."""
        # send times never decrease (each is the later of its planned time and the clock when a slot frees)
        return len(waiting) + bisect_right(send, now, visible, assigned) - visible

    guard_limit = 4 * int(out.sum() + prompt.sum()) + 10 * n
    guard = 0
    prompt_l, out_l = prompt.tolist(), out.tolist()
    # the running batch: in Python (R: ids, Rc: computed, Rg: generated, Rh: own blocks, Rs: shared-prefix blocks, Rl:
    # last token times; `small`), or with numpy (`run` and the arrays indexed by request)
    small = True
    R: list[int] = []
    Rc: list[int] = []
    Rg: list[int] = []
    Rh: list[int] = []
    Rs: list[int] = []
    Rl: list[float] = []

    def batch_to_lists() -> tuple:
        """The batch with numpy (`run`) as lists."""
        return (
            run.tolist(),
            computed[run].tolist(),
            generated[run].tolist(),
            held[run].tolist(),
            shared[run].tolist(),
            last_tok[run].tolist(),
        )

    def batch_to_arrays(batch: tuple) -> np.ndarray:
        """A batch in Python written to the arrays; its ids, as `run`."""
        ids = np.array(batch[0], dtype=np.intp)
        computed[ids], generated[ids], held[ids], shared[ids], last_tok[ids] = batch[1:]
        return ids

    def admit(n_running: int, budget_left: int, now: float) -> tuple:
        """vLLM's admissions, after the running requests: waiting requests in order while the budget, max_num_seqs and
        the pool allow. The admitted requests with their chunks, cache hits, own blocks and shared-prefix blocks, and
        the budget left."""
        nonlocal free, taken, prefix_refs
        admitted: list[int] = []
        a_sched: list[int] = []
        a_hit: list[int] = []
        a_mine: list[int] = []
        a_shared: list[int] = []
        while waiting and budget_left > 0 and n_running + len(admitted) < seqs_cap:
            r = waiting[0]
            hit, is_shared, chunk, mine, extra = admission(r, budget_left)
            if mine + extra > free:
                break  # it waits; what it had computed stays cached
            waiting.popleft()
            free -= mine + extra
            taken += mine - (blocks.one(hit, hit) if not is_shared else 0)
            held[r] = mine
            kept[r] = 0
            in_prefix = 0
            if hit and is_shared:
                shared[r] = in_prefix = pb
                prefix_refs += 1
            computed[r] = hit
            if math.isnan(first_sched[r]):
                first_sched[r] = now
            admitted.append(r)
            a_sched.append(chunk)
            a_hit.append(hit)
            a_mine.append(mine)
            a_shared.append(in_prefix)
            budget_left -= chunk
        return admitted, a_sched, a_hit, a_mine, a_shared, budget_left

    if sglang_run:
        # SGLang (module docstring, "SGLang"): a prefill batch whenever one can be formed, else one decode step of
        # every running request; admission by tokens with future decodes reserved (new_token_ratio), retraction
        # when a decode step does not fit
        init_ratio = min(SGLANG_INIT_NEW_TOKEN_RATIO * conservativeness, 1.0)
        min_ratio = min(init_ratio * SGLANG_MIN_NEW_TOKEN_RATIO_FACTOR, 1.0)
        decay = (init_ratio - min_ratio) / SGLANG_NEW_TOKEN_RATIO_DECAY_STEPS
        new_ratio = init_ratio
        batch_full = False  # running_batch.batch_is_full: no prefill is tried until the batch shrinks
        chunked = -1  # the request whose prompt is part-way through chunked prefill (self.chunked_req)
        clip = SGLANG_CLIP_MAX_NEW_TOKENS
        graph_bs = sg["cuda_graph_max_bs"]
        eager_decode_s = arch.n_layers * EAGER_LAYER_MS / 1e3  # a decode batch above the CUDA graph's largest
        while done < n:
            guard += 1
            if guard > guard_limit:
                raise RuntimeError("scheduler simulation made no progress (a kvlab bug)")
            if visible < assigned and enter[visible] <= t:
                arrivals(t)
            n_run = len(R) if small else len(run)
            if not n_run and not waiting and chunked < 0:
                new_ratio = init_ratio  # an idle scheduler resets new_token_ratio
                t = float(enter[visible]) if visible < assigned else t
                arrivals(t)
                if not waiting:
                    raise RuntimeError("scheduler simulation: nothing to run and nothing to come (a kvlab bug)")
            if small and n_run > SMALL_BATCH:
                run, small = batch_to_arrays((R, Rc, Rg, Rh, Rs, Rl)), False
            elif not small and n_run <= SMALL_BATCH_BACK:
                (R, Rc, Rg, Rh, Rs, Rl), small = batch_to_lists(), True
            # ---- a prefill batch (get_new_batch_prefill; PrefillAdder) ---------------------------
            adds: list[tuple[int, int, int]] = []  # (request, tokens it starts from, tokens it prefills)
            took: list[int] = []  # requests taken off the waiting queue
            if (waiting and not batch_full) or chunked >= 0:
                if n_run >= seqs_cap and chunked < 0:
                    batch_full = True
                else:
                    if small:  # the running requests' answers left, at most `clip` each
                        reserve = float(sum([min(out_l[r] - g, clip) for r, g in zip(R, Rg)]))
                    else:
                        reserve = float(np.minimum(out[run] - generated[run], clip).sum())
                    rem_total = free - reserve * new_ratio  # free and evictable, less running reserves
                    cur_rem = free
                    rem_input, rem_chunk = max_prefill_tokens, budget
                    if chunked >= 0:  # add_chunked_req: the next chunk of the request part-way through
                        r = chunked
                        rest = int(prompt[r] + generated[r] - computed[r])
                        c = min(rest, rem_chunk)
                        truncated = rest > rem_chunk
                        adds.append((r, int(computed[r]), c))
                        rem_total -= c + (0 if truncated else min(int(out[r]), clip))
                        cur_rem -= c
                        rem_input -= c
                        rem_chunk -= c
                        chunked = r if truncated else -1
                    for r in waiting:
                        if len(adds) >= seqs_cap - n_run:
                            batch_full = True
                            break
                        total = prompt_l[r] + int(generated[r])
                        hit = _hit(pb, 1, prefix_cached, 0, total)  # the radix cache's
                        ext = total - hit
                        new_tokens = min(out_l[r], clip)  # min(max_new_tokens, CLIP_MAX_NEW_TOKENS)
                        if ext + new_tokens >= rem_total:  # AddReqResult.NO_TOKEN
                            batch_full = True
                            break
                        if ext >= rem_input and adds:  # AddReqResult.OTHER: the prefill token budget
                            break
                        c = ext if ext <= rem_chunk else rem_chunk
                        if c <= 0:
                            break
                        truncated = c < ext
                        extra = pb if hit and prefix_refs == 0 else 0
                        adds.append((r, hit, c))
                        took.append(r)
                        if hit:
                            shared[r] = pb
                            prefix_refs += 1
                            free -= extra
                        computed[r] = hit
                        rem_total -= c + (0 if truncated else new_tokens)
                        cur_rem -= c
                        rem_input -= c
                        rem_chunk -= c
                        if truncated:
                            chunked = r
                        if rem_total <= 0 or cur_rem <= 0:  # budget_state: NO_TOKEN
                            batch_full = True
                            break
                        if rem_input <= 0 or rem_chunk <= 0:  # budget_state: OTHER
                            break
            if adds and small:  # (the requests prefilled are not running: their values are in the arrays)
                for r in took:
                    waiting.remove(r)
                ids_l = [x[0] for x in adds]
                a_l = [x[1] for x in adds]
                c_l = [x[2] for x in adds]
                b_l = [x + y for x, y in zip(a_l, c_l)]
                tokens = sum(c_l)
                free -= tokens
                taken += tokens
                for r, x, y in zip(ids_l, c_l, b_l):
                    held[r] += x
                    computed[r] = y
                for r in took:
                    if math.isnan(first_sched[r]):
                        first_sched[r] = t
                dt, owner = run_chunks_small(ids_l, a_l, c_l, b_l, tokens)
                if owner >= 0:
                    held[ids_l[owner]] -= pb
                    shared[ids_l[owner]] = pb
                t0, t = t, t + dt
                ready = [r for r, y in zip(ids_l, b_l) if y >= prompt_l[r] + int(generated[r])]  # prompts done
                if ready:
                    emit_small(ready, [float(last_tok[r]) for r in ready], t, dt, t0)
                    R = R + ready  # merged into the running batch, with its first (or next) token
                    Rc = Rc + [int(computed[r]) for r in ready]
                    Rg = Rg + [int(generated[r]) + 1 for r in ready]
                    Rh = Rh + [int(held[r]) for r in ready]
                    Rs = Rs + [int(shared[r]) for r in ready]
                    Rl = Rl + [t] * len(ready)
                max_running = max(max_running, len(R))
                if trace:
                    trace_row(t0, 1, tokens, tokens, len(R), 0)
                fin_l = [i for i, (r, g) in enumerate(zip(R, Rg)) if g >= out_l[r]]
                if fin_l:
                    release_small(fin_l, t, (R, Rc, Rg, Rh, Rs, Rl))
                    batch_full = False
                samples.append((t, num_blocks - free, queued(t), len(R)))
                continue
            if adds:
                for r in took:
                    waiting.remove(r)
                ids = np.array([a[0] for a in adds], dtype=np.intp)
                a = np.array([x[1] for x in adds], dtype=np.int64)
                c = np.array([x[2] for x in adds], dtype=np.int64)
                b = a + c
                tokens = int(c.sum())
                free -= tokens
                taken += tokens
                held[ids] += c
                computed[ids] = b
                for r in took:
                    if math.isnan(first_sched[r]):
                        first_sched[r] = t
                dt = run_chunks(ids, a, c, b, tokens)
                t0, t = t, t + dt
                ready = ids[b >= prompt[ids] + generated[ids]]  # prompts done: each samples a token
                if len(ready):
                    generated[ready] += 1
                    emit(ready, t, dt, t0)
                    run = np.concatenate([run, ready])  # merged into the running batch
                max_running = max(max_running, len(run))
                if trace:
                    trace_row(t0, 1, tokens, tokens, len(run), 0)
                fin = generated[run] >= out[run]
                if fin.any():
                    release(run[fin], t)
                    run = run[~fin]
                    batch_full = False
                samples.append((t, num_blocks - free, queued(t), len(run)))
                continue
            if not n_run:
                if waiting and not batch_full:
                    raise RuntimeError("scheduler simulation: a prefill with nothing admitted (a kvlab bug)")
                r = waiting[0]
                need_tokens = int(prompt[r] + generated[r]) + min(int(out[r]), clip)
                raise Refused(
                    "input_len",
                    f"SGLang would never admit a request of {int(prompt[r]):,} prompt tokens: with its "
                    f"{min(int(out[r]), clip):,} answer tokens reserved it needs {need_tokens:,} tokens, and its pool "
                    f"holds {num_blocks:,}",
                )
            # ---- decode (update_running_batch): retract if the step's tokens do not fit ----------
            retracted = 0
            if free < n_run:  # check_decode_mem fails: retract_decode
                if small:
                    # fewest generated first, then longest prompt (a stable sort, as np.lexsort)
                    order = sorted(range(n_run), key=lambda i: (Rg[i], -prompt_l[R[i]]))
                    keep = [True] * n_run
                    n_keep = n_run
                    for i in order:
                        if n_keep == 1:
                            break
                        if retracted and free >= n_keep * SGLANG_RETRACT_DECODE_STEPS:
                            break
                        victim = R[i]
                        keep[i] = False
                        n_keep -= 1
                        held[victim], shared[victim], generated[victim], last_tok[victim] = Rh[i], Rs[i], Rg[i], Rl[i]
                        evict(victim)
                        waiting.append(victim)  # back of the queue (_add_request_to_queue)
                        retracted += 1
                    R, Rc, Rg, Rh, Rs, Rl = ([x for x, f in zip(col, keep) if f] for col in (R, Rc, Rg, Rh, Rs, Rl))
                    n_run = len(R)
                    run_generated, run_out = float(sum(Rg)), float(sum([out_l[r] for r in R]))
                else:
                    order = np.lexsort((-prompt[run], generated[run]))  # fewest generated first, then longest prompt
                    keep = np.ones(n_run, dtype=bool)
                    for i in order:
                        if keep.sum() == 1:
                            break
                        if retracted and free >= int(keep.sum()) * SGLANG_RETRACT_DECODE_STEPS:
                            break
                        victim = int(run[i])
                        keep[i] = False
                        evict(victim)
                        waiting.append(victim)  # back of the queue (_add_request_to_queue)
                        retracted += 1
                    run = run[keep]
                    n_run = len(run)
                    run_generated, run_out = float(generated[run].sum()), float(out[run].sum())
                preemption_events += retracted
                batch_full = False
                new_ratio = min(1.0, (run_generated + SGLANG_RETRACT_DECODE_STEPS * n_run) / run_out)
                if free < n_run:
                    raise RuntimeError("scheduler simulation: no room for one decode step (a kvlab bug)")
            if small:
                left_l = [out_l[r] - g for r, g in zip(R, Rg)]
                fewest_left = min(left_l)
                k = min(fewest_left, free // n_run, JUMP_STEPS)
                if waiting and not batch_full:
                    k = 1  # a prefill is tried before the next step
                dts_l, cbound_l, ends_l = decode_steps_small(Rc, k, t, eager_decode_s if n_run > graph_bs else 0.0)
                if not waiting and not batch_full and visible < assigned:
                    seen = bisect_left(ends_l, enter[visible])  # first step ending after it
                    if seen + 1 < k:
                        k = seen + 1
                        dts_l, cbound_l, ends_l = dts_l[:k], cbound_l[:k], ends_l[:k]
                new_ratio = max(new_ratio - decay * (k - (1 if retracted else 0)), min_ratio)
                t0, t_end = t, ends_l[-1]
                free -= k * n_run
                taken += k * n_run
                Rh = [x + k for x in Rh]
                Rc = [x + k for x in Rc]
                Rg = [x + k for x in Rg]
                record_stretch_small(R, Rl, t0, t_end, dts_l, cbound_l, retracted)
                Rl = [t_end] * n_run
                t = t_end
                if k == fewest_left:  # some requests have no tokens left: they finish
                    release_small([i for i, x in enumerate(left_l) if x <= k], t, (R, Rc, Rg, Rh, Rs, Rl))
                    batch_full = False
                samples.append((t, num_blocks - free, queued(t), len(R)))
                continue
            ctx = computed[run]
            gen = generated[run]
            left = out[run] - gen
            fewest_left = int(left.min())
            k = min(fewest_left, free // n_run, JUMP_STEPS)
            if waiting and not batch_full:
                k = 1  # a prefill is tried before the next step
            dts, cbound = decode_steps(ctx, k)
            if n_run > graph_bs:
                dts = dts + eager_decode_s  # no CUDA graph for a batch this large: launches from Python
            ends = t + dts.cumsum()
            if not waiting and not batch_full and visible < assigned:
                seen = int(ends.searchsorted(enter[visible], side="left"))  # first step ending after it
                if seen + 1 < k:
                    k = seen + 1
                    dts, cbound, ends = dts[:k], cbound[:k], ends[:k]
            new_ratio = max(new_ratio - decay * (k - (1 if retracted else 0)), min_ratio)
            t0, t_end = t, float(ends[-1])
            free -= k * n_run
            taken += k * n_run
            held[run] += k
            computed[run] = ctx + k
            generated[run] = gen + k
            record_stretch(run, t0, t_end, dts, cbound, retracted)
            t = t_end
            if k == fewest_left:  # some requests have no tokens left: they finish
                fin = left <= k
                release(run[fin], t)
                run = run[~fin]
                batch_full = False
            samples.append((t, num_blocks - free, queued(t), len(run)))
    else:  # vLLM V1 (module docstring, "What a step is")
        while done < n:
            guard += 1
            if guard > guard_limit:
                raise RuntimeError("scheduler simulation made no progress (a kvlab bug)")
            if visible < assigned and enter[visible] <= t:
                arrivals(t)
            n_run = len(R) if small else len(run)
            if not n_run and not waiting:
                t = float(enter[visible]) if visible < assigned else t
                arrivals(t)
                if not waiting:
                    raise RuntimeError("scheduler simulation: nothing to run and nothing to come (a kvlab bug)")
            if small and n_run > SMALL_BATCH:
                run, small = batch_to_arrays((R, Rc, Rg, Rh, Rs, Rl)), False
            elif not small and n_run <= SMALL_BATCH_BACK:
                (R, Rc, Rg, Rh, Rs, Rl), small = batch_to_lists(), True

            if small:  # the same event as with numpy below, in Python: see there for the why of each part
                occ_l = [x + y for x, y in zip(Rh, Rs)] if pb else Rh
                need_l = [prompt_l[r] + g - c for r, g, c in zip(R, Rg, Rc)]
                decoding = n_run > 0 and max(need_l) == 1
                decode_blocks_l = None
                if decoding:
                    admissible = bool(waiting) and n_run < seqs_cap and budget > n_run
                    if admissible:
                        _, _, _, mine, extra = admission(waiting[0], budget - n_run)
                        decode_blocks_l = [x - o for x, o in zip(blocks.decoded_after(Rc, 1), occ_l)]
                        admissible = mine + extra <= free - sum(decode_blocks_l)
                    if not admissible:  # a stretch
                        left_l = [out_l[r] - g for r, g in zip(R, Rg)]
                        fewest_left = min(left_l)
                        k = min(fewest_left, JUMP_STEPS)
                        if n_run * blocks.most_in(k) > free:
                            last_k = sum(blocks.decoded_after(Rc, k)) - sum(occ_l)
                            if last_k + n_run * blocks.sliding_slack > free:
                                for j in range(1, k + 1):
                                    if sum(blocks.decoded_after(Rc, j)) - sum(occ_l) > free:
                                        k = j - 1  # steps 1 .. j - 1 fit
                                        break
                        if k >= 1:
                            dts_l, cbound_l, ends_l = decode_steps_small(Rc, k, t)
                            if not waiting and n_run < seqs_cap and visible < assigned:
                                seen = bisect_left(ends_l, enter[visible])  # first step ending after it
                                if seen + 1 < k:
                                    k = seen + 1
                                    dts_l, cbound_l, ends_l = dts_l[:k], cbound_l[:k], ends_l[:k]
                            t0, t_end = t, ends_l[-1]
                            grown_l = blocks.decoded_after(Rc, k)
                            Rc = [c + k for c in Rc]
                            if pb:
                                grown_l = [x - y for x, y in zip(grown_l, Rs)]
                            n_added = sum(grown_l) - sum(Rh)
                            free -= n_added
                            if blocks.sliding:
                                taken += sum([x - y for x, y in zip(grown_l, Rh) if x > y])
                            else:
                                taken += n_added
                            prefix_cached = prefix_cached and not (prefix_refs == 0 and free < pb)
                            Rh = grown_l
                            Rg = [g + k for g in Rg]
                            record_stretch_small(R, Rl, t0, t_end, dts_l, cbound_l, 0)
                            Rl = [t_end] * n_run
                            t = t_end
                            if k == fewest_left:  # some requests have no tokens left: they finish
                                fin_l = [i for i, x in enumerate(left_l) if x <= k]
                                release_small(fin_l, t, (R, Rc, Rg, Rh, Rs, Rl))
                            samples.append((t, num_blocks - free, queued(t), len(R)))
                            continue
                # one step
                if decoding:
                    sched_l = need_l
                    newb_l = (
                        decode_blocks_l
                        if decode_blocks_l is not None
                        else [x - o for x, o in zip(blocks.decoded_after(Rc, 1), occ_l)]
                    )
                else:
                    sched_l = []
                    before = 0  # the tokens the requests before ask for
                    for x in need_l:
                        room = budget - before
                        sched_l.append(min(room if room > 0 else 0, x))
                        before += x
                    newb_l = [blocks.one(c + x, c) - o if x > 0 else 0 for c, x, o in zip(Rc, sched_l, occ_l)]
                preempted = 0
                cum_l = list(accumulate(newb_l))
                while R and cum_l[-1] > free:
                    p = next(i for i, x in enumerate(cum_l) if x > free)
                    victim, last = R[-1], len(R) - 1
                    held[victim], shared[victim], generated[victim], last_tok[victim] = Rh[-1], Rs[-1], Rg[-1], Rl[-1]
                    if own_hits:
                        kept[victim] = Rc[-1] // bs * bs
                        kept_until[victim] = taken + free
                    R, Rc, Rg, Rh, Rs, Rl = R[:-1], Rc[:-1], Rg[:-1], Rh[:-1], Rs[:-1], Rl[:-1]
                    sched_l, newb_l, cum_l = sched_l[:-1], newb_l[:-1], cum_l[:-1]
                    evict(victim)
                    waiting.appendleft(victim)
                    preempted += 1
                    if p == last:
                        break
                preemption_events += preempted
                n_new = cum_l[-1] if cum_l else 0
                free -= n_new
                taken += sum([x for x in newb_l if x > 0]) if blocks.sliding else n_new
                Rh = [x + y for x, y in zip(Rh, newb_l)]
                budget_left = budget - sum(sched_l)
                if not preempted:
                    admitted, a_sched, a_hit, a_mine, a_shared, budget_left = admit(len(R), budget_left, t)
                    if admitted:
                        R = R + admitted
                        Rc = Rc + a_hit
                        sched_l = sched_l + a_sched
                        Rg = Rg + [int(generated[r]) for r in admitted]
                        Rh = Rh + a_mine
                        Rs = Rs + a_shared
                        Rl = Rl + [float(last_tok[r]) for r in admitted]
                prefix_cached = prefix_cached and not (prefix_refs == 0 and free < pb)
                if decoding and R:
                    on = range(len(R))
                else:
                    on = [i for i, x in enumerate(sched_l) if x > 0]
                    if not on:
                        if preempted:
                            samples.append((t, num_blocks - free, queued(t), len(R)))
                            continue
                        raise RuntimeError("scheduler simulation: a step with nothing to run (a kvlab bug)")
                    if len(on) == len(R):
                        on = range(len(R))
                if len(on) == len(R):
                    s_ids, a_l, c_l = R, Rc, sched_l
                else:
                    s_ids, a_l, c_l = [R[i] for i in on], [Rc[i] for i in on], [sched_l[i] for i in on]
                tokens = budget - budget_left
                b_l = [x + y for x, y in zip(a_l, c_l)]
                dt, owner = run_chunks_small(s_ids, a_l, c_l, b_l, tokens)
                t0, t = t, t + dt
                if owner >= 0:
                    Rh[on[owner]] -= pb
                    Rs[on[owner]] = pb
                max_running = max(max_running, len(R))
                if len(on) == len(R):
                    Rc = b_l
                else:
                    Rc = Rc[:]
                    for i, x in zip(on, b_l):
                        Rc[i] = x
                sampled = [i for i, x in zip(on, b_l) if x >= prompt_l[R[i]] + Rg[i]]
                if len(sampled) == len(R):  # (every one, as when all decode)
                    Rg = [g + 1 for g in Rg]
                    emit_small(R, Rl, t, dt, t0)
                    Rl = [t] * len(R)
                elif sampled:
                    for i in sampled:
                        Rg[i] += 1
                    emit_small([R[i] for i in sampled], [Rl[i] for i in sampled], t, dt, t0)
                    for i in sampled:
                        Rl[i] = t
                if trace:
                    decodes = sum([1 for x, y, r in zip(a_l, c_l, s_ids) if y == 1 and x >= prompt_l[r]])
                    step_trace.append(
                        {
                            "t": t0,
                            "steps": 1,
                            "tokens_per_step": tokens,
                            "prefill_tokens": tokens - decodes,
                            "running": len(R),
                            "free_blocks": free,
                            "preempted": preempted,
                        }
                    )
                fin_l = [i for i, (r, g) in enumerate(zip(R, Rg)) if g >= out_l[r]]
                if fin_l:
                    release_small(fin_l, t, (R, Rc, Rg, Rh, Rs, Rl))
                samples.append((t, num_blocks - free, queued(t), len(R)))
                continue

            ctx = computed[run]
            gen = generated[run]
            own = held[run]
            in_prefix = shared[run] if pb else None  # the cached shared prefix's blocks each references
            occ = own if in_prefix is None else own + in_prefix  # blocks each running request occupies
            need = prompt[run] + gen - ctx  # at least 1: a request whose tokens are all computed samples one

            # ---- a stretch of identical decode steps ----------------------------------------------
            decoding = n_run > 0 and int(need.max()) == 1  # every running request decodes (one token each)
            decode_blocks = None  # then, the blocks each adds in the next step (net: sliding groups free as they grow)
            if decoding:
                admissible = bool(waiting) and n_run < seqs_cap and budget > n_run
                if admissible:  # does the head of the queue fit in what is free after this step's decodes?
                    head = waiting[0]
                    _, _, _, mine, extra = admission(head, budget - n_run)
                    decode_blocks = blocks.decoded(ctx + 1) - occ
                    admissible = mine + extra <= free - int(decode_blocks.sum())
                if not admissible:
                    left = out[run] - gen
                    fewest_left = int(left.min())
                    k = min(fewest_left, JUMP_STEPS)
                    # blocks: the first step whose allocations would not fit (there, a preemption); each request
                    # takes at most blocks.most_in(k) more blocks in k steps, so plenty of room skips the count
                    # (a sliding group's count moves by at most 2 blocks between steps once its window is full: slack)
                    if n_run * blocks.most_in(k) > free:
                        last_k = int((blocks.decoded(ctx + k) - occ).sum()) + n_run * blocks.sliding_slack
                        if last_k > free:
                            js = np.arange(1, k + 1)
                            demand = blocks.decoded(ctx[:, None] + js[None, :]) - occ[:, None]
                            over = np.nonzero(demand.sum(axis=0) > free)[0]
                            k = int(over[0]) if len(over) else k  # steps 0 .. k-1 fit
                    if k >= 1:
                        dts, cbound = decode_steps(ctx, k)
                        ends = t + dts.cumsum()
                        if not waiting and n_run < seqs_cap and visible < assigned:
                            seen = int(ends.searchsorted(enter[visible], side="left"))  # first step ending after it
                            if seen + 1 < k:
                                k = seen + 1
                                dts, cbound, ends = dts[:k], cbound[:k], ends[:k]
                        t0, t_end = t, float(ends[-1])
                        new_ctx = ctx + k
                        grown = blocks.decoded(new_ctx)  # own blocks after the stretch (less the shared prefix's)
                        if in_prefix is not None:
                            grown = grown - in_prefix
                        added = grown - own
                        n_added = int(added.sum())
                        free -= n_added
                        # blocks taken from the free queue: without sliding groups (which also free blocks, counted
                        # negative here) a request's blocks only grow, and every one added is taken
                        taken += int(np.maximum(added, 0).sum()) if blocks.sliding else n_added
                        prefix_cached = prefix_cached and not (prefix_refs == 0 and free < pb)
                        held[run] = grown
                        computed[run] = new_ctx
                        generated[run] = gen + k
                        record_stretch(run, t0, t_end, dts, cbound, 0)
                        t = t_end
                        if k == fewest_left:  # some requests have no tokens left: they finish
                            fin = left <= k
                            release(run[fin], t)
                            run = run[~fin]
                        samples.append((t, num_blocks - free, queued(t), len(run)))
                        continue

            # ---- one step -------------------------------------------------------------------------
            if decoding:
                # one token each (need is 1 each), which the budget holds: vLLM requires max_num_batched_tokens to be
                # at least max_num_seqs
                sched = need
                newb = decode_blocks if decode_blocks is not None else blocks.decoded(ctx + 1) - occ
            elif n_run:
                sched = np.minimum(np.maximum(budget - (need.cumsum() - need), 0), need)
                newb = np.where(sched > 0, blocks.of(ctx + sched, ctx) - occ, 0)
            else:
                sched = newb = np.zeros(0, dtype=np.int64)
            preempted = 0
            cum = newb.cumsum()  # blocks the requests up to each one add
            while len(run) and cum[-1] > free:
                p = int(np.argmax(cum > free))  # the first request whose blocks do not fit
                victim = int(run[-1])
                last = len(run) - 1
                run, ctx, sched, newb = run[:-1], ctx[:-1], sched[:-1], newb[:-1]
                if own_hits:  # its full blocks keep their hashes, behind the blocks free now
                    kept[victim] = int(computed[victim]) // bs * bs
                    kept_until[victim] = taken + free
                evict(victim)
                waiting.appendleft(victim)
                preempted += 1
                cum = cum[:-1]
                if p == last:  # the request itself was the last: it is preempted, the running loop stops
                    break
            preemption_events += preempted
            n_new = int(cum[-1]) if len(cum) else 0
            free -= n_new
            taken += int(np.maximum(newb, 0).sum()) if blocks.sliding else n_new  # (as in a stretch)
            held[run] += newb
            budget_left = budget - int(sched.sum())
            # admissions (only in a step that preempted nothing)
            admitted: list[int] = []
            if not preempted:
                admitted, a_sched, _, _, _, budget_left = admit(len(run), budget_left, t)
            prefix_cached = prefix_cached and not (prefix_refs == 0 and free < pb)  # evicted to make room
            if admitted:
                ids = np.concatenate([run, np.array(admitted, dtype=np.intp)])
                starts = computed[ids]  # (an admitted request's: its cache hit)
                chunks = np.concatenate([sched, np.array(a_sched, dtype=np.int64)])
            else:
                ids, starts, chunks = run, ctx, sched
            # the requests with tokens in this step: all when every running one decodes (an admitted one has a chunk)
            if decoding and len(ids):
                s_ids, a, c = ids, starts, chunks
            else:
                on = chunks > 0
                n_on = int(on.sum())
                if not n_on:
                    if preempted:  # everything running was preempted: the next step admits
                        samples.append((t, num_blocks - free, queued(t), len(run)))
                        continue
                    raise RuntimeError("scheduler simulation: a step with nothing to run (a kvlab bug)")
                s_ids, a, c = (ids, starts, chunks) if n_on == len(ids) else (ids[on], starts[on], chunks[on])
            tokens = budget - budget_left  # what the step's budget gave out
            b = a + c
            dt = run_chunks(s_ids, a, c, b, tokens)
            t0, t = t, t + dt
            run = ids
            max_running = max(max_running, len(run))
            computed[s_ids] = b
            s_total = prompt[s_ids] + generated[s_ids]
            sampled = s_ids[b >= s_total]
            if len(sampled):
                generated[sampled] += 1
                emit(sampled, t, dt, t0)
            if trace:
                step_trace.append(
                    {
                        "t": t0,
                        "steps": 1,
                        "tokens_per_step": tokens,
                        "prefill_tokens": tokens - int(((c == 1) & (a >= prompt[s_ids])).sum()),
                        "running": len(run),
                        "free_blocks": free,
                        "preempted": preempted,
                    }
                )
            fin = generated[run] >= out[run]
            if fin.any():
                release(run[fin], t)
                run = run[~fin]
            samples.append((t, num_blocks - free, queued(t), len(run)))

    # --- the benchmark's numbers ----------------------------------------------------------------
    send = np.array(send, dtype=np.float64)  # every request was sent (done == n)
    duration = float(finish.max())
    total_in = int(prompt.sum())
    total_out = int(out.sum())
    ttft = first_tok - send
    e2el = finish - send
    multi = out > 1
    tpot = (finish[multi] - first_tok[multi]) / (out[multi] - 1)
    itl = _weighted(
        np.concatenate([np.array(itl_one, dtype=np.float64), *itl_runs, *itl_odd]),
        np.concatenate(
            [
                np.array(itl_one_n, dtype=np.int64),
                np.repeat(np.array(itl_runs_n, dtype=np.int64), [len(x) for x in itl_runs]),
                np.ones(sum(len(x) for x in itl_odd), dtype=np.int64),
            ]
        ),
    )
    price = price_per_hour
    price_kind = "given"
    if price is None and card.get("price_per_hour_usd") is not None:
        price, price_kind = card["price_per_hour_usd"] * n_gpus, card.get("price_kind", "catalogue")
    usd_per_m = price * duration / 3600 / (total_out / 1e6) if price is not None else None

    pts = np.array(samples, dtype=np.float64)
    keep = _downsample(len(pts), points_cap)
    rows = _downsample(n, rows_cap) if rows_cap else np.zeros(0, dtype=np.int64)
    calibrated = eff_bw_given is None or eff_c_given is None
    given_all = not calibrated and len(overhead_given) == len(OVERHEAD_KEYS)
    fit_runs = len(fitted.get("runs", []))
    how = (
        "given"
        if given_all
        else f"fitted on {fit_runs} published vllm bench serve runs (kvlab/data/serving_benchmarks.json, "
        "'simulation'; bench/serving_sim_calibration.py) where not given"
    )
    overheads = {
        "step_overhead_ms": step_fixed_s * 1e3,
        "request_overhead_us": per_request_s * 1e6,
        "allreduce_latency_us": ar_latency_s * 1e6,
        "allreduces_per_step": n_allreduce,
        "allreduce_gb_s": link["gb_s"] if n_gpus > 1 else None,
        "allreduce_link": link["how"] if n_gpus > 1 else None,
        "frontend_ms": frontend_ms,
        "chat_template_ms": chat_template_ms,
        "eager_ms_per_step": eager_s * 1e3,  # --enforce-eager: EAGER_LAYER_MS x layers (0 with CUDA graphs)
        # --async-scheduling: the share of the per-request time hidden under the GPU's (None without it)
        "async_hidden_share": hidden_share if async_scheduling else None,
    }

    def nums(x) -> list:
        return [None if v is None or (isinstance(v, float) and math.isnan(v)) else v for v in x]

    if sglang_run:
        sgb = sg["budget"]
        flags = (
            f" --context-length {max_model_len} --mem-fraction-static {sg['mem_fraction_static']:g}"
            + (f" --tp {n_gpus}" if n_gpus > 1 else "")
            + f" --chunked-prefill-size {budget} --max-running-requests {seqs_cap}"
            + (f" --max-prefill-tokens {max_prefill_tokens}" if max_prefill_tokens != SGLANG_MAX_PREFILL_TOKENS else "")
            + (f" --schedule-conservativeness {conservativeness:g}" if conservativeness != 1.0 else "")
            + ("" if enable_prefix_caching else " --disable-radix-cache")
            + ("" if async_scheduling else " --disable-overlap-schedule")
        )
        engine_settings = {
            "context_length": max_model_len,
            "max_running_requests": seqs_cap,
            "chunked_prefill_size": budget,
            "max_prefill_tokens": max_prefill_tokens,
            "mem_fraction_static": sg["mem_fraction_static"],
            "cuda_graph_max_bs": sg["cuda_graph_max_bs"],
            "page_size": 1,
            "schedule_policy": "fcfs",
            "schedule_conservativeness": conservativeness,
            "enable_radix_cache": bool(enable_prefix_caching),
            "overlap_schedule": bool(async_scheduling),
            "defaults_how": "; ".join(
                f"{k}: {v['from']}" for k, v in sgb["settings"].items() if str(v["from"]).startswith("default")
            ),
        }
        pool_tokens, per_block, concurrency_at_len = num_blocks, sg["bytes_per_token"], num_blocks / max_model_len
        pool_how = (
            f"SGLang's token pool (kvlab.memory.sglang, as kvlab fit --engine sglang gives it): "
            f"max_total_num_tokens {num_blocks:,} of {sg['bytes_per_token']:,} B each"
        )
        rules = {"modelled": SGLANG_MODELLED, "not_modelled": SGLANG_NOT_MODELLED}
        pool_line = (
            f"token pool: {num_blocks:,} tokens (SGLang's max_total_num_tokens, page size 1) from its memory rule; "
            f"the step-time constants were fitted on vLLM runs and are used as they are ({SGLANG_SOURCES})"
        )
    else:
        flags = (
            verdict["flags"]
            + f" --max-num-seqs {seqs_cap} --max-num-batched-tokens {budget}"
            + (" --enable-prefix-caching" if enable_prefix_caching else " --no-enable-prefix-caching")
            + (" --async-scheduling" if async_scheduling else "")
            + (" --enforce-eager" if enforce_eager else "")
        )
        engine_settings = {
            "max_model_len": max_model_len,
            "max_num_seqs": seqs_cap,
            "max_num_batched_tokens": budget,
            "block_size": bs,
            "gpu_memory_utilization": float(gpu_memory_utilization),
            "enable_prefix_caching": bool(enable_prefix_caching),
            "async_scheduling": bool(async_scheduling),
            "enforce_eager": bool(enforce_eager),
            "defaults_how": setup["defaults_how"],
        }
        pool_tokens, per_block, concurrency_at_len = pool["tokens"], layout["memory_per_block"], pool["concurrency"]
        pool_how = (
            f"the fit verdict ({verdict['flags']}): {verdict['budget_how']} - weights - activation reserve, "
            f"in blocks of {bs} tokens of every layer"
        )
        rules = {"modelled": MODELLED, "not_modelled": NOT_MODELLED}
        pool_line = f"block pool: {num_blocks:,} blocks of {bs} tokens ({pool['tokens']:,} tokens) from the fit verdict"
    result = {
        "model": arch.name,
        "gpu": card.get("name", card.get("id", "custom")),
        "n_gpus": n_gpus,
        "engine": engine,
        "flags": flags,
        "workload": {
            "dataset": dataset,
            "num_prompts": n,
            "input_len": input_len,
            "output_len": output_len,
            "random_range_ratio": ratio,
            "prefix_len": prefix_len,
            "request_rate": None if rate == math.inf else rate,
            "request_rate_text": "inf" if rate == math.inf else f"{rate:g}",
            "burstiness": None if burst == math.inf else burst,  # None: evenly spaced (JSON has no inf)
            "evenly_spaced": burst == math.inf,
            "max_concurrency": concurrency,
            "seed": seed,
        },
        "engine_settings": engine_settings,
        "kv_pool": {
            "blocks": num_blocks,
            "tokens": pool_tokens,
            "bytes_per_block": per_block,
            "available_bytes": available,
            "max_concurrency_at_max_model_len": concurrency_at_len,
            "how": pool_how,
            "close_call": close_call,
        },
        # as vllm bench serve prints them
        "completed": int(done),
        "duration_s": duration,
        "total_input_tokens": total_in,
        "total_output_tokens": total_out,
        "request_throughput": n / duration,
        "output_tok_s": total_out / duration,
        "total_tok_s": (total_in + total_out) / duration,
        "ttft_ms": _percentiles(ttft),
        "tpot_ms": _percentiles(tpot),
        "itl_ms": itl,
        "e2el_ms": _percentiles(e2el),
        # what the benchmark does not show
        "steps": steps,
        "preemptions": preemption_events,
        "requests_preempted": int((preempts > 0).sum()),
        "max_running": max_running,
        "compute_bound_share": compute_bound_s / busy_s if busy_s else 0.0,
        "series": {
            "t_s": nums(pts[keep, 0].tolist()),
            "kv_utilisation": nums((pts[keep, 1] / max(1, num_blocks)).tolist()),
            "waiting": pts[keep, 2].astype(np.int64).tolist(),
            "running": pts[keep, 3].astype(np.int64).tolist(),
            "points_of": len(pts),
        },
        "timeline": {
            "rows_of": n,
            "request": rows.tolist(),
            "input_len": prompt[rows].tolist(),
            "output_len": out[rows].tolist(),
            "arrival_s": nums(send[rows].tolist()),
            "first_scheduled_s": nums(first_sched[rows].tolist()),
            "first_token_s": nums(first_tok[rows].tolist()),
            "finish_s": nums(finish[rows].tolist()),
            "preempted": preempts[rows].tolist(),
        },
        "price_per_hour": price,
        "price_kind": price_kind if price is not None else None,
        "usd_per_million_output_tokens": usd_per_m,
        "efficiency": {
            "bandwidth": eff_bw_given,
            "compute": eff_c_given,
            "calibrated": calibrated,
            "how": how,
            "range": [min(eb, ec), max(eb, ec)],
            "bandwidth_used": eb,
            "compute_used": ec,
            "compute_path": compute_path,
            **overheads,
        },
        "engine_rules": rules,
        "assumptions": [
            pool_line,
            f"bandwidth {card['bandwidth_gb_s']:g} GB/s x {n_gpus}, peak "
            f"{card.get('bf16_dense_tflops')} TFLOPS dense BF16 x {n_gpus} (vendor peaks: the roofline)",
            f"efficiency: bandwidth {eb:.3g}, compute {ec:.3g}"
            + (f" ({compute_path})" if compute_path else "")
            + f"; per step {step_fixed_s * 1e3:.3g} ms + "
            f"{per_request_s * 1e6:.3g} us per request"
            + (
                f" + {n_allreduce} all-reduces of {ar_hops} x {ar_latency_s * 1e6:.3g} us + their bytes over "
                f"{link['gb_s']:g} GB/s"
                if n_gpus > 1
                else ""
            )
            + f" ({how})",
            "a step's time: max(bytes read / bandwidth / bandwidth_efficiency, FLOPs / peak / compute_efficiency) "
            "+ step overhead + requests x request overhead + all-reduces (tensor parallel)",
        ]
        + (
            [
                f"an MoE's expert GEMMs: one per expert, each at the compute efficiency x m / (m + {half_rows:.3g}) for "
                f"the m rows a step gives it ({share_text} per token, so {budget * expert_share:,.0f} rows each in a "
                f"full {budget:,}-token step): {half_rows:.3g} rows' worth of FLOPs more per touched "
                "expert per step"
            ]
            if expert_rows(1)
            else []
        )
        + (
            [
                f"--enforce-eager: {arch.n_layers} layers x {EAGER_LAYER_MS:g} ms = {eager_s * 1e3:.3g} ms added to "
                f"every step (kernels launched from Python; measured on vLLM V1 with and without CUDA graphs, "
                f"{EAGER_SOURCE}; not fitted)"
            ]
            if enforce_eager
            else []
        )
        + (
            [
                f"sharegpt-like lengths: lognormal with the means asked, sigma {SHAREGPT_SIGMA_INPUT:g} (input) and "
                f"{SHAREGPT_SIGMA_OUTPUT:g} (output), kvlab's assumption (not fitted on ShareGPT)"
            ]
            if dataset == "sharegpt-like"
            else []
        )
        + (
            [f"price ${price:.2f}/h ({price_kind}) for the whole benchmark's duration"]
            if price is not None
            else ["no price: give price_per_hour"]
        ),
    }
    if trace:
        result["trace"] = step_trace
    return result


def _engine_flags_apply(engine: str, **given: dict) -> None:
    """Refuse a setting of the other engine, naming it (vLLM's names for vLLM, SGLang's for SGLang)."""
    for owner, flags in given.items():
        if owner == engine:
            continue
        for name, is_set in flags.items():
            if is_set:
                raise ValueError(
                    f"{name} is a {'vLLM' if owner == 'vllm' else 'SGLang'} setting; engine is {engine!r}"
                    + (
                        " (SGLang's own names: chunked_prefill_size, max_running_requests, mem_fraction_static)"
                        if engine == "sglang"
                        else ""
                    )
                )


def _sglang_pool(
    arch: Architecture,
    card: dict,
    *,
    weights_format: str,
    kv: str,
    n_gpus: int,
    max_model_len: int,
    chunked_prefill_size: int | None,
    max_running_requests: int | None,
    mem_fraction_static: float | None,
) -> dict:
    """SGLang's token pool and scheduler settings for the deployment, from kvlab.memory.sglang's budget (the one
    `kvlab fit --engine sglang` gives): max_total_num_tokens, chunked_prefill_size, max_running_requests and the
    decode CUDA graph's largest batch. A pool with no room is a refusal (Refused, naming the field)."""
    dep = deployment(arch, weights=weights_format, kv=kv, gpu=card, tp=n_gpus, engine="sglang")
    b = sglang.budget(
        dep,
        max_model_len,
        chunked_prefill_size=chunked_prefill_size,
        max_running_requests=max_running_requests,
        mem_fraction_static=mem_fraction_static,
    )
    tokens = int(b["max_tokens"])
    if tokens <= 0:
        raise Refused("max_model_len", f"SGLang would not start: {b['refusal']}")
    settings = {k: v["value"] for k, v in b["settings"].items()}
    graph_bs = settings.get("cuda_graph_max_bs")
    if graph_bs is None:  # a given mem_fraction_static: the tier's default graph size
        graph_bs = sglang.memory_tier(driver_memory(card)["bytes"] / 2**20, n_gpus)["cuda_graph_max_bs"]
    kv_type = dep.kv
    return {
        "deployment": dep,
        "budget": b,
        "tokens": tokens,
        "kv_bytes": tokens * b["kv_bytes_per_token"],
        "bytes_per_token": b["kv_bytes_per_token"],
        "chunked_prefill_size": int(settings["chunked_prefill_size"]),
        "max_running_requests": int(settings["max_running_requests"]),
        "mem_fraction_static": settings["mem_fraction_static"],
        "cuda_graph_max_bs": int(graph_bs),
        "kv_type": kv_type,
        "mxfp4_kernel": mxfp4_kernel(card) if dep.weights.get("format") == "MXFP4" else None,
    }


def kv_read_replication(arch: Architecture, tp: int) -> float:
    """How many times over the `tp` GPUs of a tensor-parallel engine read one request's attention KV in a step.

    vLLM splits the KV heads over the GPUs and replicates a head where there are fewer heads than GPUs, "so each GPU
    has at least one KV head" (ModelConfig.get_num_kv_heads: max(1, total_num_kv_heads // tensor_parallel_size), and
    `if self.use_mla: return 1`, "When using MLA during decode it becomes MQA"; vllm/config/__init__.py in vLLM 0.10,
    vllm/config/model.py since 0.11: https://github.com/vllm-project/vllm/blob/c44e191b014db0619bd51921e94c86b901ab952e/vllm/config/model.py#L1411-L1447),
    so with MLA every GPU holds and reads the whole latent for its share of the query heads (the pool already counts
    it: kv_bytes.vllm_kv_cache, "an MLA latent is not split"). The step's KV time is bytes over the summed bandwidth
    of the GPUs, so the bytes are the KV's x this factor: tp x ceil(heads / tp) / heads per attention layer (1 when
    the heads divide evenly; tp for MLA), weighted by each layer's KV width. simulate applies it to a request's whole
    cache: a hybrid's recurrent state (split by heads, so read once) would be counted at the attention layers'
    factor, which is 1 for every catalogue hybrid at the tensor-parallel sizes of the published runs."""
    if tp <= 1:
        return 1.0
    total = copies = 0.0
    for layer in arch.layers:
        if layer.kind in (NONE, LINEAR):
            continue
        width = float(layer.k_values + layer.v_values)
        if arch.attention == "mla":
            factor = float(tp)
        else:
            heads = layer.kv_heads or 1
            factor = tp * math.ceil(heads / tp) / heads
        total += width
        copies += width * factor
    return copies / total if total else 1.0


def _is_mla(arch: Architecture) -> bool:
    return arch.attention == "mla" and bool(arch.mla_expanded_values)


def _mla_prefill_attention_flops(arch: Architecture, context: int) -> float:
    """`attention_flops` of a prefill token in vLLM's MLA prefill path: the latent is expanded to every head's
    K (qk_nope + qk_rope) and V (v_head_dim) and attention runs as multi-head attention over them, 2 FLOPs per
    multiply-add: 2 x context x heads x (qk dims + v dims) = 2 x context x mla_expanded_values per MLA layer
    ("compute friendly approach" for prefill, "data-movement friendly" absorbed form for decode: vLLM's
    vllm/v1/attention/backends/mla/common.py module docstring, PR 13789,
    https://github.com/vllm-project/vllm/pull/13789). Other layers as attention_flops counts them."""
    flops = 0.0
    for layer in arch.layers:
        if layer.kind == FULL and layer.v_values == 0 and layer.kv_heads == 1:
            flops += 2 * context * arch.mla_expanded_values
        elif layer.kind == LINEAR:
            flops += 4 * layer.ssm_state_values
        elif layer.kind != NONE:
            seen = min(context, layer.window) if layer.kind == SLIDING else context
            flops += 2 * arch.n_heads * seen * (layer.head_dim_k + (layer.head_dim_v or layer.head_dim_k))
    return flops


def _routing(arch: Architecture) -> tuple[int, int] | None:
    """(experts per token, routed experts) of a catalogue MoE (by its hf_id), or None if unknown."""
    try:
        entry = get_model(arch.name)
    except ValueError:
        return None
    cfg = entry.get("config", {})
    cfg = cfg.get("text_config", cfg)
    total = cfg.get("num_experts") or cfg.get("num_local_experts") or cfg.get("n_routed_experts")
    per_token = cfg.get("num_experts_per_tok") or cfg.get("experts_per_token")
    if not total or not per_token or per_token >= total:
        return None
    return per_token, total


def _routed_share(arch: Architecture) -> float | None:
    """experts per token / routed experts of a catalogue MoE (by its hf_id), or None if unknown."""
    routing = _routing(arch)
    return routing[0] / routing[1] if routing else None


def _hit(pb: int, bs: int, cached: bool, computed: int, total: int) -> int:
    """Tokens a waiting request takes from the prefix cache: the cached prefix's blocks, at most total - 1."""
    if not pb or not cached or computed:
        return 0
    return min(pb, (int(total) - 1) // bs) * bs
