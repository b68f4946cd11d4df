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
    confidence: str  # "low": a close call, within kvlab's error; "" or "high" otherwise
    kv_budget_bytes: int  # KV cache per GPU
    max_tokens: int  # tokens the cache holds
    max_sequences_at_context: int  # chats of the context at once
    longest_context: int  # the longest single context (0: none)
    percent: float  # the budget as a share of the largest (the bars)
    rule: str  # a phrase after the engine's name
    refusal: str
    unsure: list[str]


class EngineViewRow(TypedDict):
    name: str
    percent: float  # the bar's width
    budget_text: str  # KV cache per GPU
    tokens_text: str  # tokens the cache holds
    sequences_text: str  # chats of the context at once
    longest_text: str  # the longest single context


class EnginesView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    headline: str
    rows: list[EngineViewRow]
    why: str


class EnginesFigureResult(TypedDict):
    params: EnginesParams
    clamped: Clamped
    model_name: str  # the model's Hugging Face id
    gpu_name: str
    options: EnginesOptions
    rows: list[EngineRow]
    engines: list[str]
    view: EnginesView
