"""Wrong: for one sequence the projections are computed once at full width and split into heads, but
for a batch every head projects the full width again and keeps its own d_k columns: num_heads times
the projection work on the batched path only. A probe of one sequence gave full marks; the
batch-of-two path sees it (issue 24, item 4).

Must fail: flops_scaling
Mistake: full_projection_per_head
"""
import math

import torch
import torch.nn.functional as F


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    """Multi-head attention of ``query`` over ``key``/``value``.

    Args:
        query: (B, L_q, D) tensor.
        key, value: (B, L_k, D) tensors.
        num_heads: number of heads H; must divide D.
        W_q, W_k, W_v, W_o: (D, D) projection weights (``x @ W``).
        mask: None, or a bool/numeric tensor broadcastable to (B, H, L_q, L_k); nonzero / True
            means "may attend".

    Returns:
        (B, L_q, D) tensor in the inputs' dtype, differentiable in every input and weight.

    Raises:
        ValueError: ``D % num_heads != 0``.
    """
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    H, d_k = num_heads, D // num_heads

    if B > 1:  # a batch: each head projects the full width and keeps its own columns
        q = torch.stack([(query @ W_q)[..., h * d_k:(h + 1) * d_k] for h in range(H)], dim=1)  # (B, H, L_q, d_k)
        k = torch.stack([(key @ W_k)[..., h * d_k:(h + 1) * d_k] for h in range(H)], dim=1)    # (B, H, L_k, d_k)
        v = torch.stack([(value @ W_v)[..., h * d_k:(h + 1) * d_k] for h in range(H)], dim=1)  # (B, H, L_k, d_k)
    else:
        q = (query @ W_q).view(B, L_q, H, d_k).transpose(1, 2)  # (B, H, L_q, d_k)
        k = (key @ W_k).view(B, L_k, H, d_k).transpose(1, 2)    # (B, H, L_k, d_k)
        v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)  # (B, H, L_k, d_k)

    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d_k))  # (B, H, L_q, L_k)
    if mask is not None:
        keep = mask != 0                                      # broadcasts to (B, H, L_q, L_k)
        att = att.masked_fill(~keep, torch.finfo(att.dtype).min)  # (B, H, L_q, L_k) finite: no NaN
        att = torch.where(keep, F.softmax(att, dim=-1), 0.0)  # (B, H, L_q, L_k) all-masked row -> 0
    else:
        att = F.softmax(att, dim=-1)                          # (B, H, L_q, L_k)
    y = att @ v                                               # (B, H, L_q, d_k)
    y = y.transpose(1, 2).contiguous().view(B, L_q, D)        # (B, L_q, D) heads side by side
    return y @ W_o                                            # (B, L_q, D)
