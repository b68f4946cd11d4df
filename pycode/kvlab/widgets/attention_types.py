"""What the attention page's functions return (kvlab.widgets.attention).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict


class AttentionReadout(TypedDict):
    token: str
    d: int
    top: str
    outputs: list[str]


class AttentionRow(TypedDict):
    token: str
    cells: list[str]


class AttentionDemoView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    temperature: str
    mask: str
    rows: list[AttentionRow]
    hover: list[list[str]]  # [query][key]: the heatmap cell's title
    readouts: list[AttentionReadout]  # per query token
    readout: AttentionReadout  # the last token's, shown first


class ModelAttentionToken(TypedDict):
    text: str
    weight: float | None
    w: str | None
    small: str
    state: str | None  # "query" or "future"
    ink: str | None  # "strong": light text on a dark cell
    pressed: bool


class ModelAttentionCell(TypedDict):
    w: str | None


class ModelAttentionRow(TypedDict):
    token: str
    cells: list[ModelAttentionCell]


class ModelAttentionDisplay(TypedDict):
    readout: str
    where: str
    table_where: str
    tokens: list[ModelAttentionToken]
    rows: list[ModelAttentionRow]


class AttentionDemoResult(TypedDict):
    tokens: list[str]
    d: int
    temperature: float
    seed: int
    causal: bool
    scale: float
    weights: list[list[float]]  # [query][key]
    outputs: list[list[float]]  # [token][d]
    view: AttentionDemoView  # display strings for the template (the module's *_view, beside the function)


class HeadScore(TypedDict):
    layer: int
    head: int
    attention: float


class PronounHead(TypedDict):
    """kvlab.widgets.attention.pronoun_head: the model card's pronoun head and its figures."""

    layer: int
    head: int
    it: float
    he_she: float
    best_he_she: HeadScore
    best_he_she_other: float
    best_it: HeadScore
    sentences_it: int
    sentences_he_she: int
    bar: float
    bar_reached: bool


class AttentionView(TypedDict):
    layer: int
    head: int | str  # a head index, or "mean"
    query: int


class ModelAttentionResult(TypedDict):
    prompt: str
    ids: list[int]
    tokens: list[str]
    weights: list[list[list[list[float]]]]  # [layer][head][query][key]
    mean_over_heads: list[list[list[float]]]  # [layer][query][key]
    n_layer: int
    n_head: int
    view: AttentionView
    pronoun_head: PronounHead | None  # None for a model card without that measurement
    pronouns: list[str]


class QkvCell(TypedDict):
    m: float  # |x| / the largest |x| of its kind, 0..1
    s: str  # "pos" or "neg"


class QkvRow(TypedDict):
    index: int
    token: str
    q: list[QkvCell]
    k: list[QkvCell]
    v: list[QkvCell]


class QkvRead(TypedDict):
    token: str
    weight: float
    pct: float
    weight_text: str


class QkvQuery(TypedDict):
    index: int
    token: str
    reads: list[QkvRead]
    out: list[QkvCell]
    text: str


class QkvView(TypedDict):
    caption: str
    cut: str
    kept: str
    smear: str
    status: str  # the status line after a result (context.js ctx.live says it)


class QkvPictureResult(TypedDict):
    sentence: str
    tokens: list[str]
    layer: int
    head: int
    head_dim: int
    cut: int
    rows: list[QkvRow]
    queries: list[QkvQuery]
    query: int
    view: QkvView
