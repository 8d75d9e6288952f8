"""Correct: attention computed one query position at a time (each position attends to the cached
keys up to its own offset), heads handled by reshape, a hand-written softmax per position; the
cache grows by np.concatenate. O(T*D) per decode step, as it should be."""
import math

import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads:
            raise ValueError("num_heads must divide d_model")
        self.d_model, self.num_heads = d_model, num_heads
        self.head_dim = d_model // num_heads
        self.k_cache = self.v_cache = None

    def clear_cache(self):
        self.k_cache = self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H, d = self.num_heads, self.head_dim
        q = (x @ W_q).reshape(B, L, H, d).transpose(0, 2, 1, 3)
        k = (x @ W_k).reshape(B, L, H, d).transpose(0, 2, 1, 3)
        v = (x @ W_v).reshape(B, L, H, d).transpose(0, 2, 1, 3)
        if use_cache:
            if self.k_cache is not None:
                k = np.concatenate([self.k_cache, k], axis=2)
                v = np.concatenate([self.v_cache, v], axis=2)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        out = np.empty((B, H, L, d), dtype=np.result_type(q, v))
        for i in range(L):
            visible = S - L + i + 1                                  # keys 0 .. S-L+i
            s = np.matmul(q[:, :, i:i + 1], np.swapaxes(k[:, :, :visible], -1, -2)) / math.sqrt(d)
            s = s - s.max(axis=-1, keepdims=True)
            e = np.exp(s)
            out[:, :, i:i + 1] = np.matmul(e / e.sum(axis=-1, keepdims=True), v[:, :, :visible])
        return out.transpose(0, 2, 1, 3).reshape(B, L, D) @ W_o
