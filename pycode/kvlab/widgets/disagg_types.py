"""What the disaggregated page's widgets return (kvlab.widgets.disagg).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.memory_types import ModelGroup
from kvlab.widgets.shared_types import Amount, Clamped, IdLabel

# ---------------------------------------------------------------------------
# pd-transfer
# ---------------------------------------------------------------------------


class PdTransferParams(TypedDict):
    model: str
    gpu: str
    link: str
    prompt_tokens: int
    batch: int
    output_tokens: int


class PdTransferLimits(TypedDict):
    prompt_tokens: list[int]
    batch: list[int]
    output_tokens: list[int]


class LinkInfo(TypedDict):
    name: str
    rate: str
    how: str
    note: str
    status: str  # vendor | quoted | definition (interconnects.json)
    source: str
    read: str


class CompareRow(TypedDict):
    label: str
    colocated: str
    disaggregated: str


class LinkRow(TypedDict):
    id: str
    name: str
    chosen: bool
    rate: str
    seconds: float
    time: str
    share: str  # transfer time / prefill time; "—" when not timed
    ttft: str
    status: str
    source: str


class LinkCurve(TypedDict):
    id: str
    name: str
    ms: list[float]


class PdCurve(TypedDict):
    prompts: list[int]
    labels: list[str]
    prefill_ms: list[float]
    links: list[LinkCurve]


class PdCurveRow(TypedDict):
    prompt: str
    kv: str
    prefill: str
    transfer: str


class Throughput(TypedDict):
    vllm: str
    vllm_source: str
    llmd: str
    llmd_source: str


class PdOptions(TypedDict):
    models: list[ModelGroup]
    gpus: list[IdLabel]
    links: list[IdLabel]


class LaneSegment(TypedDict):
    kind: str  # prefill, decode or transfer
    percent: float  # of the longer lane
    title: str


class Lane(TypedDict):
    name: str
    text: str
    label: str  # name and text, for screen readers
    segments: list[LaneSegment]


class PdTransferHover(TypedDict):
    prefill: list[str]  # a hover line per prompt length
    links: list[list[str]]  # the same, one list per link


class PdTransferView(TypedDict):
    prompt: str
    transfer: str
    prefill: str
    headline: str
    rows: list[CompareRow]  # empty when not timed
    lanes: list[Lane]  # the new request's wait for its first token, colocated and disaggregated (none unfitted)
    working: str
    assumptions: list[str]
    hover: PdTransferHover
    status: str  # the status line after a result (context.js ctx.live says it)


class ChunkInfo(TypedDict):
    budget: int  # tokens a step may hold
    chunk: int  # prompt tokens per chunk
    how: str  # where the budget comes from


class PdTiming(TypedDict):
    """One new request while a batch decodes (kvlab.reuse.disagg.pd_compare); ttft and steps in seconds."""

    ttft: float
    step_during_prefill: float
    step_otherwise: float
    delay_per_running_request: float


class PdTimingTerms(TypedDict):
    n_chunks: int
    chunk: ChunkInfo
    efficiency: float | None  # the timing fields are None when the decode batch does not fit
    transfer_share: float | None
    colocated: PdTiming | None
    disaggregated: PdTiming | None
    verdict: str  # the fit's verdict in a line (kvlab.memory's serving estimate)


class PdTransferFigureResult(TypedDict):
    view: PdTransferView  # display strings (disagg.pd_transfer_view)
    params: PdTransferParams
    clamped: Clamped
    limits: PdTransferLimits
    model_name: str
    gpu_name: str
    link_info: LinkInfo
    fits: bool
    kv: Amount
    kv_per_token: str
    transfer_seconds: float
    prefill_seconds: float | None  # the timing fields are None when the decode batch does not fit
    step_seconds: float | None
    timing: PdTimingTerms
    link_rows: list[LinkRow]
    curve: PdCurve
    curve_rows: list[PdCurveRow]
    throughput: Throughput
    options: PdOptions


# ---------------------------------------------------------------------------
# kv-routing
# ---------------------------------------------------------------------------


class RoutingParams(TypedDict):
    replicas: int
    groups: int
    skew: float
    cache_blocks: int
    requests: int
    seed: int
    prefix_tokens: int
    own_tokens: int


class RoutingLimits(TypedDict):
    replicas: list[int]
    groups: list[int]
    skew: list[float]
    cache_blocks: list[int]
    requests: list[int]
    seed: list[int]
    prefix_tokens: list[int]
    own_tokens: list[int]


class Ceiling(TypedDict):
    hit_rate: float
    tokens_reused: int


class PolicyRow(TypedDict):
    policy: str  # round_robin | least_loaded | prefix_aware
    label: str
    hit_rate: float
    tokens_computed: int
    tokens_reused: int
    busiest_share: float  # requests on the busiest replica / an even share
    peak_in_flight: int
    requests_per_replica: list[int]


class RoutingRule(TypedDict):
    """The SGLang router's cache_aware thresholds (interconnects.json)."""

    cache_threshold: float
    balance_abs_threshold: int
    balance_rel_threshold: float


class RoutingSim(TypedDict):
    request_blocks: int  # blocks of one request (its prefix and its own tokens)
    trace_groups: list[int]  # requests per prefix group, most popular first
    in_flight: int  # requests each replica runs on average
    rule: RoutingRule


class CurveSeries(TypedDict):
    label: str
    percent: list[float]


class RoutingCurve(TypedDict):
    requests: list[int]
    series: list[CurveSeries]
    ceiling_percent: float


class RouterInfo(TypedDict):
    name: str
    rule: str
    source: str
    status: str


class CeilingWords(TypedDict):
    hit_rate: str
    saved: str


class PolicyWords(TypedDict):
    label: str
    hit_rate: str
    computed: str
    saved: str
    busiest: str
    peak: str


class ReplicaRow(TypedDict):
    replica: str
    counts: list[str]  # requests per policy, in the order of `policies`


class KvRoutingView(TypedDict):
    headline: str
    skew: str
    trace: str  # the trace in a sentence
    cache: str  # the cache per replica in a sentence
    ceiling: CeilingWords
    ceiling_label: str  # the chart's label on the ceiling's line
    policies: list[PolicyWords]
    replica_rows: list[ReplicaRow]
    assumptions: list[str]
    hover: list[list[str]]  # per policy, a hover line per point of the curve
    status: str  # the status line after a result (context.js ctx.live says it)


class KvRoutingFigureResult(TypedDict):
    view: KvRoutingView  # display strings (disagg.kv_routing_view)
    params: RoutingParams
    clamped: Clamped
    limits: RoutingLimits
    block_tokens: int  # vLLM's default block size (kvlab.memory.kv_bytes)
    sim: RoutingSim
    ceiling: Ceiling
    policies: list[PolicyRow]
    curve: RoutingCurve
    routers: list[RouterInfo]
    policy_labels: list[str]
