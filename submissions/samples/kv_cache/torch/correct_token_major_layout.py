"""Correct (PyTorch track): the cache stored token-major as (B, T, H, d_k) and exposed as
(B, H, T, d_k) through transpose views; scores by bmm over flattened batch*heads; a hand-written
softmax with a detached max; use_cache=False works on locals only."""
import math

import torch


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.num_heads = d_model, num_heads
        self._k = self._v = None

    @property
    def k_cache(self):
        return None if self._k is None else self._k.transpose(1, 2)

    @property
    def v_cache(self):
        return None if self._v is None else self._v.transpose(1, 2)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H = self.num_heads
        d = D // H
        q = (x @ W_q).reshape(B, L, H, d)
        k = (x @ W_k).reshape(B, L, H, d)
        v = (x @ W_v).reshape(B, L, H, d)
        if use_cache:
            if self._k is not None:
                k = torch.cat([self._k, k], dim=1)
                v = torch.cat([self._v, v], dim=1)
            self._k, self._v = k, v
        S = k.shape[1]
        qf = q.transpose(1, 2).reshape(B * H, L, d)
        kf = k.transpose(1, 2).reshape(B * H, S, d)
        vf = v.transpose(1, 2).reshape(B * H, S, d)
        s = torch.bmm(qf, kf.transpose(1, 2)) / math.sqrt(d)
        pos_q = torch.arange(L).unsqueeze(1) + (S - L)
        s = torch.where(torch.arange(S).unsqueeze(0) <= pos_q, s, torch.full_like(s, float("-inf")))
        m = s.amax(dim=-1, keepdim=True).detach()
        e = torch.exp(s - m)
        w = e / e.sum(dim=-1, keepdim=True)
        y = torch.bmm(w, vf).reshape(B, H, L, d).transpose(1, 2).reshape(B, L, D)
        return y @ W_o

    def clear_cache(self):
        self._k = self._v = None
