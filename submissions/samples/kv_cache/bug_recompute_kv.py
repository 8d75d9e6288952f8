"""Wrong (in cost, not in numbers): keeps every input token and re-projects the keys and values of the
whole sequence at every step, O(T*D^2) per decode step instead of O(T*D + D^2).

Must fail: decode_complexity
Mistake: recompute_kv
"""
import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model = d_model
        self.num_heads = num_heads
        self.tokens = None          # every input token so far, (B, T, D)
        self.k_cache = None
        self.v_cache = None

    def _split(self, t):
        B, L, D = t.shape
        return t.reshape(B, L, self.num_heads, D // self.num_heads).transpose(0, 2, 1, 3)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        seq = x if (self.tokens is None or not use_cache) else np.concatenate([self.tokens, x], axis=1)
        k = self._split(seq @ W_k)          # recomputed for every token, every step
        v = self._split(seq @ W_v)
        if use_cache:
            self.tokens = seq
            self.k_cache, self.v_cache = k, v
        q = self._split(x @ W_q)
        S = seq.shape[1]
        d_k = D // self.num_heads
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_k)
        scores = np.where(np.tril(np.ones((L, S), bool), k=S - L), scores, -np.inf)
        w = np.exp(scores - scores.max(-1, keepdims=True))
        w = w / w.sum(-1, keepdims=True)
        y = (w @ v).transpose(0, 2, 1, 3).reshape(B, L, D)
        return (y @ W_o).astype(x.dtype)

    def clear_cache(self):
        self.tokens = self.k_cache = self.v_cache = None
