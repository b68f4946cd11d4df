"""What the prefix-cache page's functions return (kvlab.widgets.prefix).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import Clamped, KeyLabel


# The readouts each view writes (its template binds view.<name>)


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


class PrefixBlocksText(TypedDict):
    n_tokens: str
    blocks_hit: str
    tokens_reused: str
    tokens_computed: str
    shared_not_reused: str
    radix_reused: str
    radix_computed: str


class PrefixCasesText(TypedDict):
    summary: str


class BlockView(TypedDict):
    status: str
    grow: int
    what: str


class BlocksRequestView(TypedDict):
    label: str
    aria: str
    prefix: str  # the shared prefix's share of the request's width, in percent
    blocks: list[BlockView]


class PrefixBlocksView(PrefixBlocksText):
    status: str  # the status line after a result (context.js ctx.live says it)
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


class PrefixCasesView(PrefixCasesText):
    status: str  # the status line after a result (context.js ctx.live says it)
    case: str  # the case's label, for the status line
    requests: list[CaseRequestView]


class GranularityRowView(TypedDict):
    block_size: int
    row: str | None  # "current": the block size chosen
    reused_per_request: str
    recomputed_of_prefix: str
    reused: str


class PrefixCacheView(PrefixCacheText):
    hover: dict[str, list[str]]  # per line (no_cache, token_granular, blocks): a hover line per request
    status: str  # the status line after a result (context.js ctx.live says it)
    blocks_name: str
    granularity: list[GranularityRowView]


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
    view: PrefixCacheView  # display strings for the template (the module's *_view, beside the function)


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


class PrefixBlocksResult(TypedDict):
    params: PrefixBlocksParams
    clamped: Clamped
    limits: PrefixBlocksLimits
    block_sizes: list[int]
    requests: list[PrefixBlocksRequest]
    token_granular_reused: int
    view: PrefixBlocksView  # display strings for the template (the module's *_view, beside the function)


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


class PrefixCasesResult(TypedDict):
    params: PrefixCasesParams
    clamped: Clamped
    limits: PrefixCasesLimits
    cases: list[KeyLabel]
    block_sizes: list[int]
    what: str
    requests: list[CaseRequest]
    totals: CaseTotals
    view: PrefixCasesView  # display strings for the template (the module's *_view, beside the function)
