"""What the memory page's RAM calculator returns (kvlab.widgets.ram).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.memory_types import ModelGroup, ModelInfo
from kvlab.widgets.shared_types import Clamped


class RamParams(TypedDict):
    model: str
    ctx_size: int
    weights: str
    kv: str


class RamPart(TypedDict):
    label: str
    human: str
    how: str


class RamMachine(TypedDict):
    where: str
    kind: str  # "cpu" (RAM) or "gpu"
    memory: str
    fits: bool
    verdict: str
    margin: str
    max_context: str  # "" for RAM


class RamLimit(TypedDict):
    min: int
    max: int
    step: int


class RamLimits(TypedDict):
    ctx_size: RamLimit


class RamOptions(TypedDict):
    models: list[ModelGroup]
    weights: list[str]
    kv: list[str]
    ctx_steps: list[int]
    limits: RamLimits


class RamCalculatorResult(TypedDict):
    params: RamParams
    clamped: Clamped
    model_info: ModelInfo
    command: str
    ctx_text: str
    parts: list[RamPart]
    kv_human: str
    needed_cpu: str
    needed_gpu: str
    headline: str
    smallest: str
    ram: list[RamMachine]
    gpus: list[RamMachine]
    note: str
    status: str
    options: RamOptions
