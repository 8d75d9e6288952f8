"""Correct: concatenation along the time axis, einsum for scores, bottom-right mask via np.tril."""
import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.num_heads = d_model, num_heads
        self.head_dim = d_model // num_heads
        self.k_cache = None
        self.v_cache = None

    def _heads(self, t):
        B, L, _ = t.shape
        return t.reshape(B, L, self.num_heads, self.head_dim).transpose(0, 2, 1, 3)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        q, k, v = self._heads(x @ W_q), self._heads(x @ W_k), self._heads(x @ W_v)
        if use_cache:
            if self.k_cache is not None:
                k = np.concatenate((self.k_cache, k), axis=2)
                v = np.concatenate((self.v_cache, v), axis=2)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        scores = np.einsum("bhld,bhsd->bhls", q, k) / np.sqrt(self.head_dim).astype(x.dtype)
        mask = np.tril(np.ones((L, S), dtype=bool), k=S - L)
        scores = np.where(mask, scores, -np.inf)
        scores = scores - scores.max(-1, keepdims=True)
        w = np.exp(scores)
        w /= w.sum(-1, keepdims=True)
        out = np.einsum("bhls,bhsd->bhld", w, v).transpose(0, 2, 1, 3).reshape(B, L, D)
        return out @ W_o

    def clear_cache(self):
        self.k_cache = self.v_cache = None
