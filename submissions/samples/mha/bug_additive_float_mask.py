"""Bug: a numeric mask is added to the scores (as if it were an additive bias) instead of selecting keys;
bool masks are applied right. Written with per-head einsums over W reshaped to (D, H, d_k).

Mistake: numeric_mask_added_as_bias
Must fail: numeric_mask
"""

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    D = query.shape[-1]
    if D % num_heads:
        raise ValueError(f"num_heads={num_heads} does not divide D={D}")
    d_k = D // num_heads
    q = torch.einsum("bld,dhk->bhlk", query, W_q.reshape(D, num_heads, d_k))
    k = torch.einsum("bld,dhk->bhlk", key, W_k.reshape(D, num_heads, d_k))
    v = torch.einsum("bld,dhk->bhlk", value, W_v.reshape(D, num_heads, d_k))
    scores = torch.einsum("bhqk,bhlk->bhql", q, k) * d_k ** -0.5
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    elif mask.dtype == torch.bool:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1) * mask.any(dim=-1, keepdim=True)
    else:
        weights = torch.softmax(scores + mask, dim=-1)  # a 0/1 mask is not a bias
    heads = torch.einsum("bhql,bhlk->bhqk", weights, v)
    return torch.einsum("bhqk,hkd->bqd", heads, W_o.reshape(num_heads, d_k, D))
