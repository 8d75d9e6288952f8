"""Wrong: a preallocated buffer of 64 positions exposed whole as k_cache/v_cache; the attention itself
uses only the filled part, but the cache attributes do not have shape (B, H, T, d_k).

Mistake: cache_exposes_preallocated_buffer
Must fail: cache_shapes
"""
import numpy as np

MAX_LEN = 64


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads
        self.k_cache = self.v_cache = None
        self.pos = 0

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H, dk = self.num_heads, self.d_k
        q = (x @ W_q).reshape(B, L, H, dk).transpose(0, 2, 1, 3)
        k = (x @ W_k).reshape(B, L, H, dk).transpose(0, 2, 1, 3)
        v = (x @ W_v).reshape(B, L, H, dk).transpose(0, 2, 1, 3)
        if use_cache:
            if self.k_cache is None:
                self.k_cache = np.zeros((B, H, MAX_LEN, dk), dtype=x.dtype)
                self.v_cache = np.zeros((B, H, MAX_LEN, dk), dtype=x.dtype)
            self.k_cache[:, :, self.pos:self.pos + L] = k
            self.v_cache[:, :, self.pos:self.pos + L] = v
            self.pos += L
            k, v = self.k_cache[:, :, :self.pos], self.v_cache[:, :, :self.pos]
        S = k.shape[2]
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dk)
        s = np.where(np.arange(S)[None, :] <= np.arange(L)[:, None] + S - L, s, -np.inf)
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return ((p @ v).transpose(0, 2, 1, 3).reshape(B, L, D) @ W_o).astype(x.dtype)

    def clear_cache(self):
        self.k_cache = self.v_cache = None
        self.pos = 0
