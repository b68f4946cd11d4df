"""What every widget function returns: one TypedDict per result, nested ones for nested objects.

The widget modules (kvlab.widgets.*) annotate their functions with these; kvlab.bridge.call_json
is the one place that turns a result into JSON for the page. tests/python/test_results_typed.py
checks real results against the annotations (typeguard), so a key added, dropped or retyped in
a widget fails there until its shape here says so.

Why one module and not a block in each widget module:

- Several pages share shapes: a byte amount (kvlab.wording.amount), a clamped input, the
  llama-server command, the model and GPU pickers of the memory and serving pages. Here each
  is written once.
- This module must not use `from __future__ import annotations` (the widget modules do): on
  Python 3.11 to 3.13 (CPython and Pyodide alike) a TypedDict whose annotations are strings
  lists its NotRequired keys in __required_keys__ (python/cpython#97727). With the annotations
  evaluated, NotRequired keys are optional as declared. A consequence: a class must be defined
  before the classes that use it, so the file reads bottom-up (parts first, results last).
- The page's side of the contract reads in one file.

Conventions: `float` means any number (an int is a float too, PEP 484), `int` a whole number,
`X | None` a key that is always there but may be null, `NotRequired[X]` a key that is only
there on some inputs. Tuples stay tuples here (limits such as `(1, 200)`); JSON makes them
lists. Functional syntax only where a key is not an identifier ("from", "llama.cpp").
"""

from typing import NotRequired, TypedDict

from kvlab.widgets.views import GpuFitView, KvMemoryView, ServingView, WallView

# ---------------------------------------------------------------------------- shared by several pages


class ClampedInput(TypedDict):
    """kvlab.inputs.note_clamped: what the reader asked for (as sent, maybe text) and what was used."""

    requested: float | str
    used: float


Clamped = dict[str, ClampedInput]  # by parameter name; empty when nothing was clamped


class Amount(TypedDict):
    """kvlab.wording.amount: a byte count in the forms a page shows."""

    bytes: int
    human: str
    exact: str
    gib: float


class KeyLabel(TypedDict):
    key: str
    label: str


class IdLabel(TypedDict):
    id: str
    label: str


class IntPerSide(TypedDict):
    no_cache: int
    cache: int


class FloatPerSide(TypedDict):
    no_cache: float
    cache: float


class FloatListPerSide(TypedDict):
    no_cache: list[float]
    cache: list[float]


class ServerFlag(TypedDict):
    flag: str
    means: str


class ServerCommand(TypedDict):
    """kvlab.llama_server_command's command and what each flag means."""

    command: str
    flags: list[ServerFlag]


class TokenProbability(TypedDict):
    token: int
    text: str
    p: float


# ---------------------------------------------------------------------------- tokens (tokens.md)


class TokenPiece(TypedDict):
    id: int
    text: str
    bytes: int


class TokenizeDemoResult(TypedDict):
    text: str
    truncated: bool
    tokens: list[TokenPiece]
    n_tokens: int
    n_chars: int
    n_bytes: int
    bytes_per_token: float
    vocab_size: int


class NextTokenDemoResult(TypedDict):
    prompt: str
    n_tokens: int
    vocab_size: int
    top: list[TokenProbability]


# ---------------------------------------------------------------------------- attention (attention.md)


class AttentionDemoResult(TypedDict):
    tokens: list[str]
    d: int
    temperature: float
    seed: int
    causal: bool
    scale: float
    weights: list[list[float]]  # [query][key]
    outputs: list[list[float]]  # [token][d]


class HeadScore(TypedDict):
    layer: int
    head: int
    attention: float


class PronounHead(TypedDict):
    """kvlab.widgets.attention.pronoun_head: the model card's pronoun head and its figures."""

    layer: int
    head: int
    it: float
    he_she: float
    best_he_she: HeadScore
    best_he_she_other: float
    best_it: HeadScore
    sentences_it: int
    sentences_he_she: int
    bar: float
    bar_reached: bool


class AttentionView(TypedDict):
    layer: int
    head: int | str  # a head index, or "mean"
    query: int


class ModelAttentionResult(TypedDict):
    prompt: str
    ids: list[int]
    tokens: list[str]
    weights: list[list[list[list[float]]]]  # [layer][head][query][key]
    mean_over_heads: list[list[list[float]]]  # [layer][query][key]
    n_layer: int
    n_head: int
    view: AttentionView
    pronoun_head: PronounHead | None  # None for a model card without that measurement


# ---------------------------------------------------------------------------- quadratic wall (quadratic-wall.md)


class NParams(TypedDict):
    n: int


class TokenCounts(TypedDict):
    per_step: list[int]
    cumulative: list[int]


class RaceTotals(TypedDict):
    no_cache: int
    cache: int
    ratio: float


class RaceResult(TypedDict):
    """kvlab.race."""

    params: NParams
    clamped: Clamped
    tokens: list[int]
    no_cache: TokenCounts
    cache: TokenCounts
    ratio: list[float]
    totals: RaceTotals


class RaceTarget(TypedDict):
    ratio: int
    n: int
    no_cache: int
    cache: int
    exact: bool


class RaceReply(TypedDict):
    n: int
    no_cache: int
    cache: int
    ratio: float


class RaceLandmarks(TypedDict):
    target: RaceTarget | None  # None when the ratio is never reached
    reply: RaceReply


class OdometerNoCache(TypedDict):
    units: int
    tokens: int


class OdometerCache(TypedDict):
    units: int
    tokens: int
    done: bool


class OdometerFrame(TypedDict):
    units: int
    t: float
    no_cache: OdometerNoCache
    cache: OdometerCache


class OdometerCacheDone(TypedDict):
    units: int
    no_cache_tokens: int


class OdometerNoCacheDone(TypedDict):
    units: int


class RaceOdometers(TypedDict):
    """kvlab.race_odometers."""

    frames: list[OdometerFrame]
    n: int
    cache_done: OdometerCacheDone
    no_cache_done: OdometerNoCacheDone


class RaceFigureResult(RaceResult):
    landmarks: RaceLandmarks
    odometers: RaceOdometers


class AddTokenCounters(TypedDict):
    """kvlab.add_token_counters."""

    token: int
    reprocessed: IntPerSide
    this_step: IntPerSide
    total: IntPerSide
    saved: int
    ratio: float


class ReprocessingResult(TypedDict):
    params: NParams
    clamped: Clamped
    tokens: list[int]
    no_cache: list[int]
    cache: list[int]
    counters: AddTokenCounters


class QuadraticWallFigureParams(TypedDict):
    n: int
    n_layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    max_points: int


class MacSeries(TypedDict):
    weight_macs: list[float]
    attention_macs: list[float]
    total_macs: list[float]
    cumulative_macs: list[float]


class MacStep(TypedDict):
    weight_macs: float
    attention_macs: float
    total_macs: float
    cumulative_macs: float


class MacStepPerSide(TypedDict):
    no_cache: MacStep
    cache: MacStep


class Growth(TypedDict):
    weight: float
    attention: float


class GrowthPerSide(TypedDict):
    no_cache: Growth
    cache: Growth


class QuadraticWallFigureResult(TypedDict):
    params: QuadraticWallFigureParams
    clamped: Clamped
    tokens: list[int]
    no_cache: MacSeries
    cache: MacSeries
    attention_share: FloatListPerSide
    first: MacStepPerSide
    last: MacStepPerSide
    last_attention_share: FloatPerSide
    growth: GrowthPerSide
    ratio_cumulative_last: float
    view: WallView  # display strings for the template (kvlab.widgets.views)


# ---------------------------------------------------------------------------- KV cache (kv-cache.md)


class StepThroughParams(TypedDict):
    prompt_len: int
    steps: int
    layers: int
    seed: int


class LayerAccess(TypedDict):
    layer: int
    computed: list[int]
    read: list[int]


class StepThroughStep(TypedDict):
    step: int
    phase: str  # "prefill" or "decode"
    n_new: int
    cache_len_before: int
    cache_len_after: int
    bytes_read: int
    bytes_written: int
    layers: list[LayerAccess]
    without_cache_recomputed: list[int]


class StepThroughResult(TypedDict):
    """kvlab.step_through."""

    params: StepThroughParams
    clamped: Clamped
    tokens: list[int]
    steps: list[StepThroughStep]


class CacheEquivalence(TypedDict):
    tokens_no_cache: list[int]
    tokens_cache: list[int]
    same_tokens: bool
    max_abs_logit_diff: float
    tokens_processed: IntPerSide
    total_macs: IntPerSide


class StepThroughFigureResult(StepThroughResult):
    equivalence: CacheEquivalence


# ---------------------------------------------------------------------------- generate (generate.md)


class GenerationStep(TypedDict):
    step: int
    phase: str  # "prefill" or "decode"
    token: int
    text: str
    top: list[TokenProbability]
    tokens_in: int
    cache_len_before: int
    cache_len_after: int


class GenerateLimits(TypedDict):
    max_new_tokens: tuple[int, int]
    top_k: tuple[int, int]


class TinyConfig(TypedDict):
    """The tiny model's config as models/tiny/card.json states it."""

    block_size: int
    vocab_size: int
    n_layer: int
    n_head: int
    n_embd: int
    rope_base: float
    rope_pairs: int
    smear_keys: bool
    smear_init: float


class CardFacts(TypedDict):
    """kvlab.core.tiny.card_facts (the training figures are None for a card without them)."""

    params: int
    config: TinyConfig
    onnx_bytes: int
    train_minutes: float | None
    val_loss: float | None
    train_loss: float | None
    recall_far: float
    recall_far_evicted: float
    far_tokens: int


class GenerationDemoResult(TypedDict):
    prompt: str
    prompt_tokens: list[str]
    prompt_len: int
    steps: list[GenerationStep]
    text: str
    n_layer: int
    block_size: int
    limits: GenerateLimits
    card: CardFacts


class RaceTheoryResult(TypedDict):
    prompt_len: int
    n_new: int
    positions: list[int]
    macs_per_step: FloatListPerSide
    total_macs: FloatPerSide
    speedup_total: float
    speedup_decode: float
    assumption: str


class RaceDemoResult(RaceTheoryResult):
    prompt: str


class RaceMeasuredResult(TypedDict):
    """kvlab.race_measured: the model-race's numbers from the browser's raw step timings and tokens."""

    n_new: int
    compared: int
    stopped: bool
    identical: bool
    first_difference: int | None
    prefill_ms: float | None
    decode_ms: FloatPerSide | None
    speedup_decode: float | None
    theory: RaceTheoryResult | None


# ---------------------------------------------------------------------------- eviction (eviction.md)


class EvictionParams(TypedDict):
    policy: str
    n: int
    window: int
    n_sink: int
    budget: int
    recent: int
    seed: int


class PolicyInfo(TypedDict):
    """EvictionPolicy.describe(): every policy has a name and a budget (None: unbounded), the rest by policy."""

    policy: str
    budget: int | None
    window: NotRequired[int]  # window, sinks
    n_sink: NotRequired[int]  # sinks
    recent: NotRequired[int]  # h2o
    heavy: NotRequired[int]  # h2o


class EvictionViewStep(TypedDict):
    step: int
    position: int
    cache_len_before: int
    cache_len_after: int
    cached: list[int]
    evicted: list[int]
    attention_kept: float
    cached_text: str
    evicted_text: str
    n_evicted_total: int
    attention_kept_text: str


class EvictionViewLimits(TypedDict):
    n: list[int]
    window: list[int]
    n_sink: list[int]
    budget: list[int]
    recent: list[int]


class PolicyRun(TypedDict):
    name: str
    attention_kept: list[float]
    cache_len: list[int]
    mean_attention_kept: float
    mean_text: str


class PolicyComparison(TypedDict):
    full: PolicyRun
    window: PolicyRun
    sinks: PolicyRun
    h2o: PolicyRun


class EvictionViewText(TypedDict):
    mean_attention_kept: str
    final_cache_len: str
    n_evicted_total: str


class EvictionViewResult(TypedDict):
    params: EvictionParams
    clamped: Clamped
    policy: PolicyInfo
    steps: list[EvictionViewStep]
    mean_attention_kept: float
    limits: EvictionViewLimits
    policy_name: str
    grid: list[list[int]]  # [step][position]: 0 not seen yet, 1 evicted, 2 cached, 3 new
    compare: PolicyComparison
    text: EvictionViewText


class ContextShiftParams(TypedDict):
    prompt_len: int
    n_generate: int
    n_ctx: int
    n_keep: int
    mode: str


class ContextStep(TypedDict):
    step: int
    phase: str  # "prefill" or "decode"
    token: int | None  # None for the prefill
    n_past_before: int
    n_past_after: int
    n_discarded: int
    visible: list[list[int]]  # half-open [start, end) runs
    visible_text: str


class ContextShift(TypedDict):
    step: int
    n_past_before: int
    n_left: int
    n_discard: int
    discarded: list[list[int]]
    text: str


class ContextShiftLimits(TypedDict):
    n_ctx: list[int]
    prompt_len: list[int]
    n_generate: list[int]
    n_keep: list[int]


class ContextShiftText(TypedDict):
    outcome: str
    final_visible: str
    final_n_past: str
    n_text: str
    n_keep: str


class ContextShiftViewResult(TypedDict):
    params: ContextShiftParams
    clamped: Clamped
    prompt_len: int
    n_ctx: int
    n_keep: int
    mode: str
    steps: list[ContextStep]
    shifts: list[ContextShift]
    stopped_at: int | None  # the step where "stop" mode stopped; None if it never did
    tokens_fed: int
    total_discarded: int
    server: ServerCommand
    limits: ContextShiftLimits
    n_text: int
    grid: list[list[int]]  # [step][token]: 0 not fed yet, 1 discarded, 2 seen, 3 seen and kept
    n_past: list[int]
    text: ContextShiftText


class DoorCodeChatText(TypedDict):
    n_tokens: str
    code_at: str
    code_span: str


class DoorCodeChatResult(TypedDict):
    chat: str
    question: str
    prompt: str
    code: str | None  # None when the chat states no door code
    code_positions: list[int]
    n_tokens: int
    block_size: int
    fits: bool
    note: str
    text: DoorCodeChatText


class DoorCodePolicy(TypedDict):
    label: str
    sinks: int | None  # None for the full cache
    window: int | None  # None for the full cache
    answer: str
    digits: str
    correct: bool
    digits_right: int
    code_in_cache: bool
    cache_len: int
    mean_nll_last: float | None  # None when the run has no losses


class DoorCodePolicies(TypedDict):
    """One entry per run that was scored (the caller may send any of the three)."""

    full: NotRequired[DoorCodePolicy]
    window: NotRequired[DoorCodePolicy]
    sinks: NotRequired[DoorCodePolicy]


class LossChart(TypedDict):
    x: list[int]
    extra: list[float]
    extra_total: float


class DoorCodeChart(TypedDict):
    """Only for an evicting run whose losses line up with the full cache's."""

    window: NotRequired[LossChart]
    sinks: NotRequired[LossChart]


class CodeGoneAt(TypedDict):
    window: int | None  # None when no code position is evictable
    sinks: int | None


class LinesText(TypedDict):
    lines: list[str]


class DoorCodeScoreResult(TypedDict):
    code: str | None
    code_positions: list[int]
    window: int
    sinks: int
    loss_tail: int
    loss_smooth: int
    policies: DoorCodePolicies
    chart: DoorCodeChart
    code_gone_at: CodeGoneAt
    text: LinesText


class RecallEpisode(TypedDict):
    prompt: str
    code: str
    code_positions: list[int]
    n_tokens: int
    chat: str


class RecallPolicy(DoorCodePolicy):
    prompt_nll: list[float]


class RecallPolicies(TypedDict):
    full: RecallPolicy
    window: RecallPolicy
    sinks: RecallPolicy


class EvictionLimits(TypedDict):
    window: tuple[int, int]
    sinks: tuple[int, int]
    episode: tuple[int, int]


class MeasuredRecall(TypedDict):
    """kvlab.core.tiny.measured_recall."""

    n_episodes: int
    far_tokens: int
    chance_digit: float
    n_far: int
    full_cache: float
    full_cache_digits: float
    fact_evicted: float
    fact_evicted_digits: float


class EvictionRecallDemoResult(TypedDict):
    episode: int
    episodes: list[RecallEpisode]
    prompt: str
    chat: str
    question: str
    code: str
    n_tokens: int
    code_positions: list[int]
    window: int
    sinks: int
    policies: RecallPolicies
    score: DoorCodeScoreResult
    limits: EvictionLimits
    measured: MeasuredRecall


# ---------------------------------------------------------------------------- prefix caching (prefix-cache.md)


class PrefixCacheParams(TypedDict):
    n_requests: int
    prefix_len: int
    suffix_len: int
    block_size: int
    flops_per_token: float
    bytes_per_token: int


class PrefixCacheLimits(TypedDict):
    n_requests: list[int]
    prefix_len: list[int]
    suffix_len: list[int]


class NoPrefixCache(TypedDict):
    tokens_computed_per_request: list[int]
    cumulative_computed: list[int]
    tokens_computed: int


class PrefixCacheRun(TypedDict):
    tokens_computed_per_request: list[int]
    tokens_reused_per_request: list[int]
    cumulative_computed: list[int]
    tokens_reused: int
    tokens_computed: int
    flops_saved: float
    hit_rate: float
    memory_bytes_held: int
    memory_mib_held: float


class BlockPrefixCacheRun(PrefixCacheRun):
    block_size: int


class GranularityRow(TypedDict):
    block_size: int
    tokens_reused_per_request: int
    tokens_recomputed_of_prefix: int
    tokens_reused: int


class PrefixCacheText(TypedDict):
    n_requests: str
    later_requests: str
    prefix_len: str
    first_request: str
    no_cache_computed: str
    radix_reused: str
    radix_computed: str
    radix_flops_saved: str
    radix_mib: str
    radix_hit_rate: str
    blocks_reused: str
    blocks_computed: str
    blocks_flops_saved: str
    blocks_mib: str
    blocks_hit_rate: str
    block_size: str
    block_loss: str
    block_loss_per_request: str
    flops_per_token: str
    kib_per_token: str


class PrefixCacheFigureResult(TypedDict):
    params: PrefixCacheParams
    clamped: Clamped
    limits: PrefixCacheLimits
    block_sizes: list[int]
    requests: list[int]
    no_cache: NoPrefixCache
    token_granular: PrefixCacheRun
    blocks: BlockPrefixCacheRun
    granularity: list[GranularityRow]
    text: PrefixCacheText


class PrefixBlocksParams(TypedDict):
    prefix_len: int
    suffix_len: int
    block_size: int


class PrefixBlocksLimits(TypedDict):
    prefix_len: list[int]
    suffix_len: list[int]


class PrefixBlock(TypedDict):
    index: int
    start: int
    end: int
    shared: int
    status: str  # "stored", "hit", "miss" or "partial"


class PrefixBlocksRequest(TypedDict):
    n_tokens: int
    blocks: list[PrefixBlock]
    blocks_hit: int
    tokens_reused: int
    tokens_computed: int


class PrefixBlocksText(TypedDict):
    n_tokens: str
    blocks_hit: str
    tokens_reused: str
    tokens_computed: str
    shared_not_reused: str
    radix_reused: str
    radix_computed: str


class PrefixBlocksResult(TypedDict):
    params: PrefixBlocksParams
    clamped: Clamped
    limits: PrefixBlocksLimits
    block_sizes: list[int]
    requests: list[PrefixBlocksRequest]
    token_granular_reused: int
    text: PrefixBlocksText


class PrefixCasesParams(TypedDict):
    case: str
    shared_len: int
    own_len: int
    block_size: int


class PrefixCasesLimits(TypedDict):
    shared_len: list[int]
    own_len: list[int]


class CaseSegment(TypedDict):
    label: str
    kind: str
    start: int
    end: int
    tokens: int
    reused: int
    reuse: str  # "all", "part" or "none"


class CaseBlock(TypedDict):
    start: int
    end: int
    tokens: int
    status: str  # "hit", "miss" or "partial"


class CaseRequest(TypedDict):
    n_tokens: int
    segments: list[CaseSegment]
    blocks: list[CaseBlock]
    blocks_reused: int
    blocks_computed: int
    radix_reused: int
    radix_computed: int


class CaseTotals(TypedDict):
    tokens: int
    radix_reused: int
    blocks_reused: int
    radix_share: float
    blocks_share: float


class SummaryText(TypedDict):
    summary: str


class PrefixCasesResult(TypedDict):
    params: PrefixCasesParams
    clamped: Clamped
    limits: PrefixCasesLimits
    cases: list[KeyLabel]
    block_sizes: list[int]
    what: str
    requests: list[CaseRequest]
    totals: CaseTotals
    text: SummaryText


# ---------------------------------------------------------------------------- memory, serving (memory.md, serving.md)


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


class FloatRange(TypedDict):
    min: float
    max: float


class WidgetLimits(TypedDict):
    context: IntRange
    n_seq: IntRange
    batch: IntRange
    answer: IntRange
    gpu_memory_utilization: FloatRange
    block_size: IntRange


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
    text: str


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
    layers_text: str
    ideal: Amount
    allocated: Amount
    padding: Amount


class LayerMapPlot(TypedDict):
    unit: str
    x: list[int]
    kind: list[str]
    needed: list[float]
    padding: list[float]
    hover: list[str]


class LayerMap(TypedDict):
    layers: list[LayerMapLayer]
    kinds: list[LayerMapKind]
    plot: LayerMapPlot
    ideal: Amount
    allocated: Amount
    padding: Amount
    padding_share: float
    text: str
    how: str
    engine: str
    note: str


class KvMemoryServer(TypedDict):
    command: str | None  # None for a cache type llama.cpp does not have (vLLM's fp8)
    flags: list[ServerFlag]
    text: str
    kv_bytes: int | None


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


class KvMemoryFigureResult(TypedDict):
    params: KvMemoryParams
    clamped: Clamped
    config_error: str | None
    context_human: str
    context_text: str
    sequences_text: str
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
    status: str
    options: KvMemoryOptions
    view: KvMemoryView  # display strings for the template (kvlab.widgets.views)


class GpuFitParams(TypedDict):
    model: str
    gpu: str
    weights: str
    kv: str
    context: int
    mode: str
    n_seq: int
    n_gpus: int
    gpu_memory_utilization: float
    block_size: int


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
    block_sizes: list[int]
    gpu_memory_utilization_step: float
    vllm_defaults: VllmDefaults
    context_steps: list[int]
    context_ticks: ContextTicks
    limits: WidgetLimits


class GpuFitOptions(ServingOptions):
    n_gpus: list[int]


class GpuFitFigureResult(TypedDict):
    params: GpuFitParams
    clamped: Clamped
    context_human: str
    context_text: str
    sequences_text: str
    context_step: int
    mode_label: str
    model_info: ModelInfo
    gpu_info: GpuFitGpuInfo
    where: str
    flags: str
    memory: Amount
    budget: Amount
    budget_label: str
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
    engine_text: str
    context_flag: ContextFlag | None
    max_context: int | None  # None when not even the smallest context fits
    max_context_text: str
    max_sequences: int
    max_sequences_text: str
    per_gpu: bool
    assumptions: list[str]
    log_lines: list[str]
    gpus: list[GpuVerdictRow]
    status: str
    options: GpuFitOptions
    view: GpuFitView  # display strings for the template (kvlab.widgets.views)


class EngineLogParams(TypedDict):
    example: str
    model: str
    source: str  # "example", "catalogue" or "config"
    settings: str


class EngineLogExample(TypedDict):
    id: str
    label: str
    source: str
    engine: str
    model: str | None  # None for an example explained from its own config.json
    config: str | None
    note: str


class EngineLogExampleOption(TypedDict):
    id: str
    label: str
    model: str | None
    config: str
    log: str
    source: str


EngineSetting = TypedDict(
    "EngineSetting",
    {"name": str, "value": bool | int | float | str | None, "from": str},
)


class CheckTerm(TypedDict):
    term: str
    logged: str
    rebuilt: str
    how: str
    ok: bool


class EngineCheck(TypedDict):
    figure: str
    line: int | None  # None for a figure the pasted log does not have
    logged: str
    rebuilt: str
    status: str
    terms: list[CheckTerm]
    why: str | None
    status_label: str


EngineSettingNames = TypedDict("EngineSettingNames", {"llama.cpp": list[str], "vllm": list[str]})


class EngineLogOptions(TypedDict):
    models: list[ModelGroup]
    max_log_chars: int
    settings: EngineSettingNames


class EngineLogFigureResult(TypedDict):
    params: EngineLogParams
    error: str | None  # why a pasted log, config or setting could not be read (the example is shown)
    example: EngineLogExample
    examples: list[EngineLogExampleOption]
    log: str
    model_name: str
    model_info: ModelInfo | None
    engine: str | None  # None when the log has no llama.cpp or vLLM memory line
    summary: str
    settings: list[EngineSetting]
    checks: list[EngineCheck]
    notes: list[str]
    status: str
    options: EngineLogOptions


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
    view: ServingView  # display strings for the template (kvlab.widgets.views)


# ---------------------------------------------------------------------------- a quantized cache (memory.md)


class KvQuantRecallAnswer(TypedDict):
    said: str
    correct: bool
    digits_right: int


class KvQuantRow(TypedDict):
    format: str
    bytes_per_token: int
    vs_fp32: float
    cache_bytes: int
    max_abs_dlogit: float
    top1_agreement: float
    first_divergence: int | None  # None when every step agrees with fp32
    recall: list[KvQuantRecallAnswer]
    recall_rate: float | None  # None without recall answers for the format


class KvQuantTableResult(TypedDict):
    source: str
    n_steps: int
    prompt_len: int
    distances: list[int]
    codes: list[str]
    rows: list[KvQuantRow]


class KvQuantEpisode(TypedDict):
    prompt: str
    code: str
    n_tokens: int
    distance: int


class CardRecall(TypedDict):
    """The model card's kv_quant.recall_by_distance: counts and recall per distance bucket ("0-100", ">=200")."""

    n: dict[str, int]
    formats: dict[str, dict[str, float]]  # format -> bucket -> recall
    episodes: int


class KvQuantLimits(TypedDict):
    n_new: tuple[int, int]


class KvQuantDemoResult(TypedDict):
    prompt: str
    n_new: int
    answer_tokens: int
    formats: list[str]
    episodes: list[KvQuantEpisode]
    table: KvQuantTableResult
    card_recall: CardRecall | None  # None for a card without the measurement
    limits: KvQuantLimits


# ---------------------------------------------------------------------------- wrap-up (wrap-up.md)


class TradeoffParams(TypedDict):
    length: str
    repetition: str
    memory: str


class TradeoffOptions(TypedDict):
    length: list[KeyLabel]
    repetition: list[KeyLabel]
    memory: list[KeyLabel]


class PerTechnique(TypedDict):
    kv_cache: str
    prefix_cache: str
    kv_quant: str
    eviction: str


class WhereText(TypedDict):
    where: str


class KvBytesByFormat(TypedDict):
    f16: int
    q8_0: int
    q4_0: int


class TradeoffNumbers(TypedDict):
    token_computations: IntPerSide
    prefill_reused_share: float
    kv_bytes: KvBytesByFormat
    fits: list[str]
    window_tokens: int


class TradeoffCell(TypedDict):
    length: str
    repetition: str
    memory: str
    server: ServerCommand
    text: WhereText
    tokens: int
    repeated_share: float
    memory_bytes: int
    helps: list[str]
    main: str
    why: PerTechnique
    numbers: TradeoffNumbers


class TradeoffMapResult(TypedDict):
    params: TradeoffParams
    options: TradeoffOptions
    techniques: PerTechnique
    model: str
    cell: TradeoffCell
    grid: list[list[TradeoffCell]]  # [length][repetition]
    rows: list[str]
    cols: list[str]


SequenceMessage = TypedDict("SequenceMessage", {"from": str, "to": str, "text": str, "reply": bool})


class SequenceStep(TypedDict):
    step: int
    phase: str
    note: str
    messages: list[SequenceMessage]


class PrefillDecodeSequenceResult(TypedDict):
    participants: list[KeyLabel]
    steps: list[SequenceStep]
