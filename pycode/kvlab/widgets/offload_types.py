"""What the kv-offload page's function returns (kvlab.widgets.offload).

Imported by the widget module only under `if TYPE_CHECKING:`; tests/python/test_results_typed.py
checks real results against them with typeguard. Conventions (all *_types modules): see
kvlab.widgets.shared_types.
"""

from typing import TypedDict

from kvlab.widgets.memory_types import ModelGroup
from kvlab.widgets.shared_types import Clamped, IdLabel


class OffloadParams(TypedDict):
    model: str
    gpu: str
    prefix_tokens: int
    n_prefixes: int
    zipf: float
    requests_per_second: float
    hbm_percent: int
    dram_gib: float
    nvme_tib: float
    remote_tib: float
    nvme_drives: int
    link: str
    nvme: str
    network: str
    policy: str
    prefill_percent: int


class OffloadLimits(TypedDict):
    prefix_tokens: list[float]
    n_prefixes: list[float]
    zipf: list[float]
    requests_per_second: list[float]
    hbm_percent: list[float]
    dram_gib: list[float]
    nvme_tib: list[float]
    nvme_drives: list[float]
    remote_tib: list[float]
    prefill_percent: list[float]


class OffloadOptions(TypedDict):
    models: list[ModelGroup]
    gpus: list[IdLabel]
    links: list[IdLabel]
    nvmes: list[IdLabel]
    networks: list[IdLabel]
    policies: list[IdLabel]


class OffloadMiss(TypedDict):
    hit: str
    trace: str


class OffloadNumbers(TypedDict):
    prefix_bytes: int
    kv_space_bytes: float
    recompute_seconds: float
    miss_rate: float
    hit_rates: list[float]
    trace_rates: list[float] | None
    trace_miss: float | None
    load_seconds: list[float]
    crossover_tokens: list[int | None]
    seconds_no_cache: float
    seconds_hbm_only: float
    seconds_with_tiers: float
    seconds_best: float
    gpu_seconds_saved_per_hour: float
    host_link_busy: float
    host_link_gb_s: float
    host_link_gb_s_used: float
    tier_busy: dict[str, float]  # per offload tier: the share of its bandwidth the reloads use
    hbm_hit_rate_alone: float
    tier_prefixes: list[int]  # prefixes each tier holds, in TIERS order
    loading_wins: list[bool]  # per tier: loading a hit beats prefilling it again
    prefill_flops: float
    peak_tflops: float
    weights_bytes: float
    n_gpus: int
    max_context: int | None
    trace_requests: int | None  # None when no trace was replayed
    trace_seed: int | None


class OffloadTerms(TypedDict):
    """The names the sentences use."""

    gpu: str
    weights_format: str
    host_link: str


class OffloadTierRow(TypedDict):
    tier: str
    name: str
    size: str
    prefixes: str
    hit: str
    trace: str
    via: str
    bandwidth: str
    load: str
    versus: str
    wins: str
    crossover: str


class OffloadPerRequest(TypedDict):
    label: str
    seconds: str
    busy: str


class OffloadHover(TypedDict):
    recompute: list[str]  # a line per prefix length
    series: list[list[str]]  # per offload tier: a line per prefix length
    crossover: list[str]  # per crossover marked on the chart


class OffloadView(TypedDict):
    prefix: str
    verdict: str
    short: str
    working: str
    capacity: str
    trace: str
    links: str
    policy: str
    saved: str
    hover: OffloadHover
    status: str  # the status line after a result (context.js ctx.live says it)


class OffloadSeries(TypedDict):
    tier: str
    name: str
    load: list[float]
    crossover: int | None
    crossover_seconds: float | None


class OffloadTicks(TypedDict):
    values: list[int]
    labels: list[str]


class OffloadCurve(TypedDict):
    tokens: list[int]
    recompute: list[float]
    series: list[OffloadSeries]
    ticks: OffloadTicks


class OffloadCurveRow(TypedDict):
    tokens: str
    recompute: str
    dram: str
    nvme: str
    remote: str


class OffloadFigureResult(TypedDict):
    params: OffloadParams
    clamped: Clamped
    limits: OffloadLimits
    options: OffloadOptions
    model_name: str
    gpu_name: str
    prefix_size: str
    recompute: str
    miss: OffloadMiss
    traced: bool
    numbers: OffloadNumbers
    tiers: list[OffloadTierRow]
    per_request: list[OffloadPerRequest]
    terms: OffloadTerms
    curve: OffloadCurve
    curve_rows: list[OffloadCurveRow]
    curve_names: list[str]
    assumptions: list[str]
    view: OffloadView  # display strings (the module's kv_offload_view, beside the function)
