"""Confuser: pads each multi-token chunk to a multiple of 4 tokens (zero rows) before the K/V
projection, 'for alignment', and caches the padded keys/values: the zero tokens stay in the cache
and are attended by later calls (keys 0, values 0).

The cache-length hint reads a cache whose first T positions are right and whose rest holds one
constant; it used to add "(the rest unused)", which is false here (later calls attend to the zero
rows): it now says what it reads, a preallocated buffer as the example.

Must not name: "the rest unused", "must be exposed as its filled part", cache_exposes_preallocated_buffer
May name: "the rest hold one constant"
"""
import numpy as np
class CachedAttention:
    BLOCK = 4
    def __init__(self, d_model, num_heads):
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads
        self.k_cache = self.v_cache = None
    def _heads(self, t):
        B, L, _ = t.shape
        return t.reshape(B, L, self.num_heads, self.d_k).transpose(0, 2, 1, 3)
    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        q = self._heads(x @ W_q)
        if L > 1:
            pad = (-L) % self.BLOCK
            xp = np.concatenate([x, np.zeros((B, pad, D), x.dtype)], axis=1)
        else:
            xp = x
        k, v = self._heads(xp @ W_k), self._heads(xp @ W_v)
        T = 0
        if use_cache:
            if self.k_cache is not None:
                T = self.k_cache.shape[2]
                k = np.concatenate([self.k_cache, k], axis=2)
                v = np.concatenate([self.v_cache, v], axis=2)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(self.d_k)
        keep = np.arange(S)[None] <= (np.arange(L) + T)[:, None]
        s = np.where(keep, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        y = (s @ v).transpose(0, 2, 1, 3).reshape(B, L, D)
        return (y @ W_o).astype(x.dtype)
    def clear_cache(self):
        self.k_cache = self.v_cache = None
