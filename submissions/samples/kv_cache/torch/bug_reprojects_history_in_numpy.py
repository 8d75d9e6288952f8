"""Bug: the cache keeps the raw tokens and re-projects the keys and values of every cached token at each
call, in NumPy on the tensors' values (Tensor.numpy()). The NumPy work went past the torch counter
(helper hunt: full marks); a measured torch step now counts NumPy work on the tensors' values too.

Must fail: decode_complexity
Mistake: recompute_kv
"""

import torch


class _NpMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return torch.from_numpy(a.detach().numpy() @ b.detach().numpy())

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g @ b.transpose(-1, -2), (a.transpose(-1, -2) @ g).sum(0) if a.dim() == 3 else a.T @ g


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
            k, v = heads(_NpMatmul.apply(X, W_k)), heads(_NpMatmul.apply(X, W_v))   # all tokens again
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
