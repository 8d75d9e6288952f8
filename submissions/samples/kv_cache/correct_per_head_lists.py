"""Correct: per-batch, per-head Python loops; the cache is lists of per-token (B, H, d_k) arrays,
exposed as stacked (B, H, T, d_k) arrays; an additive float mask."""
import numpy as np


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model = d_model
        self.num_heads = num_heads
        self.keys = []     # one (B, H, d_k) array per token
        self.values = []

    @property
    def k_cache(self):
        return np.stack(self.keys, axis=2) if self.keys else None

    @property
    def v_cache(self):
        return np.stack(self.values, axis=2) if self.values else None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H = self.num_heads
        dk = D // H
        Q = (x @ W_q).reshape(B, L, H, dk)
        K_new = (x @ W_k).reshape(B, L, H, dk)
        V_new = (x @ W_v).reshape(B, L, H, dk)
        keys = list(self.keys) if use_cache else []
        values = list(self.values) if use_cache else []
        T = len(keys)
        for t in range(L):
            keys.append(K_new[:, t])
            values.append(V_new[:, t])
        if use_cache:
            self.keys, self.values = keys, values
        K = np.stack(keys, axis=1)       # (B, S, H, dk)
        V = np.stack(values, axis=1)
        S = K.shape[1]
        out = np.zeros((B, L, H, dk), dtype=x.dtype)
        bias = np.zeros((L, S), dtype=x.dtype)
        for i in range(L):
            bias[i, T + i + 1:] = -1e9
        for b in range(B):
            for h in range(H):
                scores = Q[b, :, h, :] @ K[b, :, h, :].T / np.sqrt(dk) + bias
                scores = scores - scores.max(axis=1, keepdims=True)
                w = np.exp(scores)
                w = w / w.sum(axis=1, keepdims=True)
                out[b, :, h, :] = w @ V[b, :, h, :]
        return (out.reshape(B, L, D) @ W_o).astype(x.dtype)

    def clear_cache(self):
        self.keys, self.values = [], []
