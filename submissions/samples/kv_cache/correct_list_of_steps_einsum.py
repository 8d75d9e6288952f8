"""Correct: the cache kept as a Python list of per-call (B, H, L, d_k) chunks, concatenated when
read; projections and attention by np.einsum; inputs converted with np.asarray; the causal mask
from np.triu of ones (bottom-right aligned) and np.where."""
import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} not divisible by num_heads={num_heads}")
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads
        self._ks, self._vs = [], []

    @property
    def k_cache(self):
        return np.concatenate(self._ks, axis=2) if self._ks else None

    @property
    def v_cache(self):
        return np.concatenate(self._vs, axis=2) if self._vs else None

    def clear_cache(self):
        self._ks, self._vs = [], []

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        x = np.asarray(x)
        B, L, D = x.shape
        H, d = self.num_heads, self.d_k
        q = np.einsum("bld,dhe->bhle", x, np.asarray(W_q).reshape(D, H, d))
        k = np.einsum("bld,dhe->bhle", x, np.asarray(W_k).reshape(D, H, d))
        v = np.einsum("bld,dhe->bhle", x, np.asarray(W_v).reshape(D, H, d))
        if use_cache:
            self._ks.append(k)
            self._vs.append(v)
            k, v = self.k_cache, self.v_cache
        S = k.shape[2]
        s = np.einsum("bhle,bhse->bhls", q, k) / np.sqrt(d)
        blocked = np.triu(np.ones((L, S), dtype=bool), k=S - L + 1)
        s = np.where(blocked, -np.inf, s)
        s = s - s.max(axis=-1, keepdims=True)
        p = np.exp(s)
        p = p / p.sum(axis=-1, keepdims=True)
        o = np.einsum("bhls,bhse->blhe", p, v).reshape(B, L, D)
        return np.einsum("bld,de->ble", o, np.asarray(W_o)).astype(x.dtype, copy=False)
