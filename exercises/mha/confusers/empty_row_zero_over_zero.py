"""Confuser: the softmax is written by hand over the kept keys (exp of the scores minus the row's
maximum, times the mask, divided by the row's sum), so a fully masked row is 0/0 = NaN, repaired
with nan_to_num. Where the forward output is right, the gradient is NaN exactly where a query row is
fully masked, as with an additive -inf mask, but there is no -inf and no softmax of an all -inf row
here: the NaN is the division's (its derivative at a zero sum), and it reaches the scores through
the product with the mask. (The maximum is taken over masked keys too, so when a masked key holds
by far the largest score the kept ones underflow: padding_mask's large-score case fails as well.)

Must not name: "-inf mask", "softmax of an all -inf row has no derivative"
May name: nan_gradient_fully_masked_rows, "the gradient is NaN where a query row is fully masked"
"""
import math

import torch


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

    q = (query @ W_q).view(B, L_q, H, d_k).transpose(1, 2)  # (B, H, L_q, d_k)
    k = (key @ W_k).view(B, L_k, H, d_k).transpose(1, 2)    # (B, H, L_k, d_k)
    v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)  # (B, H, L_k, d_k)

    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d_k))  # (B, H, L_q, L_k)
    keep = torch.ones_like(att, dtype=torch.bool) if mask is None else torch.broadcast_to(mask != 0, att.shape)
    e = torch.exp(att - att.amax(dim=-1, keepdim=True)) * keep   # masked keys weigh exactly 0
    att = torch.nan_to_num(e / e.sum(dim=-1, keepdim=True), nan=0.0)   # all-masked row: 0/0 -> 0
    y = att @ v                                               # (B, H, L_q, d_k)
    y = y.transpose(1, 2).contiguous().view(B, L_q, D)        # (B, L_q, D) heads side by side
    return y @ W_o                                            # (B, L_q, D)
