"""Bug: for a batch of more than one sequence the cache keeps the raw tokens and re-projects the keys
and values of every cached token at each call (O(T * D^2) per decode step); a single sequence caches
projected keys and values as it should. A probe that decoded one sequence gave full marks (helper
hunt); the batched decode path sees the re-projection.

Must fail: decode_complexity
Mistake: recompute_kv
"""

import torch


class CachedAttention:
    def __init__(self, d_model, num_heads):
        self.d_model, self.h = d_model, num_heads
        self.d_k = d_model // num_heads
        self.x_hist = None
        self.k_cache = None
        self.v_cache = None

    def forward(self, x, W_q, W_k, W_v, W_o, use_cache=True):
        B, L, D = x.shape

        def heads(t):
            return t.reshape(B, -1, self.h, self.d_k).permute(0, 2, 1, 3)

        q = heads(x @ W_q)
        if use_cache:
            X = x if self.x_hist is None else torch.cat((self.x_hist, x), dim=1)
            self.x_hist = X
            if B > 1:
                k, v = heads(X @ W_k), heads(X @ W_v)          # every token re-projected
            else:
                k, v = heads(x @ W_k), heads(x @ W_v)
                if self.k_cache is not None:
                    k = torch.cat((self.k_cache, k), 2)
                    v = torch.cat((self.v_cache, v), 2)
            self.k_cache, self.v_cache = k, v
        else:
            k, v = heads(x @ W_k), heads(x @ W_v)
        S = k.shape[2]
        s = torch.matmul(q, k.transpose(2, 3)) / self.d_k ** 0.5
        future = torch.ones(L, S, dtype=torch.bool).triu(S - L + 1)
        s = s.masked_fill(future, float("-inf"))
        s = s - s.amax(-1, keepdim=True)
        w = s.exp()
        w = w / w.sum(-1, keepdim=True)
        return (w @ v).permute(0, 2, 1, 3).reshape(B, L, D) @ W_o

    def clear_cache(self):
        self.x_hist = self.k_cache = self.v_cache = None
