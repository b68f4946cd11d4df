"""Train the kvlab tiny GPT on the generated corpus (PyTorch, CPU, fixed seeds).

    nice -n 10 python models/train.py                 # full run (<= 60 min on 2 cores)
    nice -n 10 python models/train.py --max_minutes=5 --out_dir=models/runs/smoke  # smoke run

Logs loss and door-code recall on held-out episodes every `eval_interval` steps
(recall comes early, thanks to the copy-head init; the rest of the schedule is for
the English, so there is no early stop on recall), and writes weights.npz,
config.json and train_log.json to `out_dir` (models/runs/full) at every evaluation; `python models/export.py` turns that into models/tiny/.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "pycode"))
sys.path.insert(0, HERE)

from corpus import documents, heldout_episodes  # noqa: E402
from kvlab.core.tokenizer import load_tokenizer  # noqa: E402
from model import GPT, GPTConfig, init_copy_head, init_previous_token_head  # noqa: E402

# ----------------------------------------------------------------------------
# defaults (override with --key=value)
out_dir = os.path.join(HERE, "runs", "full")  # export.py reads it from here
seed = 1337
n_layer = 4
n_head = 4
n_embd = 128
rope_pairs = 8  # rotate 8 of the 16 pairs per head; 16 dims stay position-free
block_size = 512  # tokens per training row
batch_size = 8
learning_rate = 2e-3  # peak, after warmup
min_lr = 2e-4
warmup_steps = 100
max_steps = 1200
max_minutes = 55.0  # wall-clock budget; training stops here whatever the step
stop_step = 600  # stop after the evaluation at this step (0: at max_steps); the LR schedule still runs to max_steps
weight_decay = 0.1
grad_clip = 1.0
n_train_docs = 60000  # generated once, seed 0
max_filler = 10  # small-talk turns between the fact and the question
curriculum_steps = 700  # max filler grows 1 -> max_filler over these steps
prev_token_init = 0  # start layer 0 / head 0 as a previous-token head (see model.py)
block_schedule = "256:300"  # rows of 256 tokens for the first 300 steps (cheaper, fewer distractors)
episode_frac = 0.5  # share of packed documents that are chat episodes or copy drills
eval_interval = 300
n_eval_episodes = 160  # held-out codes, separate seed
threads = 2
tokenizer = os.path.join(HERE, "tiny", "tokenizer.json")
init_from = ""  # a weights.npz to continue from (fresh optimizer), e.g. models/runs/full/weights.npz
smear_keys = 1  # smeared keys in every layer (model.py: one-head induction)
copy_heads = "1:0"  # layer:head pairs started as copy heads (model.py init_copy_head), "" = none
copy_qk_gain = 3.0  # their q = k projection gain (sharpness of the match at init)
smear_init = 0.0  # gate logit at init (heads other than the copy head): keys start half own, half previous
answer_weight = 1.0  # loss weight of the answer's code digits (only copying predicts them); 1 = plain LM loss
# ----------------------------------------------------------------------------


def parse_overrides():
    g = globals()
    ap = argparse.ArgumentParser()
    for k in [
        "out_dir",
        "seed",
        "n_layer",
        "n_head",
        "n_embd",
        "rope_pairs",
        "block_size",
        "batch_size",
        "learning_rate",
        "min_lr",
        "warmup_steps",
        "max_steps",
        "max_minutes",
        "stop_step",
        "weight_decay",
        "n_train_docs",
        "max_filler",
        "curriculum_steps",
        "episode_frac",
        "block_schedule",
        "prev_token_init",
        "eval_interval",
        "n_eval_episodes",
        "threads",
        "init_from",
        "answer_weight",
        "smear_keys",
        "smear_init",
        "copy_heads",
        "copy_qk_gain",
        "tokenizer",
    ]:
        ap.add_argument(f"--{k}", type=type(g[k]), default=g[k])
    for k, v in vars(ap.parse_args()).items():
        g[k] = v


def lr_at(step: int) -> float:
    if step < warmup_steps:
        return learning_rate * (step + 1) / warmup_steps
    p = min(1.0, (step - warmup_steps) / max(1, max_steps - warmup_steps))
    return min_lr + 0.5 * (1 + math.cos(math.pi * p)) * (learning_rate - min_lr)


def episode_pieces(tok, ep):
    """Token ids of prompt, answer and rest; the code's cue index and the answer span."""
    p, a, r = tok.encode(ep["prompt"]), tok.encode(ep["answer"]), tok.encode(ep["rest"])
    return p, a, r


def recall_eval(model, tok, episodes, block: int, evict: bool = False):
    """Teacher-forced greedy check: the answer is right iff argmax matches every answer token
    (which is exactly what greedy decoding would produce). Returns per-episode records."""
    cue = tok.encode(" code")
    assert len(cue) == 1
    cue = cue[0]
    rows, spans, recs = [], [], []
    for ep in episodes:
        p, a, r = episode_pieces(tok, ep)
        ids = p + a
        i_cue = ids.index(cue)  # the first " code": the statement
        distance = len(p) - (i_cue + 4)  # tokens from the code's last digit to the answer
        start = i_cue + 5 if evict else 0  # evict the cue and the digits (and all before)
        if len(ids) > block:
            continue
        rows.append((ids[start:], start))
        spans.append((len(p) - start, len(a)))
        recs.append({"distance": distance, "code": ep["code"]})
    T = max(len(r[0]) for r in rows)
    x = torch.zeros((len(rows), T), dtype=torch.long)
    pos = torch.zeros((len(rows), T), dtype=torch.long)
    for i, (ids, start) in enumerate(rows):
        x[i, : len(ids)] = torch.tensor(ids)
        pos[i] = torch.arange(start, start + T)
    with torch.no_grad():
        out = []
        for i in range(0, len(rows), 32):
            logits, _ = model(x[i : i + 32], position_ids=pos[i : i + 32])
            out.append(logits.argmax(-1))
        pred = torch.cat(out)
    for i, (ps, na) in enumerate(spans):
        got = pred[i, ps - 1 : ps - 1 + na].tolist()
        want = x[i, ps : ps + na].tolist()
        digits_want = want[-5:-1]  # answer = " the door has code 4 7 1 9 ." : the 4 digits
        digits_got = got[-5:-1]
        recs[i]["correct"] = got[:-1] == want[:-1]  # everything up to the final "."
        recs[i]["digit_acc"] = sum(g == w for g, w in zip(digits_got, digits_want)) / 4
    return recs


BUCKETS = [(0, 100), (100, 200), (200, 300), (300, 400), (400, 512)]


def summarize(recs):
    out = {}
    for lo, hi in BUCKETS:
        b = [r for r in recs if lo <= r["distance"] < hi]
        if b:
            out[f"{lo}-{hi}"] = {
                "n": len(b),
                "recall": sum(r["correct"] for r in b) / len(b),
                "digit_acc": sum(r["digit_acc"] for r in b) / len(b),
            }
    far = [r for r in recs if r["distance"] >= 200]
    out[">=200"] = {
        "n": len(far),
        "recall": sum(r["correct"] for r in far) / max(1, len(far)),
        "digit_acc": sum(r["digit_acc"] for r in far) / max(1, len(far)),
    }
    return out


def main():
    parse_overrides()
    torch.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.set_num_threads(threads)
    os.makedirs(out_dir, exist_ok=True)
    t_start = time.time()

    tok = load_tokenizer(tokenizer)
    nl = tok.encode("\n\n")
    docs = documents(0, n_train_docs, max_filler=max_filler)
    episodes_by_filler = {f: [] for f in range(max_filler + 1)}  # chat episodes and copy drills
    texts = []
    for d in docs:
        ids = tok.encode(d["text"])
        if d["kind"] in ("episode", "drill"):
            if len(ids) <= block_size + 1:
                episodes_by_filler[d["filler"]].append(ids)
        else:
            texts.append(ids)
    n_tok = sum(len(e) for v in episodes_by_filler.values() for e in v) + sum(len(t) for t in texts)
    print(
        f"corpus: {len(docs)} docs, {n_tok:,} tokens, {sum(map(len, episodes_by_filler.values()))} episodes "
        f"({time.time() - t_start:.1f}s)",
        flush=True,
    )

    rng = random.Random(seed)

    schedule = [(int(b), int(u)) for b, u in (x.split(":") for x in block_schedule.split(",") if x)]

    def row_len(step: int) -> int:
        for b, until in schedule:
            if step < until:
                return b
        return block_size

    def make_row(step: int, block: int):
        """Documents packed until the row is full: episodes and drills (filler <= the curriculum limit,
        which grows from short to long distances) with probability episode_frac, else
        stories and dialogues. Several episodes can share a row: each question's answer is
        the most recent code, and more answers per row means more copy practice."""
        cur = min(max_filler, 1 + int(max_filler * step / max(1, curriculum_steps)))
        if block < block_size:  # short rows: only episodes that fit
            cur = min(cur, max(0, (block - 100) // 40))
        row, weight = [], []
        while len(row) < block + 1:
            if rng.random() < episode_frac:
                doc = list(rng.choice(episodes_by_filler[rng.randint(0, cur)]))
                w = [1.0] * len(doc)
                cues = [i for i, t in enumerate(doc) if t == cue]
                if len(cues) >= 2:  # the answer's digits: after the last " code"
                    for j in range(cues[-1] + 1, min(cues[-1] + 5, len(doc))):
                        w[j] = answer_weight
                row += doc + nl
                weight += w + [1.0] * len(nl)
            else:
                doc = rng.choice(texts) + nl
                row += doc
                weight += [1.0] * len(doc)
        return row[: block + 1], weight[: block + 1]

    cue = tok.encode(" code")[0]

    def get_batch(step: int):
        block = row_len(step)
        n = batch_size * block_size // block  # same tokens per step
        made = [make_row(step, block) for _ in range(n)]
        rows = torch.tensor([r for r, _ in made], dtype=torch.long)
        weights = torch.tensor([w for _, w in made], dtype=torch.float32)
        return rows[:, :-1], rows[:, 1:], weights[:, 1:]

    # fixed validation rows (other seed) and held-out recall episodes
    val_rng_state = rng.getstate()
    vdocs = documents(1, 400, max_filler=max_filler)
    vstream = []
    for d in vdocs:
        vstream += tok.encode(d["text"]) + nl
    vrows = torch.tensor([vstream[i : i + block_size + 1] for i in range(0, 16 * block_size, block_size)])
    rng.setstate(val_rng_state)
    eval_eps = []
    for f in range(max_filler + 1):
        eval_eps += heldout_episodes(f, max(1, n_eval_episodes // (max_filler + 1)), f)

    config = GPTConfig(
        block_size=block_size,
        vocab_size=tok.vocab_size,
        n_layer=n_layer,
        n_head=n_head,
        n_embd=n_embd,
        rope_pairs=rope_pairs,
        smear_keys=bool(smear_keys),
        smear_init=smear_init,
    )
    model = GPT(config)
    if init_from:
        sd = {k: torch.from_numpy(v) for k, v in np.load(init_from).items() if k != "config_json"}
        sd["lm_head.weight"] = sd["transformer.wte.weight"]
        model.load_state_dict(sd)
        print(f"continuing from {init_from}", flush=True)
    else:
        if prev_token_init:
            init_previous_token_head(model)
        for lh in filter(None, copy_heads.split(",")):
            layer, head = map(int, lh.split(":"))
            init_copy_head(model, layer, head, qk_gain=copy_qk_gain)
    print(f"model: {model.num_params():,} parameters, {config}", flush=True)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=learning_rate,
        betas=(0.9, 0.95),
    )

    log = {
        "config": config.__dict__,
        "hyper": {
            k: globals()[k]
            for k in [
                "seed",
                "batch_size",
                "learning_rate",
                "min_lr",
                "warmup_steps",
                "max_steps",
                "stop_step",
                "max_filler",
                "curriculum_steps",
                "episode_frac",
                "block_schedule",
                "prev_token_init",
                "n_train_docs",
                "init_from",
                "answer_weight",
                "smear_keys",
                "smear_init",
                "copy_heads",
                "copy_qk_gain",
            ]
        },
        "steps": [],
        "evals": [],
    }
    t_train = time.time()
    step = 0
    for step in range(max_steps + 1):
        if step % eval_interval == 0 or step == max_steps:
            model.eval()
            with torch.no_grad():
                _, vloss = model(vrows[:, :-1], vrows[:, 1:])
            full = summarize(recall_eval(model, tok, eval_eps, block_size))
            ev = summarize(recall_eval(model, tok, eval_eps, block_size, evict=True))
            model.train()
            rec = {
                "step": step,
                "minutes": (time.time() - t_train) / 60,
                "val_loss": vloss.item(),
                "recall_full": full,
                "recall_evicted": ev,
            }
            log["evals"].append(rec)
            print(
                f"eval step {step}: val {vloss.item():.4f} | recall (digits) "
                + " ".join(f"{k}:{v['recall']:.2f} ({v['digit_acc']:.2f})" for k, v in full.items())
                + f" | evicted >=200: {ev['>=200']['recall']:.2f} (digits {ev['>=200']['digit_acc']:.2f})"
                f" | {rec['minutes']:.1f} min",
                flush=True,
            )
            save(model, config, log)
            if (time.time() - t_train) / 60 > max_minutes or step == max_steps or step == stop_step:
                break
        lr = lr_at(step)
        for g in opt.param_groups:
            g["lr"] = lr
        x, y, w = get_batch(step)
        if answer_weight == 1.0:
            _, loss = model(x, y)
        else:  # weighted: the few tokens that only copying predicts count more
            logits, _ = model(x)
            ce = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="none")
            loss = (ce * w.reshape(-1)).sum() / w.sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        opt.step()
        if step % 10 == 0:
            log["steps"].append({"step": step, "loss": loss.item(), "lr": lr})
            print(f"step {step}: loss {loss.item():.4f} lr {lr:.2e} ({time.time() - t_train:.0f}s)", flush=True)
    log["train_minutes"] = (time.time() - t_train) / 60
    log["final_step"] = step
    save(model, config, log)
    print(f"done: {step} steps, {log['train_minutes']:.1f} min", flush=True)


def save(model, config, log):
    np.savez(os.path.join(out_dir, "weights.npz"), **model.state_dict_numpy())
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config.__dict__, f, indent=1)
    with open(os.path.join(out_dir, "train_log.json"), "w") as f:
        json.dump(log, f, indent=1)


if __name__ == "__main__":
    main()
