"""Bug: hands the work to F.scaled_dot_product_attention, which the exercise forbids.

Must fail: values
Mistake: forbidden_api
"""

import torch
import torch.nn.functional as F


def tiled_attention(q, k, v, block_size=64, causal=False):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    L_q, L_k = q.shape[2], k.shape[2]
    mask = torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q) if causal else None
    return torch.nan_to_num(F.scaled_dot_product_attention(q, k, v, attn_mask=mask))
