"""Measure the exported model (onnxruntime, KV cache, greedy) and write models/tiny/card.json.

    python models/evaluate.py            # ~1-2 min on one core

Door-code recall on held-out episodes (codes never seen in training, seeds never
used in training or early stopping), bucketed by distance in tokens between the
code's last digit and the answer:

- full cache: prefill the prompt, greedy-decode the answer with the cache.
- fact evicted: prefill the prompt, then drop the cache entries from slot 4 up to the
  code's last digit (the 4 first "sink" slots stay), decode with the true position ids.
- sliding window: keep 4 sink slots + the last `window` slots (StreamingLLM style).

An answer is correct iff the generated text contains "code NNNN" with the right code.
Chance for a 4-distinct-digit code is 1/5040; chance per digit about 1/10.
Also times a cached decode step vs an uncached step (onnxruntime CPU, 1 thread), and
writes the quantized-cache table (models/kv_quant_eval.py: card "kv_quant", README table).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pycode"))
sys.path.insert(0, HERE)

from corpus import heldout_episodes  # noqa: E402
from kvlab.core.tokenizer import load_tokenizer  # noqa: E402
from kvlab.core.tiny import FAR_BUCKET, FAR_TOKENS  # noqa: E402

TINY = os.path.join(HERE, "tiny")
BUCKETS = [(0, 100), (100, 200), (200, 300), (300, 400), (400, 512)]
N_SINK = 4


class OnnxLM:
    """Thin wrapper over the exported graph: prefill / decode with an explicit cache."""

    def __init__(self, path: str, threads: int = 1):
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
        self.cfg = json.loads(self.sess.get_modelmeta().custom_metadata_map["config"])
        self.L = self.cfg["n_layer"]
        self.H = self.cfg["n_head"]
        self.D = self.cfg["n_embd"] // self.cfg["n_head"]
        self.fetch = ["logits"] + [f"present.{i}.{kv}" for i in range(self.L) for kv in ("key", "value")]

    def empty_cache(self):
        z = np.zeros((1, self.H, 0, self.D), np.float32)
        return [(z, z) for _ in range(self.L)]

    def feeds(self, ids, cache=None, positions=None) -> dict:
        """The graph's inputs for new tokens `ids` after `cache` (list of (k, v); None = empty),
        at `positions` (default: right after the cache)."""
        cache = self.empty_cache() if cache is None else cache
        P = cache[0][0].shape[2]
        T = len(ids)
        positions = list(range(P, P + T)) if positions is None else positions
        feeds = {
            "input_ids": np.array([ids], np.int64),
            "attention_mask": np.ones((1, P + T), np.int64),
            "position_ids": np.array([positions], np.int64),
        }
        for i, (k, v) in enumerate(cache):
            feeds[f"past_key_values.{i}.key"] = k
            feeds[f"past_key_values.{i}.value"] = v
        return feeds

    def step(self, ids, cache, positions):
        """ids: new tokens; cache: list of (k, v); positions: their position ids."""
        out = self.sess.run(self.fetch, self.feeds(ids, cache, positions))
        return out[0][0], [(out[1 + 2 * i], out[2 + 2 * i]) for i in range(self.L)]


def greedy_answer(lm: OnnxLM, prompt_ids: list[int], evict=None, n_new: int = 10) -> list[int]:
    """Prefill, optionally evict (a function (cache, positions) -> (cache, positions)), decode."""
    positions = list(range(len(prompt_ids)))
    logits, cache = lm.step(prompt_ids, lm.empty_cache(), positions)
    if evict is not None:
        cache, positions = evict(cache, positions)
    out = []
    nxt_pos = len(prompt_ids)
    for _ in range(n_new):
        t = int(np.argmax(logits[-1]))
        out.append(t)
        logits, cache = lm.step([t], cache, [nxt_pos])
        nxt_pos += 1
    return out


def keep_slots(cache, positions, keep):
    keep = np.asarray(keep)
    return [(k[:, :, keep], v[:, :, keep]) for k, v in cache], [positions[i] for i in keep]


def score(text: str, code: str) -> tuple[bool, float]:
    m = re.search(r"code (\d{4})", text)
    got = m.group(1) if m else ""
    return got == code, sum(a == b for a, b in zip(got, code)) / 4


def evaluate(lm: OnnxLM, tok, episodes, window: int = 128):
    cue = tok.encode(" code")[0]
    recs = []
    for ep in episodes:
        p = tok.encode(ep["prompt"])
        if len(p) + 10 > lm.cfg["block_size"]:
            continue
        i_cue = p.index(cue)
        last_digit = i_cue + 4
        distance = len(p) - last_digit
        r = {"distance": distance}
        full = tok.decode(greedy_answer(lm, p))
        r["full"], r["full_digits"] = score(full, ep["code"])

        def drop_fact(c, pos, last_digit=last_digit):
            return keep_slots(c, pos, list(range(N_SINK)) + list(range(last_digit + 1, len(pos))))

        ev = tok.decode(greedy_answer(lm, p, drop_fact))
        r["evicted"], r["evicted_digits"] = score(ev, ep["code"])

        def win(c, pos):
            return keep_slots(c, pos, list(range(N_SINK)) + list(range(max(N_SINK, len(pos) - window), len(pos))))

        wt = tok.decode(greedy_answer(lm, p, win))
        r["window"], r["window_digits"] = score(wt, ep["code"])
        r["window_has_fact"] = len(p) - window <= i_cue
        recs.append(r)
    return recs


def copy_heads(lm: OnnxLM, tok, episodes, n: int = 40) -> dict:
    """Which heads do the copying: with the prompt and the right answer fed in, the mean
    attention that each head pays, from the token before each answer digit, to the same
    digit where the code was first stated. Returns the top head and the full table."""
    cue = tok.encode(" code")[0]
    fetch = [f"attentions.{i}" for i in range(lm.L)]
    acc = np.zeros((lm.L, lm.H))
    used = 0
    for ep in episodes:
        ids = tok.encode(ep["prompt"] + ep["answer"])
        if len(ids) > lm.cfg["block_size"]:
            continue
        first, last = ids.index(cue), len(ids) - 1 - ids[::-1].index(cue)  # statement and answer cues
        atts = lm.sess.run(fetch, lm.feeds(ids))
        for i, a in enumerate(atts):  # a: (1, H, T, T); query last+d predicts digit d+1 at first+d+1
            acc[i] += np.mean([a[0, :, last + d, first + d + 1] for d in range(4)], axis=0)
        used += 1
        if used == n:
            break
    acc /= max(1, used)
    layer, head = np.unravel_index(int(acc.argmax()), acc.shape)
    return {
        "episodes": used,
        "layer": int(layer),
        "head": int(head),
        "attention_on_stated_digit": round(float(acc.max()), 3),
        "by_head": [[round(float(x), 3) for x in row] for row in acc],
    }


def pronoun_spans(tok, ex: dict) -> tuple[list[int], int, list[int], list[int]] | None:
    """Token ids of a pronoun sentence, the pronoun's index (its last occurrence), the
    antecedent's token indices and, for he/she, the other person's. None if a word is
    not a single token (then the sentence is not counted)."""
    text = ex["text"]
    ids = tok.encode(text)
    pro = " " + ex["pronoun"]
    cut = text.rindex(pro)
    before = tok.encode(text[:cut])
    if before + tok.encode(text[cut:]) != ids or len(tok.encode(pro)) != 1:
        return None
    q = len(before)
    if ex["kind"] == "it":
        words = [" " + ex["antecedent"]]
        others: list[str] = []
    else:
        a = ex["antecedent"]
        other = [w for w in re.findall(r"[A-Z][a-z]+", text[:cut]) if w not in (a, "He", "She", "It", "One", "They")]
        words = [" " + a, a]
        others = [" " + o for o in other] + other
    single = {w: tok.encode(w) for w in words + others}
    ante = [i for i in range(q) if any(len(t) == 1 and ids[i] == t[0] for w, t in single.items() if w in words)]
    oth = [i for i in range(q) if any(len(t) == 1 and ids[i] == t[0] for w, t in single.items() if w in others)]
    if not ante:
        return None
    return ids, q, ante, oth


def pronoun_heads(lm: OnnxLM, tok) -> dict:
    """Which heads resolve pronouns: over held-out sentences (everyday.pronoun_eval_set, a
    seed training never uses), the mean attention each head pays, from the pronoun
    (" It", " He", " She"), to every occurrence of its antecedent: the animal or thing for
    "it", the right one of two people of different genders for he/she. For he/she also
    the attention on the other person and how often the right person gets more."""
    from everyday import pronoun_eval_set

    fetch = [f"attentions.{i}" for i in range(lm.L)]
    out: dict = {"bar": 0.6, "source": "models/everyday.py pronoun_eval_set (held-out seed)"}
    for kind, sents in pronoun_eval_set().items():
        acc, other, right, owned = (np.zeros((lm.L, lm.H)) for _ in range(4))
        used = 0
        for ex in sents:
            sp = pronoun_spans(tok, ex)
            if sp is None:
                continue
            ids, q, ante, oth = sp
            atts = lm.sess.run(fetch, lm.feeds(ids))
            own_t = tok.encode(" " + ex["own"]) if "own" in ex else []
            own = [i for i in range(q) if len(own_t) == 1 and ids[i] == own_t[0]]
            for i, a in enumerate(atts):
                row = a[0, :, q, :]  # (H, T)
                acc[i] += row[:, ante].sum(-1)
                owned[i] += row[:, own].sum(-1)
                if oth:
                    other[i] += row[:, oth].sum(-1)
                    right[i] += row[:, ante].sum(-1) > row[:, oth].sum(-1)
            used += 1
        acc /= max(1, used)
        rec = {"sentences": used, "by_head": [[round(float(x), 3) for x in r] for r in acc]}
        if kind == "he_she":
            rec["other_person_by_head"] = [[round(float(x), 3) for x in r] for r in other / max(1, used)]
            rec["right_person_more_by_head"] = [[round(float(x), 3) for x in r] for r in right / max(1, used)]
            # the person's own thing or job ("Mia had a drum ... She"): the other way to the answer
            rec["own_thing_by_head"] = [[round(float(x), 3) for x in r] for r in owned / max(1, used)]
        out[kind] = rec
    both = (np.array(out["it"]["by_head"]) + np.array(out["he_she"]["by_head"])) / 2
    layer, head = np.unravel_index(int(both.argmax()), both.shape)
    out["best"] = {
        "layer": int(layer),
        "head": int(head),
        "it": out["it"]["by_head"][layer][head],
        "he_she": out["he_she"]["by_head"][layer][head],
        "how": "the head with the highest mean of the two figures (it, he_she): attention from the pronoun to its antecedent",
    }
    out["bar_reached"] = bool(out["best"]["it"] >= out["bar"] and out["best"]["he_she"] >= out["bar"])
    for kind in ("it", "he_she"):
        m = np.array(out[kind]["by_head"])
        lk, hk = np.unravel_index(int(m.argmax()), m.shape)
        out[f"best_{kind}"] = {"layer": int(lk), "head": int(hk), "attention": round(float(m.max()), 3)}
    return out


README = os.path.join(HERE, "README.md")


def recall_markdown(recall: dict) -> str:
    lines = [
        "| distance | n | full cache | digits | fact evicted | digits | window 128 | digits |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for k, v in recall.items():
        lines.append(
            f"| {k} | {v['n']} | {v['full_cache']:.2f} | {v['full_cache_digits']:.2f} | {v['fact_evicted']:.2f} | "
            f"{v['fact_evicted_digits']:.2f} | {v['window128']:.2f} | {v['window128_digits']:.2f} |"
        )
    return "\n".join(lines)


def pronoun_markdown(ph: dict) -> str:
    """Per layer and head: mean attention from the pronoun to its antecedent."""
    L, H = len(ph["it"]["by_head"]), len(ph["it"]["by_head"][0])
    lines = [
        f'| layer | head | "it" → animal or thing (n={ph["it"]["sentences"]}) | '
        f"he/she → the right person (n={ph['he_she']['sentences']}) | → the other person | right person read more |",
        "|---|---|---|---|---|---|",
    ]
    best = (ph["best"]["layer"], ph["best"]["head"])
    for i in range(L):
        for h in range(H):
            b = "**" if (i, h) == best else ""
            lines.append(
                f"| {b}{i + 1}{b} | {b}{h + 1}{b} | {b}{ph['it']['by_head'][i][h]:.2f}{b} | "
                f"{b}{ph['he_she']['by_head'][i][h]:.2f}{b} | {ph['he_she']['other_person_by_head'][i][h]:.2f} | "
                f"{ph['he_she']['right_person_more_by_head'][i][h]:.2f} |"
            )
    return "\n".join(lines)


def write_readme_block(name: str, body: str, path: str = README) -> None:
    """Replace the text between `<!-- {name}: written by models/evaluate.py -->` and
    `<!-- end of {name} -->` in models/README.md."""
    start, end = f"<!-- {name}: written by models/evaluate.py -->", f"<!-- end of {name} -->"
    text = open(path, encoding="utf-8").read()
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: the markers for the {name} are missing")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(pattern.sub(lambda _: f"{start}\n{body}\n{end}", text))


def bucketize(recs):
    out = {}
    for name, sel in [(f"{lo}-{hi}", lambda r, lo=lo, hi=hi: lo <= r["distance"] < hi) for lo, hi in BUCKETS] + [
        (FAR_BUCKET, lambda r: r["distance"] >= FAR_TOKENS)
    ]:
        b = [r for r in recs if sel(r)]
        if not b:
            continue
        n = len(b)
        out[name] = {
            "n": n,
            "full_cache": round(sum(r["full"] for r in b) / n, 4),
            "full_cache_digits": round(sum(r["full_digits"] for r in b) / n, 4),
            "fact_evicted": round(sum(r["evicted"] for r in b) / n, 4),
            "fact_evicted_digits": round(sum(r["evicted_digits"] for r in b) / n, 4),
            "window128": round(sum(r["window"] for r in b) / n, 4),
            "window128_digits": round(sum(r["window_digits"] for r in b) / n, 4),
            "window128_fact_in_window": round(sum(r["window_has_fact"] for r in b) / n, 4),
        }
    return out


def time_steps(lm: OnnxLM, n_ctx: int = 256, reps: int = 20):
    """Median ms of one decode step at context n_ctx: cached (1 new token; without and with
    fetching the attention outputs, same prebuilt feeds) vs uncached (all tokens)."""
    ids = list(np.random.default_rng(0).integers(0, lm.cfg["vocab_size"], n_ctx))
    _, cache = lm.step(ids[:-1], lm.empty_cache(), list(range(n_ctx - 1)))
    t_c, t_u, t_a = [], [], []
    # the same cached step, also fetching the attention weights
    fetch_all = [o.name for o in lm.sess.get_outputs()]
    feeds = lm.feeds(ids[-1:], cache)
    for _ in range(3):  # rounds; each run alone for `reps` calls after 5 warm-up calls
        for times, run in (
            (t_c, lambda: lm.sess.run(lm.fetch, feeds)),
            (t_a, lambda: lm.sess.run(fetch_all, feeds)),
            (t_u, lambda: lm.step(ids, lm.empty_cache(), list(range(n_ctx)))),
        ):
            for r in range(reps + 5):
                t0 = time.perf_counter()
                run()
                t1 = time.perf_counter()
                if r >= 5:
                    times.append(t1 - t0)

    def med(xs):
        return round(1000 * float(np.median(xs)), 3)

    return {
        "context": n_ctx,
        "cached_step_ms": med(t_c),
        "uncached_step_ms": med(t_u),
        "cached_step_with_attentions_ms": med(t_a),
        "runtime": f"onnxruntime {ort.__version__} CPU, 1 thread",
    }


def main():
    tok = load_tokenizer(os.path.join(TINY, "tokenizer.json"))
    lm = OnnxLM(os.path.join(TINY, "model.onnx"))
    episodes = []
    for f in range(11):
        episodes += heldout_episodes(1000 + f, 24, f)
    t0 = time.time()
    recs = evaluate(lm, tok, episodes)
    recall = bucketize(recs)
    with open(os.path.join(TINY, "train_log.json")) as fh:
        log = json.load(fh)
    last = log["evals"][-1]
    n_params = int(sum(v.size for k, v in np.load(os.path.join(TINY, "weights.npz")).items() if k != "config_json"))
    card = {
        "model": "kvlab tiny GPT",
        "config": lm.cfg,
        "params": n_params,
        "files_bytes": {
            f: os.path.getsize(os.path.join(TINY, f)) for f in ("model.onnx", "weights.npz", "tokenizer.json")
        },
        "training": {
            "steps": log.get("final_step", last["step"]),
            "minutes": round(log.get("train_minutes", last["minutes"]), 1),
            "final_train_loss": round(log["steps"][-1]["loss"], 4),
            "val_loss": round(last["val_loss"], 4),
            **log["hyper"],
        },
        "recall": recall,
        "recall_episodes": len(recs),
        "chance": {"code": 1 / 5040, "digit": 0.1},
        "copy_head": copy_heads(lm, tok, episodes),
        "pronoun_heads": pronoun_heads(lm, tok),
        "timing": time_steps(lm),
        "onnx": {
            "inputs": [i.name for i in lm.sess.get_inputs()],
            "outputs": [o.name for o in lm.sess.get_outputs()],
            "opset": 17,
        },
    }
    # the quantized-cache table (numpy reference): card["kv_quant"] and the table in models/README.md
    from kv_quant_eval import kv_quant_card, write_readme_table

    card["kv_quant"] = kv_quant_card()
    write_readme_table(card["kv_quant"])
    write_readme_block("recall table", recall_markdown(recall))
    write_readme_block("pronoun table", pronoun_markdown(card["pronoun_heads"]))
    with open(os.path.join(TINY, "card.json"), "w") as fh:
        json.dump(card, fh, indent=1)
    print(json.dumps({"recall": recall, "timing": card["timing"], "copy_head": card["copy_head"]}, indent=1))
    ph = card["pronoun_heads"]
    print("pronoun heads:", json.dumps({k: ph[k] for k in ("best", "best_it", "best_he_she", "bar_reached")}))
    print(f"{len(recs)} episodes in {time.time() - t0:.0f}s -> {os.path.join(TINY, 'card.json')}")


if __name__ == "__main__":
    main()
