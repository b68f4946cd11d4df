"""What the memory page's kv-memory and gpu-fit widgets return (kvlab.widgets.memory); the pickers (kvlab.widgets.pickers) are shared with serving and other pages.

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import NotRequired, TypedDict

from kvlab.widgets.shared_types import Amount, Clamped, IdLabel, ServerFlag


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


class LayerKindView(TypedDict):
    kind: str
    label: str
    layers: int
    layers_text: str
    ideal: Amount
    allocated: Amount
    padding: Amount


class KvMemoryHover(TypedDict):
    layers: list[str]  # the layer map's bars, one line per layer drawn
    curve: list[list[str]]  # KV against context, one line per context, per series


class KvMemoryView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    context_text: str
    sequences_text: str
    config_error: str | None  # why a pasted config.json could not be read, in a sentence
    head: KvMemoryHead
    layer_map_text: str
    layer_kinds: list[LayerKindView]
    server_text: str
    weights_stored: str | None  # the checkpoint's weights with the KV cache, in a sentence (None: no index)
    hover: KvMemoryHover
    notes: list[str]
    log: str
    model_note: str
    curve_axis: str  # the KV-against-context chart's y-axis title
    curve_rows: list[CurveRow]
    kinds: list[dict]  # the result's `kinds`, each with its cell's `title`


class GpuFitView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    where: str  # the GPUs: "2 × NVIDIA H100 SXM 80GB (2 pipeline stages)"
    context_text: str
    sequences_text: str
    engine_text: str  # the engine version modelled, how sure, any close call
    budget_label: str
    segments: list[dict]  # the result's `segments`, each with its `title`
    bar_label: str
    limit_title: str
    total_label: str
    log: str
    model_note: str


class ModelInfo(TypedDict):
    """A catalogue model as the memory, serving and engine-log widgets show it."""

    id: str
    hf_id: str
    source: str
    confirmed: bool
    note: str
    unconfirmed_fields: list[str]
    params: float
    params_human: str


class ContextFlag(TypedDict):
    """kvlab.memory.verdict.long_context_check plus the message for the chosen engine."""

    trained: int
    over_by_tokens: int
    text: str
    llamacpp: str
    vllm: str
    message: str


class ModelGroup(TypedDict):
    kind: str
    label: str
    models: list[IdLabel]


class KvOption(TypedDict):
    id: str
    label: str
    modes: list[str]


class IntRange(TypedDict):
    min: int
    max: int
    step: int


class ChoiceRange(IntRange):
    choices: list[int]


class FloatRange(TypedDict):
    min: float
    max: float
    step: float


class WidgetLimits(TypedDict):
    """kvlab.widgets.pickers.INPUTS.limits(): each control's range, step and choices."""

    context: IntRange
    n_seq: IntRange
    batch: IntRange
    answer: IntRange
    gpu_memory_utilization: FloatRange
    block_size: ChoiceRange
    n_gpus: ChoiceRange
    pipeline_parallel: ChoiceRange


class ContextTicks(TypedDict):
    values: list[int]
    labels: list[str]


class EngineLabels(TypedDict):
    llamacpp: str
    vllm: str


class ModeLabels(EngineLabels):
    exact: str


class VllmDefaults(TypedDict):
    gpu_memory_utilization: float
    block_size: int


class KvMemoryParams(TypedDict):
    model: str | None  # None for a pasted config.json
    context: int
    kv: str
    mode: str
    n_seq: int
    source: str  # "catalogue" or "config"


class LayersByKind(TypedDict):
    full: int
    sliding: int
    linear: int
    none: NotRequired[int]  # only for configs with layers that hold nothing (Nemotron-H's MLP layers)


class CacheGrowth(TypedDict):
    bounded: bool
    growth_per_token: Amount
    fixed: Amount
    growth_formula: str
    windows: list[int]  # the sliding windows ([] without sliding layers)
    state: bool  # recurrent state (linear layers)
    grows: bool  # some layer grows with every token (full attention)
    state_beside_attention: bool  # the state sits in the attention layers (Falcon-H1)
    within_windows_per_token: int  # bytes per token while every attention layer grows


class LayerKindRow(TypedDict):
    kind: str
    label: str
    layers: int
    holds: str
    per_token: Amount
    total: Amount


class KvMemorySummary(TypedDict):
    model: str
    attention: str
    layers_by_kind: LayersByKind
    kv_heads: list[int]
    head_dim: list[int]
    max_position_embeddings: int | None  # None when the config does not say
    notes: list[str]
    formula: str
    per_token: Amount
    per_token_beyond_windows: Amount
    growth: CacheGrowth
    total: Amount
    kinds: list[LayerKindRow]
    log_lines: list[str]
    engine_notes: list[str]
    mla_expanded_per_token: Amount | None  # only MLA models have one


class KvMemorySeries(TypedDict):
    id: str
    name: str
    chosen: bool
    trained: int | None
    bytes: list[int]
    gib: list[float]
    human: list[str]
    beyond_trained: list[bool]


class KvMemoryCurve(TypedDict):
    contexts: list[int]
    series: list[KvMemorySeries]


class CacheKindRow(TypedDict):
    id: str
    model: str
    kind: str
    kind_label: str
    formula: str
    per_token: Amount
    total: Amount


class LayerMapLayer(TypedDict):
    index: int
    kind: str
    label: str
    holds: str
    ideal: Amount
    allocated: Amount
    padding: Amount
    ideal_pct: float
    allocated_pct: float
    need_pct: float


class LayerMapKind(TypedDict):
    kind: str
    label: str
    layers: int
    ideal: Amount
    allocated: Amount
    padding: Amount


class LayerMapPlot(TypedDict):
    unit: str
    x: list[int]
    kind: list[str]
    needed: list[float]
    padding: list[float]


class LayerMap(TypedDict):
    layers: list[LayerMapLayer]
    kinds: list[LayerMapKind]
    plot: LayerMapPlot
    ideal: Amount
    allocated: Amount
    padding: Amount
    padding_share: float
    n_layers: int  # every layer (the map draws the first len(layers))
    how: str
    engine: str
    note: str


class KvMemoryServer(TypedDict):
    command: str | None  # None for a cache type llama.cpp does not have (vLLM's fp8)
    flags: list[ServerFlag]
    cache_type: str
    kv_bytes: int | None
    holds: str  # what the cache holds, as llama_server_command says ("" without a command)
    n_ctx_seq: int  # tokens per slot (0 without a command)
    note: str  # llama_server_command's first note ("" without a command)


class ClaimRow(TypedDict):
    id: str
    model: str
    attention: str
    formula: str
    per_token: Amount
    per_token_mb: str
    total: Amount
    total_gb: str
    weights_f16: Amount
    weights_f16_gb: str
    trained: str
    beyond_trained: bool
    times_smaller: str


class SeedClaim(TypedDict):
    context: int
    context_human: str
    rows: list[ClaimRow]


class KvMemoryOptions(TypedDict):
    models: list[ModelGroup]
    kv: list[KvOption]
    modes: ModeLabels
    context_steps: list[int]
    context_ticks: ContextTicks
    limits: WidgetLimits


class HubPlan(TypedDict):
    repo: str
    config_url: str
    index_url: str
    page_url: str


class StoredWeights(TypedDict):
    bytes: int | None  # None when the index could not be read (error says why)
    error: str | None
    with_kv: Amount | None


class KvMemoryFigureResult(TypedDict):
    params: KvMemoryParams
    clamped: Clamped
    config_error: str | None  # why a pasted config.json could not be read (the catalogue model is shown)
    hub_message: str  # what fetching from the Hub came to ("" when nothing was fetched or all went well)
    weights_stored: StoredWeights | None  # from the checkpoint's index, with a config
    context_human: str
    context_step: int
    mode_label: str
    model_info: ModelInfo | None  # None for a pasted config.json
    result: KvMemorySummary
    context_flag: ContextFlag | None  # None within the trained context
    curve: KvMemoryCurve
    kinds: list[CacheKindRow]
    layer_map: LayerMap
    server: KvMemoryServer
    claim: SeedClaim
    options: KvMemoryOptions
    view: KvMemoryView  # display strings for the template (the module's *_view, beside the function)


class GpuFitParams(TypedDict):
    model: str
    gpu: str
    weights: str
    kv: str
    context: int
    mode: str
    n_seq: int
    n_gpus: int
    pipeline_parallel: int
    gpu_memory_utilization: float
    block_size: int
    engine_version: str  # vLLM's release range modelled: "0.20+" or "v1" (kept, and checked, under llama.cpp too)


class GpuFitGpuInfo(TypedDict):
    id: str
    name: str
    spec_source: str
    note: str
    unconfirmed: list[str]


class MemorySegment(Amount):
    name: str
    label: str
    how: str
    percent: float


class GpuVerdictRow(TypedDict):
    id: str
    name: str
    memory: Amount
    fits: bool
    verdict: str
    binding: str | None
    headroom: Amount
    max_context: str
    max_sequences: str


class ServingOptions(TypedDict):
    models: list[ModelGroup]
    gpus: list[IdLabel]
    weights: list[IdLabel]
    kv: list[KvOption]
    modes: EngineLabels
    vllm_defaults: VllmDefaults
    context_steps: list[int]
    context_ticks: ContextTicks
    limits: WidgetLimits


class VllmVersion(TypedDict):
    id: str  # kvlab.memory.engines.VLLM_VERSIONS: "0.20+", "v1"
    label: str  # as the picker names it
    gpu_memory_utilization: float  # that version's default --gpu-memory-utilization
    aliases: list[str]  # former ids a share link may still carry (kvlab.memory.engines.VLLM_VERSION_ALIASES)


class GpuFitOptions(ServingOptions):
    """The same pickers and limits as the serving widget's (kvlab.widgets.pickers.INPUTS), and the vLLM versions.

    `vllm_defaults.gpu_memory_utilization` is the chosen version's default."""

    vllm_versions: list[VllmVersion]
    vllm_share_default_text: str  # "0.92 from vLLM 0.20, 0.9 before": the share field's label


class GpuFitFigureResult(TypedDict):
    params: GpuFitParams
    clamped: Clamped
    context_human: str
    context_step: int
    mode_label: str
    model_info: ModelInfo
    gpu_info: GpuFitGpuInfo
    flags: str
    memory: Amount
    budget: Amount
    budget_how: str  # how the engine's budget is counted
    budget_percent: float
    memory_percent: float
    segments: list[MemorySegment]
    total: Amount
    headroom: Amount
    over: Amount
    fits: bool
    verdict: str
    binding: str | None  # None when it fits
    headline: str
    engine_version: str  # the engine version the verdict models
    mxfp4_kernel_how: str | None  # vLLM's MXFP4 kernel path and what would change it (MXFP4 weights), else None
    confidence: str  # "high": a firm answer; otherwise a close call
    warnings: list[str]
    context_flag: ContextFlag | None
    max_context: int | None  # None when not even the smallest context fits
    max_context_text: str
    max_sequences: int
    max_sequences_text: str
    stages: list[str]
    per_gpu: bool
    assumptions: list[str]
    log_lines: list[str]
    gpus: list[GpuVerdictRow]
    options: GpuFitOptions
    view: GpuFitView  # display strings for the template (the module's *_view, beside the function)
