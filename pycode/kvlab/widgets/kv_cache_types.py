"""What the kv-cache page's functions return (kvlab.widgets.kv_cache).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import Clamped, IntPerSide


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
    status: str  # the status line after a result (context.js ctx.live says it)
    steps: list[StepView]
    equivalence: dict[str, str]


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
    view: StepThroughView  # display strings for the template (the module's *_view, beside the function)
