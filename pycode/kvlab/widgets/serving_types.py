"""What the serving page's widget returns (kvlab.widgets.serving).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.memory_types import ChoiceRange, ContextFlag, IntRange, ModelGroup, ModelInfo, ServingOptions
from kvlab.widgets.shared_types import Amount, Clamped, IdLabel, RasterRuns


class ServingParams(TypedDict):
    model: str
    gpu: str
    context: int
    batch: int
    weights: str
    kv: str
    engine: str
    answer: int
    gpu_memory_utilization: float
    block_size: int


class ServingGpuInfo(TypedDict):
    id: str
    name: str
    bandwidth_gb_s: float
    tflops: float | None
    spec_source: str
    memory: Amount
    price_per_hour: float | None  # the price fields are None for a GPU without a price in the catalogue
    price_kind: str | None
    price_provider: str | None
    price_source: str | None
    price_date: str | None
    note: str
    unconfirmed: list[str]


class SameKindGpu(TypedDict):
    id: str
    name: str
    chosen: bool
    price_per_hour: float
    price_provider: str
    price_date: str
    fits: bool
    usd_per_million_tokens: float | None  # None where the batch does not fit


class ServingCurve(TypedDict):
    contexts: list[int]
    batch: int
    ms_batch1: list[float | None]  # None where the batch does not fit
    ms_batch: list[float | None]
    fits_batch1: list[bool]
    fits_batch: list[bool]


class UserCell(TypedDict):
    state: str


class UsersGrid(TypedDict):
    cells: list[UserCell]
    per_cell: int  # chats a square stands for
    chats: int  # that fit at this context
    most: int  # that would fit at the shortest context
    shortest: int
    context: int
    price_per_hour: float | None  # the GPU's; None without a price
    price_per_chat_hour: float | None  # None without a price or without a chat


class ServingEstimate(TypedDict):
    """kvlab.memory.serving.serving_estimate's timing of one step (the times are None when the batch does not fit)."""

    seconds_per_token: float | None
    memory_seconds: float | None
    compute_seconds: float | None
    roofline_seconds_per_token: float | None
    flops_per_step: float
    efficiency_regime: str
    usd_per_million_tokens_roofline: float | None
    prefill_seconds_per_chat: float | None
    prompt_tokens: int
    answer_tokens: int


class ServingBatch1(TypedDict):
    fits: bool
    seconds_per_token: float | None
    kv_share_of_reads: float
    usd_per_million_tokens: float | None


class ServingCurveRow(TypedDict):
    tokens: str
    ms_batch1: str
    ms_batch: str


class UsersView(TypedDict):
    text: str
    price_text: str
    price_how: str
    label: str  # the grid's aria-label
    legend: str


class SameKindView(TypedDict):
    name: str
    price: str
    cost_text: str


class ServingView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    context_text: str
    batch_text: str
    bandwidth_text: str
    price_label: str
    users: UsersView
    working: str  # the roofline's working, or why the batch is not timed
    ms_per_token_text: str
    ms_per_token_batch1_text: str
    bound_text: str
    efficiency_text: str
    cost_roofline_text: str
    tokens_per_second_per_chat_text: str
    total_tokens_per_second_text: str
    prefill_text: str
    mix_text: str
    kv_share_text: str
    kv_share_batch1_text: str
    cost_text: str
    cost_batch1_text: str
    same_kind: list[SameKindView]
    legend: dict[str, str]  # per line (ms_batch1, ms_batch): its name in the legend and the hover box
    hover: dict[str, list[str | None]]  # per line (ms_batch1, ms_batch): a hover line per context (None: no point)
    curve_rows: list[ServingCurveRow]


class ServingFigureResult(TypedDict):
    params: ServingParams
    clamped: Clamped
    context_human: str
    context_step: int
    model_info: ModelInfo
    gpu_info: ServingGpuInfo
    fits: bool
    verdict: str
    headline: str
    binding: str | None
    context_flag: ContextFlag | None
    flags: str
    bound: str | None  # the timing fields are None when the batch does not fit
    weights_bytes: Amount
    kv_per_chat: Amount
    kv_per_step: Amount
    weights_read_per_step: Amount
    bytes_per_step: Amount
    estimate: ServingEstimate
    batch1: ServingBatch1  # the same at batch 1
    ms_per_token: float | None
    efficiency: float  # the share of the roofline the step is timed at (calibrated for the batch)
    bounds_text: str  # the memory and the speed bound, in words (kvlab.memory.serving)
    notes: list[str]  # prefill/decode interference; chats queued beyond vLLM's max_num_seqs
    tokens_per_second_per_chat: float | None
    total_tokens_per_second: float | None
    kv_share_of_reads: float
    chats_that_fit: int
    chats_that_fit_text: str  # kvlab.memory.verdict's max_sequences_text
    users: UsersGrid
    memory_used: Amount
    budget: Amount
    usd_per_million_tokens: float | None  # None unfitted or unpriced
    same_kind: list[SameKindGpu]
    assumptions: list[str]
    curve: ServingCurve
    options: ServingOptions
    view: ServingView  # display strings for the template (the module's *_view, beside the function)


class ServingSimParams(TypedDict):
    model: str
    gpu: str
    weights: str
    engine: str  # "vllm" or "sglang": whose scheduler plays the chats
    users: int
    input_len: int
    output_len: int
    num_prompts: int
    n_gpus: int  # GPUs under tensor parallelism


class ServingSimLimits(TypedDict):
    """kvlab.widgets.serving.SIM_INPUTS.limits()."""

    users: IntRange
    input_len: IntRange
    output_len: IntRange
    num_prompts: IntRange
    n_gpus: ChoiceRange


class ServingSimOptions(TypedDict):
    models: list[ModelGroup]
    gpus: list[IdLabel]
    weights: list[IdLabel]
    engines: list[IdLabel]
    limits: ServingSimLimits


class ServingSimGpu(TypedDict):
    name: str


class NameValue(TypedDict):
    name: str
    value: str


class Percentiles(TypedDict):
    median: float | None  # None where there is nothing to time (TPOT of one-token answers)
    p99: float | None


class ServingSimRun(TypedDict):
    """The simulated benchmark's figures (kvlab.memory.scheduler.simulate), as numbers."""

    duration_s: float
    output_tok_s: float
    total_tok_s: float
    request_throughput: float
    ttft_ms: Percentiles
    tpot_ms: Percentiles
    preemptions: int
    requests_preempted: int
    max_running: int
    most_waiting: int  # the longest the queue got
    peak_kv: float  # the KV pool's peak use, 0..1
    kv_pool_tokens: int
    engine: str  # "vllm" or "sglang"
    close_call: bool  # kvlab is not sure vLLM starts this at all
    kv_available_bytes: int
    closed_form_tok_s: float | None  # serving_figure's closed form at the same batch; None where it does not fit
    usd_per_million_output_tokens: float | None  # None for a GPU without a price


class ServingSimView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    raster: RasterRuns  # the chats x time raster's runs, each with its tooltip ("chat 3: decode")
    headline: str
    pool: str
    engine_note: str  # how the chosen engine's steps treat a new chat's prompt
    compare: str  # where the closed form (serving_figure) and the simulation part ways
    duration_text: str
    peak_kv_text: str
    price_text: str
    stats: list[NameValue]  # as vllm bench serve prints them
    accuracy: str  # how far the simulation is from published runs it was not fitted on (serving_accuracy)
    kind_accuracy: str  # which way it leaned on held-out runs of this card, dense or MoE, one GPU or several


class ServingSimFigureResult(TypedDict):
    """kvlab.serving_sim_figure: the scheduler simulation (kvlab.memory.scheduler.simulate), played."""

    params: ServingSimParams
    clamped: Clamped
    options: ServingSimOptions
    model_info: ModelInfo
    gpu_info: ServingSimGpu
    refused: str | None  # why the engine would not start this (nothing is played)
    run: ServingSimRun | None  # None when refused
    grid: list[
        list[int]
    ]  # drawn chats x time bins: 0 not sent or done, 1 waiting, 2 prefill, 3 decode, 4 decode after a preemption
    rows: list[int]  # the request index of each drawn row
    rows_of: int
    kv_points: str  # SVG polyline points of the KV pool's use (0..100 x 0..20)
    command: str
    bench_command: str
    assumptions: list[str]
    not_modelled: list[str]
    view: ServingSimView  # display strings for the template (the module's *_view, beside the function)
