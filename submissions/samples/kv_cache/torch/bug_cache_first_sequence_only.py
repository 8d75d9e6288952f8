"""Wrong (PyTorch track): the cache keeps batch row 0 only (k[:1]) and broadcasts it over the batch
('all sequences share the prompt').

Must fail: batch, cache_shapes
Mistake: cache_keeps_batch_row_0
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
        if use_cache:
            if self.k_cache is not None:
                k = torch.cat([self.k_cache.expand(B, -1, -1, -1), k], 2)
                v = torch.cat([self.v_cache.expand(B, -1, -1, -1), v], 2)
            self.k_cache, self.v_cache = k[:1], v[:1]
        S = k.shape[2]
        s = q @ k.transpose(-1, -2) / math.sqrt(d)
        keep = torch.arange(S)[None] <= torch.arange(L)[:, None] + (S - L)
        w = torch.softmax(s.masked_fill(~keep, float("-inf")), -1)
        return (w @ v).transpose(1, 2).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self.k_cache = self.v_cache = None
