"""Correct (PyTorch track): a loop over heads on column slices, scores in the input dtype, a
float64 softmax (torch.softmax(dtype=torch.float64)) cast back, the causal mask as an additive
bias built once per call from torch.tril of ones with the cache offset."""
import math

import torch


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model = d_model
        self.num_heads = num_heads
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape
        H, d = self.num_heads, D // self.num_heads
        Q, K, V = x @ W_q, x @ W_k, x @ W_v
        K = K.view(B, L, H, d).transpose(1, 2)
        V = V.view(B, L, H, d).transpose(1, 2)
        if use_cache:
            if self.k_cache is not None:
                K = torch.cat((self.k_cache, K), 2)
                V = torch.cat((self.v_cache, V), 2)
            self.k_cache, self.v_cache = K, V
        S = K.shape[2]
        keep = torch.tril(torch.ones(L, S, dtype=torch.bool), diagonal=S - L)
        bias = torch.zeros(L, S, dtype=x.dtype).masked_fill(~keep, float("-inf"))
        heads = []
        for h in range(H):
            q = Q[..., h * d:(h + 1) * d]                       # (B, L, d)
            s = q @ K[:, h].transpose(-1, -2) / math.sqrt(d) + bias
            w = torch.softmax(s, dim=-1, dtype=torch.float64).to(x.dtype)
            heads.append(w @ V[:, h])
        return torch.cat(heads, dim=-1) @ W_o

    def clear_cache(self):
        self.k_cache = self.v_cache = None
