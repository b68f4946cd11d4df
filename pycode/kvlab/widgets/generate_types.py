"""What the generate page's functions return (kvlab.widgets.generate).

Imported by the widget module only under `if TYPE_CHECKING:` (the browser's first widget does
not pay for class creation it never uses); tests/python/test_results_typed.py checks real results
against them with typeguard. Conventions (all *_types modules): see kvlab.widgets.shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import FloatListPerSide, FloatPerSide, TokenProbability
from kvlab.widgets.views_types import ModelRaceView


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
    run: RaceRunText
    status: str
    view: ModelRaceView  # every line the widget shows (kvlab.widgets.views.race_measured_view)
