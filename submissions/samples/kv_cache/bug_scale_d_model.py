"""Wrong: scales scores by 1/sqrt(d_model) instead of 1/sqrt(d_k).

Mistake: scaled_by_sqrt_d_model
Must fail: prefill_decode
"""
import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model = d_model
        self.num_heads = num_heads
        self.d_k = d_model // num_heads
        self.k_cache = None
        self.v_cache = None

    def split_heads(self, t):
        B, L, _ = t.shape
        return t.reshape(B, L, self.num_heads, self.d_k).transpose(0, 2, 1, 3)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        q = self.split_heads(x @ W_q)
        k = self.split_heads(x @ W_k)
        v = self.split_heads(x @ W_v)
        if use_cache:
            if self.k_cache is not None:
                k = np.concatenate([self.k_cache, k], axis=2)
                v = np.concatenate([self.v_cache, v], axis=2)
            self.k_cache = k
            self.v_cache = v
        S = k.shape[2]
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.d_model)
        mask = np.tril(np.ones((L, S), dtype=bool), k=S - L)
        scores = np.where(mask, scores, -np.inf)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = (weights @ v).transpose(0, 2, 1, 3).reshape(B, L, D)
        return (out @ W_o).astype(x.dtype)

    def clear_cache(self):
        self.k_cache = None
        self.v_cache = None
