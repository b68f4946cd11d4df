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
    curve_heads: list[str]
    curve_rows: list[ApiCacheCurveRow]
    compare: list[ApiCacheCompareView]


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
    status: str
    status_text: str
    source: str
    read: str
    rules_source: str
    prices: str


class ApiCacheNumbers(TypedDict):
    gap_minutes: float
    ttl_minutes: float | None
    requests_per_day: int
    writes_per_day: int
    reads_per_day: int
    hit_rate: float
    cacheable: bool
    cached_tokens: int
    uncached_per_request: float
    uncached_per_day: float
    uncached_per_month: float
    cached_per_request: float
    cached_per_day: float
    cached_per_month: float
    saving_per_day: float
    break_even_reuses: int
    min_requests_per_hour: float | None


class ApiCacheText(TypedDict):
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


class ApiCacheCompareRow(TypedDict):
    model: str
    name: str
    vendor_name: str
    status: str
    uncached_per_day: str
    cached_per_day: str
    saving: str
    hit_rate: str
    break_even: str
    chosen: bool


class ApiCacheSeries(TypedDict):
    vendor: str
    name: str
    cached: list[float]
    uncached: list[float]
    cached_text: list[str]
    uncached_text: list[str]


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
    numbers: ApiCacheNumbers
    text: ApiCacheText
    compare: list[ApiCacheCompareRow]
    curve: ApiCacheCurve
    status: str
    view: ApiCacheView  # display strings for the template (the module's *_view, beside the function)
