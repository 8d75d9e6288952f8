"""Wrong (PyTorch track): calls F.scaled_dot_product_attention, which the exercise forbids.

Must fail: prefill_decode"""
Mistake: forbidden_api

import torch
import torch.nn.functional as F


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.h = d_model, num_heads
        self.d_k = d_model // num_heads
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape

        def heads(t):
            return t.view(B, L, self.h, self.d_k).permute(0, 2, 1, 3)

        q, k, v = heads(x @ W_q), heads(x @ W_k), heads(x @ W_v)
        if use_cache:
            if self.k_cache is not None:
                k = torch.cat((self.k_cache, k), dim=2)
                v = torch.cat((self.v_cache, v), dim=2)
            self.k_cache, self.v_cache = k, v
        S = k.shape[2]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=~torch.ones(L, S, dtype=torch.bool).triu(S - L + 1))
        return y.permute(0, 2, 1, 3).reshape(B, L, D) @ W_o
        future = torch.ones(L, S, dtype=torch.bool).triu(S - L + 1)
        s = s.masked_fill(future, float("-inf"))
        s = s - s.amax(-1, keepdim=True)
        w = s.exp()
        w = w / w.sum(-1, keepdim=True)
        return (w @ v).permute(0, 2, 1, 3).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self.k_cache = self.v_cache = None
