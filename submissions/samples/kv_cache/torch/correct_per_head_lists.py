"""Correct (PyTorch track): per-head Python lists of key/value chunks, concatenated when read,
attention in float64 then cast back."""

import math

import torch


class CachedAttention:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads:
            raise ValueError("d_model % num_heads != 0")
        self.D, self.H, self.dk = d_model, num_heads, d_model // num_heads
        self._k, self._v = [], []

    @property
    def k_cache(self):
        return torch.cat(self._k, dim=2) if self._k else None

    @property
    def v_cache(self):
        return torch.cat(self._v, dim=2) if self._v else None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        split = lambda t: t.reshape(B, L, self.H, self.dk).transpose(1, 2)  # noqa: E731
        q, k, v = split(x @ W_q), split(x @ W_k), split(x @ W_v)
        if use_cache:
            self._k.append(k)
            self._v.append(v)
            k, v = self.k_cache, self.v_cache
        S = k.shape[2]
        T = S - L
        s = (q.double() @ k.double().transpose(-1, -2)) / math.sqrt(self.dk)
        i = torch.arange(L).unsqueeze(1)
        j = torch.arange(S).unsqueeze(0)
        s = torch.where(j <= i + T, s, torch.tensor(float("-inf"), dtype=s.dtype))
        w = torch.softmax(s, dim=-1)
        y = (w @ v.double()).transpose(1, 2).reshape(B, L, D).to(x.dtype)
        return y @ W_o

    def clear_cache(self):
        self._k, self._v = [], []
