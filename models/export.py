"""Export the tiny GPT to ONNX (Optimum / transformers.js decoder convention).

    python models/export.py                       # models/runs/full -> models/tiny/
    python models/export.py --run models/tiny     # re-export what is committed

The graph is written node by node with `onnx.helper` from the float32 weights
(no PyTorch needed, no tracing): opset 17, standard ops only (Gather, MatMul,
LayerNormalization, Softmax, Erf, Where, ...), all supported by onnxruntime-web's
wasm backend.

Inputs:   input_ids [batch, seq] int64, attention_mask [batch, past+seq] int64,
          position_ids [batch, seq] int64,
          past_key_values.{i}.key|value [batch, kv_heads, past, head_dim] float32
Outputs:  logits [batch, seq, vocab],
          present.{i}.key|value [batch, kv_heads, past+seq, head_dim],
          attentions.{i} [batch, heads, seq, past+seq] (softmax weights, for the attention map)

Uncached generation is the same graph with past = 0 and the whole sequence.
Keys are cached after the rotary embedding, so evicting cache entries (slicing
axis 2 of past and attention_mask) keeps the rest valid. With smeared keys the
graph mixes each key with the previous slot's (Slice + Concat over past+new keys)
before the scores; `present.*.key` stays the plain rotated key.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


def build_graph(w: dict[str, np.ndarray], cfg: dict, with_attentions: bool = True) -> onnx.ModelProto:
    L, H, C, V = cfg["n_layer"], cfg["n_head"], cfg["n_embd"], cfg["vocab_size"]
    D = C // H
    nodes, inits = [], []

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    for k, v in w.items():
        if k.endswith("attn.smear"):
            continue  # folded into the smear.g / smear.1-g constants below
        if k.endswith(("c_attn.weight", "c_proj.weight", "c_fc.weight")):
            const(k + ".T", np.ascontiguousarray(v.T.astype(np.float32)))  # (in, out) for MatMul
        else:
            const(k, v.astype(np.float32))
    inv_freq = (1.0 / (cfg["rope_base"] ** (np.arange(0, D, 2, dtype=np.float32) / D))).astype(np.float32)
    if cfg.get("rope_pairs", 0):
        inv_freq[cfg["rope_pairs"] :] = 0.0  # partial rotary: these pairs are not rotated
    const("rope.inv_freq", inv_freq)
    rot = np.zeros((D, D), np.float32)  # x @ rot == rotate_half(x) == cat(-x[h:], x[:h])
    h = D // 2
    for j in range(h):
        rot[j + h, j] = -1.0
        rot[j, j + h] = 1.0
    const("rope.rotate_half", rot)
    const("scale", np.array(1.0 / math.sqrt(D), np.float32))
    const("neg_big", np.array(np.finfo(np.float32).min, np.float32))
    const("half", np.array(0.5, np.float32))
    const("one", np.array(1.0, np.float32))
    const("inv_sqrt2", np.array(1.0 / math.sqrt(2.0), np.float32))
    const("i0", np.array(0, np.int64))
    const("i1", np.array(1, np.int64))
    const("ax_m1", np.array([-1], np.int64))
    const("ax_1", np.array([1], np.int64))
    const("ax_12", np.array([1, 2], np.int64))
    const("shape_BSHD", np.array([0, 0, H, D], np.int64))
    const("shape_BSC", np.array([0, 0, C], np.int64))
    const("zero", np.array(0.0, np.float32))
    const("i0_1", np.array([0], np.int64))
    const("i1_1", np.array([1], np.int64))
    const("im1_1", np.array([-1], np.int64))
    const("ax_2", np.array([2], np.int64))
    const("split_qkv", np.array([C, C, C], np.int64))

    # embeddings and rotary tables
    x = node("Gather", ["transformer.wte.weight", "input_ids"], "x0", axis=0)  # (B, S, C)
    pos = node("Cast", ["position_ids"], "pos_f", to=TensorProto.FLOAT)
    pos = node("Unsqueeze", [pos, "ax_m1"], "pos_f3")  # (B, S, 1)
    fr = node("Mul", [pos, "rope.inv_freq"], "rope.freqs")  # (B, S, D/2)
    emb = node("Concat", [fr, fr], "rope.emb", axis=-1)  # (B, S, D)
    cos = node("Unsqueeze", [node("Cos", [emb], "rope.cos3"), "ax_1"], "rope.cos")  # (B, 1, S, D)
    sin = node("Unsqueeze", [node("Sin", [emb], "rope.sin3"), "ax_1"], "rope.sin")

    # mask: new token s (cache slot past+s) sees slots j <= past+s whose attention_mask is 1
    past_shape = node("Shape", ["past_key_values.0.key"], "past_shape")
    past_len = node("Gather", [past_shape, const("i2", np.array(2, np.int64))], "past_len")
    seq_len = node("Gather", [node("Shape", ["input_ids"], "ids_shape"), "i1"], "seq_len")
    tot_len = node("Gather", [node("Shape", ["attention_mask"], "am_shape"), "i1"], "tot_len")
    kidx = node("Range", ["i0", tot_len, "i1"], "key_idx")  # (K,)
    qidx = node("Add", [node("Range", ["i0", seq_len, "i1"], "q_range"), past_len], "q_idx")  # (S,)
    causal = node(
        "LessOrEqual",
        [
            node("Unsqueeze", [kidx, const("ax_0", np.array([0], np.int64))], "key_idx2"),
            node("Unsqueeze", [qidx, "ax_m1"], "q_idx2"),
        ],
        "causal",
    )  # (S, K)
    pad = node("Cast", ["attention_mask"], "am_bool", to=TensorProto.BOOL)
    pad = node("Unsqueeze", [pad, "ax_12"], "am_bool4")  # (B, 1, 1, K)
    allowed = node("And", [causal, pad], "allowed")  # (B, 1, S, K)

    outputs = []
    for i in range(L):
        p = f"transformer.h.{i}."
        ln1 = node("LayerNormalization", [x, p + "ln_1.weight", p + "ln_1.bias"], f"l{i}.ln1", axis=-1, epsilon=1e-5)
        qkv = node(
            "Add",
            [node("MatMul", [ln1, p + "attn.c_attn.weight.T"], f"l{i}.qkv_mm"), p + "attn.c_attn.bias"],
            f"l{i}.qkv",
        )
        nodes.append(
            helper.make_node(
                "Split", [qkv, "split_qkv"], [f"l{i}.q", f"l{i}.k", f"l{i}.v"], axis=-1, name=f"l{i}.split"
            )
        )
        heads = {}
        for n in "qkv":
            r = node("Reshape", [f"l{i}.{n}", "shape_BSHD"], f"l{i}.{n}4")  # (B, S, H, D)
            heads[n] = node("Transpose", [r], f"l{i}.{n}h", perm=[0, 2, 1, 3])  # (B, H, S, D)
        for n in "qk":
            t = heads[n]
            rh = node("MatMul", [t, "rope.rotate_half"], f"l{i}.{n}_rot")
            heads[n] = node(
                "Add",
                [node("Mul", [t, cos], f"l{i}.{n}_cos"), node("Mul", [rh, sin], f"l{i}.{n}_sin")],
                f"l{i}.{n}_rope",
            )
        pk = node("Concat", [f"past_key_values.{i}.key", heads["k"]], f"present.{i}.key", axis=2)  # (B, H, K, D)
        pv = node("Concat", [f"past_key_values.{i}.value", heads["v"]], f"present.{i}.value", axis=2)
        outputs += [f"present.{i}.key", f"present.{i}.value"]
        ks = pk
        if cfg.get("smear_keys"):  # attention keys: g * k_j + (1 - g) * k_{j-1}; the cache keeps plain k
            g = 1.0 / (1.0 + np.exp(-w[p + "attn.smear"].astype(np.float64)))
            first = node("Slice", [pk, "i0_1", "i1_1", "ax_2"], f"l{i}.k_first")  # (B, H, 1, D)
            prev = node(
                "Concat",
                [
                    node("Mul", [first, "zero"], f"l{i}.k_zero"),
                    node("Slice", [pk, "i0_1", "im1_1", "ax_2"], f"l{i}.k_butlast"),
                ],
                f"l{i}.k_prev",
                axis=2,
            )  # k_{j-1}, zeros at j = 0
            ks = node(
                "Add",
                [
                    node("Mul", [pk, const(p + "smear.g", g.astype(np.float32).reshape(1, H, 1, 1))], f"l{i}.k_own"),
                    node(
                        "Mul",
                        [prev, const(p + "smear.1-g", (1 - g).astype(np.float32).reshape(1, H, 1, 1))],
                        f"l{i}.k_pr",
                    ),
                ],
                f"l{i}.k_smeared",
            )
        kt = node("Transpose", [ks], f"l{i}.kT", perm=[0, 1, 3, 2])  # (B, H, D, K)
        sc = node("Mul", [node("MatMul", [heads["q"], kt], f"l{i}.qk"), "scale"], f"l{i}.scores")  # (B, H, S, K)
        sc = node("Where", [allowed, sc, "neg_big"], f"l{i}.masked")
        att = node("Softmax", [sc], f"attentions.{i}" if with_attentions else f"l{i}.att", axis=-1)
        y = node("MatMul", [att, pv], f"l{i}.y")  # (B, H, S, D)
        y = node("Reshape", [node("Transpose", [y], f"l{i}.yT", perm=[0, 2, 1, 3]), "shape_BSC"], f"l{i}.y3")
        y = node(
            "Add",
            [node("MatMul", [y, p + "attn.c_proj.weight.T"], f"l{i}.proj_mm"), p + "attn.c_proj.bias"],
            f"l{i}.proj",
        )
        x = node("Add", [x, y], f"l{i}.x_attn")
        ln2 = node("LayerNormalization", [x, p + "ln_2.weight", p + "ln_2.bias"], f"l{i}.ln2", axis=-1, epsilon=1e-5)
        f = node(
            "Add", [node("MatMul", [ln2, p + "mlp.c_fc.weight.T"], f"l{i}.fc_mm"), p + "mlp.c_fc.bias"], f"l{i}.fc"
        )
        erf = node("Erf", [node("Mul", [f, "inv_sqrt2"], f"l{i}.fc_s")], f"l{i}.erf")
        g = node("Mul", [node("Mul", [f, "half"], f"l{i}.fc_h"), node("Add", [erf, "one"], f"l{i}.erf1")], f"l{i}.gelu")
        m = node(
            "Add",
            [node("MatMul", [g, p + "mlp.c_proj.weight.T"], f"l{i}.mproj_mm"), p + "mlp.c_proj.bias"],
            f"l{i}.mproj",
        )
        x = node("Add", [x, m], f"l{i}.x_out")
    xf = node(
        "LayerNormalization", [x, "transformer.ln_f.weight", "transformer.ln_f.bias"], "ln_f", axis=-1, epsilon=1e-5
    )
    wt = node("Transpose", ["transformer.wte.weight"], "wte_T", perm=[1, 0])  # lm_head tied to wte
    node("MatMul", [xf, wt], "logits")  # (B, S, V)

    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"]),
        helper.make_tensor_value_info("position_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
    ]
    outs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", V])]
    for i in range(L):
        for kv in ("key", "value"):
            inputs.append(
                helper.make_tensor_value_info(
                    f"past_key_values.{i}.{kv}", TensorProto.FLOAT, ["batch_size", H, "past_sequence_length", D]
                )
            )
            outs.append(
                helper.make_tensor_value_info(
                    f"present.{i}.{kv}", TensorProto.FLOAT, ["batch_size", H, "total_sequence_length", D]
                )
            )
    if with_attentions:
        for i in range(L):
            outs.append(
                helper.make_tensor_value_info(
                    f"attentions.{i}", TensorProto.FLOAT, ["batch_size", H, "sequence_length", "total_sequence_length"]
                )
            )
    graph = helper.make_graph(nodes, "kvlab_tiny_gpt", inputs, outs, inits)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="kvlab models/export.py"
    )
    model.ir_version = 8
    meta = {
        "config": json.dumps(cfg),
        "kv_heads": str(H),
        "head_dim": str(D),
        "positions": "rope (rotate-half), position_ids are absolute, keys cached after rotation",
    }
    for k, v in meta.items():
        model.metadata_props.append(onnx.StringStringEntryProto(key=k, value=v))
    onnx.checker.check_model(model)
    return model


def load_run(run_dir: str):
    with np.load(os.path.join(run_dir, "weights.npz"), allow_pickle=False) as z:
        w = {k: z[k] for k in z.files if k != "config_json"}
        cfg = json.loads(str(z["config_json"])) if "config_json" in z.files else None
    if cfg is None:
        with open(os.path.join(run_dir, "config.json")) as f:
            cfg = json.load(f)
    return w, cfg


def main():
    ap = argparse.ArgumentParser(description="export the tiny GPT to ONNX")
    ap.add_argument("--run", default=os.path.join(HERE, "runs", "full"), help="training output dir")
    ap.add_argument("--out", default=os.path.join(HERE, "tiny"))
    args = ap.parse_args()
    w, cfg = load_run(args.run)
    os.makedirs(args.out, exist_ok=True)
    np.savez(os.path.join(args.out, "weights.npz"), config_json=np.array(json.dumps(cfg)), **w)
    model = build_graph(w, cfg, with_attentions=True)
    onnx.save(model, os.path.join(args.out, "model.onnx"))
    if os.path.abspath(args.run) != os.path.abspath(args.out):
        shutil.copy(os.path.join(args.run, "train_log.json"), os.path.join(args.out, "train_log.json"))
        if os.path.exists(os.path.join(args.out, "config.json")):
            os.remove(os.path.join(args.out, "config.json"))
    for fn in ("model.onnx", "weights.npz"):
        print(f"{fn}: {os.path.getsize(os.path.join(args.out, fn)) / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
