"""Correct: capacity-doubling preallocated buffers; k_cache/v_cache are properties returning views of the filled part."""
import numpy as np
class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model = d_model; self.num_heads = num_heads; self.dk = d_model // num_heads
        self._kb = self._vb = None; self._n = 0
    @property
    def k_cache(self):
        return None if self._kb is None else self._kb[:, :, :self._n]
    @property
    def v_cache(self):
        return None if self._vb is None else self._vb[:, :, :self._n]
    def clear_cache(self):
        self._kb = self._vb = None; self._n = 0
    def _grow(self, B, need, dtype):
        if self._kb is None:
            cap = max(4, need)
            self._kb = np.zeros((B, self.num_heads, cap, self.dk), dtype)
            self._vb = np.zeros_like(self._kb)
        elif need > self._kb.shape[2]:
            cap = max(need, 2 * self._kb.shape[2])
            for name in ("_kb", "_vb"):
                old = getattr(self, name)
                new = np.zeros(old.shape[:2] + (cap,) + old.shape[3:], old.dtype)
                new[:, :, :self._n] = old[:, :, :self._n]
                setattr(self, name, new)
    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape; H, dk = self.num_heads, self.dk
        f = lambda W: (x @ W).reshape(B, L, H, dk).transpose(0, 2, 1, 3)
        q, k, v = f(W_q), f(W_k), f(W_v)
        if use_cache:
            self._grow(B, self._n + L, x.dtype)
            self._kb[:, :, self._n:self._n + L] = k; self._vb[:, :, self._n:self._n + L] = v
            self._n += L
            k, v = self.k_cache, self.v_cache
        S = k.shape[2]; T = S - L
        s = q @ k.transpose(0, 1, 3, 2) * (dk ** -0.5)
        s = s + np.where(np.arange(S) <= np.arange(L)[:, None] + T, 0.0, -np.inf).astype(s.dtype)
        s = np.exp(s - s.max(-1, keepdims=True)); s /= s.sum(-1, keepdims=True)
        return ((s @ v).transpose(0, 2, 1, 3).reshape(B, L, D) @ W_o).astype(x.dtype)
