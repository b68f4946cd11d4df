"""What the engines widget returns (kvlab.widgets.engines). Conventions: kvlab.widgets.shared_types."""

from typing import TypedDict

from kvlab.widgets.memory_types import ChoiceRange, IntRange, ModelGroup
from kvlab.widgets.shared_types import Clamped, IdLabel


class EnginesParams(TypedDict):
    model: str
    gpu: str
    weights: str
    context: int
    n_gpus: int


class EnginesLimits(TypedDict):
    context: IntRange
    n_gpus: ChoiceRange


class EnginesOptions(TypedDict):
    models: list[ModelGroup]
    gpus: list[IdLabel]
    weights: list[IdLabel]
    limits: EnginesLimits


class EngineRow(TypedDict):
    engine: str
    name: str
    version: str  # the engine version whose rule is modelled
    fits: bool
    budget_text: str  # KV cache per GPU
    tokens_text: str  # tokens the cache holds
    sequences_text: str  # chats of the context at once
    longest_text: str  # the longest single context
    percent: float  # the budget as a share of the largest (the bars)
    rule: str
    refusal: str
    unsure: list[str]


class EnginesFigureResult(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    params: EnginesParams
    clamped: Clamped
    options: EnginesOptions
    headline: str
    rows: list[EngineRow]
    why: str
    engines: list[str]
