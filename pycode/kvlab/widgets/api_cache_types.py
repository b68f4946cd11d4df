"""What the api-prompt-caching page's function returns (kvlab.widgets.api_cache).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import Clamped, IdLabel, KeyLabel


class ApiCacheCurveRow(TypedDict):
    rate: str
    cells: list[str]  # per series: cached, not cached


class ApiCacheCompareView(TypedDict):
    name: str
    row: str | None  # "chosen": the model picked
    cells: list[str]


class ApiCacheView(TypedDict):
    model: str
    verdict: str
    break_even: str
    working: str
    gap: str
    lifetime: str
    requests_per_day: str
    hit_rate: str
    uncached_per_request: str
    cached_per_request: str
    uncached_per_day: str
    cached_per_day: str
    uncached_per_month: str
    cached_per_month: str
    saving_per_day: str
    saving_per_month: str
    month: str
    prices: str  # the chosen model's prices in a line
    price_status: str  # where its prices come from, in words
    curve_heads: list[str]
    curve_rows: list[ApiCacheCurveRow]
    compare: list[ApiCacheCompareView]
    hover: list[list[str]]  # per vendor, cached then not cached: a line per request rate
    status: str  # the status line after a result (context.js ctx.live says it)


class ApiCacheParams(TypedDict):
    prefix_tokens: int
    unique_tokens: int
    output_tokens: int
    requests_per_hour: float
    hours: int
    model: str
    ttl: str


class ApiCacheLimits(TypedDict):
    prefix_tokens: list[float]
    unique_tokens: list[float]
    output_tokens: list[float]
    requests_per_hour: list[float]
    hours: list[float]


class ApiCacheModelInfo(TypedDict):
    name: str
    vendor_name: str
    status: str  # "vendor", "quoted" or "unconfirmed"
    source: str
    read: str
    rules_source: str
    mode: str  # "explicit_ttl", "automatic" or "explicit_storage"
    min_cacheable_tokens: int | None
    input_per_mtok: float  # USD per million tokens
    output_per_mtok: float
    cache_read_per_mtok: float
    cache_write_5m_per_mtok: float | None  # None where writes are not billed apart
    cache_write_1h_per_mtok: float | None
    storage_per_mtok_hour: float | None  # None where storage is not billed


class ApiCachePrices(TypedDict):
    uncached: float
    write: float
    read: float
    storage_per_hour: float


class ApiCacheMoney(TypedDict):
    per_request: float
    per_day: float
    per_month: float


class ApiCacheBreakEven(TypedDict):
    write: float
    read: float
    storage: float
    threshold: float
    reuses: int
    max_gap_minutes: float | None


class ApiCacheCost(TypedDict):
    """kvlab.reuse.api_cache_cost: the workload priced on the chosen model."""

    model: str
    vendor: str
    mode: str
    gap_minutes: float
    ttl_minutes: float | None
    requests_per_day: int
    writes_per_day: int
    reads_per_day: int
    hit_rate: float
    cacheable: bool
    cached_tokens: int
    prices: ApiCachePrices
    storage_per_day: float
    uncached: ApiCacheMoney
    cached: ApiCacheMoney
    saving_per_day: float
    break_even: ApiCacheBreakEven
    min_requests_per_hour: float | None


class ApiCacheCompareRow(TypedDict):
    model: str
    name: str
    vendor_name: str
    status: str
    mode: str
    cacheable: bool
    uncached_per_day: float
    cached_per_day: float
    saving_per_day: float
    hit_rate: float
    break_even_reuses: int
    chosen: bool


class ApiCacheSeries(TypedDict):
    vendor: str
    name: str
    cached: list[float]
    uncached: list[float]


class ApiCacheTicks(TypedDict):
    values: list[float]
    labels: list[str]


class ApiCacheCurve(TypedDict):
    rates: list[float]
    rate_labels: list[str]
    ticks: ApiCacheTicks
    series: list[ApiCacheSeries]


class ApiCacheFigureResult(TypedDict):
    params: ApiCacheParams
    clamped: Clamped
    limits: ApiCacheLimits
    models: list[IdLabel]
    ttls: list[KeyLabel]
    ttl_applies: bool
    model_info: ApiCacheModelInfo
    cost: ApiCacheCost
    days_per_month: int
    compare: list[ApiCacheCompareRow]
    curve: ApiCacheCurve
    view: ApiCacheView  # display strings for the template (the module's *_view, beside the function)
