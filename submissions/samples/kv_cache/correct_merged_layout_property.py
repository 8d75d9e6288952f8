"""Correct: the cache kept merged as (B, T, D) internally; k_cache/v_cache properties split heads on read; fused W_qkv projection."""
import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads:
            raise ValueError("d_model % num_heads != 0")
        self.D, self.H = d_model, num_heads
        self.dk = d_model // num_heads
        self._k = None
        self._v = None

    def _split(self, t):
        B, T, _ = t.shape
        return t.reshape(B, T, self.H, self.dk).transpose(0, 2, 1, 3)

    @property
    def k_cache(self):
        return None if self._k is None else self._split(self._k)

    @property
    def v_cache(self):
        return None if self._v is None else self._split(self._v)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        qkv = x @ np.concatenate([W_q, W_k, W_v], axis=1)
        q, k, v = np.split(qkv, 3, axis=-1)
        if use_cache:
            if self._k is not None:
                k = np.concatenate([self._k, k], axis=1)
                v = np.concatenate([self._v, v], axis=1)
            self._k, self._v = k, v
        S = k.shape[1]
        T = S - L
        qh, kh, vh = self._split(q), self._split(k), self._split(v)
        s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(self.dk).astype(x.dtype)
        s = np.where(np.tri(L, S, k=T, dtype=bool), s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        y = (s @ vh).transpose(0, 2, 1, 3).reshape(B, L, D)
        return (y @ W_o).astype(x.dtype)

    def clear_cache(self):
        self._k = self._v = None
