"""Confuser: the softmax's max is taken over the raw scores, before the mask, and masked scores are set
to -inf after the shift; a row whose masked scores are far above its kept ones underflows every kept
exp to 0, so the row is 0/0 = NaN although it keeps keys (a fully masked row is NaN too). Where the
cases hold no such row, the NaN lie on fully masked rows only and that is the symptom; where they do,
"a fully masked row" is not the cause to name.

Must not name: "a query row whose keys are all masked", "fully masked", nan_fully_masked_rows
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

    q = (query @ W_q).view(B, L_q, H, d_k).transpose(1, 2)  # (B, H, L_q, d_k)
    k = (key @ W_k).view(B, L_k, H, d_k).transpose(1, 2)    # (B, H, L_k, d_k)
    v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)  # (B, H, L_k, d_k)

    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d_k))  # (B, H, L_q, L_k)
    att = att - att.amax(dim=-1, keepdim=True)               # max over every key, masked ones too
    if mask is not None:
        att = att.masked_fill(mask == 0, float("-inf"))       # masked after the shift
    att = att.exp()
    att = att / att.sum(dim=-1, keepdim=True)                 # (B, H, L_q, L_k): 0/0 where every kept exp underflowed
    y = att @ v                                               # (B, H, L_q, d_k)
    y = y.transpose(1, 2).contiguous().view(B, L_q, D)        # (B, L_q, D) heads side by side
    return y @ W_o                                            # (B, L_q, D)
