"""What the tokens page's functions return (kvlab.widgets.tokens).

Imported by the widget module only under `if TYPE_CHECKING:` (the browser's first widget does
not pay for class creation it never uses); tests/python/test_results_typed.py checks real results
against them with typeguard. Conventions (all *_types modules): see kvlab.widgets.shared_types.
"""

from typing import TypedDict

from kvlab.widgets.shared_types import TokenProbability
from kvlab.widgets.views_types import TokensView


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
    view: TokensView  # display strings for the template (kvlab.widgets.views)


class NextTokenDemoResult(TypedDict):
    prompt: str
    n_tokens: int
    vocab_size: int
    top: list[TokenProbability]
