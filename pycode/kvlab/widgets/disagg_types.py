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
    hover: PdTransferHover


class PdTransferFigureResult(TypedDict):
    view: PdTransferView  # the chart's hover lines (disagg.pd_transfer_view)
    params: PdTransferParams
    clamped: Clamped
    limits: PdTransferLimits
    prompt_text: str
    model_name: str
    gpu_name: str
    link_info: LinkInfo
    fits: bool
    kv: Amount
    kv_per_token: str
    lanes: list[Lane]  # the new request's wait for its first token, colocated and disaggregated (none unfitted)
    transfer_seconds: float
    transfer_text: str
    prefill_seconds: float | None  # the timing fields are None when the decode batch does not fit
    prefill_text: str
    step_seconds: float | None
    headline: str
    rows: list[CompareRow]  # empty when not timed
    working: str
    link_rows: list[LinkRow]
    curve: PdCurve
    curve_rows: list[PdCurveRow]
    throughput: Throughput
    assumptions: list[str]
    status: str
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
    text: str
    saved: str


class PolicyRow(TypedDict):
    policy: str  # round_robin | least_loaded | prefix_aware
    label: str
    hit_rate: float
    hit_rate_text: str
    computed: str
    saved: str
    busiest_share: float  # requests on the busiest replica / an even share
    busiest_text: str
    peak_in_flight: int
    peak_text: str


class ReplicaRow(TypedDict):
    replica: str
    counts: list[str]  # requests per policy, in the order of `policies`


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


class KvRoutingView(TypedDict):
    hover: list[list[str]]  # per policy, a hover line per point of the curve


class KvRoutingFigureResult(TypedDict):
    view: KvRoutingView  # the chart's hover lines (disagg.kv_routing_view)
    params: RoutingParams
    clamped: Clamped
    limits: RoutingLimits
    skew_text: str
    block_tokens: int  # vLLM's default block size (kvlab.memory.kv_bytes)
    headline: str
    trace_text: str
    cache_text: str
    ceiling: Ceiling
    policies: list[PolicyRow]
    replica_rows: list[ReplicaRow]
    curve: RoutingCurve
    routers: list[RouterInfo]
    assumptions: list[str]
    status: str
    policy_labels: list[str]
