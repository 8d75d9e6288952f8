"""Correct (PyTorch track): a preallocated (B, H, max_len, d_k) buffer written in place, the caches
exposed as views of its first T positions (the static-cache style). Slicing the whole buffer must
not count as work in the decode-complexity probe.
"""

import math
import torch


class CachedAttention:
    def __init__(self, d_model, num_heads, max_len=512):
        self.d_model, self.num_heads = d_model, num_heads
        self.d_k = d_model // num_heads
        self.max_len = max_len
        self._k = self._v = None
        self.T = 0

    @property
    def k_cache(self):
        return None if self._k is None else self._k[:, :, : self.T]

    @property
    def v_cache(self):
        return None if self._v is None else self._v[:, :, : self.T]

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H, dk = self.num_heads, self.d_k
        q = (x @ W_q).view(B, L, H, dk).transpose(1, 2)
        k = (x @ W_k).view(B, L, H, dk).transpose(1, 2)
        v = (x @ W_v).view(B, L, H, dk).transpose(1, 2)
        if use_cache:
            if self._k is None:
                self._k = torch.zeros(B, H, self.max_len, dk, dtype=x.dtype)
                self._v = torch.zeros(B, H, self.max_len, dk, dtype=x.dtype)
            self._k[:, :, self.T:self.T + L] = k
            self._v[:, :, self.T:self.T + L] = v
            self.T += L
            k, v = self.k_cache, self.v_cache
        S = k.shape[2]
        s = q @ k.transpose(-1, -2) / math.sqrt(dk)
        mask = torch.arange(S)[None, :] <= torch.arange(L)[:, None] + (S - L)
        s = s.masked_fill(~mask, float("-inf"))
        y = torch.softmax(s, dim=-1) @ v
        return y.transpose(1, 2).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self._k = self._v = None
        self.T = 0
