"""What the quadratic-wall page's functions return (kvlab.widgets.wall).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import Clamped, FloatListPerSide, FloatPerSide, IntPerSide


class WallView(TypedDict):
    hover: dict[str, list[str]]  # per line (no_cache_weight, ...): a hover line per step
    status: str  # the status line after a result (context.js ctx.live says it)
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
    hover: dict[str, list[str]]  # per line (no_cache, cache, ratio): a hover line per point
    status: str  # the status line after a result (context.js ctx.live says it)
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
    hover: dict[str, list[str]]  # per bar series (no_cache, cache): a hover line per token
    status: str  # the status line after a result (context.js ctx.live says it)
    k: int
    kth: int
    first_unit: str  # "time" or "times", after no_cache[0]
    kth_unit: str  # after kth
    other: bool  # k is another token than token 1 (n > 1)
    counters: dict[str, str]
    rows: list[ReprocessingRow]


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
    view: RaceView  # display strings for the template (the module's *_view, beside the function)


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
    view: ReprocessingView  # display strings for the template (the module's *_view, beside the function)


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
    view: WallView  # display strings for the template (the module's *_view, beside the function)
