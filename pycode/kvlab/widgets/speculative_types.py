"""What the speculative page's function returns (kvlab.widgets.speculative).

Imported by the widget module only under `if TYPE_CHECKING:`; tests/python/test_results_typed.py
checks real results against them with typeguard. Conventions (all *_types modules): see
kvlab.widgets.shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import Clamped


class SpecDecodeParams(TypedDict):
    prompt: str  # a key of kvlab.widgets.speculative.PROMPTS
    k: int
    draft_layers: int
    n_new: int


class Token(TypedDict):
    id: int
    text: str  # as the page shows it (a newline as ↵)


class TargetCache(TypedDict):
    before: int
    after_verify: int
    after_rollback: int


class DraftCache(TypedDict):
    before: int
    after_draft: int
    after_rollback: int


class SpecStep(TypedDict):
    step: int  # 1, 2, ... (the prefill is not a step)
    k: int  # proposals this step (fewer near the end)
    proposed: list[Token]
    target: list[Token]  # the target's greedy choice after each proposal prefix: k + 1
    accepted: int
    emitted: list[Token]  # accepted proposals + the target's own token
    bonus: bool  # every proposal accepted (k > 0): the target's token is a bonus
    target_cache: TargetCache
    draft_cache: DraftCache
    dropped: list[int]  # target cache positions the rollback removed
    state_restored: int  # a hybrid's recurrent state: the snapshot after the last token and this many proposals


class SpecTotals(TypedDict):
    new_tokens: int
    steps: int
    proposed: int
    accepted: int
    acceptance: float
    mean_accepted: float
    tokens_per_pass: float
    target_passes: int
    plain_passes: int
    draft_passes: int
    rolled_back: int


class SpecCheck(TypedDict):
    same_tokens: bool
    plain_text: str
    cache_entries: int
    plain_cache_entries: int
    cache_matches: bool
    tolerance: float


class SpecHybrid(TypedDict):
    model: str
    source: str
    state_layers: int
    state_bytes: int
    kv_bytes_per_token: int
    snapshots: int
    snapshot_bytes: int
    tokens_of_kv: int
    engine_sources: list[str]


class Chip(TypedDict):
    text: str
    state: str  # "accepted" | "rejected" | "target"
    sr: str  # the state in words, for screen readers


class PromptChoice(TypedDict):
    key: str
    label: str


class Cell(TypedDict):
    state: str  # "kept" | "new" | "dropped"


class SpecStepView(TypedDict):
    number: int
    counter: str
    headline: str
    chips: list[Chip]
    cells: list[Cell]
    cache: str
    dropped: str
    describe: str
    state: str


class SpecDecodeView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    steps: list[SpecStepView]
    summary: str
    check: str
    draft: str
    hybrid: str


class SpecDecodeResult(TypedDict):
    """kvlab.spec_decode_figure."""

    params: SpecDecodeParams
    clamped: Clamped
    prompts: list[PromptChoice]
    prompt_text: str
    prompt_tokens: int
    n_layer: int
    first: Token
    steps: list[SpecStep]
    text: str
    totals: SpecTotals
    check: SpecCheck
    hybrid: SpecHybrid
    view: SpecDecodeView
