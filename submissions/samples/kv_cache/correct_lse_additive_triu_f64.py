"""Correct: float64 accumulation then cast back; additive mask from np.triu(-inf, k=T+1); log-sum-exp softmax; empty (T=0) arrays after clear."""
import numpy as np


class CachedAttention:
    def __init__(self, d_model: int, num_heads: int):
        self.d_model, self.num_heads = int(d_model), int(num_heads)
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        x = np.asarray(x)
        B, L, D = x.shape
        H = self.num_heads
        dk = D // H
        heads = lambda t: np.einsum("blhd->bhld", t.reshape(B, L, H, dk))
        q = heads(x.astype(np.float64) @ W_q.astype(np.float64))
        k_new = heads(x @ W_k)
        v_new = heads(x @ W_v)
        if use_cache:
            past_k = self.k_cache if self.k_cache is not None else np.zeros((B, H, 0, dk), x.dtype)
            past_v = self.v_cache if self.v_cache is not None else np.zeros((B, H, 0, dk), x.dtype)
            k_all = np.concatenate((past_k, k_new), axis=-2)
            v_all = np.concatenate((past_v, v_new), axis=-2)
            self.k_cache, self.v_cache = k_all, v_all
        else:
            k_all, v_all = k_new, v_new
        S = k_all.shape[-2]
        T = S - L
        bias = np.triu(np.full((L, S), -np.inf), k=T + 1)
        s = np.einsum("bhqd,bhkd->bhqk", q, k_all.astype(np.float64)) / np.sqrt(dk) + bias
        m = s.max(-1, keepdims=True)
        lse = m + np.log(np.exp(s - m).sum(-1, keepdims=True))
        y = np.einsum("bhqk,bhkd->bhqd", np.exp(s - lse), v_all.astype(np.float64))
        y = np.einsum("bhld->blhd", y).reshape(B, L, D)
        return (y @ W_o.astype(np.float64)).astype(x.dtype)

    def clear_cache(self):
        self.k_cache = self.v_cache = None
