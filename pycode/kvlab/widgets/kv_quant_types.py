"""What the quantized-cache widgets return (kvlab.widgets.kv_quant).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict


class KvQuantAnswer(TypedDict):
    said: str
    correct: bool


class KvQuantRowView(TypedDict):
    format: str
    bytes: str
    share: str
    dlogit: str
    top1: str
    diverge: str
    recall: list[KvQuantAnswer]


class KvQuantView(TypedDict):
    caption: str
    rows: list[KvQuantRowView]


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
    view: KvQuantView  # display strings for the template (the module's *_view, beside the function)


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
    n_new: list[int]


class KvQuantDemoResult(TypedDict):
    prompt: str
    n_new: int
    answer_tokens: int
    formats: list[str]
    episodes: list[KvQuantEpisode]
    table: KvQuantTableResult
    card_recall: CardRecall | None  # None for a card without the measurement
    limits: KvQuantLimits
