"""The shapes of the display strings in kvlab.widgets.views (a widget result's `view`).

Imported for type checking only (by views.py and the pages' *_types modules), like every
*_types module: the browser never creates these classes.
"""

from typing import TypedDict


class TitledCell(TypedDict):
    human: str
    title: str


class CurveRow(TypedDict):
    tokens: str
    cells: list[TitledCell]


class KvMemoryHead(TypedDict):
    human: str
    exact: str
    text: str
    formula: str


class KvMemoryView(TypedDict):
    head: KvMemoryHead
    notes: list[str]
    log: str
    model_note: str
    curve_axis: str  # the KV-against-context chart's y-axis title
    curve_rows: list[CurveRow]
    kinds: list[dict]  # the result's `kinds`, each with its cell's `title`


class GpuFitView(TypedDict):
    segments: list[dict]  # the result's `segments`, each with its `title`
    bar_label: str
    limit_title: str
    total_label: str
    log: str
    model_note: str


class WallView(TypedDict):
    n: str
    shape: str
    growth: dict[str, dict[str, str]]
    share: str
    first: dict[str, dict[str, str]]
    last: dict[str, dict[str, str]]


class OdometerSide(TypedDict):
    units: str
    tokens: int
    done: bool


class OdometerFrame(TypedDict):
    n: int
    no_cache: OdometerSide
    cache: OdometerSide


class RaceRow(TypedDict):
    tokens: str
    no_cache: str
    cache: str
    ratio: str


class RaceHeadline(TypedDict):
    tokens: str  # "19 tokens"
    exactly: str  # "exactly " when the ratio is whole, else ""
    cheaper: str  # "10× cheaper"
    no_cache: str  # "190 token-computations"
    cache: str


class RaceView(TypedDict):
    n: str
    totals: dict[str, str]
    headline: RaceHeadline
    rows: list[RaceRow]
    readout: str
    frames: list[OdometerFrame]
    key_frame: OdometerFrame


class ReprocessingRow(TypedDict):
    token: int
    no_cache: int
    cache: int


class ReprocessingView(TypedDict):
    k: int
    kth: int
    first_unit: str  # "time" or "times", after no_cache[0]
    kth_unit: str  # after kth
    other: bool  # k is another token than token 1 (n > 1)
    counters: dict[str, str]
    rows: list[ReprocessingRow]


class GridCell(TypedDict):
    state: str
    text: str


class GridRow(TypedDict):
    layer: int
    cells: list[GridCell]


class StepNoCache(TypedDict):
    phase: str
    describe: str
    rows: list[GridRow]


class StepView(TypedDict):
    step: int
    counter: str
    phase: str
    describe: str
    positions: list[int]
    rows: list[GridRow]
    no_cache: StepNoCache


class StepThroughView(TypedDict):
    steps: list[StepView]
    equivalence: dict[str, str]


class ServingCurveRow(TypedDict):
    tokens: str
    ms_batch1: str
    ms_batch: str


class ServingView(TypedDict):
    curve_rows: list[ServingCurveRow]


class TitledToken(TypedDict):
    id: int
    text: str
    bytes: int
    title: str


class TokensView(TypedDict):
    tokens: list[TitledToken]
    bytes_per_token: str


class SequenceHead(TypedDict):
    key: str
    label: str
    col: int


class SequenceArrow(TypedDict):
    text: str
    from_col: int
    to_col: int
    reply: bool
    sr: str


class SequenceStepView(TypedDict):
    phase: str
    note: str
    messages: list[SequenceArrow]


class SequenceView(TypedDict):
    participants: list[SequenceHead]
    steps: list[SequenceStepView]


class TradeoffCellView(TypedDict):
    main: str
    name: str
    length: str
    repetition: str
    current: bool
    label: str


class TradeoffRowView(TypedDict):
    label: str
    cells: list[TradeoffCellView]


class TradeoffWhy(TypedDict):
    helps: bool
    head: str
    text: str


class TradeoffView(TypedDict):
    memory: str
    rows: list[TradeoffRowView]
    why: list[TradeoffWhy]


class BlockView(TypedDict):
    status: str
    grow: int
    what: str


class BlocksRequestView(TypedDict):
    label: str
    aria: str
    prefix: str  # the shared prefix's share of the request's width, in percent
    blocks: list[BlockView]


class PrefixBlocksView(TypedDict):
    requests: list[BlocksRequestView]


class CaseSegmentView(TypedDict):
    label: str
    kind: str
    reuse: str
    tokens: int
    count: str
    title: str


class CaseBlockView(TypedDict):
    status: str
    tokens: int


class CaseRequestView(TypedDict):
    label: str
    aria: str
    segments: list[CaseSegmentView]
    blocks: list[CaseBlockView]


class PrefixCasesView(TypedDict):
    case: str  # the case's label, for the status line
    requests: list[CaseRequestView]


class GranularityRowView(TypedDict):
    block_size: int
    row: str | None  # "current": the block size chosen
    reused_per_request: str
    recomputed_of_prefix: str
    reused: str


class PrefixCacheView(TypedDict):
    blocks_name: str
    granularity: list[GranularityRowView]


class RasterTick(TypedDict):
    label: str
    at: float  # the cell's middle, in percent of the drawing's width (x) or height (y)


class RasterTicks(TypedDict):
    x: list[RasterTick]  # tokens of the text
    y: list[RasterTick]  # steps


class ContextShiftDisplay(TypedDict):
    last_step: int
    last_token: int
    cells: list[str]  # a raster cell's meaning, by its value (0..3)
    ticks: RasterTicks


class ApiCacheCurveRow(TypedDict):
    rate: str
    cells: list[str]  # per series: cached, not cached


class ApiCacheCompareView(TypedDict):
    name: str
    row: str | None  # "chosen": the model picked
    cells: list[str]


class ApiCacheView(TypedDict):
    model: str
    curve_heads: list[str]
    curve_rows: list[ApiCacheCurveRow]
    compare: list[ApiCacheCompareView]


class EvictionDisplay(TypedDict):
    last_step: int
    last_token: int
    cells: list[str]  # a raster cell's meaning, by its value (0..3)
    step: dict  # the step read out at first (the last of the result's `steps`)


class AttentionReadout(TypedDict):
    token: str
    d: int
    top: str
    outputs: list[str]


class AttentionRow(TypedDict):
    token: str
    cells: list[str]


class AttentionDemoView(TypedDict):
    temperature: str
    mask: str
    rows: list[AttentionRow]
    readouts: list[AttentionReadout]  # per query token
    readout: AttentionReadout  # the last token's, shown first


class KvQuantAnswer(TypedDict):
    said: str
    correct: bool


class KvQuantRowView(TypedDict):
    format: str
    bytes: str
    share: str
    dlogit: str
    top1: str
    diverge: str
    recall: list[KvQuantAnswer]


class KvQuantView(TypedDict):
    caption: str
    rows: list[KvQuantRowView]


class DoorCodeRow(TypedDict):
    key: str
    label: str
    sizes: str  # "(sinks + window)", "(window)", or "" for the full cache
    kept: int
    in_cache: str
    answer: str
    right: str
    loss: str


class DoorCodeView(TypedDict):
    rows: list[DoorCodeRow]


class NextTokenRow(TypedDict):
    text: str
    p: str


class NextTokenView(TypedDict):
    n_tokens: int
    top: list[NextTokenRow]


class GenerateTopRow(TypedDict):
    text: str
    p: str
    mark: str | None  # "chosen": the step's token


class GenerateStepView(TypedDict):
    phase: str
    which: str
    top: list[GenerateTopRow]
    cells: list[str]  # per token of the step: "new" (computed) or "read" (from the cache)
    grid_label: str


class GenerateToken(TypedDict):
    text: str
    at: str | None  # "now": the step shown; "later": after it


class GenerateRow(TypedDict):
    step: int
    phase: str
    tokens_in: int
    before: int
    after: int
    text: str
    p: str
    ms: str | None
    current: str | None  # "step": the step shown


class GenerateView(TypedDict):
    shown: str
    shown_more: str
    prompt: str
    tokens: list[GenerateToken]
    rows: list[GenerateRow]
    step: GenerateStepView
    scrub: str


class ModelAttentionToken(TypedDict):
    text: str
    weight: float | None
    w: str | None
    small: str
    state: str | None  # "query" or "future"
    ink: str | None  # "strong": light text on a dark cell
    pressed: bool


class ModelAttentionCell(TypedDict):
    w: str | None


class ModelAttentionRow(TypedDict):
    token: str
    cells: list[ModelAttentionCell]


class ModelAttentionDisplay(TypedDict):
    readout: str
    where: str
    table_where: str
    tokens: list[ModelAttentionToken]
    rows: list[ModelAttentionRow]


class ModelRaceView(TypedDict):
    identical: str
    verdict: str | None  # "ok": the two runs wrote the same tokens; "bad": they differ
    same: bool | None
    measured: str
    measured_value: float | None
    measured_note: str
    theory: str
    theory_value: float | None
    theory_note: str
    prompt: str
    wrote: str  # the model's text
