"""Wrong (PyTorch track): the cache silently keeps only the last 32 tokens (a sliding window the
contract does not ask for): long sequences lose their oldest tokens.

Must fail: long_sequence
Mistake: attends_within_last_32
"""
import math

import torch

WINDOW = 32


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
                k = torch.cat([self.k_cache, k], 2)
                v = torch.cat([self.v_cache, v], 2)
            k, v = k[:, :, -max(WINDOW, L):], v[:, :, -max(WINDOW, L):]
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        s = q @ k.transpose(-1, -2) / math.sqrt(d)
        keep = torch.arange(S)[None] <= torch.arange(L)[:, None] + (S - L)
        w = torch.softmax(s.masked_fill(~keep, float("-inf")), -1)
        return (w @ v).transpose(1, 2).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self.k_cache = self.v_cache = None
