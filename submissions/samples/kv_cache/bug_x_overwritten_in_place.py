"""Wrong: computes the keys and values first, then writes the query projection into the caller's x
(np.matmul(..., out=x)) to save a buffer; every output and cache is right, but x is destroyed.

Mistake: x_overwritten_in_place
Must fail: inputs_unchanged
"""
import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model = d_model
        self.num_heads = num_heads
        self.k_cache = None
        self.v_cache = None

    def clear_cache(self):
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H = self.num_heads
        dk = D // H

        def split(t):
            return t.reshape(B, L, H, dk).transpose(0, 2, 1, 3)

        k, v = split(x @ W_k), split(x @ W_v)
        np.matmul(x.copy(), W_q, out=x)
        q = split(x)
        if use_cache:
            if self.k_cache is not None:
                k = np.concatenate([self.k_cache, k], 2)
                v = np.concatenate([self.v_cache, v], 2)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)
        s = np.where(np.arange(S) <= np.arange(L)[:, None] + S - L, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        return ((s @ v).transpose(0, 2, 1, 3).reshape(B, L, D) @ W_o).astype(x.dtype)
