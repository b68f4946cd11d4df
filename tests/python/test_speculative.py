"""Speculative decoding on the tiny model (kvlab.core.speculative, kvlab.spec_decode_figure): the output
is plain greedy decoding's, token for token; the cache after the rollbacks is plain decoding's; each
step's acceptance and cache lengths follow from the draft's and the target's own greedy choices."""

from __future__ import annotations

import json

import numpy as np
import pytest

import kvlab
from kvlab.bridge import call_json
from kvlab.bridge import files_json as call_json_files
from kvlab.core import tiny
from kvlab.core.speculative import (
    draft_model,
    greedy_check,
    greedy_generate,
    recurrent_rollback,
    rejection_rule,
    speculative_generate,
    truncate_cache,
)
from kvlab.memory.catalogue import model_architecture
from kvlab.widgets.speculative import HYBRID_MODEL, PROMPTS


@pytest.fixture(scope="module")
def model():
    return tiny.model_and_tokenizer()[0]


@pytest.fixture(scope="module")
def prompts():
    tok = tiny.model_and_tokenizer()[1]
    return {key: tok.encode(text) for key, text in PROMPTS.items()}


def max_diff(a, b) -> float:
    return max(float(np.abs(x - y).max()) for (k1, v1), (k2, v2) in zip(a, b) for x, y in ((k1, k2), (v1, v2)))


CASES = [("chat", 4, 2, 20), ("story", 3, 1, 17), ("repeat", 6, 3, 24), ("chat", 1, 1, 9), ("story", 8, 2, 30)]


@pytest.mark.parametrize(("prompt", "k", "draft_layers", "n_new"), CASES)
def test_output_is_plain_greedy_decoding_token_for_token(model, prompts, prompt, k, draft_layers, n_new):
    ids = prompts[prompt]
    run = speculative_generate(model, draft_layers, ids, n_new, k)
    plain, _, passes = greedy_generate(model, ids, n_new)
    assert run["tokens"] == plain
    assert passes == n_new
    assert sum(len(s["emitted"]) for s in run["steps"]) + 1 == n_new  # + the prefill's token


@pytest.mark.parametrize(("prompt", "k", "draft_layers", "n_new"), CASES)
def test_cache_after_the_rollbacks_is_the_cache_plain_decoding_builds(model, prompts, prompt, k, draft_layers, n_new):
    ids = prompts[prompt]
    run = speculative_generate(model, draft_layers, ids, n_new, k)
    _, plain_cache, _ = greedy_generate(model, ids, n_new)
    assert [k_.shape for k_, _ in run["cache"]] == [k_.shape for k_, _ in plain_cache]
    assert run["cache"][0][0].shape[2] == len(ids) + n_new - 1
    assert max_diff(run["cache"], plain_cache) < 1e-4  # float32: one batched pass vs one token at a time


def test_without_the_rollback_the_cache_would_hold_the_rejected_entries(model, prompts):
    """The cut matters: the verify pass's cache before the rollback is longer than plain decoding's."""
    run = speculative_generate(model, 2, prompts["chat"], 20, 4)
    rejected = [s for s in run["steps"] if s["accepted"] < s["k"]]
    assert rejected, "the default run should reject something"
    for s in rejected:
        before, after_verify, after_rollback = s["target_cache"]
        assert after_verify - after_rollback == s["k"] - s["accepted"] == len(s["dropped"]) > 0


@pytest.mark.parametrize(("prompt", "k", "draft_layers"), [("chat", 4, 2), ("story", 5, 1), ("repeat", 3, 3)])
def test_each_step_follows_from_the_draft_and_target_greedy_choices(model, prompts, prompt, k, draft_layers):
    """Replay every step independently: the draft's proposals are its own greedy continuation of the
    sequence so far, the target's choices its greedy choice after each proposal prefix (no cache),
    the accepted count the matching prefix, and the cache lengths what they must be."""
    ids = prompts[prompt]
    draft = draft_model(model, draft_layers)
    run = speculative_generate(model, draft_layers, ids, 20, k)
    seq = ids + [run["first"]]
    assert run["steps"], "no step to replay"
    for s in run["steps"]:
        want_proposed, _, _ = greedy_generate(draft, seq, s["k"]) if s["k"] else ([], None, 0)
        assert s["proposed"] == want_proposed
        logits, _ = model.forward(np.array([seq + s["proposed"]]))
        want_target = [int(t) for t in np.argmax(logits[0, len(seq) - 1 :], axis=-1)]
        assert s["target"] == want_target
        matching = 0
        while matching < s["k"] and want_proposed[matching] == want_target[matching]:
            matching += 1
        assert s["accepted"] == matching
        assert s["emitted"] == want_proposed[:matching] + [want_target[matching]]
        before = len(seq) - 1
        assert s["target_cache"] == [before, before + s["k"] + 1, before + matching + 1]
        assert s["dropped"] == list(range(before + matching + 1, before + s["k"] + 1))
        assert s["draft_cache"][2] <= s["target_cache"][2]
        seq += s["emitted"]


def test_a_draft_as_deep_as_the_target_has_every_proposal_accepted(model, prompts):
    """The whole model drafting for itself: all k accepted each step, k + 1 tokens per verify pass."""
    k, n_new = 4, 21
    run = speculative_generate(model, model.config.n_layer, prompts["story"], n_new, k)
    assert [s["accepted"] for s in run["steps"]] == [s["k"] for s in run["steps"]] == [4, 4, 4, 4]
    assert all(s["dropped"] == [] for s in run["steps"])
    assert len(run["steps"]) == (n_new - 1) // (k + 1)


def test_a_one_layer_draft_is_rejected_more_often_than_a_three_layer_one(model, prompts):
    """Not a law, but what the page says about the tiny model (it was not trained to exit early)."""
    ids = prompts["chat"]
    shallow = speculative_generate(model, 1, ids, 20, 4)["steps"]
    deep = speculative_generate(model, 3, ids, 20, 4)["steps"]
    assert len(deep) < len(shallow)


def test_the_last_step_proposes_only_what_is_left(model, prompts):
    run = speculative_generate(model, 4, prompts["story"], 3, 8)  # a perfect draft, 2 tokens after the prefill
    assert [s["k"] for s in run["steps"]] == [1]
    assert len(run["tokens"]) == 3


def test_greedy_check_tells_the_greedy_output_from_another(model, prompts):
    ids = prompts["chat"]
    plain, plain_cache, _ = greedy_generate(model, ids, 12)
    choices, cache = greedy_check(model, ids, plain)
    assert choices == plain
    assert max_diff(cache, plain_cache) < 1e-4
    wrong = plain[:5] + [(plain[5] + 1) % model.config.vocab_size] + plain[6:]
    assert greedy_check(model, ids, wrong)[0] != wrong


def test_truncate_cache_keeps_the_first_entries(model, prompts):
    _, cache = model.forward(np.array([prompts["story"]]))
    cut = truncate_cache(cache, 5)
    assert all(k.shape[2] == v.shape[2] == 5 for k, v in cut)
    assert np.array_equal(cut[2][1], cache[2][1][:, :, :5])


def test_bad_arguments_name_the_field(model):
    with pytest.raises(ValueError, match="draft_layers"):
        draft_model(model, 5)
    with pytest.raises(ValueError, match="^k "):
        speculative_generate(model, 1, [1, 2], 4, 0)
    with pytest.raises(ValueError, match="^n_new"):
        speculative_generate(model, 1, [1, 2], 0, 4)
    with pytest.raises(ValueError, match="^accepted"):
        recurrent_rollback(4, 5, 100)


@pytest.mark.parametrize(("k", "accepted"), [(1, 0), (4, 2), (8, 8)])
def test_recurrent_rollback_keeps_one_snapshot_per_verified_position(k, accepted):
    r = recurrent_rollback(k, accepted, 1000)
    assert r == {
        "snapshots": k + 1,
        "snapshot_bytes": (k + 1) * 1000,
        "restored": accepted,
        "recompute_tokens": accepted + 1,
    }


def test_figure_reports_what_the_run_did():
    f = kvlab.spec_decode_figure()
    t, c = f["totals"], f["check"]
    assert c["same_tokens"] and c["cache_matches"]
    assert c["cache_entries"] == c["plain_cache_entries"] == f["prompt_tokens"] + f["params"]["n_new"] - 1
    assert t["new_tokens"] == f["params"]["n_new"] == t["plain_passes"]
    assert t["target_passes"] == 1 + len(f["steps"]) < t["plain_passes"]
    assert t["accepted"] == sum(s["accepted"] for s in f["steps"])
    assert t["proposed"] == sum(s["k"] for s in f["steps"]) == t["draft_passes"]
    assert t["mean_accepted"] == t["accepted"] / len(f["steps"])
    assert t["rolled_back"] == sum(
        s["target_cache"]["after_verify"] - s["target_cache"]["after_rollback"] for s in f["steps"]
    )
    assert f["text"] == c["plain_text"]
    run = speculative_generate(
        tiny.model_and_tokenizer()[0], 2, tiny.model_and_tokenizer()[1].encode(f["prompt_text"]), 20, 4
    )
    assert [s["accepted"] for s in f["steps"]] == [s["accepted"] for s in run["steps"]]


def test_figure_view_matches_the_steps():
    f = kvlab.spec_decode_figure(prompt="story", k=3, draft_layers=1, n_new=12)
    for s, v in zip(f["steps"], f["view"]["steps"]):
        states = [c["state"] for c in v["chips"]]
        assert states == ["accepted"] * s["accepted"] + ["rejected"] * (s["k"] - s["accepted"]) + ["target"]
        cells = [c["state"] for c in v["cells"]]
        assert len(cells) == s["target_cache"]["after_verify"]
        assert cells.count("dropped") == len(s["dropped"])
        assert cells.count("new") == s["accepted"] + 1
        assert (
            v["cache"]
            == f"{s['target_cache']['before']} → {s['target_cache']['after_verify']} → {s['target_cache']['after_rollback']}"
        )


def test_hybrid_snapshots_are_priced_from_the_catalogue():
    f = kvlab.spec_decode_figure(k=6)
    h = f["hybrid"]
    arch = model_architecture(HYBRID_MODEL)
    state = sum(layer.state_values for layer in arch.state_layers) * 4  # f32
    assert h["state_bytes"] == state and h["snapshots"] == 7 and h["snapshot_bytes"] == 7 * state
    assert h["tokens_of_kv"] == 7 * state // h["kv_bytes_per_token"]
    assert all(url.startswith("https://github.com/") for url in h["engine_sources"])


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"prompt": "poem"}, "prompt"),
        ({"k": "x"}, "k"),
        ({"draft_layers": None}, "draft_layers"),
        ({"n_new": "NaN"}, "n_new"),
    ],
)
def test_bad_input_gets_one_line_naming_the_field(kwargs, field):
    reply = json.loads(call_json("spec_decode_figure", json.dumps(kwargs)))
    assert reply["error"].startswith(f"ValueError: {field}")


def test_out_of_range_inputs_are_clamped_and_said():
    f = kvlab.spec_decode_figure(k=99, draft_layers=0, n_new=2)
    assert f["params"]["k"] == 8 and f["params"]["draft_layers"] == 1 and f["params"]["n_new"] == 2
    assert f["clamped"] == {"k": {"requested": 99, "used": 8}, "draft_layers": {"requested": 0, "used": 1}}


def test_the_worker_writes_the_weights_where_kvlab_reads_them():
    """kvlab.bridge names the file for the browser's worker; kvlab.core.tiny reads it from the same path."""
    spec = json.loads(call_json_files("spec_decode_figure"))
    assert spec["files"] == {"models/tiny/weights.npz": str(tiny.PACKED_WEIGHTS)}
    assert spec["what"]
    assert json.loads(call_json_files("race_figure")) == {"what": "", "files": {}}


def test_the_rejection_rule_gives_the_targets_distribution_exactly(model, prompts):
    """Speculative sampling: whatever the draft's q, the token that comes out follows the target's p,
    and the proposal is kept with probability 1 - TV(p, q); here with the tiny model's own p and q."""
    ids = prompts["chat"]
    draft = draft_model(model, 1)
    p = np.exp(model.forward(np.array([ids]))[0][0, -1].astype(np.float64))
    q = np.exp(draft.forward(np.array([ids]))[0][0, -1].astype(np.float64))
    p, q = p / p.sum(), q / q.sum()
    r = rejection_rule(p, q)
    assert np.abs(r["output"] - p).max() < 1e-12
    assert r["accept"] == pytest.approx(1 - 0.5 * np.abs(p - q).sum(), abs=1e-12)
    assert 0 < r["accept"] < 1
    rng = np.random.default_rng(0)
    for _ in range(20):
        p, q = rng.dirichlet(np.ones(6) * 0.5), rng.dirichlet(np.ones(6) * 0.5)
        assert np.abs(rejection_rule(p, q)["output"] - p).max() < 1e-12
    assert rejection_rule(p, p)["accept"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="^p and q"):
        rejection_rule([0.5, 0.5], [1.0])
