"""Correct (PyTorch track): keys/values kept as a Python list of per-call chunks, k_cache/v_cache as
properties that torch.cat them on read; attention by torch.einsum, causal mask from torch.triu with
the cache offset, F.softmax."""
import math

import torch
import torch.nn.functional as F


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads
        self._k, self._v = [], []

    @property
    def k_cache(self):
        return torch.cat(self._k, dim=2) if self._k else None

    @property
    def v_cache(self):
        return torch.cat(self._v, dim=2) if self._v else None

    def _heads(self, t):
        B, L, _ = t.shape
        return t.view(B, L, self.num_heads, self.d_k).permute(0, 2, 1, 3)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        q, k, v = self._heads(x @ W_q), self._heads(x @ W_k), self._heads(x @ W_v)
        if use_cache:
            self._k.append(k)
            self._v.append(v)
            k, v = self.k_cache, self.v_cache
        S = k.shape[2]
        s = torch.einsum("bhld,bhsd->bhls", q, k) / math.sqrt(self.d_k)
        future = torch.triu(torch.ones(L, S, dtype=torch.bool), diagonal=S - L + 1)
        w = F.softmax(s.masked_fill(future, float("-inf")), dim=-1)
        y = torch.einsum("bhls,bhsd->bhld", w, v)
        return y.permute(0, 2, 1, 3).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self._k, self._v = [], []
