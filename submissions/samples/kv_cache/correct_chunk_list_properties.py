"""Correct: a list of per-call chunks; k_cache/v_cache are properties concatenating them; einsum projections and attention."""
import numpy as np
class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads
        self._k, self._v = [], []
    @property
    def k_cache(self):
        return np.concatenate(self._k, axis=2) if self._k else None
    @property
    def v_cache(self):
        return np.concatenate(self._v, axis=2) if self._v else None
    def _heads(self, t):
        B, L, _ = t.shape
        return np.einsum('blhd->bhld', t.reshape(B, L, self.num_heads, self.d_k))
    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        q, k, v = (self._heads(np.einsum('bld,de->ble', x, W)) for W in (W_q, W_k, W_v))
        if use_cache:
            self._k.append(k); self._v.append(v)
            k, v = self.k_cache, self.v_cache
        S = k.shape[2]; T = S - L
        s = np.einsum('bhld,bhsd->bhls', q, k) / np.sqrt(self.d_k)
        keep = np.arange(S)[None] <= (np.arange(L) + T)[:, None]
        s = np.where(keep, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        y = np.einsum('bhls,bhsd->blhd', s, v).reshape(B, L, D)
        return (y @ W_o).astype(x.dtype)
    def clear_cache(self):
        self._k, self._v = [], []
