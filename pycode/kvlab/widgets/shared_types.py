"""Result shapes several pages share: a byte amount, a clamped input, the llama-server command, ...

The widget functions' results, one TypedDict per result and nested ones for nested objects,
live beside each page's module (kvlab/widgets/<page>_types.py); these are the shapes that
several pages share. The widget modules import them under `if TYPE_CHECKING:` only (the browser's
first widget does not pay for class creation it never uses); tests/python/test_results_typed.py checks
real results against them with typeguard. kvlab.bridge.call_json is the one place that turns a result into JSON.

- These modules must not use `from __future__ import annotations` (the widget modules do): on
  Python 3.11 to 3.13 (CPython and Pyodide alike) a TypedDict whose annotations are strings
  lists its NotRequired keys in __required_keys__ (python/cpython#97727). With the annotations
  evaluated, NotRequired keys are optional as declared. A consequence: a class must be defined
  before the classes that use it (parts first, results last).

Conventions: `float` means any number (an int is a float too, PEP 484), `int` a whole number,
`X | None` a key that is always there but may be null, `NotRequired[X]` a key that is only
there on some inputs. A tuple in a result is declared a tuple here; JSON makes it a list. Functional syntax only where a key is not an identifier ("from", "llama.cpp").
"""

from typing import TypedDict


class ClampedInput(TypedDict):
    """kvlab.inputs.note_clamped: what the reader asked for (as sent, maybe text) and what was used."""

    requested: float | str
    used: float


Clamped = dict[str, ClampedInput]  # by parameter name; empty when nothing was clamped


class Amount(TypedDict):
    """kvlab.wording.amount: a byte count in the forms a page shows."""

    bytes: int
    human: str
    exact: str
    gib: float


class KeyLabel(TypedDict):
    key: str
    label: str


class IdLabel(TypedDict):
    id: str
    label: str


class IntPerSide(TypedDict):
    no_cache: int
    cache: int


class FloatPerSide(TypedDict):
    no_cache: float
    cache: float


class FloatListPerSide(TypedDict):
    no_cache: list[float]
    cache: list[float]


class ServerFlag(TypedDict):
    flag: str
    means: str


class ServerCommand(TypedDict):
    """kvlab.llama_server_command's command and what each flag means."""

    command: str
    flags: list[ServerFlag]


class TokenProbability(TypedDict):
    token: int
    text: str
    p: float


# a step-by-position raster's axis ticks (kvlab.widgets.views.raster_ticks)
class RasterTick(TypedDict):
    label: str
    at: float  # the cell's middle, in percent of the drawing's width (x) or height (y)


class RasterTicks(TypedDict):
    x: list[RasterTick]  # tokens of the text
    y: list[RasterTick]  # steps


# a raster of small categories as drawn (kvlab.widgets.views.raster_runs; kvlab.kit.raster and the build's SVG)
class RasterRuns(TypedDict):
    width: int  # cells across
    height: int  # rows
    runs: list[list[int]]  # [x, y, length, value]: a stretch of one non-zero value in a row
    titles: list[str]  # each run's tooltip, in the order of runs; empty past views.RASTER_TITLES_MAX cells
