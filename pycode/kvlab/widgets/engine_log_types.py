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
    note: str  # as the catalogue writes it (view.example_note: capitalised)


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


class EngineCheckView(EngineCheck):
    status_label: str  # the verdict in words


EngineSettingNames = TypedDict("EngineSettingNames", {"llama.cpp": list[str], "vllm": list[str]})


class EngineLogOptions(TypedDict):
    models: list[ModelGroup]
    max_log_chars: int
    settings: EngineSettingNames


class EngineLogView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    model_name: str
    error: str | None
    example_note: str
    checks: list[EngineCheckView]


class EngineLogFigureResult(TypedDict):
    params: EngineLogParams
    error: str | None  # why a pasted log, config or setting could not be read (the example is shown)
    example: EngineLogExample
    examples: list[EngineLogExampleOption]
    log: str
    model_name: str  # the model as the log's explanation names it
    model_info: ModelInfo | None
    engine: str | None  # None when the log has no llama.cpp, vLLM, SGLang or TensorRT-LLM memory line
    summary: str
    settings: list[EngineSetting]
    checks: list[EngineCheck]
    notes: list[str]
    options: EngineLogOptions
    view: EngineLogView  # display strings for the template (the module's *_view, beside the function)
