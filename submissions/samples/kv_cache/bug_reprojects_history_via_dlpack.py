"""Bug: the cache keeps the raw tokens and re-projects the keys and values of every cached token at each
call, on plain ndarrays made with np.from_dlpack (which dropped the counting array: helper hunt, full
marks); np.from_dlpack now keeps it.

Must fail: decode_complexity
Mistake: recompute_kv
"""

import numpy as np


def _plain(a):
    return np.from_dlpack(np.ascontiguousarray(a))


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.num_heads = d_model, num_heads
        self.head_dim = d_model // num_heads
        self.x_hist = None
        self.k_cache = None
        self.v_cache = None

    def _heads(self, t):
        B, L, _ = t.shape
        return t.reshape(B, L, self.num_heads, self.head_dim).transpose(0, 2, 1, 3)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        q = self._heads(x @ W_q)
        if use_cache:
            X = _plain(x) if self.x_hist is None else np.concatenate((self.x_hist, _plain(x)), axis=1)
            self.x_hist = X
            k, v = self._heads(X @ _plain(W_k)), self._heads(X @ _plain(W_v))   # all tokens again
            self.k_cache, self.v_cache = k, v
        else:
            k, v = self._heads(x @ W_k), self._heads(x @ W_v)
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
        self.x_hist = self.k_cache = self.v_cache = None
