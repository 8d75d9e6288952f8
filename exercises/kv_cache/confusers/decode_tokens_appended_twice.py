"""Confuser: every single-token decode step appends its key/value to the cache twice (a prefill
appends once), so after a decode step the cache is longer than the T tokens seen, like a preallocated
buffer exposed whole, but its first T positions are not the keys of the tokens seen (a decoded token
sits twice among them) and the extra ones are not an unused tail.

Must not name: cache_exposes_preallocated_buffer, "preallocated buffer", "filled part"
May name: cache_appended_twice

(cache_appended_twice is its mistake on a check whose every call is a single token: there its output
is that mutant's.)
"""
import math

import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads:
            raise ValueError("d_model must be divisible by num_heads")
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.k_cache = self.v_cache = None

    def _heads(self, t):
        B, L, _ = t.shape
        return t.reshape(B, L, self.num_heads, self.d_k).transpose(0, 2, 1, 3)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        if D != self.num_heads * self.d_k:
            raise ValueError("x has the wrong width")
        q, k, v = self._heads(x @ W_q), self._heads(x @ W_k), self._heads(x @ W_v)
        if use_cache:
            new_k, new_v = (k, v) if L > 1 else (np.concatenate([k, k], axis=2), np.concatenate([v, v], axis=2))
            if self.k_cache is not None:
                k = np.concatenate([self.k_cache, new_k], axis=2)
                v = np.concatenate([self.v_cache, new_v], axis=2)
            else:
                k, v = new_k, new_v
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(self.d_k)
        allowed = np.arange(S)[None, :] <= np.arange(L)[:, None] + (S - L)
        att = np.where(allowed, att, -np.inf)
        att = np.exp(att - att.max(axis=-1, keepdims=True))
        att = att / att.sum(axis=-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(B, L, D)
        return (y @ W_o).astype(x.dtype, copy=False)

    def clear_cache(self):
        self.k_cache = self.v_cache = None
