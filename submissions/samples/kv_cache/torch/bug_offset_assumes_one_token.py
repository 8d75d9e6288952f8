"""Wrong (PyTorch track): the cache offset taken as S - 1 (every call after the first assumed to be
a single-token decode): query i of a multi-token chunk is placed at the last position.

Must fail: chunked_prefill
Mistake: causal_mask_only_first_call
"""
import math

import torch


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.num_heads = d_model, num_heads
        self.k_cache = self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H, d = self.num_heads, D // self.num_heads
        sp = lambda t: t.view(B, L, H, d).transpose(1, 2)
        q, k, v = sp(x @ W_q), sp(x @ W_k), sp(x @ W_v)
        had_cache = use_cache and self.k_cache is not None
        if use_cache:
            if self.k_cache is not None:
                k = torch.cat([self.k_cache, k], 2)
                v = torch.cat([self.v_cache, v], 2)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        offset = S - 1 if had_cache else 0
        s = q @ k.transpose(-1, -2) / math.sqrt(d)
        keep = torch.arange(S)[None] <= torch.arange(L)[:, None] + offset
        w = torch.softmax(s.masked_fill(~keep, float("-inf")), -1)
        return (w @ v).transpose(1, 2).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self.k_cache = self.v_cache = None
