"""What the generate page's functions return (kvlab.widgets.generate).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import NotRequired, TypedDict

from kvlab.widgets.shared_types import FloatListPerSide, FloatPerSide, TokenProbability


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
    status: NotRequired[str]  # race_measured_view only: the status line after a race
    hover: NotRequired[dict[str, list[str]]]  # race_measured_view only: per run, a line per decode step


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
    max_new_tokens: list[int]
    top_k: list[int]


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


class RaceRunText(TypedDict):
    prompt_cut: int
    text: str


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
    prompt_len: int
    step_ms: dict[str, list[float]]  # per run that started (cache, no_cache): ms per step, step 0 the prefill
    run: RaceRunText
    view: ModelRaceView  # every line the widget shows (kvlab.widgets.generate.race_measured_view)
