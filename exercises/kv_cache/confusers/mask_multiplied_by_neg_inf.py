"""Confuser: the additive causal mask is built as (1 - allowed) * -inf, and 0 * -inf is NaN, so every
score becomes NaN: the output is NaN although no query row is fully masked (every new token sees
itself).

Must not name: "fully masked row", "every new token must at least see itself"
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
            if self.k_cache is not None:
                k = np.concatenate([self.k_cache, k], axis=2)
                v = np.concatenate([self.v_cache, v], axis=2)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        allowed = (np.arange(S)[None, :] <= np.arange(L)[:, None] + (S - L)).astype(np.float64)
        with np.errstate(invalid="ignore"):
            att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(self.d_k) + (1.0 - allowed) * -np.inf
            att = np.exp(att - att.max(axis=-1, keepdims=True))
            att = att / att.sum(axis=-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(B, L, D)
        return (y @ W_o).astype(x.dtype, copy=False)

    def clear_cache(self):
        self.k_cache = self.v_cache = None
