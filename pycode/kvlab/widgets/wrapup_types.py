"""What the wrap-up page's functions return (kvlab.widgets.wrapup).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import IntPerSide, KeyLabel, ServerCommand


class SequenceHead(TypedDict):
    key: str
    label: str
    col: int


class SequenceArrow(TypedDict):
    text: str
    from_col: int
    to_col: int
    reply: bool
    sr: str


class SequenceStepView(TypedDict):
    phase: str
    note: str
    messages: list[SequenceArrow]


class SequenceView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    participants: list[SequenceHead]
    steps: list[SequenceStepView]


class TradeoffCellView(TypedDict):
    main: str
    name: str
    length: str
    repetition: str
    current: bool
    label: str


class TradeoffRowView(TypedDict):
    label: str
    cells: list[TradeoffCellView]


class TradeoffWhy(TypedDict):
    helps: bool
    head: str
    text: str


class TradeoffView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    memory: str
    where: str  # the chosen setting in words, above its reasons
    rows: list[TradeoffRowView]
    why: list[TradeoffWhy]


class TradeoffParams(TypedDict):
    length: str
    repetition: str
    memory: str


class TradeoffOptions(TypedDict):
    length: list[KeyLabel]
    repetition: list[KeyLabel]
    memory: list[KeyLabel]


class PerTechnique(TypedDict):
    kv_cache: str
    prefix_cache: str
    kv_quant: str
    eviction: str


class KvBytesByFormat(TypedDict):
    f16: int
    q8_0: int
    q4_0: int


class TradeoffNumbers(TypedDict):
    token_computations: IntPerSide
    prefill_reused_share: float
    kv_bytes: KvBytesByFormat
    fits: list[str]
    window_tokens: int


class TradeoffCell(TypedDict):
    length: str
    repetition: str
    memory: str
    server: ServerCommand
    tokens: int
    repeated_share: float
    memory_bytes: int
    helps: list[str]
    main: str
    why: PerTechnique
    numbers: TradeoffNumbers


class TradeoffMapResult(TypedDict):
    params: TradeoffParams
    options: TradeoffOptions
    techniques: PerTechnique
    model: str
    cell: TradeoffCell
    grid: list[list[TradeoffCell]]  # [length][repetition]
    rows: list[str]
    cols: list[str]
    view: TradeoffView  # display strings for the template (the module's *_view, beside the function)


SequenceMessage = TypedDict("SequenceMessage", {"from": str, "to": str, "text": str, "reply": bool})


class SequenceStep(TypedDict):
    step: int
    phase: str
    note: str
    messages: list[SequenceMessage]


class PrefillDecodeSequenceResult(TypedDict):
    participants: list[KeyLabel]
    steps: list[SequenceStep]
    view: SequenceView  # display strings for the template (the module's *_view, beside the function)
