"""Wrong: stores the new keys/values in the cache but attends only over the new tokens, never reading the cache.

Mistake: cache_written_never_read
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
                self.k_cache = np.concatenate([self.k_cache, k], axis=2)
                self.v_cache = np.concatenate([self.v_cache, v], axis=2)
            else:
                self.k_cache, self.v_cache = k, v
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
