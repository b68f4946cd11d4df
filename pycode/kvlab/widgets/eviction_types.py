"""What the eviction page's functions return (kvlab.widgets.eviction).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import NotRequired, TypedDict

from kvlab.widgets.shared_types import Clamped, RasterRuns, RasterTicks, ServerCommand


class ContextStepWords(TypedDict):
    step: int
    n_past_after: int
    n_discarded: int
    visible: str  # the text tokens the model sees, as spans: "0–3, 30–47"


class ContextShiftDisplay(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    last_step: int
    last_token: int
    raster: RasterRuns  # the raster's runs, each with its tooltip ("step 3, positions 4–9: evicted")
    ticks: RasterTicks
    outcome: str  # how the run ended, in a sentence
    final_visible: str
    final_n_past: str
    n_text: str
    n_keep: str
    shifts: list[str]  # each context shift in a sentence
    steps: list[ContextStepWords]  # the step table's rows


class EvictionStepWords(TypedDict):
    step: int
    position: int
    cache_len_after: int
    cache_len_text: str  # "1 position", "12 positions"
    n_evicted_total: int
    cached: str  # positions as spans: "0–3, 24–31"
    evicted: str  # "none" when nothing was
    attention_kept: str  # "82.2%"


class EvictionDisplay(TypedDict):
    hover: dict[str, list[str]]  # per policy: a hover line per step
    status: str  # the status line after a result (context.js ctx.live says it)
    last_step: int
    last_token: int
    raster: RasterRuns  # the raster's runs, each with its tooltip ("step 3, positions 4–9: evicted")
    steps: list[EvictionStepWords]  # the step table's rows and the step readout
    step: EvictionStepWords  # the step read out at first (the last)
    means: dict[str, str]  # per policy: its mean attention kept, "82.2%"
    mean_attention_kept: str
    final_cache_len: str
    n_evicted_total: str


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
    lines: list[str]  # each evicting cache against the full cache, in a sentence
    hover: dict[str, list[str]]  # per evicting cache in `chart`: a hover line per chat token


class ModelEvictionView(TypedDict):
    """Where the chat states its door code (kvlab.widgets.eviction._chat_words)."""

    code: str  # "" when the chat states none
    n_tokens: str
    code_at: str  # "tokens 13–16 of 120"; "" when there is no code
    code_span: str  # "13–16"; "–" when there is no code


class DoorCodeChatView(ModelEvictionView):
    note: str  # what the reader should know before a run (no code, too long); "" when nothing


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
    n_evicted_total: int


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


class PolicyComparison(TypedDict):
    full: PolicyRun
    window: PolicyRun
    sinks: PolicyRun
    h2o: PolicyRun


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


class ContextShift(TypedDict):
    step: int
    n_past_before: int
    n_left: int
    n_discard: int
    discarded: list[list[int]]


class ContextShiftLimits(TypedDict):
    n_ctx: list[int]
    prompt_len: list[int]
    n_generate: list[int]
    n_keep: list[int]


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
    view: ContextShiftDisplay  # display strings for the template (the module's *_view, beside the function)


class DoorCodeChatResult(TypedDict):
    chat: str
    question: str
    prompt: str
    code: str | None  # None when the chat states no door code
    code_positions: list[int]
    n_tokens: int
    block_size: int
    fits: bool
    view: DoorCodeChatView  # display strings (the module's door_code_chat_view)


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
    view: ModelEvictionView  # display strings (the module's model_eviction_view)
