"""Confuser: the keys are cached and only the new tokens' keys are projected, but the values of every
token seen are projected again at every step from a kept copy of the inputs: the work with W_v grows
with T, the work with W_k does not. Values and caches are right; only the decode cost is wrong. A sum
of the probe's paths hides where the cost is (a decode step and a chunk that both re-project the
values cost, summed, what the bank's chunk_reprojects_history costs), so a replay must match each path.

Must not name: chunk_reprojects_history, recompute_kv, "keys and values of all T cached tokens"
May name: "the keys or the values (or both) of all T cached tokens are re-projected"
"""
import math

import torch


class CachedAttention:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads:
            raise ValueError("d_model must be divisible by num_heads")
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.k_cache = self.v_cache = None
        self._tokens = None                    # every input seen, kept to re-project the values

    def _heads(self, t):
        B, L, _ = t.shape
        return t.reshape(B, L, self.num_heads, self.d_k).transpose(1, 2)

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        if D != self.num_heads * self.d_k:
            raise ValueError("x has the wrong width")
        q, k, v = self._heads(x @ W_q), self._heads(x @ W_k), self._heads(x @ W_v)
        if use_cache:
            if self.k_cache is not None:
                k = torch.cat([self.k_cache, k], dim=2)            # cached keys, new ones appended
                seq = torch.cat([self._tokens, x], dim=1)           # (B, T + L, D)
                v = self._heads(seq @ W_v)                          # every value re-projected: O(T * D^2)
            else:
                seq = x
            self._tokens, self.k_cache, self.v_cache = seq, k, v
        S = k.shape[2]
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        allowed = torch.arange(S)[None, :] <= torch.arange(L)[:, None] + (S - L)
        att = att.masked_fill(~allowed, float("-inf"))
        att = att - att.amax(dim=-1, keepdim=True)
        att = att.exp()
        att = att / att.sum(dim=-1, keepdim=True)
        y = (att @ v).transpose(1, 2).reshape(B, L, D)
        return y @ W_o

    def clear_cache(self):
        self.k_cache = self.v_cache = self._tokens = None
