"""Wrong (PyTorch track): keeps the raw inputs and re-projects the keys/values of every cached token
at each step (right numbers, O(T*D^2) per decode step).

Must fail: decode_complexity
Mistake: recompute_kv
"""

import math

import torch


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.D, self.H, self.dk = d_model, num_heads, d_model // num_heads
        self.xs = None
        self.k_cache = self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        full = x if not use_cache or self.xs is None else torch.cat([self.xs, x], dim=1)
        split = lambda t: t.reshape(B, t.shape[1], self.H, self.dk).transpose(1, 2)  # noqa: E731
        q = split(x @ W_q)
        k, v = split(full @ W_k), split(full @ W_v)
        if use_cache:
            self.xs = full
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        s = q @ k.transpose(-1, -2) / math.sqrt(self.dk)
        s = s.masked_fill(torch.ones(L, S, dtype=torch.bool).triu(S - L + 1), float("-inf"))
        return (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self.xs = self.k_cache = self.v_cache = None
