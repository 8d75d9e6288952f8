"""Confuser: the offset T is read from self.k_cache AFTER the new keys were appended (T = S with a cache),
so the mask allows every key for every call; uncached calls (use_cache=False) keep the right mask.

The hand-written replay of a missing mask reproduces the output; its sentence now leads with what it
proves (new token i attended to the tokens after it) and gives a missing mask and a mask whose
offset hides nothing as the two examples.

Must not name: "no causal mask inside a multi-token prefill:", causal_top_left
May name: no_causal_mask, "attended to the new tokens after it"
"""

import torch


class CachedAttention:
    def __init__(self, d_model, num_heads):
        if d_model % num_heads:
            raise ValueError("d_model must be divisible by num_heads")
        self.d_model, self.h = d_model, num_heads
        self.d_k = d_model // num_heads
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape

        def heads(t):
            return t.reshape(B, L, self.h, self.d_k).transpose(1, 2)

        q, k, v = heads(x @ W_q), heads(x @ W_k), heads(x @ W_v)
        if use_cache:
            if self.k_cache is not None:
                k = torch.cat((self.k_cache, k), dim=2)
                v = torch.cat((self.v_cache, v), dim=2)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        T = self.k_cache.shape[2] if (use_cache and self.k_cache is not None) else 0  # read after update
        s = q @ k.transpose(-2, -1) / self.d_k ** 0.5
        allowed = torch.arange(S)[None, :] <= torch.arange(L)[:, None] + T
        s = s.masked_fill(~allowed, float("-inf"))
        w = torch.softmax(s, dim=-1)
        return (w @ v).transpose(1, 2).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self.k_cache = self.v_cache = None
