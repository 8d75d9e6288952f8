"""Correct: a loop over KV heads, each projecting x with its own column slice of W_k/W_v once, and an inner loop over the query heads of its group (each projecting its own W_q slice) with a hand-written softmax; outputs concatenated in head order. Stresses `kv_flops` with many small slice products: only the K/V slices count there, once per KV head."""
import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads != 0 or num_query_heads % num_kv_heads != 0:
        raise ValueError("head counts do not divide")
    dk = D // num_query_heads
    g = num_query_heads // num_kv_heads
    keep = None if mask is None else torch.broadcast_to(mask != 0, (B, num_query_heads, L, L))
    pieces = []
    for j in range(num_kv_heads):
        kj = x @ W_k[:, j * dk:(j + 1) * dk]
        vj = x @ W_v[:, j * dk:(j + 1) * dk]
        for h in range(j * g, (j + 1) * g):
            qh = x @ W_q[:, h * dk:(h + 1) * dk]
            s = torch.einsum('bid,bjd->bij', qh, kj) / (dk ** 0.5)
            if keep is not None:
                s = s.masked_fill(~keep[:, h], float(torch.finfo(s.dtype).min))
            s = s - s.max(-1, keepdim=True)[0]
            e = s.exp()
            if keep is not None:
                e = e * keep[:, h].to(e.dtype)
            den = e.sum(-1, keepdim=True)
            p = e / den.clamp(min=torch.finfo(e.dtype).tiny)
            pieces.append(torch.einsum('bij,bjd->bid', p, vj))
    return torch.cat(pieces, -1) @ W_o
