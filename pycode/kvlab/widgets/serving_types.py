"""What the serving page's widget returns (kvlab.widgets.serving).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.memory_types import ContextFlag, IntRange, ModelGroup, ModelInfo, ServingOptions
from kvlab.widgets.shared_types import Amount, Clamped, IdLabel


class ServingCurveRow(TypedDict):
    tokens: str
    ms_batch1: str
    ms_batch: str


class ServingView(TypedDict):
    hover: dict[str, list[str | None]]  # per line (ms_batch1, ms_batch): a hover line per context (None: no point)
    curve_rows: list[ServingCurveRow]


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
    bandwidth_text: str
    tflops: float | None
    spec_source: str
    memory: Amount
    price_per_hour: float | None  # the price fields are None for a GPU without a price in the catalogue
    price_kind: str | None
    price_provider: str | None
    price_source: str | None
    price_date: str | None
    price_label: str
    note: str
    unconfirmed: list[str]


class SameKindGpu(TypedDict):
    id: str
    name: str
    chosen: bool
    price: str
    fits: bool
    cost_text: str


class ServingCurve(TypedDict):
    contexts: list[int]
    batch: int
    ms_batch1: list[float | None]  # None where the batch does not fit
    ms_batch: list[float | None]
    fits_batch1: list[bool]
    fits_batch: list[bool]
    ms_batch1_text: list[str]
    ms_batch_text: list[str]


class UserCell(TypedDict):
    state: str


class UsersGrid(TypedDict):
    cells: list[UserCell]
    per_cell: int
    chats: int
    most: int
    text: str
    price_text: str
    price_how: str
    label: str
    legend: str


class ServingFigureResult(TypedDict):
    params: ServingParams
    clamped: Clamped
    context_human: str
    context_text: str
    batch_text: str
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
    working: str
    ms_per_token: float | None
    ms_per_token_text: str
    ms_per_token_batch1_text: str
    bound_text: str
    efficiency: float  # the share of the roofline the step is timed at (calibrated for the batch)
    efficiency_text: str
    bounds_text: str  # the memory and the speed bound, in words
    notes: list[str]  # prefill/decode interference; chats queued beyond vLLM's max_num_seqs
    cost_roofline_text: str
    tokens_per_second_per_chat: float | None
    tokens_per_second_per_chat_text: str
    total_tokens_per_second: float | None
    total_tokens_per_second_text: str
    prefill_text: str
    mix_text: str
    kv_share_of_reads: float
    kv_share_text: str
    kv_share_batch1_text: str
    chats_that_fit: int
    chats_that_fit_text: str
    users: UsersGrid
    memory_used: Amount
    budget: Amount
    usd_per_million_tokens: float | None  # None unfitted or unpriced
    cost_text: str
    cost_batch1_text: str
    same_kind: list[SameKindGpu]
    assumptions: list[str]
    curve: ServingCurve
    status: str
    options: ServingOptions
    view: ServingView  # display strings for the template (the module's *_view, beside the function)


class ServingSimParams(TypedDict):
    model: str
    gpu: str
    weights: str
    users: int
    input_len: int
    output_len: int
    num_prompts: int


class ServingSimLimits(TypedDict):
    """kvlab.widgets.serving.SIM_INPUTS.limits()."""

    users: IntRange
    input_len: IntRange
    output_len: IntRange
    num_prompts: IntRange


class ServingSimOptions(TypedDict):
    models: list[ModelGroup]
    gpus: list[IdLabel]
    weights: list[IdLabel]
    limits: ServingSimLimits


class ServingSimGpu(TypedDict):
    name: str


class NameValue(TypedDict):
    name: str
    value: str


class ServingSimFigureResult(TypedDict):
    """kvlab.serving_sim_figure: the scheduler simulation (kvlab.memory.scheduler.simulate), played."""

    status: str  # the status line after a result (context.js ctx.live says it)

    params: ServingSimParams
    clamped: Clamped
    options: ServingSimOptions
    model_info: ModelInfo
    gpu_info: ServingSimGpu
    grid: list[
        list[int]
    ]  # drawn chats x time bins: 0 not sent or done, 1 waiting, 2 prefill, 3 decode, 4 decode after a preemption
    rows: list[int]  # the request index of each drawn row
    rows_of: int
    states: dict[str, str]
    duration_text: str
    kv_points: str  # SVG polyline points of the KV pool's use (0..100 x 0..20)
    peak_kv_text: str
    headline: str
    pool: str
    compare: str  # where the closed form (serving_figure) and the simulation part ways
    price_text: str
    stats: list[NameValue]
    command: str
    bench_command: str
    assumptions: list[str]
    not_modelled: str
