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
    name: str
    label: str
    bytes: int
    how: str


class RamMachine(TypedDict):
    where: str
    kind: str  # "cpu" (RAM) or "gpu"
    memory_bytes: int
    spare_bytes: int  # below 0: short by that much
    fits: bool
    max_context_text: str  # kvlab.memory.verdict's sentence; "" for RAM


class RamPartView(TypedDict):
    label: str
    human: str
    how: str


class RamMachineView(TypedDict):
    where: str
    memory: str
    fits: bool
    verdict: str
    margin: str
    max_context: str  # "" for RAM


class RamCalcView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    headline: str
    smallest: str
    ctx_text: str
    needed_cpu: str
    needed_gpu: str
    ram: list[RamMachineView]
    gpus: list[RamMachineView]
    parts: list[RamPartView]
    note: str


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
    parts: list[RamPart]
    kv_bytes: int
    needed_cpu_bytes: int
    needed_gpu_bytes: int
    embedding_in_ram_bytes: int  # token_embd, which llama.cpp keeps in RAM when the layers are on a GPU
    ram: list[RamMachine]
    gpus: list[RamMachine]
    options: RamOptions
    view: RamCalcView  # display strings for the template (the module's *_view, beside the function)
