"""Train the byte-level BPE tokenizer on the generated corpus.

python models/train_tokenizer.py            # -> models/tiny/tokenizer.json
"""

import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pycode"))
sys.path.insert(0, HERE)

from corpus import documents  # noqa: E402
from kvlab.core.tokenizer import BPETokenizer, word_coverage  # noqa: E402

# ----------------------------------------------------------------------------
vocab_size = 4096  # 256 bytes + 3840 merges: everyday English words are one token each
corpus_seed = 0  # same seed as the first training documents
corpus_docs = 8000  # documents to learn merges from
out = os.path.join(HERE, "tiny", "tokenizer.json")
# ----------------------------------------------------------------------------

if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab_size", type=int, default=vocab_size)
    ap.add_argument("--out", default=out)
    args = ap.parse_args()
    t0 = time.time()
    text = "\n\n".join(d["text"] for d in documents(corpus_seed, corpus_docs))
    tok = BPETokenizer()
    tok.train(text, args.vocab_size)
    tok.save(args.out)
    ids = tok.encode(text)
    print(
        f"{len(text):,} chars -> {len(ids):,} tokens ({len(text) / len(ids):.2f} chars/token), "
        f"vocab {tok.vocab_size}, {time.time() - t0:.1f}s -> {args.out}"
    )
    everyday = os.path.join(HERE, "..", "tests", "python", "data", "everyday", "sentences.txt")
    with open(everyday, encoding="utf-8") as f:
        lines = " ".join(s.strip() for s in f if s.strip() and not s.startswith("#"))
    single, total, split = word_coverage(tok, lines)
    print(f"everyday sentences: {single}/{total} = {single / total:.3f} words are one token; split: {split}")
