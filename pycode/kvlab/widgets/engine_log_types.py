"""What the engine-log widget returns (kvlab.widgets.engine_log).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.memory_types import ModelGroup, ModelInfo


class EngineLogParams(TypedDict):
    example: str
    model: str
    source: str  # "example", "catalogue" or "config"
    settings: str


class EngineLogExample(TypedDict):
    id: str
    label: str
    source: str
    engine: str
    model: str | None  # None for an example explained from its own config.json
    config: str | None
    note: str


class EngineLogExampleOption(TypedDict):
    id: str
    label: str
    model: str | None
    config: str
    log: str
    source: str


EngineSetting = TypedDict(
    "EngineSetting",
    {"name": str, "value": bool | int | float | str | None, "from": str},
)


class CheckTerm(TypedDict):
    term: str
    logged: str
    rebuilt: str
    how: str
    ok: bool


class EngineCheck(TypedDict):
    figure: str
    line: int | None  # None for a figure the pasted log does not have
    logged: str
    rebuilt: str
    status: str
    terms: list[CheckTerm]
    why: str | None
    status_label: str


EngineSettingNames = TypedDict("EngineSettingNames", {"llama.cpp": list[str], "vllm": list[str]})


class EngineLogOptions(TypedDict):
    models: list[ModelGroup]
    max_log_chars: int
    settings: EngineSettingNames


class EngineLogFigureResult(TypedDict):
    params: EngineLogParams
    error: str | None  # why a pasted log, config or setting could not be read (the example is shown)
    example: EngineLogExample
    examples: list[EngineLogExampleOption]
    log: str
    model_name: str
    model_info: ModelInfo | None
    engine: str | None  # None when the log has no llama.cpp, vLLM, SGLang or TensorRT-LLM memory line
    summary: str
    settings: list[EngineSetting]
    checks: list[EngineCheck]
    notes: list[str]
    status: str
    options: EngineLogOptions
