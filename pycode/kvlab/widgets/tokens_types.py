"""What the tokens page's functions return (kvlab.widgets.tokens).

Imported under `if TYPE_CHECKING:` only; checked on real results by test_results_typed; conventions in shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import TokenProbability


class TitledToken(TypedDict):
    id: int
    text: str
    bytes: int
    title: str


class TokensView(TypedDict):
    status: str  # the status line after a result (context.js ctx.live says it)
    tokens: list[TitledToken]
    bytes_per_token: str


class NextTokenRow(TypedDict):
    text: str
    p: str


class NextTokenView(TypedDict):
    n_tokens: int
    top: list[NextTokenRow]


class TokenPiece(TypedDict):
    id: int
    text: str
    bytes: int


class TokenizeDemoResult(TypedDict):
    text: str
    truncated: bool
    tokens: list[TokenPiece]
    n_tokens: int
    n_chars: int
    n_bytes: int
    bytes_per_token: float
    vocab_size: int
    view: TokensView  # display strings for the template (the module's *_view, beside the function)


class NextTokenDemoResult(TypedDict):
    prompt: str
    n_tokens: int
    vocab_size: int
    top: list[TokenProbability]
