"""Correct: a preallocated buffer that doubles when full; k_cache/v_cache expose the filled part."""
import math

import numpy as np


class CachedAttention:
    def __init__(self, d_model: int, num_heads: int):
        self.d_model = d_model
        self.h = num_heads
        self.dk = d_model // num_heads
        self._k = self._v = None
        self._len = 0

    @property
    def k_cache(self):
        return None if self._k is None else self._k[:, :, :self._len]

    @property
    def v_cache(self):
        return None if self._v is None else self._v[:, :, :self._len]

    def _append(self, k, v):
        B, H, L, dk = k.shape
        if self._k is None:
            cap = max(8, L)
            self._k = np.empty((B, H, cap, dk), dtype=k.dtype)
            self._v = np.empty((B, H, cap, dk), dtype=v.dtype)
        need = self._len + L
        if need > self._k.shape[2]:
            cap = max(need, 2 * self._k.shape[2])
            for name in ("_k", "_v"):
                old = getattr(self, name)
                new = np.empty((B, H, cap, dk), dtype=old.dtype)
                new[:, :, :self._len] = old[:, :, :self._len]
                setattr(self, name, new)
        self._k[:, :, self._len:need] = k
        self._v[:, :, self._len:need] = v
        self._len = need

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        split = lambda t: t.reshape(B, L, self.h, self.dk).swapaxes(1, 2)
        q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)
        if use_cache:
            self._append(k, v)
            k, v = self.k_cache, self.v_cache
        T = k.shape[2] - L
        s = (q @ k.swapaxes(-1, -2)) * (1.0 / math.sqrt(self.dk))
        future = np.arange(k.shape[2])[None, :] > (T + np.arange(L))[:, None]
        s[..., future] = -np.inf
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p = p / p.sum(axis=-1, keepdims=True)
        y = (p @ v).swapaxes(1, 2).reshape(B, L, D)
        return y @ W_o

    def clear_cache(self):
        self._k = self._v = None
        self._len = 0
