"""The kvlab tiny GPT in PyTorch, nanoGPT style: one file, in build order.

LayerNorm -> rotary embedding -> CausalSelfAttention -> MLP -> Block -> GPTConfig -> GPT.

Unlike nanoGPT: positions are rotary (RoPE) instead of a learned table, because
the eviction demos drop early tokens from the KV cache and keep the original
position ids of the tokens that stay; with RoPE attention scores depend only on
position differences, so a kept token means the same thing before and after
an eviction, and no position table runs out. The forward takes optional
`position_ids`.

Also unlike nanoGPT: smeared keys (each attention key mixed with the previous
slot's key, a learned gate per head) and one head started as a copy head
(`init_copy_head`), so that recalling a door code hundreds of tokens back is
something this small model learns in minutes on a CPU; models/README.md says
what was tried without them (nothing was recalled).

Used for training only; the browser runs the ONNX export, and
pycode/kvlab/gpt.py is the numpy reference of the same maths.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
from torch.nn import functional as F


class LayerNorm(nn.Module):
    """LayerNorm with weight and bias (eps 1e-5)."""

    def __init__(self, ndim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim))

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


def rope_inv_freq(head_dim: int, base: float, rope_pairs: int = 0):
    """Rotation speed of each of the hs/2 pairs; pairs from `rope_pairs` on are not rotated
    (partial rotary, as in GPT-NeoX): position-free dims for matching content far back."""
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))  # (hs/2,)
    if rope_pairs:
        inv_freq[rope_pairs:] = 0.0
    return inv_freq


def rope_cos_sin(position_ids, head_dim: int, base: float, rope_pairs: int = 0):
    """cos, sin of shape (B, T, hs) for integer positions (B, T); rotate-half layout."""
    inv_freq = rope_inv_freq(head_dim, base, rope_pairs)  # (hs/2,)
    freqs = position_ids.float()[..., None] * inv_freq  # (B, T, hs/2)
    emb = torch.cat([freqs, freqs], dim=-1)  # (B, T, hs)
    return emb.cos(), emb.sin()


def apply_rope(x, cos, sin):
    """x (B, nh, T, hs) rotated by position: x*cos + rotate_half(x)*sin."""
    h = x.shape[-1] // 2
    rot = torch.cat([-x[..., h:], x[..., :h]], dim=-1)  # rotate_half
    return x * cos[:, None] + rot * sin[:, None]


def smear_keys(k, smear):
    """Smeared keys: k'_j = g k_j + (1 - g) k_{j-1}, g = sigmoid(smear) per head, k_{-1} = 0.

    The KV cache keeps the plain (rotated) keys; the mix is taken over the whole key
    sequence (cached + new) inside attention, so the cache layout is unchanged.
    With a key that also carries the previous token, one head can do what an
    induction circuit needs two layers for: match "the token before j" against
    the current token and copy token j (Olsson et al. 2022, "In-context learning
    and induction heads", the smeared-key model).
    """
    g = torch.sigmoid(smear)[None, :, None, None]  # (1, nh, 1, 1)
    prev = F.pad(k, (0, 0, 1, 0))[:, :, :-1]  # k_{j-1}, zeros at j = 0
    return g * k + (1 - g) * prev


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd)  # q, k, v for all heads
        self.c_proj = nn.Linear(config.n_embd, config.n_embd)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        if config.smear_keys:  # per-head mix of each key with its predecessor's (see smear_keys)
            self.smear = nn.Parameter(torch.full((config.n_head,), config.smear_init))

    def forward(self, x, cos, sin):
        B, T, C = x.size()  # batch, sequence length, embedding dim (n_embd)
        hs = C // self.n_head
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        q = q.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if hasattr(self, "smear"):
            k = smear_keys(k, self.smear)
        # fast path; the readable path is pycode/kvlab/gpt.py (scores, mask, softmax, @ v)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # re-assemble all head outputs
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x)))  # exact (erf) GELU


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd)
        self.mlp = MLP(config)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.ln_1(x), cos, sin)
        x = x + self.mlp(self.ln_2(x))
        return x


@dataclass
class GPTConfig:
    block_size: int = 512  # training context; RoPE itself has no hard limit
    vocab_size: int = 768  # 256 bytes + 512 BPE merges
    n_layer: int = 4  # induction (find the cue, copy what followed) needs >= 2
    n_head: int = 4
    n_embd: int = 128
    rope_base: float = 10000.0
    rope_pairs: int = 0  # rotated (q, k) pairs per head, 0 = all; the rest stay position-free
    smear_keys: bool = False  # mix each key with the previous position's key (per-head learned gate)
    smear_init: float = 0.0  # gate logit at init: sigmoid(0) = half own key, half the previous one


class GPT(nn.Module):
    def __init__(self, config: GPTConfig):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(
            {
                "wte": nn.Embedding(config.vocab_size, config.n_embd),
                "h": nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                "ln_f": LayerNorm(config.n_embd),
            }
        )
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():  # scaled init of residual projections (GPT-2)
            if pn.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, idx, targets=None, position_ids=None):
        B, T = idx.size()
        if position_ids is None:
            position_ids = torch.arange(T, device=idx.device)[None].expand(B, T)
        cos, sin = rope_cos_sin(
            position_ids, self.config.n_embd // self.config.n_head, self.config.rope_base, self.config.rope_pairs
        )
        x = self.transformer.wte(idx)  # (B, T, C); no position embedding: RoPE inside attention
        for block in self.transformer.h:
            x = block(x, cos, sin)
        x = self.transformer.ln_f(x)
        logits = self.lm_head(x)  # (B, T, vocab)
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1), ignore_index=-1)
        return logits, loss

    def state_dict_numpy(self) -> dict:
        """Weights as float32 numpy arrays, names as in weights.npz (lm_head tied to wte)."""
        return {k: v.detach().float().cpu().numpy() for k, v in self.state_dict().items() if k != "lm_head.weight"}


def init_previous_token_head(model: GPT, layer: int = 0, head: int = 0, gap: float = 8.0) -> None:
    """Start one head attending to the previous token (an inductive bias, not a rule).

    Induction (find the earlier occurrence of the current token, copy what followed it)
    needs a previous-token head in an early layer that a later head can compose with.
    Tiny models trained from scratch sit on a long loss plateau before such a head
    appears. Here the q and k *biases* of one head are set so that, after the rotary
    embedding, q_m . k_n = sum_j a^2 cos((m - n - 1) theta_j): largest at n = m - 1.
    Weights stay random and every parameter keeps training (the biases too), so the
    model is free to unlearn it; it only starts off the plateau.
    """
    C, H = model.config.n_embd, model.config.n_head
    D = C // H
    theta = rope_inv_freq(D, model.config.rope_base, model.config.rope_pairs)  # (D/2,)
    use = torch.zeros(D // 2)
    use[:6] = 1.0  # the six fastest rotations tell neighbours apart
    # score gap between offset 1 and offset 0 per unit a^2, after the 1/sqrt(D) scale
    per_a2 = float((use * (1 - torch.cos(theta))).sum()) / math.sqrt(D)
    a = math.sqrt(gap / per_a2)
    q = torch.cat([a * use * torch.cos(theta), -a * use * torch.sin(theta)])  # pre-rotated by one step
    k = torch.cat([a * use, torch.zeros(D // 2)])
    bias = model.transformer.h[layer].attn.c_attn.bias
    with torch.no_grad():
        bias[head * D : (head + 1) * D] = q
        bias[C + head * D : C + (head + 1) * D] = k


def init_copy_head(model: GPT, layer: int = 0, head: int = 0, qk_gain: float = 2.0, smear_logit: float = -4.0) -> None:
    """Start one smeared-key head as a copy (induction) head; every weight stays trainable.

    With smeared keys the key of slot j is mostly the key of token j-1. Set q and k of the
    head to the same random projection of the token (on the position-free dims only) and
    the head attends to the slots that *follow* earlier copies of the current token; set
    v and the head's slice of c_proj to pass the attended token's identity on (tied
    embeddings turn it into that token's logit). That is "find where the current token
    occurred before and predict what came next" from step 0, which a tiny model otherwise
    reaches only after a long plateau. Training is free to change or drop it.
    """
    cfg = model.config
    C, H = cfg.n_embd, cfg.n_head
    D = C // H
    gen = torch.Generator().manual_seed(1234 + layer * H + head)
    free = [j for j in range(D) if (j % (D // 2)) >= cfg.rope_pairs] if cfg.rope_pairs else list(range(D))
    R = torch.linalg.qr(torch.randn(C, len(free), generator=gen))[0].T  # (n_free, C), orthonormal rows
    P = torch.linalg.qr(torch.randn(C, D, generator=gen))[0].T  # (D, C), orthonormal rows
    attn = model.transformer.h[layer].attn
    W, b = attn.c_attn.weight, attn.c_attn.bias
    with torch.no_grad():
        rows = head * D + torch.tensor(free)  # the head's position-free q rows; k rows are C further
        W[head * D : (head + 1) * D] = 0.0
        W[C + head * D : C + (head + 1) * D] = 0.0
        W[rows] = qk_gain * R
        W[C + rows] = qk_gain * R
        b[head * D : (head + 1) * D] = 0.0
        b[C + head * D : C + (head + 1) * D] = 0.0
        W[2 * C + head * D : 2 * C + (head + 1) * D] = P
        attn.c_proj.weight[:, head * D : (head + 1) * D] = P.T
        if hasattr(attn, "smear"):
            attn.smear[head] = smear_logit
