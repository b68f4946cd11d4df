"""Write models/tiny/episodes.json: held-out door-code chats for the eviction demo.

The site's eviction demo (kvlab.model_eviction_figure, pycode/kvlab/widgets/eviction.py, and the model-eviction
widget) reads these: a code stated early, small talk, then the question. Held-out
codes and a seed that training never uses (corpus.heldout_episodes).

    python models/demo_episodes.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "pycode"))

from corpus import heldout_episodes  # noqa: E402

from kvlab.core.tokenizer import load_tokenizer  # noqa: E402


# kvlab.widgets.eviction.DOOR_QUESTION: the widget replaces the chat's last question by this one
ASKED = "user: i forgot how to open the door. can you help?\nbot:"


def main() -> None:
    tok = load_tokenizer(str(HERE / "tiny" / "tokenizer.json"))
    chosen = []
    for filler in (10, 12, 14, 16, 18, 20):
        for ep in heldout_episodes(seed=filler, n=16, filler_turns=filler):
            n = len(tok.encode(ep["prompt"]))
            asks = ep["prompt"].endswith("\n" + ASKED)  # the question the eviction widget asks
            if asks and 260 <= n <= 440 and len(chosen) < 4 and all(c["code"] != ep["code"] for c in chosen):
                chosen.append({"prompt": ep["prompt"], "code": ep["code"], "n_tokens": n})
    chosen.sort(key=lambda e: e["n_tokens"])
    out = HERE / "tiny" / "episodes.json"
    out.write_text(json.dumps({"source": "models/corpus.py heldout_episodes", "episodes": chosen}, indent=1) + "\n")
    print(f"wrote {len(chosen)} episodes to {out}: {[e['n_tokens'] for e in chosen]} tokens")


if __name__ == "__main__":
    main()
