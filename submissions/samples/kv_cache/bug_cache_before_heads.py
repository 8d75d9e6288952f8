"""Wrong: caches the projected keys/values before splitting heads, as (B, T, D); the numbers are right but the cache does not have the required (B, H, T, d_k) layout.

Mistake: cache_stored_before_head_split
Must fail: cache_shapes
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
        k = x @ W_k
        v = x @ W_v
        if use_cache:
            if self.k_cache is not None:
                k = np.concatenate([self.k_cache, k], axis=1)
                v = np.concatenate([self.v_cache, v], axis=1)
            self.k_cache = k
            self.v_cache = v
        k = self.split_heads(k)
        v = self.split_heads(v)
        S = k.shape[2]
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.d_k)
        mask = np.tril(np.ones((L, S), dtype=bool), k=S - L)
        scores = np.where(mask, scores, -np.inf)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = (weights @ v).transpose(0, 2, 1, 3).reshape(B, L, D)
        return (out @ W_o).astype(x.dtype)

    def clear_cache(self):
        self.k_cache = None
        self.v_cache = None
