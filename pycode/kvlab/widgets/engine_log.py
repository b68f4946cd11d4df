"""The engine-log widget (memory.md): a pasted llama.cpp, vLLM, SGLang or TensorRT-LLM start-up log, rebuilt
from the config.

Its own module so that the memory page's other widgets do not load the log reader
(kvlab.memory.engine_logs) before a reader opens this one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kvlab.inputs import short_repr, text
from kvlab.memory.catalogue import engine_log_examples
from kvlab.memory.engine_logs import MAX_LOG_CHARS, STATED_LLAMACPP, STATED_VLLM, explain_engine_log
from kvlab.memory.verdict import ENGINE_NAMES
from kvlab.widgets.pickers import model_groups, model_info
from kvlab.widgets.views import with_view

if TYPE_CHECKING:
    from kvlab.widgets.engine_log_types import EngineLogFigureResult, EngineLogView


# the engines explain-log reads, as the page names them
DISPLAY_NAMES = {**ENGINE_NAMES, "sglang": "SGLang", "tensorrt-llm": "TensorRT-LLM"}

STATUS_LABELS = {
    "exact": "rebuilt exactly",
    "consistent": "consistent (within the log's rounding)",
    "differs": "differs",
    "not in the log": "not in the pasted log",
    "not rebuilt": "not rebuilt",
    "predicted": "predicted",
}


def parse_stated_settings(text: str) -> dict:
    """'n_ctx=8192, max_num_batched_tokens=1024 swa_full=true' -> a dict of settings (numbers and booleans read)."""
    out: dict = {}
    for item in str(text or "").replace(",", " ").split():
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ValueError(f"settings: {short_repr(item)} is not name=value (e.g. n_ctx=8192)")
        low = value.lower()
        if low in ("true", "false", "on", "off", "yes", "no"):
            out[name] = low in ("true", "on", "yes")
            continue
        try:
            number = float(value)
        except ValueError:
            out[name] = value
            continue
        if number != number or number in (float("inf"), float("-inf")) or abs(number) > 2**40:
            raise ValueError(f"settings: {name}={value} is not a number a log can have")
        out[name] = int(number) if number.is_integer() else number
    return out


# ---------------------------------------------------------------------------- the view: the words the widget shows


def engine_log_view(data: dict) -> EngineLogView:
    """The engine-log widget's words: the model's name, why a paste could not be read, the example's
    note, each check with its verdict in words, and the status line."""
    name = data["model_name"]
    return {
        "status": f"Computed in your browser by kvlab.engine_log_figure ({data['summary']}).",
        "model_name": f"your config.json ({name})" if data["params"]["source"] == "config" else name,
        "error": f"Could not explain this log: {data['error']}" if data["error"] is not None else None,
        "example_note": data["example"]["note"][:1].upper() + data["example"]["note"][1:],
        "checks": [dict(c, status_label=STATUS_LABELS[c["status"]]) for c in data["checks"]],
    }


@with_view(engine_log_view)
def engine_log_figure(
    example: str = "vllm-llama-3.1-8b-20k",
    log: str = "",
    model: str = "llama-3.1-8b",
    config: str = "",
    settings: str = "",
) -> EngineLogFigureResult:
    """The engine-log widget: a llama.cpp, vLLM, SGLang or TensorRT-LLM start-up log explained figure by figure.

    With no `log`, the bundled `example` (a real log with its URL) is explained with its own model.
    With a `log`, it is explained for `model` (catalogue id) or, when given, the pasted `config`
    (config.json text), with `settings` the log does not show ("n_ctx=8192 max_num_batched_tokens=1024").
    A config, log or setting that cannot be read is not an exception: the example is shown and `error`
    says what is wrong (view.error in a sentence).
    """
    example, log, model, config, settings = (
        text(name, value or "")
        for name, value in (
            ("example", example),
            ("log", log),
            ("model", model),
            ("config", config),
            ("settings", settings),
        )
    )
    examples = engine_log_examples()
    chosen = next((e for e in examples if e["id"] == example), None)
    if chosen is None:
        raise ValueError(f"example must be one of {', '.join(e['id'] for e in examples)}, got {short_repr(example)}")
    log = log.strip("\n")
    config = config.strip()
    error = None
    result = None
    source = "example"
    if log:
        try:
            if config and not config.startswith("{"):
                raise ValueError("config.json: paste the text of a config.json (a JSON object, starting with '{')")
            subject = config if config else model_info(model)["id"]
            result = explain_engine_log(log, subject, **parse_stated_settings(settings))
            source = "config" if config else "catalogue"
        except ValueError as exc:
            error = str(exc)
            result = None
    if result is None:
        subject = chosen.get("config") or chosen["model"]
        result = explain_engine_log(chosen["log"], subject, **chosen.get("stated", {}))
        log_shown = chosen["log"]
    else:
        log_shown = log
    info = (
        model_info(model)
        if source == "catalogue"
        else (model_info(chosen["model"]) if source == "example" and chosen["model"] else None)
    )
    return {
        "params": {"example": chosen["id"], "model": model, "source": source, "settings": settings},
        "error": error,
        "example": {k: chosen.get(k) for k in ("id", "label", "source", "engine", "model", "config", "note")},
        "examples": [
            {
                "id": e["id"],
                "label": e["label"],
                "model": e["model"],
                "config": e.get("config", ""),
                "log": e["log"],
                "source": e["source"],
            }
            for e in examples
        ],
        "log": log_shown,
        "model_name": result["model"],
        "model_info": info,
        "engine": DISPLAY_NAMES.get(result["engine"], result["engine"]),  # the display name: vLLM, SGLang, ...
        "summary": result["summary"],
        "settings": result["settings"],
        "checks": result["checks"],
        "notes": result["notes"],
        "options": {
            "models": model_groups(),
            "max_log_chars": MAX_LOG_CHARS,
            "settings": {"llama.cpp": list(STATED_LLAMACPP), "vllm": list(STATED_VLLM)},
        },
    }
