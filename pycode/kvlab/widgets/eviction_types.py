"""What the eviction page's functions return (kvlab.widgets.eviction).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import NotRequired, TypedDict

from kvlab.widgets.shared_types import Clamped, RasterTicks, ServerCommand


class ContextShiftDisplay(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    last_step: int
    last_token: int
    cells: list[str]  # a raster cell's meaning, by its value (0..3)
    ticks: RasterTicks


class EvictionDisplay(TypedDict):
    hover: dict[str, list[str]]  # per policy: a hover line per step
    status: str  # the status line after a result (context.js ctx.live says it)
    last_step: int
    last_token: int
    cells: list[str]  # a raster cell's meaning, by its value (0..3)
    step: dict  # the step read out at first (the last of the result's `steps`)


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
    view: EvictionDisplay  # display strings for the template (the module's *_view, beside the function)


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
    view: ContextShiftDisplay  # display strings for the template (the module's *_view, beside the function)


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
    view: DoorCodeView  # display strings for the template (the module's *_view, beside the function)


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
    window: list[int]
    sinks: list[int]
    episode: list[int]


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
